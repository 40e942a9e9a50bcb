"""Embedding thousands of queries at once, for an index that embeds them one at a time.

The retrieval rules search a catalog with every tool's own description and name: thousands of
queries. A vector index embeds each query on its own, and one forward pass per text costs
far more than batches do. :class:`BatchedQueryEmbedder` wraps an embedder: :meth:`prime`
embeds all queries ahead in batches (reusing and filling the disk cache under the ``query``
kind), after which the index's one-at-a-time calls are dictionary lookups. Documents and
unprimed queries go to the wrapped embedder (and are remembered).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from toolrelay.exceptions import ConfigurationError
from toolrelay.search._cache import EmbeddingCache, embedding_key
from toolrelay.search._embedders import Embedder, EmbeddingKind

__all__ = ["BatchedQueryEmbedder"]

logger = logging.getLogger(__name__)

_BATCH = 256
_T = TypeVar("_T")


class BatchedQueryEmbedder:
    """An :class:`~toolrelay.search.Embedder` that answers primed queries from memory.

    Args:
        embedder: The embedder that does the work.
        cache: Where query vectors are kept between runs (keyed like the index's document
            vectors, by model id, kind and text); ``None`` keeps them in memory only.

    Attributes:
        model_id: The wrapped embedder's ``model_id``, so that indexes share its cached
            document vectors.
    """

    def __init__(self, embedder: Embedder, *, cache: EmbeddingCache | None = None) -> None:
        self.embedder = embedder
        self.model_id: str | None = getattr(embedder, "model_id", None)
        self.cache = cache if self.model_id is not None else None
        self._vectors: dict[str, npt.NDArray[np.float32]] = {}

    def __repr__(self) -> str:
        return f"BatchedQueryEmbedder({self.embedder!r})"

    def prime(self, queries: Sequence[str]) -> None:
        """Embed ``queries`` now, in batches, from the disk cache where possible."""
        pending = sorted({q for q in queries if q not in self._vectors})
        if not pending:
            return
        keys = {q: embedding_key(self.model_id or "", "query", q) for q in pending}
        cached = self._cached(list(keys.values()))
        missing = []
        for query in pending:
            vector = cached.get(keys[query])
            if vector is None:
                missing.append(query)
            else:
                self._vectors[query] = vector
        for start in range(0, len(missing), _BATCH):
            chunk = missing[start : start + _BATCH]
            vectors = np.asarray(self.embedder.embed(chunk, kind="query"), dtype=np.float32)
            fresh = dict(zip(chunk, vectors, strict=True))
            self._vectors.update(fresh)
            self._store({keys[q]: v for q, v in fresh.items()})

    def embed(self, texts: Sequence[str], *, kind: EmbeddingKind) -> npt.NDArray[np.float32]:
        """Primed queries from memory; anything else from the wrapped embedder."""
        if kind != "query" or not texts:
            return self.embedder.embed(texts, kind=kind)
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            fresh = np.asarray(self.embedder.embed(missing, kind="query"), dtype=np.float32)
            self._vectors.update(zip(missing, fresh, strict=True))
        return np.stack([self._vectors[t] for t in texts])

    def _cached(self, keys: list[str]) -> dict[str, npt.NDArray[np.float32]]:
        return self._with_cache(lambda cache: cache.get_many(keys)) or {}

    def _store(self, vectors: dict[str, npt.NDArray[np.float32]]) -> None:
        model_id = self.model_id or ""
        self._with_cache(lambda cache: cache.put_many(model_id, vectors))

    def _with_cache(self, use: Callable[[EmbeddingCache], _T]) -> _T | None:
        if self.cache is None:
            return None
        try:
            return use(self.cache)
        except ConfigurationError as exc:
            # A broken cache makes linting slower; it must not stop it.
            logger.warning("embedding cache not used: %s", exc)
            self.cache = None
            return None
