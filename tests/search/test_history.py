"""Ranking with usage history: bounds, identity without history, scopes of tools, weights."""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import numpy as np
import pytest

from tests.search._catalog import CATALOG
from toolrelay.exceptions import ConfigurationError
from toolrelay.search import (
    BM25ToolIndex,
    HybridToolIndex,
    RegexToolIndex,
    ScoringToolIndex,
    SearchRequest,
    UsageEntry,
    VectorToolIndex,
)
from toolrelay.search._history import DEFAULT_HALF_LIFE, QueryHistory, confidence
from toolrelay.testing import HashingEmbedder

NAMES = [t.name for t in CATALOG]
DAY = 86400.0
NOW = 1_800_000_000.0


def vector() -> VectorToolIndex:
    return VectorToolIndex(HashingEmbedder(), cache=False)


INDEXES: dict[str, Callable[[], ScoringToolIndex]] = {
    "bm25": BM25ToolIndex,
    "regex": RegexToolIndex,
    "vector": vector,
    "hybrid": lambda: HybridToolIndex(BM25ToolIndex(), vector()),
}


def history(*pairs: tuple[str, str], count: int = 1, age: float = 0.0) -> QueryHistory:
    entries = [UsageEntry(query=q, tool=t, count=count, last_used=NOW - age) for q, t in pairs]
    return QueryHistory.of(entries, now=NOW)


@pytest.fixture(params=list(INDEXES))
def index(request: pytest.FixtureRequest) -> ScoringToolIndex:
    built = INDEXES[request.param]()
    built.index(CATALOG)
    return built


def hits(index: ScoringToolIndex, query: str, **options: object) -> list[tuple[str, float]]:
    request = SearchRequest(query=query, max_results=10, **options)  # type: ignore[arg-type]
    return [(h.name, h.score) for h in index.search(request).hits]


QUERIES = ["weather in Paris", "refund my order", "orders that failed to pay", "kettle"]


def test_no_history_and_an_empty_history_rank_exactly_as_without(index: ScoringToolIndex) -> None:
    for query in QUERIES:
        plain = hits(index, query)
        assert hits(index, query, history=QueryHistory.of([])) == plain
        # A history of tools the catalog does not have is no history either.
        assert hits(index, query, history=history(("refund my order", "gone.tool"))) == plain


def test_a_past_query_finds_the_tool_it_led_to_in_the_users_own_words(
    index: ScoringToolIndex,
) -> None:
    words = "kettle arrived broken"
    plain = hits(index, words)
    assert not plain or plain[0][0] != "refund.issueRefund"
    found = hits(index, words, history=history((words, "refund.issueRefund")))
    assert found[0][0] == "refund.issueRefund"


def test_tools_without_history_keep_their_exact_scores(index: ScoringToolIndex) -> None:
    query = "weather forecast for a city"
    plain = dict(hits(index, query))
    boosted = dict(hits(index, query, history=history((query, "get_forecast"))))
    assert boosted["get_forecast"] > plain["get_forecast"]
    for name, score in plain.items():
        if name != "get_forecast":
            assert boosted[name] == score


@pytest.mark.parametrize("weight", [0.25, 1.0, 3.0])
def test_no_history_lifts_a_tool_by_more_than_the_weight(weight: float) -> None:
    for make in INDEXES.values():
        index = make()
        index.history_weight = weight
        index.index(CATALOG)
        query = "weather in Paris"
        plain = dict(hits(index, query))
        # 10,000 repeats of the query itself, pointing at an unrelated tool.
        poisoned = history((query, "refund.issueRefund"), count=10_000)
        boosted = dict(hits(index, query, history=poisoned))
        lift = boosted["refund.issueRefund"] - plain.get("refund.issueRefund", 0.0)
        # At most the weight, as a share of the best score where that is above 1 (BM25's).
        assert 0 < lift <= weight * max(1.0, max(plain.values())) + 1e-5


def test_a_query_repeated_ten_thousand_times_weighs_at_most_four_thirds_of_one() -> None:
    assert confidence(1, 0.0) == 0.75
    assert confidence(10_000, 0.0) <= 1.0 == pytest.approx(confidence(10_000, 0.0))
    once = history(("weather in Paris", "refund.issueRefund")).weights[0]
    many = history(("weather in Paris", "refund.issueRefund"), count=10_000).weights[0]
    assert many / once <= 4 / 3


def test_old_entries_count_less_halving_per_half_life() -> None:
    fresh = history(("a", "get_weather")).weights[0]
    old = history(("a", "get_weather"), age=DEFAULT_HALF_LIFE).weights[0]
    assert old == pytest.approx(fresh / 2)
    index = BM25ToolIndex()
    index.index(CATALOG)
    words = "kettle arrived broken"
    recent = dict(hits(index, words, history=history((words, "refund.issueRefund"))))
    ancient = history((words, "refund.issueRefund"), age=10 * DEFAULT_HALF_LIFE)
    assert dict(hits(index, words, history=ancient))["refund.issueRefund"] < (
        recent["refund.issueRefund"] / 100
    )


def test_one_query_and_tool_merge_into_one_entry() -> None:
    merged = QueryHistory.of(
        [
            UsageEntry(query="q", tool="t", scope="a", count=2, last_used=NOW - DAY),
            UsageEntry(query="q", tool="t", scope="b", count=3, last_used=NOW),
        ],
        now=NOW,
    )
    assert (merged.queries, merged.tools) == (("q",), ("t",))
    assert merged.weights == (confidence(5, 0.0),)


def test_the_key_changes_with_the_content_and_not_with_its_order() -> None:
    a, b = ("refund my order", "refund.issueRefund"), ("weather", "get_weather")
    assert history(a, b).key == history(b, a).key
    assert history(a).key != history(a, b).key
    assert history(a).key != history(a, count=2).key


def test_permitted_tools_rank_as_an_index_of_them_with_their_history(
    index: ScoringToolIndex,
) -> None:
    rng = random.Random(7)
    queries = ["refund my order", "weather in Paris", "failed payments", "search orders"]
    pairs = [(rng.choice(queries), rng.choice(NAMES)) for _ in range(20)]
    for _ in range(5):
        allowed = frozenset(rng.sample(NAMES, len(NAMES) // 2))
        alone = type(index)() if not isinstance(index, VectorToolIndex | HybridToolIndex) else None
        if alone is None:
            alone = vector() if isinstance(index, VectorToolIndex) else INDEXES["hybrid"]()
        alone.index([t for t in CATALOG if t.name in allowed])
        kept = [p for p in pairs if p[1] in allowed]
        for query in queries:
            within = hits(index, query, allowed=allowed, history=history(*pairs))
            expected = hits(alone, query, history=history(*kept))
            assert [n for n, _ in within] == [n for n, _ in expected]
            assert np.allclose([s for _, s in within], [s for _, s in expected], atol=1e-5)


def test_a_weight_of_zero_ignores_history_and_a_negative_one_is_refused() -> None:
    index = BM25ToolIndex(history_weight=0.0)
    index.index(CATALOG)
    words = "kettle arrived broken"
    assert hits(index, words, history=history((words, "refund.issueRefund"))) == hits(index, words)
    with pytest.raises(ConfigurationError, match="history_weight must be 0 or more"):
        BM25ToolIndex(history_weight=-1.0)


def test_past_queries_are_embedded_once_per_history_as_queries() -> None:
    embedder = HashingEmbedder()
    index = VectorToolIndex(embedder, cache=False)
    index.index(CATALOG)
    past = history(("kettle arrived broken", "refund.issueRefund"), ("too hot", "get_weather"))
    before = embedder.texts_embedded
    for query in ["kettle", "hot weather", "kettle"]:
        index.search(SearchRequest(query=query, history=past))
    embedded = embedder.texts_embedded - before
    assert embedded == 2 + 2  # the two past queries once, the two distinct queries once each
    assert "query" in embedder.kinds


def test_a_search_with_history_stays_fast_enough_to_build_once() -> None:
    # What is built for a history is kept per history: a second search reuses it.
    index = BM25ToolIndex()
    index.index(CATALOG)
    past = history(*[(f"query {i} refund", "refund.issueRefund") for i in range(200)])
    index.search(SearchRequest(query="refund", history=past))
    memo = index._evidence._built
    assert len(memo) == 1
    index.search(SearchRequest(query="weather", history=past))
    assert len(memo) == 1
    assert time.time() > 0  # the memo, not a clock, is what this test checks


def test_a_hit_says_what_history_added_and_which_past_query(index: ScoringToolIndex) -> None:
    words = "kettle arrived broken"
    past = history((words, "refund.issueRefund"), ("unrelated words", "get_weather"))
    response = index.search(SearchRequest(query=words, history=past))
    top = response.hits[0]
    assert (top.name, top.history_query) == ("refund.issueRefund", words)
    assert 0 < top.history_score <= top.score
    plain = index.search(SearchRequest(query=words))
    assert all(h.history_score == 0.0 and h.history_query is None for h in plain.hits)


def test_a_changed_log_cuts_only_its_new_queries_into_terms() -> None:
    index = BM25ToolIndex()
    index.index(CATALOG)
    cut: list[str] = []
    tokenizer = index._past_terms.tokenizer

    class Counting:
        def terms(self, text: str) -> list[str]:
            cut.append(text)
            return tokenizer.terms(text)

    index._past_terms.tokenizer = Counting()  # type: ignore[assignment]
    pairs = [(f"refund order number {i}", "refund.issueRefund") for i in range(50)]
    index.search(SearchRequest(query="refund", history=history(*pairs)))
    assert len(cut) == 50 + 1  # every past query, and the query
    cut.clear()
    grown = history(*pairs, ("where is my parcel", "shop_search_orders"))
    found = index.search(SearchRequest(query="parcel", history=grown))
    assert cut == ["where is my parcel", "parcel"]
    assert found.hits[0].name == "shop_search_orders"


def test_an_index_ranks_history_when_it_compares_past_queries_and_weighs_them() -> None:
    for make in INDEXES.values():
        assert make().ranks_history
    assert not BM25ToolIndex(history_weight=0.0).ranks_history

    class OwnScores(ScoringToolIndex):
        """A scoring index of one's own that says nothing about past queries."""

        def _build(self, definitions: object, texts: object) -> object:
            return None

        def _score(self, payload: object, query: str, permitted: object) -> object:
            raise AssertionError

    assert not OwnScores().ranks_history
