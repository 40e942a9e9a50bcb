"""Choosing an index: the best one the installed packages allow.

:func:`default_index` returns the hybrid index (BM25 + embeddings) when the ``embeddings``
extra is installed, and the BM25 index otherwise. The embedding model is chosen per catalog
by its language (:func:`~toolrelay.search._auto_embedder.catalog_embedder`). Both need no
network and no API key.
"""

from __future__ import annotations

from toolrelay.search._auto_embedder import any_embedder_available
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.search._cache import EmbeddingCache
from toolrelay.search._embedders import Embedder
from toolrelay.search._hybrid import HybridToolIndex
from toolrelay.search._scoring import ScoringToolIndex
from toolrelay.search._vector import VectorToolIndex

__all__ = ["default_index", "lexical_index", "semantic_index"]


def default_index(
    *, embedder: Embedder | None = None, cache: EmbeddingCache | bool = True
) -> ScoringToolIndex:
    """The recommended index for this installation, empty.

    Args:
        embedder: Use this embedder for the semantic side (forces the hybrid index).
        cache: The embedding cache (see :class:`~toolrelay.search.VectorToolIndex`).

    Returns:
        A :class:`~toolrelay.search.HybridToolIndex` when an embedder is given or the
        ``embeddings`` extra is installed, else a :class:`~toolrelay.search.BM25ToolIndex`.
    """
    if embedder is None and not any_embedder_available():
        return lexical_index()
    return HybridToolIndex(lexical_index(), semantic_index(embedder=embedder, cache=cache))


def lexical_index() -> ScoringToolIndex:
    """A BM25 index with default settings."""
    return BM25ToolIndex()


def semantic_index(
    *, embedder: Embedder | None = None, cache: EmbeddingCache | bool = True
) -> ScoringToolIndex:
    """A vector index over ``embedder`` (by default, the model that suits each catalog)."""
    return VectorToolIndex(embedder, cache=cache)
