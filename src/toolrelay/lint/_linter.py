"""Running every enabled rule over a catalog: :func:`lint`."""

from __future__ import annotations

import difflib
import time
from collections.abc import Iterable

from toolrelay.exceptions import ConfigurationError
from toolrelay.lint._config import IndexChoice, LintConfig
from toolrelay.lint._context import LintContext
from toolrelay.lint._findings import Finding
from toolrelay.lint._indexes import LintIndex, lint_index
from toolrelay.lint._report import CostSummary, LintReport, RetrievalSummary
from toolrelay.lint._rules import CHECKS, RULES
from toolrelay.lint._targets import LintTarget, as_targets
from toolrelay.search._base import IndexProgress
from toolrelay.search._cache import EmbeddingCache
from toolrelay.search._embedders import Embedder
from toolrelay.search._scoring import ScoringToolIndex
from toolrelay.tools._base import Tool, ToolDefinition

__all__ = ["lint"]

_RULE_ORDER = {rule_id: position for position, rule_id in enumerate(RULES)}


def lint(
    tools: Iterable[Tool | ToolDefinition | LintTarget],
    *,
    config: LintConfig | None = None,
    index: IndexChoice | ScoringToolIndex | None = None,
    embedder: Embedder | None = None,
    cache: EmbeddingCache | bool = True,
    catalog: str | None = None,
    progress: IndexProgress | None = None,
) -> LintReport:
    """Lint a tool catalog: find the tools a model will miss, confuse or misuse.

    Args:
        tools: The catalog: tools, bare definitions or :class:`LintTarget` s (which carry
            metadata and a source for definitions loaded from JSON).
        config: Which rules run and their thresholds (see :func:`find_config` to read
            ``pyproject.toml``); the defaults when omitted.
        index: The index the retrieval rules rank with: ``"bm25"``, ``"hybrid"``, ``"auto"``
            (hybrid when the embeddings extra is installed) or an index of your own, which
            is re-indexed with the catalog. Defaults to ``config.index``.
        embedder: The embedder of the hybrid index (the bundled MiniLM by default).
        cache: The embedding cache (``True``: the default file; ``False``: none).
        catalog: A label for the report (a path or module name).
        progress: Told how far indexing the catalog for the retrieval rules is, as
            ``progress(done, total)``; embedding a large catalog the first time takes minutes.

    Returns:
        The report; ``report.failed(config.fail_on)`` says whether the run should fail.

    Raises:
        ConfigurationError: The settings name an unknown rule, or the hybrid index was asked
            for without the embeddings extra.

    Example:
        >>> report = lint(catalog, config=LintConfig(disable=frozenset({"name-generic"})))
        >>> for finding in report.findings:
        ...     print(finding.severity, finding.tool, finding.message)
    """
    started = time.perf_counter()
    config = config or LintConfig()
    _check_rule_ids(config)
    targets = as_targets(tools)
    chosen = index if index is not None else config.index

    def make_index() -> LintIndex:
        return lint_index(chosen, embedder=embedder, cache=cache)

    ctx = LintContext(targets, config, make_index, progress=progress)
    findings: list[Finding] = []
    for rules, check in CHECKS:
        if any(config.is_enabled(rule.id) for rule in rules):
            findings.extend(f for f in check(ctx) if not config.is_disabled_for(f.rule, f.tool))
    positions = {target.name: position for position, target in enumerate(ctx.unique)}
    findings.sort(
        key=lambda f: (
            -f.severity.level,
            -1 if f.tool is None else positions.get(f.tool, len(positions)),
            _RULE_ORDER.get(f.rule, len(_RULE_ORDER)),
        )
    )
    found = ctx.self_search_if_done
    return LintReport(
        catalog=catalog,
        tools=len(targets),
        findings=tuple(findings),
        cost=CostSummary.of(tuple(t.name for t in targets), ctx.tokens),
        retrieval=None
        if found is None
        else RetrievalSummary.of(found, top_k=config.thresholds.top_k),
        seconds=time.perf_counter() - started,
    )


def _check_rule_ids(config: LintConfig) -> None:
    unknown = sorted(config.named_rules() - set(RULES))
    if not unknown:
        return
    hints = []
    for rule_id in unknown:
        close = difflib.get_close_matches(rule_id, list(RULES), n=1)
        hints.append(f"{rule_id!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    where = f" in {config.path}" if config.path else ""
    raise ConfigurationError(
        f"unknown lint rule{'s' if len(unknown) > 1 else ''} {', '.join(hints)}{where}; "
        f"known rules: {', '.join(RULES)}"
    )
