"""The shared machinery of every index: rebuilds, permitted subsets, categories, ranking."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from toolrelay.exceptions import ConfigurationError
from toolrelay.search._base import MAX_QUERY_LENGTH, SearchRequest, SearchResponse, ToolIndex
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.search._documents import ToolText, catalog_fingerprint
from toolrelay.search._hybrid import HybridToolIndex
from toolrelay.search._masks import Mask
from toolrelay.search._regex import RegexToolIndex
from toolrelay.search._scoring import Scores, ScoringToolIndex
from toolrelay.search._vector import VectorToolIndex
from toolrelay.testing._embedders import HashingEmbedder
from toolrelay.tools._base import ToolDefinition

from ._catalog import CATALOG, NAMES


class FixedScores(ScoringToolIndex):
    """Scores each tool by a number in its description; counts builds."""

    search_type = "fixed"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.builds = 0

    def _build(self, definitions: Sequence[ToolDefinition], texts: Sequence[ToolText]) -> Any:
        self.builds += 1
        return np.array([float(d.description) for d in definitions], dtype=np.float32)

    def _score(self, payload: Any, query: str, permitted: Mask | None) -> Scores:
        scores: Scores = payload.copy()
        return scores


def fixed(*scores: float) -> list[ToolDefinition]:
    return [ToolDefinition(name=f"t{i}", description=str(s)) for i, s in enumerate(scores)]


def search(index: ToolIndex, **request: Any) -> list[str]:
    request.setdefault("query", "q")
    return index.search(SearchRequest(**request)).names


def test_indexes_satisfy_the_protocol() -> None:
    assert isinstance(FixedScores(), ToolIndex)
    assert isinstance(BM25ToolIndex(), ToolIndex)


def test_index_rebuilds_only_when_the_fingerprint_changes() -> None:
    index = FixedScores()
    assert index.fingerprint is None
    assert index.index(fixed(1, 2)) is True
    assert index.fingerprint == catalog_fingerprint(fixed(1, 2))
    assert index.index(fixed(1, 2)) is False
    assert index.index(list(reversed(fixed(1, 2)))) is False
    assert index.builds == 1
    assert index.index(fixed(1, 3)) is True
    assert index.builds == 2
    assert search(index) == ["t1", "t0"]


def test_a_quick_build_reports_progress_once_when_done() -> None:
    reports: list[tuple[int, int]] = []
    index = FixedScores()
    index.index(fixed(1, 2, 3), progress=lambda done, total: reports.append((done, total)))
    assert reports == [(3, 3)]
    assert index.index(fixed(1, 2, 3), progress=lambda d, t: reports.append((d, t))) is False
    assert reports == [(3, 3)]  # nothing rebuilt, nothing reported
    BM25ToolIndex().index(CATALOG, progress=lambda d, t: reports.append((d, t)))
    assert reports[-1] == (len(CATALOG), len(CATALOG))
    index.load_models(fixed(1))  # an index without a model has nothing to load


def test_changed_categories_rebuild_too() -> None:
    index = FixedScores()
    index.index(fixed(1, 2))
    assert index.index(fixed(1, 2), categories={"t0": "billing"}) is True
    assert index.index(fixed(1, 2), categories={"t0": ["billing"]}) is False
    assert search(index, category="billing") == ["t0"]


def test_ranking_is_by_score_then_catalog_order_and_zero_scores_do_not_match() -> None:
    index = FixedScores()
    index.index(fixed(1, 3, 0, 3, 2, -1, 3))
    response = index.search(SearchRequest(query="q", max_results=4))
    assert response.names == ["t1", "t3", "t6", "t4"]
    assert [h.score for h in response.hits] == [3.0, 3.0, 3.0, 2.0]
    assert response.total == 5
    assert response.search_type == "fixed"
    assert response.query == "q"
    assert response.time_ms >= 0


def test_ties_at_the_cut_keep_catalog_order() -> None:
    index = FixedScores()
    index.index(fixed(*[1.0] * 30))
    assert search(index, max_results=3) == ["t0", "t1", "t2"]


def test_max_results_and_min_score() -> None:
    index = FixedScores()
    index.index(fixed(*range(1, 21)))
    assert len(search(index, max_results=50)) == 10
    assert search(index, max_results=0) == ["t19"]
    response = index.search(SearchRequest(query="q", min_score=18, max_results=10))
    assert response.names == ["t19", "t18", "t17"]
    assert response.total == 3


def test_allowed_frozenset_filters_inside_the_index() -> None:
    index = FixedScores()
    index.index(fixed(5, 4, 3, 2, 1))
    allowed = frozenset({"t3", "t1", "not-in-catalog"})
    response = index.search(SearchRequest(query="q", allowed=allowed))
    assert response.names == ["t1", "t3"]
    assert response.total == 2
    # the same set again hits the cached bitmap and answers the same
    assert search(index, allowed=frozenset({"t3", "t1", "not-in-catalog"})) == ["t1", "t3"]
    assert search(index, allowed=frozenset()) == []


def test_a_predicate_is_asked_about_every_tool_once_per_search() -> None:
    index = FixedScores()
    index.index(fixed(5, 0, 3, 2, 1))
    asked: list[str] = []

    def allowed(name: str) -> bool:
        asked.append(name)
        return name != "t2"

    response = index.search(SearchRequest(query="q", allowed=allowed, max_results=2))
    assert response.names == ["t0", "t3"]
    assert response.total == 3
    # the permitted subset must be known before anything is scored
    assert asked == ["t0", "t1", "t2", "t3", "t4"]
    as_set = index.search(SearchRequest(query="q", allowed=frozenset({"t0", "t1", "t3", "t4"})))
    assert as_set.names == index.search(SearchRequest(query="q", allowed=allowed)).names


def test_the_backend_is_given_the_permitted_tools_and_the_rest_score_zero() -> None:
    seen: list[Mask | None] = []

    class Recording(FixedScores):
        def _score(self, payload: Any, query: str, permitted: Mask | None) -> Scores:
            seen.append(None if permitted is None else permitted.copy())
            return super()._score(payload, query, permitted)

    index = Recording()
    index.index(fixed(5, 4, 3))
    index.search(SearchRequest(query="q", allowed=frozenset({"t0", "t2"})))
    index.search(SearchRequest(query="q", allowed=frozenset({"t0", "t1", "t2"})))
    index.search(SearchRequest(query="q", allowed=lambda name: True))
    first, *rest = seen
    assert first is not None
    assert first.tolist() == [True, False, True]
    assert rest == [None, None]  # everything permitted: no mask at all
    assert index.scores("q", np.array([True, False, True])).tolist() == [5.0, 0.0, 3.0]


def test_categories_from_dotted_names_and_explicit_mapping() -> None:
    index = BM25ToolIndex()
    index.index(CATALOG, categories={"send_email": "messaging", "get_weather": ["weather"]})
    assert search(index, query="refund order", category="refund") == [
        "refund.issueRefund",
        "refund.find_failed_orders",
    ]
    assert search(index, query="email", category="messaging") == ["send_email"]
    assert search(index, query="email", category="weather") == []
    assert search(index, query="email", category="no-such-category") == []


def test_many_conversations_share_one_index_with_their_own_views() -> None:
    index = BM25ToolIndex()
    index.index(CATALOG)
    views = {
        "support": frozenset({"refund.issueRefund", "shop_search_orders"}),
        "weather": frozenset({"get_weather", "get_forecast"}),
    }
    for _ in range(3):  # every conversation re-indexes: a no-op after the first
        assert index.index(CATALOG) is False
    assert search(index, query="order refund weather", allowed=views["support"]) == [
        "refund.issueRefund",
        "shop_search_orders",
    ]
    assert search(index, query="order refund weather", allowed=views["weather"]) == [
        "get_weather",
        "get_forecast",
    ]


def test_clear_and_empty_catalog() -> None:
    index = FixedScores()
    index.index(fixed(1))
    index.clear()
    assert index.fingerprint is None
    assert index.names == ()
    assert index.search(SearchRequest(query="q")).total == 0
    assert index.index([]) is True
    assert search(index) == []
    assert len(index.scores("q")) == 0


def test_names_scores_and_len_follow_catalog_order() -> None:
    index = BM25ToolIndex()
    index.index(CATALOG)
    assert index.names == NAMES
    assert len(index) == len(CATALOG)
    scores = index.scores("email")
    assert scores.shape == (len(CATALOG),)
    assert NAMES[int(np.argmax(scores))] == "send_email"


def test_concurrent_searches_during_rebuilds_see_a_whole_catalog() -> None:
    index = FixedScores()
    index.index(fixed(1, 2))
    errors: list[BaseException] = []

    def searcher() -> None:
        try:
            for _ in range(200):
                names = search(index, max_results=10)
                assert names in (["t1", "t0"], ["t2", "t1", "t0"])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=searcher) for _ in range(4)]
    for thread in threads:
        thread.start()
    for i in range(50):
        index.index(fixed(1, 2) if i % 2 else fixed(1, 2, 3))
    for thread in threads:
        thread.join()
    assert errors == []


def test_prerequisite_lift_brings_the_finder_along() -> None:
    # shop_get_order_order_id requires order_id; shop_search_orders finds orders.
    query = "status and totals of order 42"
    plain = BM25ToolIndex(prerequisite_lift=None)
    lifted = BM25ToolIndex(prerequisite_lift=0.9)
    for index in (plain, lifted):
        index.index(CATALOG)
    before = {h.name: h.score for h in plain.search(SearchRequest(query=query)).hits}
    after = {h.name: h.score for h in lifted.search(SearchRequest(query=query)).hits}
    consumer = before["shop_get_order_order_id"]
    assert before["shop_search_orders"] < 0.5 * consumer
    assert after["shop_search_orders"] == pytest.approx(0.9 * consumer)
    assert after["shop_get_order_order_id"] == consumer
    # the lift is applied to search results, not to the raw scores fusing indexes read
    assert np.array_equal(lifted.scores(query), plain.scores(query))


@pytest.mark.parametrize("query", ["", "   ", "the of and", "zzzz"])
def test_queries_without_known_terms_find_nothing(query: str) -> None:
    index = BM25ToolIndex()
    index.index(CATALOG)
    response = index.search(SearchRequest(query=query))
    assert response.hits == ()
    assert response.total == 0


def test_min_relative_score_keeps_hits_close_to_the_best() -> None:
    index = FixedScores(prerequisite_lift=None)
    index.index(fixed(10.0, 4.9, 5.0, 8.0, 1.0))
    assert search(index, max_results=5) == ["t0", "t3", "t2", "t1", "t4"]
    assert search(index, max_results=5, min_relative_score=0.5) == ["t0", "t3", "t2"]
    assert search(index, max_results=5, min_relative_score=1.0) == ["t0"]
    assert search(index, max_results=5, min_relative_score=0.0) == ["t0", "t3", "t2", "t1", "t4"]
    # relative to the best *permitted* hit, after max_results
    assert search(index, max_results=2, min_relative_score=0.5, allowed={"t1", "t2"}) == [
        "t2",
        "t1",
    ]


@pytest.mark.parametrize("ratio", [-0.1, 1.5])
def test_min_relative_score_outside_zero_to_one_is_refused(ratio: float) -> None:
    with pytest.raises(ConfigurationError, match="min_relative_score"):
        SearchRequest(query="q", min_relative_score=ratio)


HOSTILE_QUERIES = (
    "weather " * 2_000_000,  # 16 MB
    " ".join(f"w{i}x" for i in range(200_000)),  # 200,000 distinct terms
    "退款失败的订单" * 300_000,
    r"(a+)+$",
    r"((((.*)*)*)*)*x" * 200,
    "(" * 5000 + "a" + ")" * 5000,
)


@pytest.mark.parametrize(
    "make",
    [
        BM25ToolIndex,
        RegexToolIndex,
        lambda: VectorToolIndex(HashingEmbedder(), cache=False),
        lambda: HybridToolIndex(BM25ToolIndex(), VectorToolIndex(HashingEmbedder(), cache=False)),
    ],
    ids=["bm25", "regex", "vector", "hybrid"],
)
def test_every_index_answers_hostile_queries_in_bounded_time(make: Any) -> None:
    index = make()
    hostile = ToolDefinition(name="x.y", description="a" * 5000 + "!")
    index.index([*CATALOG, hostile])
    for query in HOSTILE_QUERIES:
        done: list[SearchResponse] = []
        worker = threading.Thread(
            target=lambda q=query, out=done: out.append(index.search(SearchRequest(query=q))),
            daemon=True,
        )
        worker.start()
        worker.join(20)
        assert done, f"still searching {query[:20]!r}... after 20 s"
        assert len(done[0].query) <= MAX_QUERY_LENGTH
