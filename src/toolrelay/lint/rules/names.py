"""Names providers reject or rewrite: characters, length, and names used twice.

- ``name-not-provider-safe``: OpenAI and Anthropic accept ``^[a-zA-Z0-9_-]{1,64}$``. A name
  with other characters is an *error*; a dotted domain name (``refund.create``) is fine
  inside toolrelay, which sends it as ``refund__create`` and maps answers back, so it is
  *info*, naming the form other clients will see.
- ``name-too-long``: the provider-safe form is longer than 64 characters (*error*).
- ``name-duplicate``: two tools share a name, or their provider-safe forms collide
  (``a.b`` and ``a__b``) (*error*; only the first is linted further).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from toolrelay.lint.context import LintContext
from toolrelay.lint.findings import Finding, Rule, Severity
from toolrelay.tools.names import MAX_NAME_LENGTH, is_provider_safe, provider_safe_name

__all__ = ["DUPLICATE", "NOT_PROVIDER_SAFE", "RULES", "TOO_LONG", "check"]

NOT_PROVIDER_SAFE = Rule(
    id="name-not-provider-safe",
    severity=Severity.ERROR,
    summary="Name has characters providers reject (dotted names: info, they are mapped)",
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

_ALLOWED = re.compile(r"[A-Za-z0-9_.\-]")
_DISALLOWED_RUN = re.compile(r"[^A-Za-z0-9_.\-]+")


def check(ctx: LintContext) -> Iterator[Finding]:
    """Findings of the name rules for every tool."""
    for target in ctx.targets:
        name = target.name
        if not is_provider_safe(name):
            yield _unsafe(ctx, name)
        safe = provider_safe_name(name)
        if len(safe) > MAX_NAME_LENGTH:
            yield ctx.finding(
                TOO_LONG,
                name,
                f"sent as {len(safe)} characters; providers accept at most {MAX_NAME_LENGTH}",
                "shorten it: drop filler words and repeated prefixes "
                f"({len(safe) - MAX_NAME_LENGTH} characters too many)",
            )
    yield from _duplicates(ctx)


def _unsafe(ctx: LintContext, name: str) -> Finding:
    bad = sorted({ch for ch in name if not _ALLOWED.fullmatch(ch)})
    empty_segment = any(not segment for segment in name.split("."))
    suggestion = _suggest(name)
    if bad or empty_segment or not name:
        reasons = []
        if bad:
            reasons.append("characters " + " ".join(repr(ch) for ch in bad))
        if empty_segment:
            reasons.append("an empty dotted segment")
        return ctx.finding(
            NOT_PROVIDER_SAFE,
            name,
            f"providers reject it: {' and '.join(reasons) or 'it is empty'}",
            f"rename it to letters, digits, '_', '-' (and '.' between segments), "
            f"e.g. {suggestion!r}",
        )
    return ctx.finding(
        NOT_PROVIDER_SAFE,
        name,
        f"sent to providers as {provider_safe_name(name)!r} (toolrelay maps it back)",
        "nothing to do inside toolrelay; clients without the mapping must use the "
        "provider-safe name",
        severity=Severity.INFO,
    )


def _suggest(name: str) -> str:
    cleaned = _DISALLOWED_RUN.sub("_", name.strip())
    cleaned = re.sub(r"\.{2,}", ".", cleaned).strip("._")
    return cleaned or "tool_name"


def _duplicates(ctx: LintContext) -> Iterator[Finding]:
    groups: dict[str, list[str]] = {}
    for target in ctx.targets:
        groups.setdefault(provider_safe_name(target.name), []).append(target.name)
    for safe, names in groups.items():
        if len(names) < 2:
            continue
        distinct = list(dict.fromkeys(names))
        if len(distinct) == 1:
            message = f"defined {len(names)} times; only the first is linted further"
        else:
            shown = " and ".join(repr(n) for n in distinct)
            message = f"{shown} are both sent to providers as {safe!r}"
        yield ctx.finding(
            DUPLICATE,
            distinct[0],
            message,
            "give each tool its own name; a catalog rejects duplicates",
            related=distinct[1:],
        )
