from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.search._evaluation import (
    EvalQuery,
    evaluate,
    evaluate_ranking,
    load_dataset,
    unknown_relevant,
)

from ._catalog import CATALOG


def q(id: str, *relevant: str) -> EvalQuery:
    return EvalQuery(id=id, query=id, relevant=tuple(relevant))


def fixed(rankings: dict[str, list[str]]):  # type: ignore[no-untyped-def]
    return lambda query, k: rankings[query][:k]


def test_metrics_of_one_query_by_hand() -> None:
    report = evaluate_ranking(
        fixed({"q1": ["x", "a", "y", "b", "z", "c"]}), [q("q1", "a", "b", "c")]
    )
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    dcg = 1 / math.log2(3) + 1 / math.log2(5) + 1 / math.log2(7)
    assert report.queries == 1
    assert report.recall[1] == 0
    assert report.recall[3] == pytest.approx(100 / 3)
    assert report.recall[5] == pytest.approx(200 / 3)
    assert report.recall[10] == pytest.approx(100)
    assert report.ndcg_at_10 == pytest.approx(100 * dcg / ideal)
    assert report.mrr == pytest.approx(50)
    assert report.complete_at_5 == 0
    assert not report.lenient


def test_averages_over_queries_and_misses_count_zero() -> None:
    report = evaluate_ranking(
        fixed({"q1": ["a", "b"], "q2": ["z"]}), [q("q1", "a", "b"), q("q2", "c")]
    )
    assert report.recall[1] == pytest.approx(25)
    assert report.complete_at_5 == pytest.approx(50)
    assert report.mrr == pytest.approx(50)
    assert report.ndcg_at_10 == pytest.approx(50)
    assert report.metrics()["Complete@5"] == pytest.approx(50)
    assert list(report.metrics()) == ["R@1", "R@3", "R@5", "R@10", "NDCG@10", "MRR", "Complete@5"]
    assert report.subset("q2").queries == 1
    assert report.subset("q2").mrr == 0


def test_lenient_scoring_maps_variants_and_counts_an_original_once() -> None:
    name_map = {"weather__v2": "weather", "weather__v3": "weather"}
    rank = fixed({"q1": ["weather__v2", "weather__v3", "other"]})
    strict = evaluate_ranking(rank, [q("q1", "weather__v3")])
    lenient = evaluate_ranking(rank, [q("q1", "weather__v3")], name_map)
    assert strict.mrr == pytest.approx(50)
    assert lenient.mrr == pytest.approx(100)
    assert lenient.lenient
    # two relevant variants of one original are one relevant tool; the duplicate is no hit
    both = evaluate_ranking(rank, [q("q1", "weather__v2", "weather__v3")], name_map)
    assert both.outcomes[0].hit_ranks == (1,)
    assert both.outcomes[0].relevant == 1
    assert both.ndcg_at_10 == pytest.approx(100)


def test_unknown_relevant_names_the_queries_whose_tools_are_not_in_the_catalog() -> None:
    queries = [
        EvalQuery(id="a", query="q", relevant=("get_weather",)),
        EvalQuery(id="b", query="q", relevant=("get_wether", "send_email", "get_time")),
        EvalQuery(id="c", query="q", relevant=("orig",)),  # held as a variant, via the map
    ]
    names = ["get_weather", "send_email", "orig__v2"]
    found = unknown_relevant(queries, names, {"orig__v2": "orig"})
    assert [(q.id, missing) for q, missing in found] == [("b", ("get_wether", "get_time"))]
    assert [q.id for q, _ in unknown_relevant(queries, names)] == ["b", "c"]


def test_rankings_are_cut_at_ten() -> None:
    report = evaluate_ranking(lambda query, k: [f"t{i}" for i in range(20)], [q("q", "t12")])
    assert report.outcomes[0].retrieved == tuple(f"t{i}" for i in range(10))
    assert report.recall[10] == 0


def test_evaluate_indexes_the_catalog_and_searches_it() -> None:
    index = BM25ToolIndex()
    queries = [
        EvalQuery(id="a", query="weather in Paris", relevant=("get_weather",)),
        EvalQuery(
            id="b",
            query="refund a failed payment",
            relevant=("refund.find_failed_orders", "refund.issueRefund"),
        ),
    ]
    report = evaluate(index, CATALOG, queries)
    assert index.names
    assert report.complete_at_5 == 100
    assert report.ndcg_at_10 == 100
    assert report.search_ms >= 0


def test_load_dataset(tmp_path: Path) -> None:
    (tmp_path / "tools.jsonl").write_text(
        json.dumps({"name": "a", "description": "A.", "parameters": {"type": "object"}})
        + "\n\n"
        + json.dumps({"name": "a__v2", "description": None, "parameters": None})
        + "\n"
    )
    (tmp_path / "queries.dev.jsonl").write_text(
        json.dumps({"id": 1, "query": "find a", "relevant": ["a__v2"]}) + "\n"
    )
    plain = load_dataset(tmp_path)
    assert [t.name for t in plain.tools] == ["a", "a__v2"]
    assert plain.tools[1].description == ""
    assert plain.tools[1].input_schema == {"type": "object", "properties": {}}
    assert plain.queries == (EvalQuery(id="1", query="find a", relevant=("a__v2",)),)
    assert plain.name_map is None
    (tmp_path / "name_map.json").write_text(json.dumps({"a__v2": "a"}))
    assert load_dataset(tmp_path).name_map == {"a__v2": "a"}
