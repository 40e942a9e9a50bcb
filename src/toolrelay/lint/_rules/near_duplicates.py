"""``name-near-duplicate``: names a model can hardly tell apart.

Two names are near-duplicates when they have the same words once case, separators, word
order, plural or tense (``get_order`` / ``getOrders``, ``user_get`` / ``get_user``) and
version markers (``get_weather`` / ``get_weather__v2``, ``alarm_1`` / ``alarm_2``) are set
aside. Names are grouped by that key in one pass, so the check is linear in the catalog.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from toolrelay.lint._context import LintContext
from toolrelay.lint._findings import Finding, Rule, Severity, listed
from toolrelay.search._text import Tokenizer
from toolrelay.tools._names import split_name_words

__all__ = ["NEAR_DUPLICATE", "RULES", "check", "name_key"]

NEAR_DUPLICATE = Rule(
    id="name-near-duplicate",
    severity=Severity.WARNING,
    summary="Names differ only in case, separators, order, plural or a version number",
)
RULES = (NEAR_DUPLICATE,)

_VERSION = re.compile(r"^(?:v\d+|\d+)$")
_STEMS = Tokenizer(stop_words=frozenset(), min_length=1)
_SHOWN = 5


def name_key(name: str) -> tuple[str, ...]:
    """The words of a name that tell it apart: stemmed, sorted, version markers dropped."""
    words = [w for w in split_name_words(name) if not _VERSION.fullmatch(w)]
    return tuple(sorted(_STEMS.terms_of_words(words)))


def check(ctx: LintContext) -> Iterator[Finding]:
    """One finding per tool that shares its key with another tool."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for target in ctx.unique:
        key = name_key(target.name)
        if key:
            groups.setdefault(key, []).append(target.name)
    for names in groups.values():
        if len(names) < 2:
            continue
        for name in names:
            others = [n for n in names if n != name]
            yield NEAR_DUPLICATE.finding(
                name,
                f"hard to tell apart from {listed(others, _SHOWN)}",
                "merge them into one tool, or rename each to say how it differs "
                "(what it acts on, which version or service)",
                related=others,
            )
