"""What the tool definitions cost in tokens (cl100k_base, as ``toolrelay.tools._tokens`` counts).

- ``schema-too-large`` (*warning*): one definition (name, description and JSON Schema on the
  wire) over ``max-tool-tokens`` (1,000). It is paid with every request that carries it.
- ``catalog-too-large`` (*info*, about the catalog): sending every tool with every request
  costs more than ``max-catalog-tokens`` (20,000); tool search (``ToolSearchAdvisor``)
  sends a search tool and the few tools found instead.

The report also carries the size of every tool, the largest ones and the total
(:class:`~toolrelay.lint.CostSummary`).
"""

from __future__ import annotations

from collections.abc import Iterator

from toolrelay.lint._context import LintContext
from toolrelay.lint._findings import Finding, Rule, Severity

__all__ = ["CATALOG_TOO_LARGE", "RULES", "SCHEMA_TOO_LARGE", "check"]

SCHEMA_TOO_LARGE = Rule(
    id="schema-too-large",
    severity=Severity.WARNING,
    summary="Tool definition over 1,000 tokens",
)
CATALOG_TOO_LARGE = Rule(
    id="catalog-too-large",
    severity=Severity.INFO,
    summary="Sending the whole catalog costs over 20,000 tokens per request",
)
RULES = (SCHEMA_TOO_LARGE, CATALOG_TOO_LARGE)


def check(ctx: LintContext) -> Iterator[Finding]:
    """Findings of the cost rules."""
    limits = ctx.thresholds
    sizes = ctx.tokens
    seen: set[str] = set()
    for target, size in zip(ctx.targets, sizes.sizes, strict=True):
        if target.name in seen:
            continue
        seen.add(target.name)
        if size > limits.max_tool_tokens:
            share = size / sizes.total if sizes.total else 0.0
            yield SCHEMA_TOO_LARGE.finding(
                target.name,
                f"{size:,} tokens (limit {limits.max_tool_tokens:,}; {share:.1%} of the "
                "catalog), paid with every request that carries it",
                "shorten the description and parameter descriptions, drop schema keys the "
                "model does not need (titles, examples, defaults it can omit), split the tool",
            )
    if sizes.total > limits.max_catalog_tokens:
        yield CATALOG_TOO_LARGE.finding(
            None,
            f"sending all {len(sizes.sizes):,} tools costs {sizes.total:,} tokens per request "
            f"(limit {limits.max_catalog_tokens:,})",
            "use tool search (ToolSearchAdvisor): each request then carries the search tool "
            "and the few tools found",
        )
