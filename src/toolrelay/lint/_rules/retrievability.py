"""Whether the catalog's own index finds each tool, and whether one tool crowds out the rest.

The catalog is searched with every tool's description, and separately with the words of its
name (see ``lint/_self_search.py``):

- ``hard-to-find`` (*warning*): the tool is not in the top ``top-k`` (5) for its own
  description. Another tool claims its words, so a request phrased like its description
  finds the other one.
- ``hard-to-find-by-name`` (*info*): not in the top ``top-k`` for its own name's words.
- ``description-dominates`` (*warning*): the tool is in the top 3 for at least
  ``dominance-share`` (10%) and ``dominance-min`` (10) of the other tools' descriptions. Long
  or keyword-stuffed descriptions do this; the tool then fills a slot in most searches.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from toolrelay.lint._context import LintContext
from toolrelay.lint._findings import Finding, Rule, Severity

__all__ = ["DOMINATES", "HARD_TO_FIND", "HARD_TO_FIND_BY_NAME", "RULES", "check"]

HARD_TO_FIND = Rule(
    id="hard-to-find",
    severity=Severity.WARNING,
    summary="Not in the top 5 when its own description is the query",
)
HARD_TO_FIND_BY_NAME = Rule(
    id="hard-to-find-by-name",
    severity=Severity.INFO,
    summary="Not in the top 5 when the words of its name are the query",
)
DOMINATES = Rule(
    id="description-dominates",
    severity=Severity.WARNING,
    summary="In the top 3 for many other tools' descriptions",
)
RULES = (HARD_TO_FIND, HARD_TO_FIND_BY_NAME, DOMINATES)


def check(ctx: LintContext) -> Iterator[Finding]:
    """Findings of the retrievability rules (builds and searches the index once)."""
    found = ctx.self_search
    names = found.names
    top_k = ctx.thresholds.top_k
    size = len(names)
    for i, name in enumerate(names):
        rank = found.description_ranks[i]
        if ctx.unique[i].definition.description.strip() and (rank is None or rank > top_k):
            yield HARD_TO_FIND.finding(
                name,
                f"{_placed(rank, size)} for its own description "
                f"({found.search_type}){_behind(found.description_top[i], i, names)}",
                "use the words a user would use for this task, and say what sets it apart "
                "from the tools that outrank it",
                related=_others(found.description_top[i], i, names),
            )
        rank = found.name_ranks[i]
        if rank is None or rank > top_k:
            yield HARD_TO_FIND_BY_NAME.finding(
                name,
                f"{_placed(rank, size)} for the words of its name"
                f"{_behind(found.name_top[i], i, names)}",
                "use the name's words in the first sentence of the description, or rename "
                "it after what users ask for",
                related=_others(found.name_top[i], i, names),
            )
    yield from _dominating(ctx)


def _dominating(ctx: LintContext) -> Iterator[Finding]:
    found = ctx.self_search
    others = len(found.names) - 1
    if others < 1:
        return
    limits = ctx.thresholds
    for i, count in enumerate(found.top_counts):
        share = count / others
        if count >= limits.dominance_min and share >= limits.dominance_share:
            length = len(ctx.unique[i].definition.description)
            yield DOMINATES.finding(
                found.names[i],
                f"in the top 3 for {count:,} of {others:,} other tools' descriptions "
                f"({share:.0%}; its own is {length:,} characters)",
                "cut it to what the tool does and when to use it; lists of keywords, "
                "examples and reference text match everything",
            )


def _placed(rank: int | None, size: int) -> str:
    return "not found" if rank is None else f"ranks {rank:,} of {size:,}"


def _others(top: Sequence[int], own: int, names: Sequence[str]) -> list[str]:
    return [names[p] for p in top if p != own]


def _behind(top: Sequence[int], own: int, names: Sequence[str]) -> str:
    others = _others(top, own, names)
    return f", behind {', '.join(others)}" if others else ""
