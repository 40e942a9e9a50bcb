from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from toolrelay.lint._query_vectors import BatchedQueryEmbedder
from toolrelay.search._cache import EmbeddingCache
from toolrelay.search._embedders import EmbeddingKind


class LengthEmbedder:
    """Vectors from text lengths; records each call."""

    model_id = "test/length"

    def __init__(self) -> None:
        self.calls: list[tuple[EmbeddingKind, list[str]]] = []

    def embed(self, texts: Sequence[str], *, kind: EmbeddingKind) -> npt.NDArray[np.float32]:
        self.calls.append((kind, list(texts)))
        return np.asarray([[len(t), 1.0] for t in texts], dtype=np.float32)


def test_primed_queries_are_answered_from_memory() -> None:
    base = LengthEmbedder()
    batched = BatchedQueryEmbedder(base)
    batched.prime(["a", "bb", "a"])
    assert base.calls == [("query", ["a", "bb"])]
    vectors = batched.embed(["bb"], kind="query")
    assert vectors.tolist() == [[2.0, 1.0]]
    assert len(base.calls) == 1
    assert batched.model_id == "test/length"


def test_only_unprimed_queries_and_documents_reach_the_embedder() -> None:
    base = LengthEmbedder()
    batched = BatchedQueryEmbedder(base)
    batched.prime(["a"])
    assert batched.embed(["a", "ccc"], kind="query").tolist() == [[1.0, 1.0], [3.0, 1.0]]
    batched.embed(["dddd"], kind="document")
    assert base.calls[1:] == [("query", ["ccc"]), ("document", ["dddd"])]


def test_vectors_survive_in_the_disk_cache(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "vectors.sqlite3")
    BatchedQueryEmbedder(LengthEmbedder(), cache=cache).prime(["a", "bb"])
    assert cache.count("test/length") == 2
    base = LengthEmbedder()
    again = BatchedQueryEmbedder(base, cache=cache)
    again.prime(["a", "bb", "new"])
    assert base.calls == [("query", ["new"])]
    assert again.embed(["bb"], kind="query").tolist() == [[2.0, 1.0]]


def test_a_broken_cache_is_skipped_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "not-a-file"
    folder.mkdir()
    batched = BatchedQueryEmbedder(LengthEmbedder(), cache=EmbeddingCache(folder))
    with caplog.at_level(logging.WARNING):
        batched.prime(["a"])
    assert batched.embed(["a"], kind="query").tolist() == [[1.0, 1.0]]
    assert "embedding cache not used" in caplog.text
