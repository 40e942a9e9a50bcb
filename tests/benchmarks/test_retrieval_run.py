"""The retrieval benchmark's bookkeeping: merging runs, the docs tables, the pooled catalog.

Running the indexes is the benchmark itself (minutes); these tests cover what decides which
numbers end up in ``benchmarks/results/retrieval.json`` and ``docs/benchmarks.md``.
"""

from __future__ import annotations

from typing import Any

import pytest

from toolrelay.search._evaluation import EvalDataset
from toolrelay.tools._base import ToolDefinition

from ._scripts import RETRIEVAL, load_script

run = load_script(RETRIEVAL / "run.py", "benchmark_retrieval_run")


def _metrics(ndcg: float, complete: float) -> dict[str, float]:
    values = dict.fromkeys(run.report.METRICS, 50.0)
    return values | {"NDCG@10": ndcg, "Complete@5": complete}


def _entry(kind: str, ndcg: float, **extra: Any) -> dict[str, Any]:
    return {"kind": kind, "build_s": 1.0, "search_ms": 2.0, "strict": _metrics(ndcg, ndcg), **extra}


def _dataset(generated: str, systems: dict[str, Any]) -> dict[str, Any]:
    return {
        "generated": generated,
        "tools": 10,
        "queries": 5,
        "headline": "strict",
        "systems": systems,
    }


def test_merge_replaces_the_datasets_run_and_keeps_the_rest() -> None:
    previous = {
        "generated": "T0",
        "python": "3.11",
        "datasets": {
            "hammerbench_zh": _dataset("T0", {"FastMCP BM25": _entry("peer", 1.0)}),
            "restbench": _dataset("T0", {"toolrelay bm25": _entry("ours", 40.0)}),
            "bfcl": _dataset("T0", {"toolrelay bm25": _entry("ours", 70.0)}),
        },
        "pooled": {"tools": 3},
    }
    fresh = {
        "generated": "T1",
        "python": "3.11",
        "datasets": {
            "hammerbench_zh": _dataset("T1", {"toolrelay bm25": _entry("ours", 80.0)}),
            "restbench": _dataset(
                "T1", {"toolrelay bm25": _entry("ours", 45.0), "FastMCP BM25": _entry("peer", 2.0)}
            ),
        },
    }

    merged = run.merge(fresh, previous)

    assert list(merged["datasets"]) == ["bfcl", "restbench", "hammerbench_zh"]  # DATASETS order
    assert merged["generated"] == "T1"
    assert merged["pooled"] == {"tools": 3}
    assert merged["datasets"]["bfcl"] == previous["datasets"]["bfcl"]
    hammer = merged["datasets"]["hammerbench_zh"]["systems"]
    assert hammer["toolrelay bm25"]["strict"]["NDCG@10"] == 80.0
    # A peer that did not run this time keeps its earlier row, marked with its run.
    assert hammer["FastMCP BM25"]["from_run"] == "T0"
    rest = merged["datasets"]["restbench"]["systems"]
    assert "from_run" not in rest["FastMCP BM25"]
    assert rest["FastMCP BM25"]["strict"]["NDCG@10"] == 2.0


def test_chinese_table_shows_reference_figures_unless_measured() -> None:
    systems = {
        "toolrelay hybrid (default)": _entry("ours", 88.0, embedder="e5"),
        "FastMCP BM25": _entry("peer", 4.0),
        "pydantic-ai keyword search": {"kind": "peer", "error": "ValueError: no tokens"},
    }
    lines = run.report.dataset_table("acebench_zh", _dataset("T1", systems))
    text = "\n".join(lines)

    assert "**toolrelay hybrid (default), auto: e5**" in text
    assert "FastMCP BM25 (reference figure)" not in text  # measured here
    assert "pydantic-ai keyword search failed here: ValueError: no tokens" in text
    rows = {line.split(" | ")[0].lstrip("| "): line.split(" | ") for line in lines if "|" in line}
    ndcg, complete = (
        1 + run.report.METRICS.index("NDCG@10"),
        1 + run.report.METRICS.index("Complete@5"),
    )
    # The failed peer falls back to its reference figure; Complete@5 unknown there.
    failed = rows["pydantic-ai keyword search (reference figure)"]
    assert (failed[ndcg], failed[complete]) == ("2.0", "–")
    bigrams = rows["BM25 over character bigrams + params (reference figure)"]
    assert (bigrams[ndcg], bigrams[complete]) == ("81.2", "86.2")


def _pooled(losses: dict[str, float]) -> dict[str, Any]:
    sources = {s: {"tools": 1, "queries": 9, "scoring": "strict"} for s in losses}
    default = {
        "embedder": {**dict.fromkeys(losses, "MiniLM"), "pooled": "e5"},
        "build_s": 1.0,
        "sources": {
            s: {"alone": _metrics(80.0, 70.0), "pooled": _metrics(80.0 - loss, 60.0)}
            for s, loss in losses.items()
        },
    }
    return {
        "generated": "T2",
        "tools": len(losses),
        "max_loss": 3.0,
        "sources": sources,
        "systems": {"toolrelay hybrid (default)": default},
    }


@pytest.mark.parametrize(
    ("losses", "verdict"),
    [
        ({"bfcl": 1.0, "acebench_zh": 3.0}, "Target met: no source loses more than 3 points."),
        ({"bfcl": 4.5, "acebench_zh": 0.5}, "Target missed on bfcl (-4.5)."),
    ],
)
def test_pooled_section_shows_the_difference_and_the_target(
    losses: dict[str, float], verdict: str
) -> None:
    lines = run.report.pooled_section(_pooled(losses))

    assert verdict in lines
    bfcl = next(line for line in lines if line.startswith("| bfcl"))
    assert f"| 80.0 | {80.0 - losses['bfcl']:.1f} | {-losses['bfcl']:+.1f} |" in bfcl
    assert "| 70.0 | 60.0 | -10.0 |" in bfcl


def test_pool_refuses_a_name_in_two_sources() -> None:
    tool = ToolDefinition(name="send_message", description="Send a message.")
    first = EvalDataset(name="a", tools=(tool,), queries=())
    second = EvalDataset(name="b", tools=(tool,), queries=())

    assert [t.name for t in run.pooled.pool([first])] == ["send_message"]
    with pytest.raises(ValueError, match="'send_message' is in both a and b"):
        run.pooled.pool([first, second])


def test_pooled_section_separates_what_mixing_languages_costs() -> None:
    pooled = _pooled({"bfcl": 20.0, "acebench_zh": 1.0})
    sources = pooled["systems"]["toolrelay hybrid (default)"]["sources"]
    # bfcl: 80 alone, 62 among English catalogs, 60 among all: 2.0 of its 20 points from mixing
    sources["bfcl"]["language_pool"] = {**_metrics(62.0, 61.0), "tools": 5158}
    lines = run.report.pooled_section(pooled)

    bfcl = next(line for line in lines if line.startswith("| bfcl"))
    assert bfcl.endswith("| 62.0 (5,158 tools) | -2.0 |")
    acebench = next(line for line in lines if line.startswith("| acebench_zh"))
    assert acebench.endswith("| – | – |")
    verdict = next(line for line in lines if line.startswith("Target missed"))
    assert "Mixing languages costs the default index at most 2.0 NDCG@10 points" in verdict
