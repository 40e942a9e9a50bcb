"""Names providers reject or rewrite: characters, length, and names used twice.

- ``name-not-provider-safe``: OpenAI and Anthropic accept ``^[a-zA-Z0-9_-]{1,64}$``, toolrelay
  accepts more and sends each name in a provider-safe form, mapping answers back (see
  :func:`~toolrelay.tools.provider_safe_name`). A name toolrelay rejects too (spaces,
  punctuation, an empty dotted segment) is an *error*. A name with letters outside ASCII
  (``查询天气``, ``météo``) is *info*, naming the form it is sent in: its ASCII letters plus a
  hash (``tool_22cf3c76``, ``meteo_54d1ed64``), which is all a model reads of it. Dotted
  ASCII names (``refund.find_failed_orders``) are not findings: they are the recommended
  names in a large catalog (docs/tools.md, docs/tool-search.md), and their sent form
  (``refund__find_failed_orders``) keeps every word, so a model reads them as written.
- ``name-too-long``: the provider-safe form is longer than 64 characters (*error*).
- ``name-duplicate``: two tools share a name, or their provider-safe forms collide
  (``a.b`` and ``a__b``) (*error*; only the first is linted further).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterator

from toolrelay.lint._context import LintContext
from toolrelay.lint._findings import Finding, Rule, Severity
from toolrelay.tools._names import (
    MAX_NAME_LENGTH,
    is_name_character,
    is_provider_safe,
    provider_safe_name,
)

__all__ = ["DUPLICATE", "NOT_PROVIDER_SAFE", "RULES", "TOO_LONG", "check"]

NOT_PROVIDER_SAFE = Rule(
    id="name-not-provider-safe",
    severity=Severity.ERROR,
    summary="Name has characters toolrelay rejects (letters outside ASCII: info, the name is "
    "sent as a hash; dotted names are fine)",
)
TOO_LONG = Rule(
    id="name-too-long",
    severity=Severity.ERROR,
    summary=f"Provider-safe name is longer than {MAX_NAME_LENGTH} characters",
)
DUPLICATE = Rule(
    id="name-duplicate",
    severity=Severity.ERROR,
    summary="Two tools share a name or a provider-safe name",
)
RULES = (NOT_PROVIDER_SAFE, TOO_LONG, DUPLICATE)

_MAPPED_FIX = (
    "nothing to do inside toolrelay; clients without the mapping must use the provider-safe name"
)


def check(ctx: LintContext) -> Iterator[Finding]:
    """Findings of the name rules for every tool."""
    for target in ctx.targets:
        name = target.name
        found = None if is_provider_safe(name) else _unsafe(name)
        if found is not None:
            yield found
        safe = provider_safe_name(name)
        if len(safe) > MAX_NAME_LENGTH:
            yield TOO_LONG.finding(
                name,
                f"sent as {len(safe)} characters; providers accept at most {MAX_NAME_LENGTH}",
                "shorten it: drop filler words and repeated prefixes "
                f"({len(safe) - MAX_NAME_LENGTH} characters too many)",
            )
    yield from _duplicates(ctx)


def _unsafe(name: str) -> Finding | None:
    """The finding of a name that is not sent as written (``None``: a dotted ASCII name)."""
    bad = sorted({ch for ch in name if not is_name_character(ch)})
    empty_segment = any(not segment for segment in name.split("."))
    if bad or empty_segment or not name:
        reasons = []
        if bad:
            reasons.append("characters " + " ".join(repr(ch) for ch in bad))
        if empty_segment:
            reasons.append("an empty dotted segment")
        return NOT_PROVIDER_SAFE.finding(
            name,
            f"providers reject it: {' and '.join(reasons) or 'it is empty'}",
            f"rename it to letters, digits, '_', '-' (and '.' between segments), "
            f"e.g. {_suggest(name)!r}",
        )
    if name.isascii():
        return None  # dotted: each '.' is sent as '__', every word intact
    safe = provider_safe_name(name)
    readable = any(ch.isascii() and ch.isalpha() for ch in name)
    return NOT_PROVIDER_SAFE.finding(
        name,
        f"sent to providers as {safe!r}, its ASCII letters and a hash of the name "
        "(toolrelay maps it back); a model reads only that form",
        _MAPPED_FIX
        if readable
        else f"{_MAPPED_FIX}; to give the sent form a readable part, start the name with an "
        f"ASCII category, as in {'orders.' + name!r}",
        severity=Severity.INFO,
    )


def _suggest(name: str) -> str:
    """``name`` with each run of rejected characters as one ``_`` and no empty segments."""
    cleaned = "".join(
        "".join(run) if valid else "_"
        for valid, run in itertools.groupby(name.strip(), key=is_name_character)
    )
    cleaned = re.sub(r"\.{2,}", ".", cleaned).strip("._")
    return cleaned or "tool_name"


def _duplicates(ctx: LintContext) -> Iterator[Finding]:
    counts = Counter(target.name for target in ctx.targets)
    for name, count in counts.items():
        if count > 1:
            times = "twice" if count == 2 else f"{count} times"
            yield DUPLICATE.finding(
                name,
                f"defined {times}; only the first is linted further",
                "give each tool its own name; a catalog rejects duplicates",
            )
    # Different names sent to providers as one (a.b and a__b), each clash once.
    groups: dict[str, list[str]] = {}
    for name in counts:
        groups.setdefault(provider_safe_name(name), []).append(name)
    for safe, names in groups.items():
        if len(names) > 1:
            shown = " and ".join(repr(n) for n in names)
            yield DUPLICATE.finding(
                names[0],
                f"{shown} are both sent to providers as {safe!r}",
                "give each tool its own name; a catalog rejects duplicates",
                related=names[1:],
            )
