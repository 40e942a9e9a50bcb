"""``confusable-tools``: tools the catalog's own index cannot tell apart.

Two tools are confusable when each scores within ``confusable-margin`` (20%) of the other's
own score for the other's own description: a request that fits one fits the other as well,
to the index and most likely to the model. Confusable pairs joined transitively form a
cluster (BFCL's thirty paraphrases of ``get_current_weather`` are one); every member gets a
finding naming the rest. The ranking is the catalog's own index: BM25, plus embeddings when
they are installed (see ``lint/_self_search.py``).
"""

from __future__ import annotations

from collections.abc import Iterator

from toolrelay.lint._context import LintContext
from toolrelay.lint._findings import Finding, Rule, Severity, listed

__all__ = ["CONFUSABLE", "RULES", "check"]

CONFUSABLE = Rule(
    id="confusable-tools",
    severity=Severity.WARNING,
    summary="Descriptions so alike the index ranks the tools within a small margin",
)
RULES = (CONFUSABLE,)

_SHOWN = 4


def check(ctx: LintContext) -> Iterator[Finding]:
    """One finding per member of every confusable cluster."""
    found = ctx.self_search
    margin = ctx.thresholds.confusable_margin
    for cluster in found.clusters():
        members = [found.names[i] for i in cluster]
        for name in members:
            others = [n for n in members if n != name]
            yield CONFUSABLE.finding(
                name,
                f"confusable with {listed(others, _SHOWN)}: each scores within {margin:.0%} of "
                f"the other for the other's own description ({found.search_type})",
                "merge near-identical tools; otherwise say in each description what sets it "
                "apart and which sibling to use instead",
                related=others,
            )
