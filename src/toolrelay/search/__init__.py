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
``toolrelay[embeddings]`` is installed). ``toolrelay eval retrieval`` measures them.

Building an index that embeds takes a while on a large catalog: ``index.load_models(catalog)``
loads its model ahead, and ``index.index(catalog, progress=report)`` calls
``report(done, total)`` as it goes.

Indexes learn from use: a :class:`UsageLog` (:class:`InMemoryUsageLog`,
:class:`SQLiteUsageLog`, ``toolrelay.redis.RedisUsageLog``) keeps which past queries led to
which successful calls (:class:`UsageEntry`), and a search given a scope's history
(``SearchRequest.history``, which tool search reads from its ``usage_log``) also ranks each
tool by its past queries. :func:`dump_usage` and :func:`load_usage` move a log through JSONL.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from toolrelay.search._base import SearchHit, SearchRequest, SearchResponse, ToolIndex
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.search._cache import EmbeddingCache
from toolrelay.search._embedders import (
    Embedder,
    SentenceTransformerEmbedder,
    embeddings_available,
    minilm_embedder,
)
from toolrelay.search._factory import default_index
from toolrelay.search._hybrid import HybridToolIndex
from toolrelay.search._regex import RegexToolIndex
from toolrelay.search._scoring import ScoringToolIndex
from toolrelay.search._text import Tokenizer
from toolrelay.search._usage import (
    InMemoryUsageLog,
    SQLiteUsageLog,
    UsageEntry,
    UsageLog,
    dump_usage,
    load_usage,
)
from toolrelay.search._vector import VectorToolIndex

if TYPE_CHECKING:
    from toolrelay.search._postgres import PostgresToolIndex

__all__ = [
    "BM25ToolIndex",
    "Embedder",
    "EmbeddingCache",
    "HybridToolIndex",
    "InMemoryUsageLog",
    "PostgresToolIndex",
    "RegexToolIndex",
    "SQLiteUsageLog",
    "ScoringToolIndex",
    "SearchHit",
    "SearchRequest",
    "SearchResponse",
    "SentenceTransformerEmbedder",
    "Tokenizer",
    "ToolIndex",
    "UsageEntry",
    "UsageLog",
    "VectorToolIndex",
    "default_index",
    "dump_usage",
    "embeddings_available",
    "load_usage",
    "minilm_embedder",
]

# Loaded on first use: it needs the postgres extra.
_LAZY = {"PostgresToolIndex": "toolrelay.search._postgres"}


def __getattr__(name: str) -> Any:
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
