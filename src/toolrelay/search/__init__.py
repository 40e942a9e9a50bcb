"""Tool indexes for progressive tool disclosure: find the few tools a request needs.

A catalog is indexed once (``index(definitions)`` rebuilds only when its fingerprint
changes) and searched by any number of conversations, each with its own permitted subset::

    from toolrelay.search import SearchRequest, default_index

    index = default_index()              # hybrid with the embeddings extra, else BM25
    index.index(catalog.definitions())
    response = index.search(SearchRequest(query="refund a failed order", allowed=names))
    response.names                       # best first, at most max_results (1-10, default 5)

Indexes: :class:`RegexToolIndex` (patterns or keywords over names and descriptions),
:class:`BM25ToolIndex` (keywords, no model), :class:`VectorToolIndex` (embeddings, any
:class:`Embedder`), :class:`HybridToolIndex` (BM25 and embeddings fused; the default when
``toolrelay[embeddings]`` is installed). :mod:`toolrelay.search.evaluation` measures them.

Building an index that embeds takes a while on a large catalog: ``index.load_models(catalog)``
loads its model ahead, and ``index.index(catalog, progress=report)`` calls
``report(done, total)`` as it goes (:data:`IndexProgress`).
"""

from __future__ import annotations

from toolrelay.search.base import (
    DEFAULT_MAX_RESULTS,
    MAX_RESULTS_LIMIT,
    AllowedTools,
    IndexProgress,
    SearchHit,
    SearchRequest,
    SearchResponse,
    ToolIndex,
)
from toolrelay.search.bm25 import BM25ToolIndex
from toolrelay.search.cache import EmbeddingCache
from toolrelay.search.documents import ToolText, catalog_fingerprint, summarize, tool_text
from toolrelay.search.embedders import (
    Embedder,
    SentenceTransformerEmbedder,
    embeddings_available,
    load_embedder,
    minilm_embedder,
)
from toolrelay.search.factory import default_index
from toolrelay.search.hybrid import HybridToolIndex
from toolrelay.search.regex import RegexToolIndex
from toolrelay.search.scoring import ScoringToolIndex
from toolrelay.search.text import Tokenizer
from toolrelay.search.vector import VectorToolIndex

__all__ = [
    "DEFAULT_MAX_RESULTS",
    "MAX_RESULTS_LIMIT",
    "AllowedTools",
    "BM25ToolIndex",
    "Embedder",
    "EmbeddingCache",
    "HybridToolIndex",
    "IndexProgress",
    "RegexToolIndex",
    "ScoringToolIndex",
    "SearchHit",
    "SearchRequest",
    "SearchResponse",
    "SentenceTransformerEmbedder",
    "Tokenizer",
    "ToolIndex",
    "ToolText",
    "VectorToolIndex",
    "catalog_fingerprint",
    "default_index",
    "embeddings_available",
    "load_embedder",
    "minilm_embedder",
    "summarize",
    "tool_text",
]
