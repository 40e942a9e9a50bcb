from __future__ import annotations

import numpy as np
import pytest

from toolrelay.exceptions import ConfigurationError
from toolrelay.search._base import SearchRequest
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.search._hybrid import HybridToolIndex, _rrf, score_fusion
from toolrelay.search._vector import VectorToolIndex
from toolrelay.testing._embedders import HashingEmbedder
from toolrelay.tools._base import ToolDefinition

from ._catalog import CATALOG
from ._permissions import (
    PERMITTED,
    QUERIES,
    assert_equals_an_index_of_the_subset,
    assert_ranks_permitted_tools_alone,
)


def hybrid(**kwargs: object) -> HybridToolIndex:
    semantic = VectorToolIndex(HashingEmbedder(), cache=False)
    return HybridToolIndex(BM25ToolIndex(), semantic, **kwargs)  # type: ignore[arg-type]


def names(index: HybridToolIndex, query: str, k: int = 5) -> list[str]:
    return index.search(SearchRequest(query=query, max_results=k)).names


@pytest.mark.parametrize("fusion", ["score", "rrf"])
def test_rankings(fusion: str) -> None:
    index = hybrid(fusion=fusion)
    index.index(CATALOG)
    assert names(index, "weather in Paris", 2) == ["get_weather", "get_forecast"]
    assert names(index, "refund a failed payment", 2) == [
        "refund.find_failed_orders",
        "refund.issueRefund",
    ]
    assert names(index, "send a message by email", 1) == ["send_email"]


def test_indexing_the_hybrid_indexes_both_sides_once() -> None:
    index = hybrid()
    assert index.index(CATALOG) is True
    assert index.lexical.names == index.semantic.names == index.names
    assert index.index(CATALOG) is False
    embedder = index.semantic.embedder  # type: ignore[attr-defined]
    assert embedder.kinds == ["document"]


def test_a_side_reindexed_behind_its_back_is_an_error() -> None:
    index = hybrid()
    index.index(CATALOG)
    index.lexical.index(CATALOG[:3])
    with pytest.raises(ConfigurationError, match="re-indexed"):
        index.search(SearchRequest(query="weather"))


def test_semantic_weight_is_validated() -> None:
    with pytest.raises(ConfigurationError):
        hybrid(semantic_weight=1.5)


def test_score_fusion_normalises_each_side() -> None:
    lexical = np.array([4.0, 2.0, 0.0, 0.0], dtype=np.float32)
    semantic = np.array([0.1, 0.5, 0.3, 0.2], dtype=np.float32)
    fused = score_fusion(lexical, semantic, 0.5)
    # lexical / 4; semantic rescaled so the best is 1 and the median (0.25) is 0
    expected = 0.5 * np.array([1.0, 0.5, 0.0, 0.0]) + 0.5 * np.array([0.0, 1.0, 0.2, 0.0])
    assert np.allclose(fused, expected)
    assert np.allclose(score_fusion(lexical, semantic, 0.0), lexical / 4)


def test_score_fusion_rescales_the_semantic_side_around_a_given_median() -> None:
    lexical = np.array([0.0, 0.0, 0.0])
    semantic = np.array([0.9, 0.5, 0.1])
    # 0.5 is the median of these three; the catalog's (0.3) is lower.
    assert np.allclose(score_fusion(lexical, semantic, 1.0), [1.0, 0.0, 0.0])
    assert np.allclose(score_fusion(lexical, semantic, 1.0, median=0.3), [1.0, 1 / 3, 0.0])
    # A side with nothing to tell apart contributes nothing.
    assert np.allclose(score_fusion(lexical, semantic, 0.5, median=0.95), [0.0, 0.0, 0.0])


def test_score_fusion_of_nothing_is_nothing() -> None:
    empty = np.zeros(0, dtype=np.float32)
    fused = score_fusion(empty, empty, 0.5)
    assert fused.shape == (0,)
    assert fused.dtype == np.float32


def test_candidate_fusion_with_the_catalog_median_is_the_catalog_fusion() -> None:
    # What the PostgreSQL index relies on: it scores only the best keyword and semantic
    # candidates, with the catalog's median, and must rank them as the whole catalog would.
    rng = np.random.default_rng(7)
    lexical = np.where(rng.random(200) > 0.7, rng.random(200) * 9, 0.0).astype(np.float32)
    semantic = (rng.random(200) * 2 - 1).astype(np.float32)
    whole = score_fusion(lexical, semantic, 0.4)
    top = 20
    candidates = np.union1d(np.argsort(-lexical)[:top], np.argsort(-semantic)[:top])
    subset = score_fusion(
        lexical[candidates].astype(np.float64),
        semantic[candidates].astype(np.float64),
        0.4,
        median=float(np.median(semantic)),
    )
    assert subset.dtype == np.float32
    assert np.allclose(subset, whole[candidates], atol=1e-6)
    assert 0 < candidates.size < lexical.size
    # Without the catalog's median the subset's own median would shift every score.
    own = score_fusion(lexical[candidates], semantic[candidates], 0.4)
    assert not np.allclose(own, whole[candidates], atol=1e-6)


def test_rrf_counts_only_lexical_matches() -> None:
    lexical = np.array([0.0, 2.0, 1.0], dtype=np.float32)
    semantic = np.array([0.9, 0.1, 0.5], dtype=np.float32)
    fused = _rrf(lexical, semantic, 0.5)
    expected = [0.5 / 61, 0.5 / 61 + 0.5 / 63, 0.5 / 62 + 0.5 / 62]
    assert np.allclose(fused, expected)


def test_sides_given_before_indexing_are_kept() -> None:
    # an index that holds no catalog yet has length 0; it must still count as given
    lexical, semantic = BM25ToolIndex(), VectorToolIndex(HashingEmbedder(), cache=False)
    index = HybridToolIndex(lexical, semantic)
    assert index.lexical is lexical
    assert index.semantic is semantic


def test_progress_comes_from_the_semantic_side() -> None:
    reports: list[tuple[int, int]] = []
    index = hybrid()
    index.index(CATALOG, progress=lambda done, total: reports.append((done, total)))
    assert reports == [(0, len(CATALOG)), (len(CATALOG), len(CATALOG))]


def test_progress_says_done_when_the_semantic_side_was_up_to_date() -> None:
    index = hybrid()
    index.semantic.index(CATALOG)  # built already: it has nothing to report
    reports: list[tuple[int, int]] = []
    index.index(CATALOG, progress=lambda done, total: reports.append((done, total)))
    assert reports == [(len(CATALOG), len(CATALOG))]


@pytest.mark.parametrize("fusion", ["score", "rrf"])
def test_a_forbidden_tool_changes_no_answer(fusion: str) -> None:
    assert_ranks_permitted_tools_alone(lambda: hybrid(fusion=fusion))


def test_scores_are_normalised_over_the_permitted_tools() -> None:
    # The forbidden tool is the best match on both sides: over the whole catalog it would be
    # the 1 that every other score is divided by.
    best = ToolDefinition(name="zz.weather", description="Weather weather weather in Paris.")
    index = hybrid()
    index.index([*CATALOG, best])
    permitted = frozenset(t.name for t in CATALOG)
    hits = index.search(SearchRequest(query="weather in Paris", allowed=permitted)).hits
    assert hits[0].name == "get_weather"
    assert hits[0].score == pytest.approx(1.0)  # the best permitted tool leads both sides
    assert index.search(SearchRequest(query="weather in Paris")).names[0] == "zz.weather"


def test_random_permitted_subsets_rank_as_an_index_of_the_subset_alone() -> None:
    assert_equals_an_index_of_the_subset(hybrid, PERMITTED, QUERIES, subsets=6)
