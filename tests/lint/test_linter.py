from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from toolrelay.exceptions import ConfigurationError
from toolrelay.lint import RULES, LintConfig, Severity, lint
from toolrelay.search._cache import EmbeddingCache
from toolrelay.search._embedders import EmbeddingKind
from toolrelay.tools import ToolMetadata

from ._catalogs import run, target

RETRIEVAL_RULES = frozenset(
    {"confusable-tools", "hard-to-find", "hard-to-find-by-name", "description-dominates"}
)


def _catalog() -> list:
    return [
        target("bad name", "Short one."),
        target("get_weather"),
        target("refund.create", "Refunds an order to the original payment method of a customer."),
    ]


def test_findings_are_sorted_by_severity_then_catalog_order() -> None:
    report = run(_catalog())
    levels = [f.severity.level for f in report.findings]
    assert levels == sorted(levels, reverse=True)
    warnings = [f.tool for f in report.findings if f.severity is Severity.WARNING]
    assert warnings.index("bad name") < warnings.index("refund.create")
    assert report.findings[0].rule == "name-not-provider-safe"


def test_rules_are_disabled_globally_and_per_tool() -> None:
    config = LintConfig(
        disable=frozenset({"description-too-short"}),
        per_tool={"refund.*": frozenset({"side-effect-unmarked"})},
    )
    rules = {(f.rule, f.tool) for f in run(_catalog(), config=config).findings}
    assert ("description-too-short", "bad name") not in rules
    assert ("side-effect-unmarked", "refund.create") not in rules
    assert ("name-not-provider-safe", "bad name") in rules
    everything = {(f.rule, f.tool) for f in run(_catalog()).findings}
    assert ("side-effect-unmarked", "refund.create") in everything


def test_unknown_rule_ids_are_errors_with_a_suggestion() -> None:
    config = LintConfig(disable=frozenset({"description-to-short"}), path=Path("pyproject.toml"))
    with pytest.raises(ConfigurationError, match=r"did you mean 'description-too-short'"):
        lint([target("x")], config=config)


def test_disabling_every_retrieval_rule_builds_no_index() -> None:
    report = lint(
        _catalog(), config=LintConfig(disable=RETRIEVAL_RULES), index="hybrid", cache=False
    )
    # "hybrid" would need an embedder; it was never made.
    assert report.retrieval is None
    assert not {f.rule for f in report.findings} & RETRIEVAL_RULES


def test_failed_follows_the_severity_threshold() -> None:
    report = run([target("get_weather"), target("refund.create", "Refunds an order.")])
    assert report.count(Severity.ERROR) == 0
    assert report.count(Severity.WARNING) > 0
    assert not report.failed(Severity.ERROR)
    assert report.failed(Severity.WARNING)
    assert not report.failed(None)


def test_the_report_as_json(tmp_path: Path) -> None:
    report = run(_catalog())
    data = json.loads(json.dumps(report.to_dict()))
    assert data["tools"] == 3
    assert data["summary"] == {s.value: report.count(s) for s in Severity}
    assert sum(data["rules"].values()) == len(data["findings"])
    assert set(data["rules"]) <= set(RULES)
    first = data["findings"][0]
    assert set(first) == {"rule", "severity", "tool", "message", "fix", "related"}
    assert data["cost"]["total"] == report.cost.total
    assert data["cost"]["tools"]["get_weather"] > 0
    assert data["retrieval"]["index"] == "bm25"
    assert data["retrieval"]["tools"]["get_weather"]["description_rank"] == 1
    assert "tools," in report.summary()
    assert "linted in" in report.summary()


class CountingEmbedder:
    """Bag-of-letters vectors; records every call."""

    model_id = "test/letters"

    def __init__(self) -> None:
        self.calls: list[tuple[EmbeddingKind, int]] = []

    def embed(self, texts: Sequence[str], *, kind: EmbeddingKind) -> npt.NDArray[np.float32]:
        self.calls.append((kind, len(texts)))
        rows = np.zeros((len(texts), 26), dtype=np.float32)
        for i, text in enumerate(texts):
            for ch in text.lower():
                if "a" <= ch <= "z":
                    rows[i, ord(ch) - 97] += 1.0
        return rows + 1e-3


def test_the_hybrid_index_embeds_queries_in_batches_and_caches_them(tmp_path: Path) -> None:
    tools = [
        target("get_weather"),
        target("convert_currency", "Converts an amount between currencies at today's rate."),
        target("refund.create", "Refunds an order.", metadata=ToolMetadata(destructive=True)),
    ]
    cache = EmbeddingCache(tmp_path / "vectors.sqlite3")
    embedder = CountingEmbedder()
    report = lint(tools, index="hybrid", embedder=embedder, cache=cache)
    assert report.retrieval is not None
    assert report.retrieval.search_type == "hybrid"
    queries = [n for kind, n in embedder.calls if kind == "query"]
    # One batch for 3 descriptions (or their sentences) and 3 names; nothing one by one.
    assert len(queries) == 1
    assert queries[0] >= 6
    again = CountingEmbedder()
    lint(tools, index="hybrid", embedder=again, cache=cache)
    assert again.calls == []  # documents and queries both come from the cache


def test_progress_reports_the_embedding_of_the_catalog() -> None:
    tools = [target("get_weather"), target("refund.create", "Refunds an order.")]
    reports: list[tuple[int, int]] = []
    lint(
        tools,
        index="hybrid",
        embedder=CountingEmbedder(),
        cache=False,
        progress=lambda done, total: reports.append((done, total)),
    )
    assert reports == [(0, 2), (2, 2)]
    reports.clear()
    run(tools, config=LintConfig(disable=RETRIEVAL_RULES))  # no retrieval rule: no index built
    assert reports == []


def test_the_summary_counts_one_tool_in_the_singular() -> None:
    report = run([target("get_weather")])
    assert report.summary().startswith("1 tool, ")
