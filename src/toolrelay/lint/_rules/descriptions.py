"""Description length rules: a description is retrieval text.

It must exist, add to the name, and be neither too short to be found nor so long that it is
found for everything.

- ``description-missing`` (*error*): no description; the model and the index have only the
  name.
- ``description-repeats-name`` (*warning*): every word of the description is already in the
  name ("get_weather: Get weather.").
- ``description-too-short`` (*warning*): fewer than ``min-description-words`` words (8; a
  CJK character counts as half a word). A query shares few words with it, so keyword search
  rarely finds it, and the model learns little from it.
- ``description-too-long`` (*warning*): over ``max-description-chars`` characters (2,000).
  A very long description matches almost any query on some word: in the benchmarks,
  8,000-character descriptions land in the top 3 for most queries. It also costs tokens
  with every request.

At most one of the first three is reported per tool, the most severe.
"""

from __future__ import annotations

from collections.abc import Iterator

from toolrelay.lint._context import LintContext
from toolrelay.lint._findings import Finding, Rule, Severity
from toolrelay.lint._targets import LintTarget
from toolrelay.lint._wording import word_count, words
from toolrelay.search._text import Tokenizer
from toolrelay.tools._names import split_name_words

__all__ = ["MISSING", "REPEATS_NAME", "RULES", "TOO_LONG", "TOO_SHORT", "check", "repeats_name"]

MISSING = Rule(
    id="description-missing",
    severity=Severity.ERROR,
    summary="No description: the model and the index have only the name",
)
REPEATS_NAME = Rule(
    id="description-repeats-name",
    severity=Severity.WARNING,
    summary="The description only repeats the name",
)
TOO_SHORT = Rule(
    id="description-too-short",
    severity=Severity.WARNING,
    summary="Description too short to be retrieved (fewer than 8 words)",
)
TOO_LONG = Rule(
    id="description-too-long",
    severity=Severity.WARNING,
    summary="Description so long it floods keyword scoring (over 2,000 characters)",
)
RULES = (MISSING, REPEATS_NAME, TOO_SHORT, TOO_LONG)

_STEMS = Tokenizer()
# Words that add nothing to a name when a description is built from it.
_FILLER_STEMS = frozenset(
    _STEMS.terms_of_words(["tool", "function", "api", "endpoint", "method", "use", "call"])
)
_WRITE_MORE = (
    "write 2-3 sentences: what it does (and to what), when to use it, and what it does not "
    "do or which sibling to use instead"
)


def repeats_name(target: LintTarget) -> bool:
    """Whether every content word of the description is a word of the name."""
    description = target.definition.description
    said = words(description)
    if not said or word_count(description) != len(said):
        return False  # CJK text adds to an ASCII name
    stems = set(_STEMS.terms_of_words(said)) - _FILLER_STEMS
    named = set(_STEMS.terms_of_words(split_name_words(target.name)))
    return bool(stems) and stems <= named


def check(ctx: LintContext) -> Iterator[Finding]:
    """Findings of the description rules for every tool."""
    limits = ctx.thresholds
    for target in ctx.unique:
        name = target.name
        description = target.definition.description.strip()
        if not description:
            yield MISSING.finding(name, "the tool has no description", _WRITE_MORE)
        elif repeats_name(target):
            yield REPEATS_NAME.finding(
                name,
                f"{_quote(description)} says nothing the name does not",
                _WRITE_MORE,
            )
        elif (count := word_count(description)) < limits.min_description_words:
            yield TOO_SHORT.finding(
                name,
                f"{count:g} words ({_quote(description)}); under "
                f"{limits.min_description_words} is too few to be found by a search",
                _WRITE_MORE,
            )
        if len(description) > limits.max_description_chars:
            yield TOO_LONG.finding(
                name,
                f"{len(description):,} characters (limit {limits.max_description_chars:,}): "
                "it matches almost any query and costs tokens with every request",
                "keep the first paragraph (what, when, what not); move reference material "
                "(changelogs, tables, examples) to parameter descriptions or documentation",
            )


def _quote(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")
