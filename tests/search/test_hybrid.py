from __future__ import annotations

import numpy as np
import pytest

from toolrelay.exceptions import ConfigurationError
from toolrelay.search.base import SearchRequest
from toolrelay.search.bm25 import BM25ToolIndex
from toolrelay.search.hybrid import HybridToolIndex, _rrf, _score_fusion
from toolrelay.search.vector import VectorToolIndex
from toolrelay.testing.embedders import HashingEmbedder

from ._catalog import CATALOG


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
    fused = _score_fusion(lexical, semantic, 0.5)
    # lexical / 4; semantic rescaled so the best is 1 and the median (0.25) is 0
    expected = 0.5 * np.array([1.0, 0.5, 0.0, 0.0]) + 0.5 * np.array([0.0, 1.0, 0.2, 0.0])
    assert np.allclose(fused, expected)
    assert np.allclose(_score_fusion(lexical, semantic, 0.0), lexical / 4)


def test_rrf_counts_only_lexical_matches() -> None:
    lexical = np.array([0.0, 2.0, 1.0], dtype=np.float32)
    semantic = np.array([0.9, 0.1, 0.5], dtype=np.float32)
    fused = _rrf(lexical, semantic, 0.5)
    expected = [0.5 / 61, 0.5 / 61 + 0.5 / 63, 0.5 / 62 + 0.5 / 62]
    assert np.allclose(fused, expected)
