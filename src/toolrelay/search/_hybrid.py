"""Hybrid search: keyword and embedding scores fused into one ranking.

Keywords find the tool whose name or description shares the request's rare words; embeddings
find the tool that means the same thing in other words. Fusing both beats either alone on
every benchmark in ``benchmarks/retrieval`` (see ``docs/benchmarks.md``).

The fusion is on normalised scores: the keyword score is divided by the best keyword score
of the query, the cosine similarity is rescaled so the best tool gets 1 and the catalog's
median 0, and the two are mixed with ``semantic_weight``. Both are taken over the tools the
search may return: the best scores and the median of the permitted tools, so a tool outside
them changes no answer. Unlike rank fusion, this keeps how
*much* better the leader is, which matters when one side is sure and the other is not.
Reciprocal rank fusion is available as ``fusion="rrf"``. :func:`score_fusion` is the rule
itself; the PostgreSQL index applies it to its candidates with the catalog's median.

Scores are in [0, 1] for the score fusion (1 for a tool that both sides rank first); tools
that neither side favours score 0 and do not match.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt

from toolrelay.exceptions import ConfigurationError
from toolrelay.search._base import IndexProgress
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.search._documents import ToolText
from toolrelay.search._history import DEFAULT_HISTORY_WEIGHT, HistoryEvidence
from toolrelay.search._masks import Mask
from toolrelay.search._scoring import Scores, ScoringToolIndex
from toolrelay.search._vector import VectorToolIndex
from toolrelay.tools._base import ToolDefinition

__all__ = ["Fusion", "HybridToolIndex", "score_fusion"]

Fusion = Literal["score", "rrf"]

_RRF_K = 60.0


class HybridToolIndex(ScoringToolIndex):
    """Fuses a keyword index and a semantic index over the same catalog.

    Args:
        lexical: The keyword index; defaults to a :class:`~toolrelay.search.BM25ToolIndex`.
        semantic: The embedding index; defaults to a
            :class:`~toolrelay.search.VectorToolIndex` choosing its model per catalog.
        semantic_weight: Share of the semantic side in the fused score (0–1).
        fusion: ``"score"`` (normalised score mixing) or ``"rrf"`` (reciprocal rank fusion).
        prerequisite_lift: See :class:`~toolrelay.search.ScoringToolIndex`; applied
            to the fused scores (the sides' own settings do not matter here).
        history_weight: See :class:`~toolrelay.search.ScoringToolIndex`; past queries are
            compared by the keyword side (measured better than mixing in the embedding
            side's similarity, see ``docs/tool-search.md``), and the bonus is added to the
            fused score.

    Both sides are (re)built by :meth:`index`; they must not be re-indexed with another
    catalog behind this index's back.

    Raises:
        ConfigurationError: A default side needs the embeddings extra, which is missing.
    """

    search_type: ClassVar[str] = "hybrid"

    def __init__(
        self,
        lexical: ScoringToolIndex | None = None,
        semantic: ScoringToolIndex | None = None,
        *,
        semantic_weight: float = 0.5,
        fusion: Fusion = "score",
        prerequisite_lift: float | None = 0.9,
        history_weight: float = DEFAULT_HISTORY_WEIGHT,
    ) -> None:
        super().__init__(prerequisite_lift=prerequisite_lift, history_weight=history_weight)
        lexical = lexical if lexical is not None else BM25ToolIndex()
        semantic = semantic if semantic is not None else VectorToolIndex()
        if not 0.0 <= semantic_weight <= 1.0:
            raise ConfigurationError(f"semantic_weight must be in [0, 1], not {semantic_weight}")
        self.lexical = lexical
        self.semantic = semantic
        self.semantic_weight = semantic_weight
        self.fusion: Fusion = fusion

    def load_models(self, definitions: Sequence[ToolDefinition]) -> None:
        """Load both sides' models for ``definitions`` now (the semantic side's embedders)."""
        self.lexical.load_models(definitions)
        self.semantic.load_models(definitions)

    def _build(self, definitions: Sequence[ToolDefinition], texts: Sequence[ToolText]) -> Any:
        return self._build_sides(definitions, None)

    def _build_reporting(
        self,
        definitions: Sequence[ToolDefinition],
        texts: Sequence[ToolText],
        progress: IndexProgress,
    ) -> Any:
        reported = False

        def relay(done: int, total: int) -> None:
            nonlocal reported
            reported = True
            progress(done, total)

        built = self._build_sides(definitions, relay)
        if not reported:  # the semantic side was up to date: the build is done all the same
            progress(len(definitions), len(definitions))
        return built

    def _build_sides(
        self, definitions: Sequence[ToolDefinition], progress: IndexProgress | None
    ) -> Any:
        # Keywords index in a moment; the semantic side, which embeds, reports its progress.
        self.lexical.index(definitions)
        self.semantic.index(definitions, progress=progress)
        names = tuple(d.name for d in definitions)
        if self.lexical.names != names or self.semantic.names != names:
            raise ConfigurationError("the fused indexes disagree on the catalog's order")
        return (self.lexical.fingerprint, self.semantic.fingerprint)

    def _score(self, payload: Any, query: str, permitted: Mask | None) -> Scores:
        if (self.lexical.fingerprint, self.semantic.fingerprint) != payload:
            raise ConfigurationError(
                "a side of the hybrid index was re-indexed with another catalog; "
                "index the hybrid index instead"
            )
        lexical = self.lexical.scores(query, permitted)
        semantic = self.semantic.scores(query, permitted)
        if permitted is None:
            return self._fuse(lexical, semantic)
        # Normalised over the permitted tools alone: their best scores and their median.
        subset = np.flatnonzero(permitted)
        fused = np.zeros(lexical.shape, dtype=np.float32)
        fused[subset] = self._fuse(lexical[subset], semantic[subset])
        return fused

    def history_similarity(
        self, evidence: HistoryEvidence, query: str, permitted: Mask | None
    ) -> npt.NDArray[np.float32]:
        """The keyword side's similarity of each past query (see the module docs for why)."""
        return self.lexical.history_similarity(evidence, query, permitted)

    def _fuse(self, lexical: Scores, semantic: Scores) -> Scores:
        if self.fusion == "rrf":
            return _rrf(lexical, semantic, self.semantic_weight)
        return score_fusion(lexical, semantic, self.semantic_weight)


def score_fusion(
    lexical: npt.NDArray[np.floating[Any]],
    semantic: npt.NDArray[np.floating[Any]],
    weight: float,
    *,
    median: float | None = None,
) -> Scores:
    """Normalised score fusion of keyword scores and cosine similarities of the same tools.

    Keyword scores are divided by the best one; similarities are rescaled so that the best
    gets 1 and ``median`` gets 0, and clipped at 0; the two are mixed as
    ``(1 - weight) * keyword + weight * semantic``. A side with nothing to tell apart (no
    keyword match; no similarity above the median) contributes 0.

    Args:
        lexical: Keyword scores (0 for no match).
        semantic: Cosine similarities, in the order of ``lexical``.
        weight: Share of the semantic side (0–1).
        median: The similarity that maps to 0. By default the median of ``semantic``, right
            when the arrays cover the whole catalog; a caller scoring a subset of candidates
            (the PostgreSQL index) passes the catalog's median instead. The result equals the
            whole catalog's fusion restricted to the subset when the subset holds the best
            keyword score and the best similarity.

    Returns:
        The fused scores as ``float32``, each in [0, 1].
    """
    if semantic.size == 0:
        return np.zeros(lexical.shape, dtype=np.float32)
    best = float(lexical.max(initial=0.0))
    lex = lexical / best if best > 0 else np.zeros_like(lexical)
    top = float(semantic.max())
    floor = float(np.median(semantic)) if median is None else median
    sem = (semantic - floor) / (top - floor) if top > floor else np.zeros_like(semantic)
    np.clip(sem, 0.0, None, out=sem)
    fused: Scores = ((1.0 - weight) * lex + weight * sem).astype(np.float32, copy=False)
    return fused


def _rrf(lexical: Scores, semantic: Scores, weight: float) -> Scores:
    fused = np.zeros(lexical.shape, dtype=np.float32)
    for scores, share, only_matches in ((lexical, 1.0 - weight, True), (semantic, weight, False)):
        order = np.argsort(-scores, kind="stable")
        ranks = np.empty_like(order)
        ranks[order] = np.arange(1, order.size + 1)
        contribution = share / (_RRF_K + ranks)
        if only_matches:
            contribution[scores <= 0] = 0.0
        fused += contribution.astype(np.float32)
    return fused
