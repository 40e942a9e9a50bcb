"""A deterministic embedder for tests: hashed bag of words, numpy only, no model.

:class:`HashingEmbedder` satisfies the search layer's ``Embedder`` protocol. Each lower-case
word of a text adds ±1 to one of ``dim`` coordinates chosen by a stable hash, and rows are
L2-normalised, so texts sharing words have a high cosine similarity and the same text always
gets the same vector, on any machine. It counts its calls, which makes "was anything
embedded?" easy to assert.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

__all__ = ["HashingEmbedder"]

_WORD = re.compile(r"[^\W_]+")


class HashingEmbedder:
    """Embeds texts by hashing their words into ``dim`` signed buckets.

    Args:
        dim: Vector size.
        model_id: Name in the embedding cache; defaults to ``"hashing-{dim}"``.

    Attributes:
        calls: How many times :meth:`embed` was called.
        texts_embedded: How many texts it embedded in all.
        kinds: The ``kind`` of every call, in order.
    """

    def __init__(self, dim: int = 256, *, model_id: str | None = None) -> None:
        self.dim = dim
        self.model_id = model_id or f"hashing-{dim}"
        self.calls = 0
        self.texts_embedded = 0
        self.kinds: list[str] = []

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self.dim})"

    def embed(
        self, texts: Sequence[str], *, kind: Literal["query", "document"]
    ) -> npt.NDArray[np.float32]:
        """One L2-normalised row per text (all zeros for a text without words)."""
        self.calls += 1
        self.texts_embedded += len(texts)
        self.kinds.append(kind)
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
                value = int.from_bytes(digest, "big")
                vectors[row, value % self.dim] += 1.0 if (value >> 63) & 1 else -1.0
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        result: npt.NDArray[np.float32] = vectors / norms
        return result
