"""Semantic search: cosine similarity between a query's embedding and each tool's.

Each tool is embedded once as one passage (name words, description, parameters); vectors
are cached on disk by model and content hash (:class:`~toolrelay.search.EmbeddingCache`),
so rebuilding for an unchanged or slightly changed catalog embeds only what is new. A search
embeds the query and takes one matrix product.

A request often asks for several things ("show me the channel's clips. Also, what are its
details?"), and one vector for the whole of it sits between the tools it needs. So a query
of several sentences is embedded sentence by sentence, and a tool scores its best
similarity to any of them (measured: +2 NDCG@10 on StableToolBench's multi-tool requests for
the hybrid index, no change on single-request benchmarks).

Scores are cosine similarities in [-1, 1]; tools with a positive similarity match.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from toolrelay.exceptions import ConfigurationError
from toolrelay.search._auto_embedder import (
    LanguageRoute,
    any_embedder_available,
    catalog_embedder,
)
from toolrelay.search._base import IndexProgress
from toolrelay.search._cache import EmbeddingCache, embedding_key
from toolrelay.search._cjk import CJK_RUN
from toolrelay.search._documents import ToolText
from toolrelay.search._embedders import Embedder, EmbeddingKind, load_embedder
from toolrelay.search._history import (
    DEFAULT_HISTORY_WEIGHT,
    HistoryEvidence,
    semantic_similarity,
)
from toolrelay.search._masks import Mask
from toolrelay.search._scoring import Scores, ScoringToolIndex
from toolrelay.tools._base import ToolDefinition

__all__ = ["VectorToolIndex"]

logger = logging.getLogger(__name__)

# Documents per embedder call: each chunk is cached and reported as soon as it is done. A few
# of an embedder's batches, so that progress costs little throughput: every call ends by
# waiting for its slowest batch (128 measured a sixth faster than 64 with MiniLM's batches
# of 16 side by side on 2 cores).
_EMBED_CHUNK = 128
_QUERY_MEMO = 256  # recent query vectors kept in memory
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|(?<=[。！？；])|\n+")
_MIN_SENTENCE_WORDS = 3  # shorter pieces ("Thanks!", "谢谢！") carry no intent of their own
_MAX_SENTENCES = 8


class VectorToolIndex(ScoringToolIndex):
    """Ranks tools by the cosine similarity of their embedding to the query's.

    Args:
        embedder: Any :class:`~toolrelay.search.Embedder`. By default each catalog
            gets the installed model that suits its language (all-MiniLM-L6-v2 for
            English, multilingual-e5-small for Chinese, both for a mixed catalog, each query
            scored by the model of its language; needs the ``embeddings`` extra).
        model_id: Names the model in the disk cache; defaults to the embedder's
            ``model_id`` attribute. Without one, vectors are not cached on disk.
        cache: An :class:`~toolrelay.search.EmbeddingCache`, ``True`` for the default
            file, or ``False`` for no disk cache.
        split_sentences: Embed a query of several sentences sentence by sentence and score
            each tool by its best match.
        prerequisite_lift: See :class:`~toolrelay.search.ScoringToolIndex`.
        history_weight: See :class:`~toolrelay.search.ScoringToolIndex`; past queries are
            compared by embeddings (:meth:`history_similarity`).

    Raises:
        ConfigurationError: No embedder was given and the embeddings extra is missing.
    """

    search_type: ClassVar[str] = "vector"

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        model_id: str | None = None,
        cache: EmbeddingCache | bool = True,
        split_sentences: bool = True,
        prerequisite_lift: float | None = 0.9,
        history_weight: float = DEFAULT_HISTORY_WEIGHT,
    ) -> None:
        super().__init__(prerequisite_lift=prerequisite_lift, history_weight=history_weight)
        self.split_sentences = split_sentences
        if embedder is None and not any_embedder_available():
            raise ConfigurationError(
                "no embedding model is installed; pip install -e '.[embeddings]'"
            )
        self.automatic = embedder is None
        self._model_id = model_id
        self.embedder: Embedder | None = embedder
        self.route: LanguageRoute | None = None
        if cache is True:
            cache = EmbeddingCache()
        self.cache: EmbeddingCache | None = cache or None
        self._queries: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._queries_lock = threading.Lock()

    @property
    def model_id(self) -> str | None:
        """The model's name in the disk cache (``None``: not cached, or not chosen yet)."""
        return self._model_id or getattr(self.embedder, "model_id", None)

    def _build(self, definitions: Sequence[ToolDefinition], texts: Sequence[ToolText]) -> Any:
        return self._embed_catalog(definitions, texts, None)

    def _build_reporting(
        self,
        definitions: Sequence[ToolDefinition],
        texts: Sequence[ToolText],
        progress: IndexProgress,
    ) -> Any:
        return self._embed_catalog(definitions, texts, progress)

    def load_models(self, definitions: Sequence[ToolDefinition]) -> None:
        """Load the embedding models for ``definitions`` now (see the base class).

        The models :meth:`index` will choose for this catalog (both, for a mixed-language
        one), or the given embedder. An embedder loads ahead only if it has a ``load()``
        method (the bundled ones do); others are left to load on first use.
        """
        embedders, _ = self._choose(definitions)
        for embedder in embedders:
            load_embedder(embedder)

    def _choose(
        self, definitions: Sequence[ToolDefinition]
    ) -> tuple[tuple[Embedder, ...], LanguageRoute | None]:
        """The embedders of this catalog (the route's pair, first the English one)."""
        if not self.automatic:
            return (self._embedder(),), None
        chosen = catalog_embedder(definitions)
        if isinstance(chosen, LanguageRoute):
            return (chosen.english, chosen.multilingual), chosen
        return (chosen,), None

    def _embed_catalog(
        self,
        definitions: Sequence[ToolDefinition],
        texts: Sequence[ToolText],
        progress: IndexProgress | None,
    ) -> Any:
        passages = [t.passage() for t in texts]
        embedders, route = self._choose(definitions)
        if self.automatic:
            self.route, self.embedder = route, embedders[0]
        total = len(passages) * len(embedders)
        matrices = {}
        for position, embedder in enumerate(embedders):
            offset = position * len(passages)
            report = None if progress is None else _shifted(progress, offset, total)
            matrices[_model_key(embedder)] = self.embed_documents(
                passages, embedder=embedder, progress=report
            )
        return _Vectors(embedder=embedders[0], route=route, matrices=matrices)

    def _score(self, payload: Any, query: str, permitted: Mask | None) -> Scores:
        # A tool's similarity depends on its own vector alone: every row is scored (one
        # product is faster than picking rows) and the caller drops the unpermitted ones.
        vectors: _Vectors = payload  # what was built together, even if a rebuild is under way
        embedder = vectors.route.pick(query) if vectors.route is not None else vectors.embedder
        matrix = vectors.matrices[_model_key(embedder)]
        queries = self.embed_query(query, embedder=embedder)
        # einsum, not "@": a matrix-vector product through a multi-threaded BLAS costs
        # thread hand-offs that dominate on a busy machine (measured 0.4 ms with einsum,
        # 0.1-8 ms with BLAS for 5,000 tools).
        best: Scores = np.einsum("ij,j->i", matrix, queries[0])
        for row in queries[1:]:
            np.maximum(best, np.einsum("ij,j->i", matrix, row), out=best)
        return best

    def history_similarity(
        self, evidence: HistoryEvidence, query: str, permitted: Mask | None
    ) -> npt.NDArray[np.float32]:
        """Embedding similarity of each past query to ``query`` (Tool2Vec-style).

        Past queries are embedded as queries, by the model that embeds ``query``, once per
        history (and cached on disk like tool vectors).
        """
        catalog = self._catalog
        if catalog is None or catalog.payload is None:
            return np.zeros(len(evidence.queries), dtype=np.float32)
        vectors: _Vectors = catalog.payload
        embedder = vectors.route.pick(query) if vectors.route is not None else vectors.embedder
        past = evidence.part(
            ("semantic", _model_key(embedder)),
            lambda: self.embed_documents(evidence.queries, embedder=embedder, kind="query"),
        )
        return semantic_similarity(past, self.embed_query(query, embedder=embedder))

    def embed_query(
        self, query: str, *, embedder: Embedder | None = None
    ) -> npt.NDArray[np.float32]:
        """Normalised embeddings of ``query``: one row, or one per sentence.

        See ``split_sentences``. Recent queries are remembered (per model).
        """
        embedder = embedder or self._embedder()
        memo = f"{_model_key(embedder)}\n{query}"
        with self._queries_lock:
            vectors = self._queries.get(memo)
            if vectors is not None:
                self._queries.move_to_end(memo)
                return vectors
        pieces = self.query_pieces(query)
        vectors = _normalized(embedder.embed(pieces, kind="query"))
        with self._queries_lock:
            self._queries[memo] = vectors
            if len(self._queries) > _QUERY_MEMO:
                self._queries.popitem(last=False)
        return vectors

    def query_pieces(self, query: str) -> list[str]:
        """The texts embedded for ``query``: its sentences, or the query itself."""
        if not self.split_sentences:
            return [query]
        sentences = [
            s.strip() for s in _SENTENCE_BREAK.split(query) if _words(s) >= _MIN_SENTENCE_WORDS
        ]
        if len(sentences) < 2:
            return [query]
        return sentences[:_MAX_SENTENCES]

    def embed_documents(
        self,
        passages: Sequence[str],
        *,
        embedder: Embedder | None = None,
        progress: IndexProgress | None = None,
        kind: EmbeddingKind = "document",
    ) -> npt.NDArray[np.float32]:
        """Normalised embeddings of ``passages``, from the disk cache where possible.

        ``kind`` says how they are embedded (``"query"`` for past queries).

        ``embedder`` defaults to the index's; another one is cached under its own model id.
        ``progress`` is told how many passages have their vector: once after the cache was
        read, then after each batch embedded.
        """
        if embedder is None or embedder is self.embedder:
            embedder, model_id = self._embedder(), self.model_id
        else:
            model_id = getattr(embedder, "model_id", None)
        cache = self.cache if model_id is not None else None
        keys = [embedding_key(model_id or "", kind, p) for p in passages]
        found: dict[str, npt.NDArray[np.float32]] = {}
        if cache is not None:
            try:
                found = cache.get_many(sorted(set(keys)))
            except ConfigurationError as exc:
                # A broken cache slows indexing down; it must not stop it.
                logger.warning("embedding cache not used: %s", exc)
                cache = None
        missing: dict[str, str] = {}
        for key, passage in zip(keys, passages, strict=True):
            if key not in found:
                missing.setdefault(key, passage)
        uses = Counter(keys)  # a text shared by several tools is embedded once for all
        done = len(keys) - sum(uses[key] for key in missing)
        if progress is not None:
            progress(done, len(keys))
        # Longest first: a batch pads to its longest text, so texts of a length embed
        # together, and the first reports of progress give a conservative estimate.
        pending = sorted(missing.items(), key=lambda item: -len(item[1]))
        for start in range(0, len(pending), _EMBED_CHUNK):
            chunk = pending[start : start + _EMBED_CHUNK]
            vectors = _normalized(embedder.embed([p for _, p in chunk], kind=kind))
            fresh = {key: vectors[i] for i, (key, _) in enumerate(chunk)}
            found.update(fresh)
            done += sum(uses[key] for key in fresh)
            if progress is not None:
                progress(done, len(keys))
            if cache is not None and model_id is not None:
                try:
                    cache.put_many(model_id, fresh)
                except ConfigurationError as exc:
                    logger.warning("embedding cache not used: %s", exc)
                    cache = None
        dims = {v.shape[0] for v in found.values()}
        if len(dims) > 1:
            raise ConfigurationError(
                f"embeddings of different sizes {sorted(dims)} for model {model_id!r}; "
                "give each model its own model_id"
            )
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    def _embedder(self) -> Embedder:
        if self.embedder is None:
            raise ConfigurationError("the embedding model is chosen by index(); index a catalog")
        return self.embedder


@dataclass(frozen=True, kw_only=True)
class _Vectors:
    embedder: Embedder
    route: LanguageRoute | None
    matrices: dict[str, npt.NDArray[np.float32]]


def _shifted(progress: IndexProgress, offset: int, total: int) -> IndexProgress:
    """``progress`` for one model's share of a build that embeds with several."""

    def report(done: int, _: int) -> None:
        progress(offset + done, total)

    return report


def _model_key(embedder: Embedder) -> str:
    """Tells the matrices of two models apart (by model id, else by identity)."""
    return str(getattr(embedder, "model_id", None) or id(embedder))


def _words(sentence: str) -> int:
    """Roughly how many words ``sentence`` has, in any language.

    A Chinese word is one or two characters, written without spaces: two count as one.
    """
    cjk = sum(len(run) for run in CJK_RUN.findall(sentence))
    return len(CJK_RUN.sub(" ", sentence).split()) + cjk // 2


def _normalized(vectors: npt.NDArray[Any]) -> npt.NDArray[np.float32]:
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim != 2:
        raise ConfigurationError(f"an embedder returned an array of shape {array.shape}")
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    normalized: npt.NDArray[np.float32] = (array / norms).astype(np.float32, copy=False)
    return normalized
