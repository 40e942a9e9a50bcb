from __future__ import annotations

import pytest

from toolrelay.search import _factory as factory
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.search._hybrid import HybridToolIndex
from toolrelay.search._vector import VectorToolIndex
from toolrelay.testing._embedders import HashingEmbedder


def test_bm25_when_the_embeddings_extra_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(factory, "any_embedder_available", lambda: False)
    assert isinstance(factory.default_index(), BM25ToolIndex)


def test_hybrid_with_an_embedder_given() -> None:
    embedder = HashingEmbedder()
    index = factory.default_index(embedder=embedder, cache=False)
    assert isinstance(index, HybridToolIndex)
    assert isinstance(index.semantic, VectorToolIndex)
    assert index.semantic.embedder is embedder
    assert isinstance(index.lexical, BM25ToolIndex)


def test_hybrid_when_the_embeddings_extra_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(factory, "any_embedder_available", lambda: True)
    monkeypatch.setattr(
        factory, "semantic_index", lambda **_: VectorToolIndex(HashingEmbedder(), cache=False)
    )
    assert isinstance(factory.default_index(), HybridToolIndex)
