from __future__ import annotations

import dataclasses

import pytest

from toolrelay.search._base import (
    DEFAULT_MAX_RESULTS,
    MAX_QUERY_LENGTH,
    MAX_RESULTS_LIMIT,
    SearchHit,
    SearchRequest,
    SearchResponse,
)


@pytest.mark.parametrize(
    ("asked", "clamped"), [(-3, 1), (0, 1), (1, 1), (7, 7), (10, 10), (11, 10), (500, 10)]
)
def test_max_results_is_clamped_to_one_through_ten(asked: int, clamped: int) -> None:
    assert SearchRequest(query="x", max_results=asked).max_results == clamped


def test_defaults() -> None:
    request = SearchRequest(query="weather")
    assert request.max_results == DEFAULT_MAX_RESULTS == 5
    assert MAX_RESULTS_LIMIT == 10
    assert request.min_score is None
    assert request.allowed is None
    assert request.category is None


def test_allowed_collections_become_frozensets_and_predicates_stay() -> None:
    assert SearchRequest(query="x", allowed={"a", "b"}).allowed == frozenset({"a", "b"})  # type: ignore[arg-type]
    assert SearchRequest(query="x", allowed=["a"]).allowed == frozenset({"a"})  # type: ignore[arg-type]
    names = frozenset({"a"})
    assert SearchRequest(query="x", allowed=names).allowed is names

    def predicate(name: str) -> bool:
        return name.startswith("a")

    assert SearchRequest(query="x", allowed=predicate).allowed is predicate


def test_value_objects_are_frozen_and_keyword_only() -> None:
    request = SearchRequest(query="x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.query = "y"  # type: ignore[misc]
    with pytest.raises(TypeError):
        SearchRequest("x")  # type: ignore[misc]
    with pytest.raises(TypeError):
        SearchHit("a", 1.0, "s")  # type: ignore[misc]


def test_response_names_and_hits_tuple() -> None:
    hits = [SearchHit(name="a", score=2.0, summary=""), SearchHit(name="b", score=1.0, summary="")]
    response = SearchResponse(hits=hits, total=7, search_type="bm25", query="q", time_ms=0.1)  # type: ignore[arg-type]
    assert response.hits == tuple(hits)
    assert response.names == ["a", "b"]


def test_a_query_is_cut_to_the_longest_a_search_reads() -> None:
    assert SearchRequest(query="x" * (MAX_QUERY_LENGTH + 10)).query == "x" * MAX_QUERY_LENGTH
    assert SearchRequest(query="refund").query == "refund"
