"""A tool index in PostgreSQL, shared by every worker process (``toolrelay[postgres]``).

A catalog is stored once per fingerprint (and way of analysing and embedding it); workers
calling :meth:`PostgresToolIndex.index` with the same tools attach to it, the first one
writes it. Keywords are ranked by BM25 from postings stored in the database (the same
analysis, postings and ranking function as :class:`~toolrelay.search.BM25ToolIndex`, so the
same order), embeddings by pgvector (HNSW, cosine) when the server has it and an embedder is
given, and hybrid fuses both candidate lists like :class:`~toolrelay.search.HybridToolIndex`
fuses scores.

Every search ranks its permitted tools alone (``SearchRequest.allowed``, a set or a
predicate, asked about every tool): keyword statistics are those of the permitted tools, a
small permitted subset is scanned exactly instead of walking the HNSW graph, and the hybrid
normalisation reads permitted tools only (``_postgres_search.py``).

Connect and statement timeouts turn an unreachable or stuck server into
:class:`~toolrelay.exceptions.StorageUnavailableError` within seconds, never a hang, or into
the answer of the ``fallback`` index when one is configured. ``docs/scaling.md`` has more.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal, TypeVar

import psycopg  # the schema module, imported above, says which extra when it is missing
from psycopg import sql
from psycopg_pool import ConnectionPool, PoolTimeout

from toolrelay.exceptions import ConfigurationError, StorageError, StorageUnavailableError
from toolrelay.search._base import SearchHit, SearchRequest, SearchResponse, ToolIndex
from toolrelay.search._bm25 import BM25, BM25Analysis
from toolrelay.search._cache import EmbeddingCache
from toolrelay.search._documents import catalog_fingerprint, tool_text
from toolrelay.search._embedders import Embedder
from toolrelay.search._postgres_schema import (
    Categories,
    Schema,
    catalog_postings,
    catalog_variant,
    categories_key,
    connection_pool,
    explicit_categories,
    tool_rows,
    vector_literal,
)
from toolrelay.search._postgres_search import (
    AttachedCatalog,
    SearchPlan,
    response_of,
    run_search,
)
from toolrelay.search._scoring import ScoringToolIndex
from toolrelay.search._text import Tokenizer
from toolrelay.search._vector import VectorToolIndex
from toolrelay.tools._base import ToolDefinition

__all__ = ["PostgresToolIndex", "SearchMode"]

logger = logging.getLogger(__name__)

SearchMode = Literal["keyword", "vector", "hybrid"]

T = TypeVar("T")

_RETRY_ATTACH = 30.0  # seconds between attempts to store a catalog while the server is away


class PostgresToolIndex:
    """A :class:`~toolrelay.search.ToolIndex` whose catalog lives in PostgreSQL.

    Args:
        dsn: A libpq connection string or URL (``postgresql://user@host:5432/db``), or a
            ``psycopg_pool.ConnectionPool`` to share (used as given; not closed here).
        embedder: Embeds tools and queries; enables vector and hybrid search when the
            server has pgvector. Its ``model_id`` (or ``model_id=``) names the stored vectors.
        model_id: Names the embedding model; defaults to the embedder's ``model_id``.
        mode: ``"keyword"``, ``"vector"`` or ``"hybrid"``; by default hybrid when an embedder
            is given and the server has pgvector, else keyword.
        semantic_weight: The semantic share of the hybrid score (0-1).
        schema: The PostgreSQL schema of the tables (created if missing).
        tokenizer: How text becomes terms (the search package's default tokenizer).
        candidates: Nearest tools fetched, and best keyword matches taken, per side of a
            vector or hybrid search.
        exact_below: A permitted subset (or category) of at most this many tools has its
            vectors scanned exactly rather than through the HNSW graph of the whole catalog.
        postings_cache: Bytes of recently searched terms' postings kept in memory (a stored
            catalog never changes); a keyword search whose terms are all there needs no
            statement. 0 turns it off.
        prerequisite_lift: As in :class:`~toolrelay.search.ScoringToolIndex`, on the candidates.
        connect_timeout: Seconds to open a connection (libpq counts whole seconds, at least 2).
        statement_timeout: Seconds a search statement may run.
        build_timeout: Seconds storing a new catalog may take (``None``: no limit).
        max_connections: Size of the connection pool built from a DSN.
        fallback: An in-process index answering while the database cannot; it is indexed
            with every catalog given to :meth:`index`.
        cache: The embedding cache, as for :class:`~toolrelay.search.VectorToolIndex`.

    Raises:
        ConfigurationError: An option is out of range, or vector/hybrid mode lacks an embedder.
        StorageUnavailableError: (from ``index``/``search``) the server cannot be reached or
            timed out, and there is no fallback.
        StorageError: (from ``index``/``search``) the server failed otherwise.
    """

    def __init__(
        self,
        dsn: str | ConnectionPool[Any],
        *,
        embedder: Embedder | None = None,
        model_id: str | None = None,
        mode: SearchMode | None = None,
        semantic_weight: float = 0.5,
        schema: str = "toolrelay",
        tokenizer: Tokenizer | None = None,
        candidates: int = 50,
        exact_below: int = 1000,
        postings_cache: int = 32 * 1024 * 1024,
        prerequisite_lift: float | None = 0.9,
        connect_timeout: float = 5.0,
        statement_timeout: float = 5.0,
        build_timeout: float | None = None,
        max_connections: int = 8,
        fallback: ToolIndex | None = None,
        cache: EmbeddingCache | bool = True,
    ) -> None:
        if mode in ("vector", "hybrid") and embedder is None:
            raise ConfigurationError(f"mode {mode!r} needs an embedder")
        if not 0.0 <= semantic_weight <= 1.0:
            raise ConfigurationError(f"semantic_weight must be in [0, 1], not {semantic_weight}")
        if candidates < 10 or min(exact_below, postings_cache) < 0:
            raise ConfigurationError(
                "need candidates >= 10, and exact_below and postings_cache >= 0"
            )
        if min(connect_timeout, statement_timeout) <= 0 or max_connections < 1:
            raise ConfigurationError("timeouts must be > 0 and max_connections >= 1")
        self.schema = Schema(schema)
        self.requested_mode = mode
        self.semantic_weight = semantic_weight
        self.analysis = BM25Analysis(tokenizer=tokenizer or Tokenizer())
        self.ranking = BM25()
        self.candidates = candidates
        self.exact_below = exact_below
        self.postings_cache = postings_cache
        self.ef_search = max(40, candidates)
        self.prerequisite_lift = prerequisite_lift
        self.connect_timeout = connect_timeout
        self.statement_timeout = statement_timeout
        self.build_timeout = build_timeout
        self.fallback = fallback
        self._vectors: VectorToolIndex | None = None
        if embedder is not None:
            self._vectors = VectorToolIndex(
                embedder, model_id=model_id, cache=cache, split_sentences=False
            )
            if self._vectors.model_id is None:
                raise ConfigurationError(
                    "the embedder has no model_id; pass model_id= (stored vectors are kept "
                    "per model)"
                )
        if isinstance(dsn, str):
            self._pool = connection_pool(
                dsn, connect_timeout, statement_timeout, max_connections, self.ef_search
            )
            self._own_pool = True
        else:
            self._pool, self._own_pool = dsn, False
        self._mode: SearchMode | None = None
        self._attached: AttachedCatalog | None = None
        self._pending: tuple[list[ToolDefinition], Categories | None] | None = None
        self._retry_at = 0.0
        self._fingerprint: str | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"PostgresToolIndex(schema={self.schema.name!r}, mode={self.mode!r})"

    # --- the ToolIndex protocol -------------------------------------------------------

    @property
    def search_type(self) -> str:
        """``"postgres-keyword"``, ``"postgres-vector"`` or ``"postgres-hybrid"``."""
        return f"postgres-{self.mode}"

    @property
    def mode(self) -> SearchMode:
        """How searches rank (known for sure once a catalog is stored)."""
        if self._mode is not None:
            return self._mode
        return self.requested_mode or ("hybrid" if self._vectors is not None else "keyword")

    @property
    def fingerprint(self) -> str | None:
        """The fingerprint of the catalog last given to :meth:`index` (``None``: none)."""
        return self._fingerprint

    @property
    def tokenizer(self) -> Tokenizer:
        """How text becomes terms."""
        return self.analysis.tokenizer

    def __len__(self) -> int:
        attached = self._attached
        return len(attached.masks) if attached else 0

    def index(
        self, definitions: Sequence[ToolDefinition], *, categories: Categories | None = None
    ) -> bool:
        """Attach to a catalog, storing it first if no worker has yet.

        Args:
            definitions: The catalog; names must be unique.
            categories: Extra categories per tool name, besides dotted-name prefixes.

        Returns:
            Whether this index now serves another catalog than before.
        """
        definitions = list(definitions)
        fingerprint = catalog_fingerprint(definitions)
        cats = categories_key(categories)
        with self._lock:
            attached = self._attached
            if attached and (attached.fingerprint, attached.categories_key) == (fingerprint, cats):
                return False
            self._fingerprint = fingerprint
            if self.fallback is not None:
                if isinstance(self.fallback, ScoringToolIndex):
                    self.fallback.index(definitions, categories=categories)
                else:
                    self.fallback.index(definitions)
            try:
                self._attach(definitions, categories, fingerprint)
            except StorageError as exc:
                if self.fallback is None:
                    raise
                logger.warning("tool index not stored in PostgreSQL, using the fallback: %s", exc)
                self._attached, self._pending = None, (definitions, categories)
                self._retry_at = time.monotonic() + _RETRY_ATTACH
            return True

    def search(self, request: SearchRequest) -> SearchResponse:
        """The best permitted tools for ``request``, ranked in the database."""
        started = time.perf_counter()
        attached = self._attached or self._retry_pending()
        if attached is None:
            if self.fallback is not None:
                return self.fallback.search(request)
            return response_of(self.search_type, request, [], 0, started)
        try:
            hits, total = self._search(attached, request)
        except StorageError as exc:
            if self.fallback is None:
                raise
            logger.warning("PostgreSQL search failed, answered by the fallback: %s", exc)
            return self.fallback.search(request)
        return response_of(self.search_type, request, hits, total, started)

    def clear(self) -> None:
        """Forget the catalog here (it stays stored for the other workers)."""
        with self._lock:
            self._attached, self._pending, self._fingerprint = None, None, None
            if self.fallback is not None:
                self.fallback.clear()

    # --- beyond the protocol ----------------------------------------------------------

    def delete_catalog(self, fingerprint: str | None = None) -> int:
        """Delete a stored catalog (every variant) from the database; the current by default.

        Returns:
            How many stored variants were deleted.
        """
        target = fingerprint or self._fingerprint
        if target is None:
            return 0

        def delete(conn: psycopg.Connection[Any]) -> int:
            with conn.transaction():
                return self.schema.delete_catalogs(conn, target)

        deleted = self._using_connection(delete)
        if self._attached is not None and self._attached.fingerprint == target:
            self.clear()
        return deleted

    def close(self) -> None:
        """Close the connection pool built from a DSN (a given pool is left open)."""
        if self._own_pool:
            self._pool.close()

    def __enter__(self) -> PostgresToolIndex:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- storing ----------------------------------------------------------------------

    def _attach(
        self, definitions: list[ToolDefinition], categories: Categories | None, fingerprint: str
    ) -> None:
        self._using_connection(
            lambda conn: self._attach_on(conn, definitions, categories, fingerprint)
        )

    def _attach_on(
        self,
        conn: psycopg.Connection[Any],
        definitions: list[ToolDefinition],
        categories: Categories | None,
        fingerprint: str,
    ) -> None:
        explicit = explicit_categories(categories)
        # Short transactions only: readers of the tables must never wait for a build.
        with conn.transaction():
            vectors_ok = self.schema.create(conn, want_vectors=self._vectors is not None)
        mode = self._choose_mode(vectors_ok)
        model = self._vectors.model_id if self._vectors is not None and mode != "keyword" else None
        variant = catalog_variant(self.analysis, model, categories_key(categories))
        catalog_id = self.schema.find_catalog(conn, fingerprint, variant)
        if catalog_id is None:
            # Analysed and embedded outside any transaction; two workers racing here both
            # do the work, and the advisory lock below lets only one of them store it.
            embeddings = None
            if model is not None:
                assert self._vectors is not None  # a model implies an embedder
                passages = [tool_text(d).passage() for d in definitions]
                embeddings = self._vectors.embed_documents(passages)
            rows = tool_rows(definitions, explicit, embeddings)
            postings = catalog_postings(definitions, self.analysis)
            with conn.transaction():
                timeout = 0 if self.build_timeout is None else round(self.build_timeout * 1000)
                conn.execute(sql.SQL("SET LOCAL statement_timeout = {}").format(timeout))
                conn.execute("SET LOCAL maintenance_work_mem = '512MB'")  # HNSW in memory
                self.schema.lock(conn, self.schema.name, fingerprint, variant)
                catalog_id = self.schema.find_catalog(conn, fingerprint, variant)
                if catalog_id is None:
                    dims = None if embeddings is None else int(embeddings.shape[1])
                    catalog_id = self.schema.store_catalog(
                        conn,
                        fingerprint=fingerprint,
                        variant=variant,
                        rows=rows,
                        postings=postings,
                        dims=dims,
                    )
                    if dims is not None:
                        self.schema.create_vector_index(conn, dims)
        dims, lengths = self.schema.catalog_shape(conn, catalog_id)
        self._mode = mode
        self._pending = None
        self._attached = AttachedCatalog.of(
            catalog_id=catalog_id,
            fingerprint=fingerprint,
            categories_key=categories_key(categories),
            definitions=definitions,
            explicit=explicit,
            dims=dims,
            lengths=lengths,
            links=self.prerequisite_lift is not None,
            postings_cache=self.postings_cache,
        )

    def _choose_mode(self, vectors_ok: bool) -> SearchMode:
        if self.requested_mode in ("vector", "hybrid") and not vectors_ok:
            raise ConfigurationError(
                f"mode {self.requested_mode!r} needs the pgvector extension on the server "
                "(CREATE EXTENSION vector, as a superuser)"
            )
        if self.requested_mode is not None:
            return self.requested_mode
        if self._vectors is not None and not vectors_ok:
            logger.warning("the server has no pgvector extension: keyword search only")
        return "hybrid" if self._vectors is not None and vectors_ok else "keyword"

    def _retry_pending(self) -> AttachedCatalog | None:
        pending = self._pending
        if pending is None or time.monotonic() < self._retry_at:
            return None
        with self._lock:
            if self._pending is None:
                return self._attached
            self._retry_at = time.monotonic() + _RETRY_ATTACH
            try:
                self._attach(*pending, catalog_fingerprint(pending[0]))
            except StorageError as exc:
                logger.warning("PostgreSQL still unavailable for the tool index: %s", exc)
        return self._attached

    # --- searching --------------------------------------------------------------------

    def _search(
        self, attached: AttachedCatalog, request: SearchRequest
    ) -> tuple[list[SearchHit], int]:
        plan = SearchPlan(
            schema=self.schema,
            mode=self._mode or "keyword",
            terms=tuple(self.analysis.query_terms(request.query)),
            query_vector=self._query_vector(request.query, attached),
            semantic_weight=self.semantic_weight,
            candidates=max(self.candidates, request.max_results),
            exact_below=self.exact_below,
            ranking=self.ranking,
            lift=self.prerequisite_lift,
        )
        return self._using_connection(
            lambda conn: run_search(conn, attached, plan, request, session=self._own_pool)
        )

    def _query_vector(self, query: str, attached: AttachedCatalog) -> str | None:
        if self._vectors is None or attached.dims is None or not query.strip():
            return None
        return vector_literal(self._vectors.embed_query(query)[0])

    def _using_connection(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        """``work`` on a pooled connection; run again on a fresh one if that one was dead.

        Pooled connections are not checked before use (a round trip each time): one that a
        restarted server or a dropped network closed fails at its first statement, the pool
        drops it, and the work runs once more.
        """
        for attempt in range(2):
            with self._connection() as conn:
                try:
                    return work(conn)
                except psycopg.OperationalError:
                    if attempt or not conn.broken:
                        raise
        raise AssertionError("unreachable: the second attempt returns or raises")

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection; driver errors become toolrelay's storage errors."""
        try:
            if self._own_pool and self._pool.closed:
                self._pool.open(wait=False)
            with self._pool.connection(timeout=self.connect_timeout + 1) as conn:
                yield conn
        except PoolTimeout as exc:
            raise StorageUnavailableError(
                f"PostgreSQL tool index unavailable: no connection within "
                f"{self.connect_timeout + 1:g} s ({exc})"
            ) from exc
        except psycopg.OperationalError as exc:
            raise StorageUnavailableError(
                f"PostgreSQL tool index unavailable or too slow: {exc}"
            ) from exc
        except psycopg.Error as exc:
            raise StorageError(f"PostgreSQL tool index failed: {exc}") from exc


# --- helpers ----------------------------------------------------------------------------
