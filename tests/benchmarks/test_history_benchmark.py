"""The usage-history benchmark's bookkeeping: the log it builds, the poisoning, the scoring.

Running it over the datasets is the benchmark itself (minutes); these tests run its
cross-validation on a small catalog, where the answer is known.
"""

from __future__ import annotations

from toolrelay.search import BM25ToolIndex, UsageEntry
from toolrelay.search._evaluation import EvalDataset, EvalQuery
from toolrelay.tools._base import ToolDefinition

from ._scripts import RETRIEVAL, load_script

history = load_script(RETRIEVAL / "history.py", "benchmark_retrieval_history")

TOOLS = tuple(
    ToolDefinition(name=n, description=d, input_schema={"type": "object", "properties": {}})
    for n, d in [
        ("refund", "Refund a card payment."),
        ("track", "Track a shipped parcel."),
        ("ticket", "Open a support ticket."),
    ]
)


def query(i: int, text: str, tool: str) -> EvalQuery:
    return EvalQuery(id=f"q{i}", query=text, relevant=(tool,))


def test_the_log_has_one_entry_per_relevant_tool() -> None:
    queries = [EvalQuery(id="a", query="q", relevant=("refund", "ticket"))]
    assert [(e.query, e.tool) for e in history.log_of(queries, 1.0)] == [
        ("q", "refund"),
        ("q", "ticket"),
    ]


def test_poisoning_repoints_the_share_of_entries_at_wrong_tools_only() -> None:
    entries = [UsageEntry(query=f"q{i}", tool="refund", last_used=1.0) for i in range(100)]
    poisoned = history.poisoned(entries, ["refund", "track", "ticket"], 0.1)
    changed = [p for e, p in zip(entries, poisoned, strict=True) if p.tool != e.tool]
    assert len(changed) == 10
    assert all(p.tool in {"track", "ticket"} for p in changed)
    assert [p.query for p in poisoned] == [e.query for e in entries]


def test_history_from_the_other_half_finds_what_descriptions_do_not() -> None:
    # Users ask in words no description has; each need appears once in each half.
    needs = [
        ("my money back", "refund"),
        ("where is my box", "track"),
        ("talk to a human", "ticket"),
    ]
    queries = [query(i, text, tool) for i, (text, tool) in enumerate(needs * 2)]
    dataset = EvalDataset(name="tiny", tools=TOOLS, queries=tuple(queries))
    index = BM25ToolIndex()
    index.index(TOOLS)
    row = history.cross_validated(index, dataset)
    assert row["none"]["ndcg10"] == 0.0
    assert row["log"]["ndcg10"] == 100.0
    assert row["gain"] == 100.0
    assert row["covered"] == 100
    assert row["poison_drop"] >= 0.0


def test_the_table_has_a_row_per_dataset_and_index() -> None:
    row = {
        "covered": 40,
        "index": "bm25",
        "none": {"ndcg10": 1.0, "complete5": 2.0},
        "log": {"ndcg10": 3.0, "complete5": 4.0},
        "poisoned": {"ndcg10": 2.5, "complete5": 4.0},
        "gain": 2.0,
        "poison_drop": 0.5,
    }
    results = {
        "date": "2026-12-02",
        "poison_share": 0.1,
        "repetition_ratio": 1.333,
        "datasets": {"bfcl": {"bm25": row}},
    }
    text = history.markdown(results)
    assert "| BFCL | 40% | bm25 | 1.0 / 2.0 | 3.0 / 4.0 | +2.0 | 2.5 / 4.0 | 0.5 |" in text
    assert "1.33×" in text
