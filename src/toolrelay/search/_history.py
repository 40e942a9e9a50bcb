"""Ranking by history: a tool also scores by the past queries that led to it.

Descriptions are written in the tool authors' words; requests come in the users'. A
deployment sees the same needs again and again, and its usage log
(:mod:`toolrelay.search._usage`) says which query led to which successful call. Given a
scope's :class:`QueryHistory` (``SearchRequest.history``), an index adds to each tool's own
score a *history bonus*: ``weight * max(similarity(query, past) * confidence(past))`` over
the tool's past queries, where

- the similarity is the index's own kind: keywords for BM25 (BM25 over the past queries as
  one more field, divided by what the query's terms could score at most), embeddings for the
  vector index (cosine to the past query's embedding, Tool2Vec-style, rescaled so that
  :data:`SEMANTIC_FLOOR` maps to 0 and 1 to 1), and keywords for the hybrid index: on every
  benchmark the keyword similarity of past queries did better there than mixing in the
  embedding one (averaged, or the lesser of the two), because embeddings put requests with
  the same object and another action close together (multilingual e5 puts "create a mail
  draft" and "update the mail draft" at 0.97), and history then lifts the sibling tool;
- the confidence grows with the entry's count and fades with its age (half-life
  :data:`DEFAULT_HALF_LIFE`); a query repeated 10,000 times weighs at most 4/3 of a query
  seen once (:func:`confidence`).

The similarity is squared (a past query sharing a request's topic but not its action hardly
counts), and the bonus is scaled by the query's best score where that is above 1 (BM25's
scale is unbounded; the hybrid and vector scales are not). So the bonus is in
``[0, weight * max(1, best score)]``: no history, however poisoned, lifts a tool by more than
the configured weight allows, and a tool with no history keeps exactly its score. With no history
(or an empty one) the index runs as without it, to the bit. The bonus of a tool depends on
its own past queries alone (keyword statistics are taken over the permitted tools' entries),
so permissions rank as an index of the permitted tools would.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from toolrelay.search._usage import UsageEntry

__all__ = [
    "DEFAULT_HALF_LIFE",
    "DEFAULT_HISTORY_WEIGHT",
    "HistoryEvidence",
    "QueryHistory",
    "confidence",
    "history_bonus",
    "semantic_similarity",
]

DEFAULT_HISTORY_WEIGHT = 1.0
"""How much a perfect history match adds to a tool's score (indexes' ``history_weight``)."""

DEFAULT_HALF_LIFE = 30 * 24 * 3600.0
"""Seconds after which an entry's confidence has halved (30 days)."""

SEMANTIC_FLOOR = 0.5
"""The cosine similarity between two queries that counts as no evidence at all."""

_EVIDENCE_MEMO = 8  # built histories kept per index (one per scope in use, roughly)


def confidence(count: int, age: float, half_life: float = DEFAULT_HALF_LIFE) -> float:
    """How much one entry counts: 0.75 once, towards 1 with repeats, halved per ``half_life``."""
    saturation = 1.0 - 0.25 * 0.5 ** (max(count, 1) - 1)
    return float(saturation * 0.5 ** (max(age, 0.0) / half_life))


@dataclass(frozen=True, kw_only=True, eq=False)
class QueryHistory:
    """The past queries of one scope, as a search reads them (``SearchRequest.history``).

    Attributes:
        queries: One past query per entry.
        tools: The tool each entry led to.
        weights: Each entry's :func:`confidence`.
        key: Identifies the content: indexes keep what they built for it under this key.
    """

    queries: tuple[str, ...]
    tools: tuple[str, ...]
    weights: tuple[float, ...]
    key: str

    def __len__(self) -> int:
        return len(self.queries)

    @classmethod
    def of(
        cls,
        entries: Iterable[UsageEntry],
        *,
        now: float | None = None,
        half_life: float = DEFAULT_HALF_LIFE,
    ) -> QueryHistory:
        """The history of ``entries`` (one scope's, or several merged), weighed at ``now``."""
        now = time.time() if now is None else now
        merged: dict[tuple[str, str], tuple[int, float]] = {}
        for e in entries:
            count, last = merged.get((e.query, e.tool), (0, 0.0))
            merged[(e.query, e.tool)] = (count + e.count, max(last, e.last_used))
        items = sorted(merged.items())
        digest = hashlib.blake2b(digest_size=16)
        for (query, tool), (count, last) in items:
            digest.update(f"{query}\0{tool}\0{count}\0{last}\n".encode(errors="surrogatepass"))
        # Weighed at a day's resolution: the key (and what indexes built) lasts the day.
        day = math.floor(now / 86400.0)
        digest.update(str(day).encode())
        return cls(
            queries=tuple(q for (q, _), _ in items),
            tools=tuple(t for (_, t), _ in items),
            weights=tuple(confidence(c, now - last, half_life) for _, (c, last) in items),
            key=digest.hexdigest(),
        )


@dataclass(kw_only=True, eq=False)
class HistoryEvidence:
    """A history laid over one catalog: the entries of its tools, and what sides built from them.

    Attributes:
        positions: Each kept entry's tool, as a catalog position (entries of tools not in the
            catalog are dropped).
        weights: Each kept entry's confidence.
        queries: Each kept entry's query.
        parts: What each side of an index built from the queries (postings, embeddings),
            by the side's key.
    """

    positions: npt.NDArray[np.intp]
    weights: npt.NDArray[np.float32]
    queries: tuple[str, ...]
    parts: dict[Any, Any] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def of(cls, history: QueryHistory, names: Sequence[str]) -> HistoryEvidence:
        """The entries of ``history`` whose tool is in the catalog ``names``."""
        where = {name: i for i, name in enumerate(names)}
        kept = [i for i, tool in enumerate(history.tools) if tool in where]
        return cls(
            positions=np.array([where[history.tools[i]] for i in kept], dtype=np.intp),
            weights=np.array([history.weights[i] for i in kept], dtype=np.float32),
            queries=tuple(history.queries[i] for i in kept),
        )

    def part(self, key: Any, build: Callable[[], Any]) -> Any:
        """What a side built under ``key``, building it on first use."""
        with self.lock:
            if key not in self.parts:
                self.parts[key] = build()
            return self.parts[key]


class EvidenceMemo:
    """The evidence of the last few histories an index searched with, by history and catalog."""

    def __init__(self) -> None:
        self._built: OrderedDict[tuple[str, str], HistoryEvidence] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, history: QueryHistory, fingerprint: str, names: Sequence[str]) -> HistoryEvidence:
        """The evidence of ``history`` over the catalog ``names`` (built once per pair)."""
        key = (history.key, fingerprint)
        with self._lock:
            found = self._built.get(key)
            if found is not None:
                self._built.move_to_end(key)
                return found
        evidence = HistoryEvidence.of(history, names)
        with self._lock:
            self._built[key] = evidence
            while len(self._built) > _EVIDENCE_MEMO:
                self._built.popitem(last=False)
        return evidence


def semantic_similarity(
    vectors: npt.NDArray[np.float32], query_vectors: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """Each entry's embedding similarity in [0, 1].

    The best cosine to any of the query's rows, rescaled so that :data:`SEMANTIC_FLOOR` maps
    to 0 and 1 to 1.
    """
    best: npt.NDArray[np.float32] = np.einsum("ij,j->i", vectors, query_vectors[0])
    for row in query_vectors[1:]:
        np.maximum(best, np.einsum("ij,j->i", vectors, row), out=best)
    rescaled = (best - SEMANTIC_FLOOR) / (1.0 - SEMANTIC_FLOOR)
    np.clip(rescaled, 0.0, 1.0, out=rescaled)
    return rescaled.astype(np.float32, copy=False)


def history_bonus(
    evidence: HistoryEvidence, similarity: npt.NDArray[np.float32], size: int, scale: float
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Each tool's bonus, and each entry's part in it.

    A tool's bonus is ``scale`` times the best, over its entries, of similarity² ×
    confidence. Squared, so that a past query that says what the request says counts fully
    and one that merely shares its topic (the same object, another action) hardly counts.
    """
    parts = (np.square(similarity) * evidence.weights * np.float32(scale)).astype(np.float32)
    bonus = np.zeros(size, dtype=np.float32)
    np.maximum.at(bonus, evidence.positions, parts)
    return bonus, parts
