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
normalisation reads permitted tools only (see *One search* below).

Connect and statement timeouts turn an unreachable or stuck server into
:class:`~toolrelay.exceptions.StorageUnavailableError` within seconds, never a hang, or into
the answer of the ``fallback`` index when one is configured. ``docs/scaling.md`` has more.

**The tables.** In one PostgreSQL schema (``toolrelay`` by default)::

    catalogs  one row per stored catalog: its fingerprint and variant (how it was analysed
              and embedded), tool count, embedding size, and every tool's length in terms
    terms     per catalog, one row per term: how many tools it occurs in, which ones, and how
              often (its BM25 postings, as packed int32 arrays)
    tools     one row per tool of a catalog: position, name, summary, categories, and with
              pgvector an embedding (HNSW index per embedding size, cosine distance)

Terms and postings come from the BM25 index's own analysis
(``BM25Analysis``: the search package's tokenizer, name words
counted three times, parameters included) and its own ``Postings``,
so the database holds exactly what the in-process BM25 index holds, whatever the server's
language settings. Embeddings of any size share one ``vector`` column, with a partial HNSW
index per size on ``embedding::vector(N)`` (queries repeat the cast). Writers take an
advisory lock: workers storing the same catalog at once store it once.

**One search.** Every search starts from its permitted subset (``SearchRequest.allowed``, a set or a
predicate, made a mask over the catalog as in the in-process indexes; see
``_masks.py``), and ranks nothing else:

- **Keywords**: one indexed read fetches the BM25 postings of the query's terms from the
  ``terms`` table (those not in the worker's :class:`PostingsCache` already); the search
  package's ``BM25`` ranks them with statistics of the permitted
  tools alone. The database holds the in-process index's postings, so both give the same
  scores and the same order.
- **Embeddings**: with every tool permitted, an HNSW walk (pgvector, cosine). With a
  permitted subset (or a category) of at most ``exact_below`` tools, an exact scan of those
  tools' vectors, so that the graph, which the other tools shape too, plays no part; a larger
  subset walks the graph with the subset as a filter (iterative scans keep walking until enough
  permitted tools are found).
- **Hybrid**: the best ``candidates`` of each side, fused by the hybrid index's
  ``score_fusion``, normalised over those (permitted) candidates
  and the median similarity of up to 256 permitted tools, spread evenly over the catalog.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal, LiteralString, TypeVar

import numpy as np
import numpy.typing as npt

try:
    import psycopg
    from psycopg import Connection, errors, sql
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("PostgresToolIndex needs: pip install -e '.[postgres]'") from exc

from toolrelay.exceptions import ConfigurationError, StorageError, StorageUnavailableError
from toolrelay.search._base import SearchHit, SearchRequest, SearchResponse, ToolIndex
from toolrelay.search._bm25 import BM25, BM25Analysis, Postings, TermRow
from toolrelay.search._cache import EmbeddingCache
from toolrelay.search._documents import catalog_fingerprint, dotted_categories, summarize, tool_text
from toolrelay.search._embedders import Embedder
from toolrelay.search._hybrid import score_fusion
from toolrelay.search._masks import CatalogMasks, Mask
from toolrelay.search._prerequisites import Links, prerequisite_links
from toolrelay.search._scoring import Scores, ScoringToolIndex, best_hits, best_positions
from toolrelay.search._text import Tokenizer
from toolrelay.search._vector import VectorToolIndex
from toolrelay.tools._base import ToolDefinition

__all__ = ["PostgresToolIndex", "PostingsCache", "SearchMode"]


# --- the tables ----------------------------------------------------------------------

Categories = Mapping[str, str | Collection[str]]
"""Explicit categories per tool name, besides the prefixes of dotted names."""

_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,50}$")
# One advisory lock space for every writer of these tables (a 64-bit key, arbitrary).
_LOCK_CLASS = 0x746F6F6C72656C  # "toolrel"
# The last piece of set-up: when it exists, the tables and indexes are all there.
_READY = "tools_by_position"


@dataclass(frozen=True, kw_only=True)
class ToolRow:
    """One tool as stored: what it is and, with embeddings, its vector."""

    position: int
    name: str
    summary: str
    categories: list[str]
    embedding: npt.NDArray[np.float32] | None = None


def vector_literal(vector: npt.NDArray[np.float32]) -> str:
    """A vector in pgvector's text form, ``[0.1,0.2,...]``."""
    return "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"


def packed_int32(values: npt.NDArray[Any]) -> bytes:
    """Whole numbers as the bytes of little-endian int32s (how postings are stored)."""
    return np.asarray(values, dtype="<i4").tobytes()


def int32_array(data: bytes) -> npt.NDArray[np.int32]:
    """The inverse of :func:`packed_int32`."""
    return np.frombuffer(data, dtype="<i4").astype(np.int32)


def categories_key(categories: Categories | None) -> str:
    """A short hash of explicit categories (empty without any)."""
    if not categories:
        return ""
    items = sorted(
        (name, sorted([value] if isinstance(value, str) else value))
        for name, value in categories.items()
    )
    return hashlib.sha256(repr(items).encode()).hexdigest()[:12]


def explicit_categories(categories: Categories | None) -> dict[str, tuple[str, ...]]:
    """Explicit categories as tuples by tool name."""
    return {
        name: (value,) if isinstance(value, str) else tuple(value)
        for name, value in (categories or {}).items()
    }


def catalog_variant(analysis: BM25Analysis, model: str | None, categories: str) -> str:
    """How a catalog was analysed and embedded: stored catalogs are shared per variant."""
    t = analysis.tokenizer
    settings = (
        sorted(t.stop_words),
        t.stem,
        t.language,
        t.min_length,
        t.segment,
        analysis.name_boost,
        analysis.include_parameters,
    )
    digest = hashlib.sha256(repr(settings).encode()).hexdigest()[:12]
    # v3: BM25 postings (v2 held weighted tsvectors; v1 kept a CJK run as one term).
    return f"v3;terms={digest};model={model or ''};categories={categories}"


def tool_rows(
    definitions: Sequence[ToolDefinition],
    explicit: Mapping[str, tuple[str, ...]],
    embeddings: npt.NDArray[np.float32] | None,
) -> list[ToolRow]:
    """The rows of a catalog: summaries, categories and embeddings, in catalog order."""
    return [
        ToolRow(
            position=i,
            name=d.name,
            summary=summarize(d.description),
            categories=sorted({*dotted_categories(d.name), *explicit.get(d.name, ())}),
            embedding=None if embeddings is None else embeddings[i],
        )
        for i, d in enumerate(definitions)
    ]


def catalog_postings(definitions: Sequence[ToolDefinition], analysis: BM25Analysis) -> Postings:
    """The BM25 postings of a catalog, as the in-process BM25 index builds them."""
    return Postings.of_corpus([analysis.terms_of(tool_text(d)) for d in definitions])


_TABLES: tuple[LiteralString, ...] = (
    "CREATE SCHEMA IF NOT EXISTS {schema}",
    """CREATE TABLE IF NOT EXISTS {schema}.catalogs (
        id bigserial PRIMARY KEY,
        fingerprint text NOT NULL,
        variant text NOT NULL,
        tools integer NOT NULL,
        dims integer,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (fingerprint, variant))""",
    "ALTER TABLE {schema}.catalogs ADD COLUMN IF NOT EXISTS lengths bytea",
    """CREATE TABLE IF NOT EXISTS {schema}.tools (
        catalog_id bigint NOT NULL REFERENCES {schema}.catalogs ON DELETE CASCADE,
        position integer NOT NULL,
        name text NOT NULL,
        summary text NOT NULL,
        categories text[] NOT NULL,
        dims integer,
        PRIMARY KEY (catalog_id, name))""",
    """CREATE TABLE IF NOT EXISTS {schema}.terms (
        catalog_id bigint NOT NULL REFERENCES {schema}.catalogs ON DELETE CASCADE,
        term text NOT NULL,
        tools integer NOT NULL,
        PRIMARY KEY (catalog_id, term))""",
    "ALTER TABLE {schema}.terms ADD COLUMN IF NOT EXISTS positions bytea",
    "ALTER TABLE {schema}.terms ADD COLUMN IF NOT EXISTS counts bytea",
    # Postings are read whole and do not compress much: stored out of line, uncompressed.
    "ALTER TABLE {schema}.terms ALTER positions SET STORAGE EXTERNAL",
    "ALTER TABLE {schema}.terms ALTER counts SET STORAGE EXTERNAL",
)


class Schema:
    """The SQL of one PostgreSQL schema holding catalogs.

    Args:
        name: The PostgreSQL schema (lower-case letters, digits, ``_``).

    Raises:
        ConfigurationError: ``name`` is not a plain identifier.
    """

    def __init__(self, name: str) -> None:
        if not _IDENTIFIER.match(name):
            raise ConfigurationError(
                f"schema must be a lower-case identifier ([a-z_][a-z0-9_]*), not {name!r}"
            )
        self.name = name

    def compose(self, text: LiteralString, **parts: Any) -> sql.Composed:
        """``text`` with ``{schema}`` (and ``parts``) filled in as SQL identifiers/literals."""
        return sql.SQL(text).format(schema=sql.Identifier(self.name), **parts)

    # --- set-up ------------------------------------------------------------------------

    def lock(self, conn: Connection[Any], *keys: str) -> None:
        """Take the writers' advisory lock for ``keys`` until the transaction ends."""
        conn.execute(
            "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_LOCK_CLASS % 2**31, "|".join(keys))
        )

    def create(self, conn: Connection[Any], *, want_vectors: bool) -> bool:
        """Create the schema, tables and indexes if missing (in the caller's transaction).

        Tables of an earlier layout are brought up to this one (columns added, the old
        keyword column made optional); catalogs stored by earlier versions stay readable by
        them and are never attached here (their variant differs).

        Returns:
            Whether the ``vector`` extension is there (created when allowed and wanted).
        """
        # Set up already: no DDL at all, since DDL waits for (and blocks) other sessions.
        done = conn.execute("SELECT to_regclass(%s)", (f"{self.name}.{_READY}",)).fetchone()
        if done is not None and done[0] is not None:
            vectors = _has_vector(conn)
            if (vectors or not want_vectors) and (not vectors or self._has_embedding(conn)):
                return vectors
        self.lock(conn, self.name, "ddl")
        if want_vectors:
            vectors = _has_vector(conn)
            if not vectors:
                try:
                    with conn.transaction():  # a savepoint: refusal must not end ours
                        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                    vectors = True
                except (errors.InsufficientPrivilege, errors.FeatureNotSupported):
                    vectors = False
                except errors.UndefinedFile:  # the extension is not installed on the server
                    vectors = False
        else:
            vectors = _has_vector(conn)
        for statement in _TABLES:
            conn.execute(self.compose(statement))
        if self._has_column(conn, "tools", "document"):  # the tsvector of layout v2
            conn.execute(self.compose("ALTER TABLE {schema}.tools ALTER document DROP NOT NULL"))
        if vectors and not self._has_embedding(conn):  # ALTER TABLE locks out readers
            conn.execute(self.compose("ALTER TABLE {schema}.tools ADD COLUMN embedding vector"))
        conn.execute(
            self.compose(
                "CREATE UNIQUE INDEX IF NOT EXISTS {ready} "
                "ON {schema}.tools (catalog_id, position)",
                ready=sql.Identifier(_READY),
            )
        )
        return vectors

    def _has_column(self, conn: Connection[Any], table: str, column: str) -> bool:
        row = conn.execute(
            "SELECT 1 FROM pg_attribute WHERE attrelid = %s::regclass AND attname = %s "
            "AND NOT attisdropped",
            (f"{self.name}.{table}", column),
        ).fetchone()
        return row is not None

    def _has_embedding(self, conn: Connection[Any]) -> bool:
        return self._has_column(conn, "tools", "embedding")

    def create_vector_index(self, conn: Connection[Any], catalog_id: int, dims: int) -> None:
        """The HNSW index (cosine) of one stored catalog's embeddings, built from its rows.

        One index per catalog, created after its rows are in: pgvector builds it in bulk (in
        ``maintenance_work_mem``, with parallel workers), where rows inserted into an index
        over every catalog would each walk its graph. A search names the catalog as a
        literal so that the planner can prove the index's predicate.
        """
        conn.execute(
            self.compose(
                "CREATE INDEX IF NOT EXISTS {index} ON {schema}.tools "
                "USING hnsw ((embedding::vector({dims})) vector_cosine_ops) "
                "WHERE catalog_id = {catalog}",
                index=sql.Identifier(_vector_index(catalog_id)),
                dims=sql.Literal(dims),
                catalog=sql.Literal(catalog_id),
            )
        )

    def drop_shared_vector_indexes(self, conn: Connection[Any]) -> None:
        """Drop the HNSW indexes over every catalog that earlier versions kept (one per size).

        Rows of each new catalog would otherwise be inserted into them one by one.
        """
        rows = conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = %s AND tablename = 'tools' "
            "AND indexname ~ '^tools_embedding_[0-9]+$'",
            (self.name,),
        ).fetchall()
        for (name,) in rows:
            conn.execute(
                self.compose("DROP INDEX IF EXISTS {schema}.{index}", index=sql.Identifier(name))
            )

    # --- catalogs ----------------------------------------------------------------------

    def find_catalog(self, conn: Connection[Any], fingerprint: str, variant: str) -> int | None:
        """The id of a stored catalog, or ``None``."""
        row = conn.execute(
            self.compose(
                "SELECT id FROM {schema}.catalogs WHERE fingerprint = %s AND variant = %s"
            ),
            (fingerprint, variant),
        ).fetchone()
        return None if row is None else int(row[0])

    def catalog_shape(
        self, conn: Connection[Any], catalog_id: int
    ) -> tuple[int | None, npt.NDArray[np.int64]]:
        """The embedding size of a stored catalog (``None``: none) and its tools' lengths."""
        row = conn.execute(
            self.compose("SELECT dims, lengths FROM {schema}.catalogs WHERE id = %s"),
            (catalog_id,),
            binary=True,
        ).fetchone()
        if row is None or row[1] is None:
            raise ConfigurationError(f"catalog {catalog_id} is not stored (or was deleted)")
        dims = None if row[0] is None else int(row[0])
        return dims, int32_array(bytes(row[1])).astype(np.int64)

    def store_catalog(
        self,
        conn: Connection[Any],
        *,
        fingerprint: str,
        variant: str,
        rows: Sequence[ToolRow],
        postings: Postings,
        dims: int | None,
    ) -> int:
        """Insert a catalog, its tools and postings (in the caller's transaction); return its id."""
        found = conn.execute(
            self.compose(
                "INSERT INTO {schema}.catalogs (fingerprint, variant, tools, dims, lengths) "
                "VALUES (%s, %s, %s, %s, %s) RETURNING id"
            ),
            (fingerprint, variant, len(rows), dims, packed_int32(postings.lengths)),
        ).fetchone()
        assert found is not None  # INSERT ... RETURNING returns the row
        catalog_id = int(found[0])
        vectors = dims is not None
        columns = ["catalog_id", "position", "name", "summary", "categories", "dims"]
        types = ["int8", "int4", "text", "text", "text[]", "int4"]
        if vectors:
            columns.append("embedding")
            types.append("float4[]")
        copy_tools = self.compose(
            "COPY {schema}.tools ({columns}) FROM STDIN (FORMAT BINARY)",
            columns=sql.SQL(", ").join(map(sql.Identifier, columns)),
        )
        if vectors:
            # Binary COPY cannot send float arrays into a vector column: stage them.
            conn.execute(
                "CREATE TEMP TABLE toolrelay_staging (catalog_id int8, position int4, name text, "
                "summary text, categories text[], dims int4, embedding real[]) ON COMMIT DROP"
            )
            copy_tools = sql.Composed(
                [sql.SQL("COPY toolrelay_staging FROM STDIN (FORMAT BINARY)")]
            )
        with conn.cursor().copy(copy_tools) as copy:
            copy.set_types(types)
            for row in rows:
                values: list[Any] = [
                    catalog_id,
                    row.position,
                    row.name,
                    row.summary,
                    row.categories,
                    dims,
                ]
                if vectors:
                    values.append(None if row.embedding is None else row.embedding.tolist())
                copy.write_row(values)
        if vectors:
            conn.execute(
                self.compose(
                    "INSERT INTO {schema}.tools "
                    "(catalog_id, position, name, summary, categories, dims, embedding) "
                    "SELECT catalog_id, position, name, summary, categories, dims, "
                    "embedding::vector FROM toolrelay_staging"
                )
            )
            conn.execute("DROP TABLE toolrelay_staging")
        with conn.cursor().copy(
            self.compose(
                "COPY {schema}.terms (catalog_id, term, tools, positions, counts) "
                "FROM STDIN (FORMAT BINARY)"
            )
        ) as copy:
            copy.set_types(["int8", "text", "int4", "bytea", "bytea"])
            for term, tools, counts in postings.rows():
                copy.write_row(
                    (catalog_id, term, len(tools), packed_int32(tools), packed_int32(counts))
                )
        conn.execute(self.compose("ANALYZE {schema}.tools, {schema}.terms"))  # fresh statistics
        return catalog_id

    def delete_catalogs(self, conn: Connection[Any], fingerprint: str) -> int:
        """Delete every stored variant of a catalog, and their vector indexes; return how many."""
        rows = conn.execute(
            self.compose("DELETE FROM {schema}.catalogs WHERE fingerprint = %s RETURNING id"),
            (fingerprint,),
        ).fetchall()
        for (catalog_id,) in rows:
            conn.execute(
                self.compose(
                    "DROP INDEX IF EXISTS {schema}.{index}",
                    index=sql.Identifier(_vector_index(int(catalog_id))),
                )
            )
        return len(rows)


def _vector_index(catalog_id: int) -> str:
    return f"tools_embedding_catalog_{catalog_id}"


def _has_vector(conn: Connection[Any]) -> bool:
    row = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
    return row is not None


def connection_pool(
    dsn: str, connect_timeout: float, statement_timeout: float, size: int, ef_search: int
) -> ConnectionPool[Any]:
    """A pool of autocommit connections with connect and statement timeouts.

    The sessions are set up for filtered HNSW walks too (``ef_search``; iterative scans), so
    a search needs no statements of its own for that. Connections are not checked before
    use, which would cost a round trip per search: the index runs a search again on a fresh
    connection when a pooled one turns out to be dead.
    """
    options = (
        f"-c statement_timeout={round(statement_timeout * 1000)} "
        f"-c hnsw.iterative_scan=relaxed_order -c hnsw.ef_search={ef_search}"
    )
    return ConnectionPool(
        dsn,
        open=False,
        min_size=1,
        max_size=size,
        timeout=connect_timeout + 1,
        kwargs={
            "autocommit": True,
            "connect_timeout": max(2, round(connect_timeout)),
            "options": options,
            "application_name": "toolrelay",
        },
    )


# --- one search ----------------------------------------------------------------------

_SAMPLE = 256  # permitted tools whose similarities give the median the fusion needs
_ENTRY = 100  # bytes a cached term costs besides its arrays (a rough share of the dict)


class PostingsCache:
    """The postings of recently searched terms of one stored catalog, up to a size in bytes.

    A stored catalog never changes, so a cached term is never stale; a search whose terms are
    all cached needs no statement at all. Terms the catalog does not have are remembered too.

    Args:
        capacity: Bytes of postings to keep (0: none); the least recently used go first.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._rows: OrderedDict[str, TermRow | None] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def lookup(self, terms: Sequence[str]) -> tuple[dict[str, TermRow], list[str]]:
        """The cached rows of ``terms`` (unknown terms left out) and the terms not cached."""
        found: dict[str, TermRow] = {}
        missing: list[str] = []
        with self._lock:
            for term in terms:
                if term not in self._rows:
                    missing.append(term)
                    continue
                self._rows.move_to_end(term)
                row = self._rows[term]
                if row is not None:
                    found[term] = row
        return found, missing

    def keep(self, term: str, row: TermRow | None) -> None:
        """Remember ``term``'s row (``None``: the catalog does not have the term)."""
        size = _size(row)
        if size > self.capacity:
            return
        with self._lock:
            if term in self._rows:
                return
            self._rows[term] = row
            self._size += size
            while self._size > self.capacity:
                _, old = self._rows.popitem(last=False)
                self._size -= _size(old)


def _size(row: TermRow | None) -> int:
    return _ENTRY + (0 if row is None else sum(a.nbytes for a in row if a is not None))


@dataclass(frozen=True, kw_only=True)
class AttachedCatalog:
    """The catalog an index serves: its stored id, and what ranking needs of it locally."""

    catalog_id: int
    fingerprint: str
    categories_key: str
    masks: CatalogMasks
    summaries: tuple[str, ...]
    links: Links | None
    lengths: npt.NDArray[np.int64]
    total_length: int
    dims: int | None
    postings: PostingsCache

    @classmethod
    def of(
        cls,
        *,
        catalog_id: int,
        fingerprint: str,
        categories_key: str,
        definitions: Sequence[ToolDefinition],
        explicit: Mapping[str, tuple[str, ...]],
        dims: int | None,
        lengths: npt.NDArray[np.int64],
        links: bool,
        postings_cache: int,
    ) -> AttachedCatalog:
        """Derive the local part from the catalog's definitions (``links``: prerequisites).

        ``postings_cache``: the bytes of postings to keep in memory (:class:`PostingsCache`).
        """
        return cls(
            catalog_id=catalog_id,
            fingerprint=fingerprint,
            categories_key=categories_key,
            masks=CatalogMasks([d.name for d in definitions], explicit),
            summaries=tuple(summarize(d.description) for d in definitions),
            links=prerequisite_links(definitions) if links and definitions else None,
            lengths=lengths,
            total_length=int(lengths.sum()),
            dims=dims,
            postings=PostingsCache(postings_cache),
        )


@dataclass(frozen=True, kw_only=True)
class SearchPlan:
    """What one search asks of the database (the request supplies the filters)."""

    schema: Schema
    mode: Literal["keyword", "vector", "hybrid"]
    terms: tuple[str, ...]
    query_vector: str | None
    semantic_weight: float
    candidates: int
    exact_below: int
    ranking: BM25
    lift: float | None


def run_search(
    conn: Connection[Any],
    attached: AttachedCatalog,
    plan: SearchPlan,
    request: SearchRequest,
    *,
    session: bool,
) -> tuple[list[SearchHit], int]:
    """The best permitted hits for ``request`` and how many permitted tools matched.

    ``session``: the connection's session is already set up for HNSW walks (the index's own
    pool); otherwise each walk sets them up in a transaction of its own.
    """
    masks = attached.masks
    permitted = masks.permitted(request.allowed)
    category = None if request.category is None else masks.category(request.category)
    if permitted is not None and not permitted.any():
        return [], 0
    if request.category is not None and category is None:
        return [], 0
    eligible = permitted
    if category is not None:
        eligible = category if permitted is None else category & permitted
    if plan.mode == "keyword" or attached.dims is None:
        scores = _keyword_scores(conn, attached, plan, permitted)
    elif plan.query_vector is None:
        return [], 0
    elif plan.mode == "vector":
        scores = np.zeros(len(masks), dtype=np.float32)
        nearest, _ = _similarities(conn, attached, plan, eligible, [], session)
        for position, similarity in nearest.items():
            scores[position] = similarity
    else:
        lexical = _keyword_scores(conn, attached, plan, permitted)
        scores = _hybrid_scores(conn, attached, plan, lexical, permitted, eligible, session)
    return best_hits(
        scores,
        request,
        permitted=permitted,
        masks=masks,
        summaries=attached.summaries,
        links=attached.links,
        lift=plan.lift,
    )


def _keyword_scores(
    conn: Connection[Any], attached: AttachedCatalog, plan: SearchPlan, permitted: Mask | None
) -> Scores:
    """BM25 over the permitted tools, from the stored postings of the query's terms."""
    if not plan.terms:
        return np.zeros(len(attached.masks), dtype=np.float32)
    rows, missing = attached.postings.lookup(list(dict.fromkeys(plan.terms)))
    if missing:
        # Binary results: postings travel as raw bytes (text would double them, as hex).
        fetched = conn.execute(
            plan.schema.compose(
                "SELECT term, positions, counts FROM {schema}.terms "
                "WHERE catalog_id = %s AND term = ANY(%s)"
            ),
            (attached.catalog_id, missing),
            binary=True,
        ).fetchall()
        new: dict[str, TermRow] = {}
        for term, tools, counts in fetched:
            positions = int32_array(bytes(tools))
            frequencies = int32_array(bytes(counts)).astype(np.float32)
            weights = plan.ranking.term_weights(
                positions, frequencies, attached.lengths, attached.total_length
            )
            new[term] = (positions, frequencies, weights)
        for term in missing:
            attached.postings.keep(term, new.get(term))
        rows.update(new)
    return plan.ranking.scores(
        rows, plan.terms, attached.lengths, permitted, total_length=attached.total_length
    )


def _hybrid_scores(
    conn: Connection[Any],
    attached: AttachedCatalog,
    plan: SearchPlan,
    lexical: Scores,
    permitted: Mask | None,
    eligible: Mask | None,
    session: bool,
) -> Scores:
    """Both sides' best candidates, fused (0 for every other tool)."""
    matches = lexical > 0
    if eligible is not None:
        matches &= eligible
    keyword_best = best_positions(lexical, np.flatnonzero(matches), plan.candidates).tolist()
    sample = _sample(permitted, len(attached.masks))
    nearest, looked_up = _similarities(
        conn, attached, plan, eligible, sorted({*keyword_best, *sample}), session
    )
    similarity = {**looked_up, **nearest}
    candidates = list(dict.fromkeys([*keyword_best, *nearest]))
    scores = np.zeros(len(attached.masks), dtype=np.float32)
    if not candidates:
        return scores
    known = [similarity[p] for p in sample if p in similarity]
    fused = score_fusion(
        lexical[candidates],
        np.array([similarity.get(p, 0.0) for p in candidates], dtype=np.float64),
        plan.semantic_weight,
        median=float(np.median(known)) if known else 0.0,
    )
    scores[candidates] = fused
    return scores


def _sample(permitted: Mask | None, size: int) -> list[int]:
    """Up to ``_SAMPLE`` permitted positions, spread evenly over the catalog."""
    positions = np.arange(size) if permitted is None else np.flatnonzero(permitted)
    if positions.size > _SAMPLE:
        positions = positions[np.linspace(0, positions.size - 1, _SAMPLE).astype(np.intp)]
    return [int(p) for p in np.unique(positions)]


def _similarities(
    conn: Connection[Any],
    attached: AttachedCatalog,
    plan: SearchPlan,
    eligible: Mask | None,
    lookup: Sequence[int],
    session: bool,
) -> tuple[dict[int, float], dict[int, float]]:
    """The nearest eligible tools (``plan.candidates``), and the ``lookup`` tools' similarities."""
    assert attached.dims is not None  # callers check that the catalog has embeddings
    dims = sql.Literal(attached.dims)
    params: dict[str, Any] = {
        "catalog": attached.catalog_id,
        "vector": plan.query_vector,
        "limit": plan.candidates,
        "lookup": list(lookup),
    }
    exact = eligible is not None and int(np.count_nonzero(eligible)) <= plan.exact_below
    if exact:
        assert eligible is not None
        params["eligible"] = np.flatnonzero(eligible).tolist()
        nearest = _EXACT
    else:
        nearest = _WALK
        if eligible is not None:
            params["bits"] = np.packbits(eligible, bitorder="little").tobytes()
            nearest = _FILTERED_WALK
    # The catalog as a literal: the planner proves its HNSW index's predicate from it.
    statement = plan.schema.compose(
        nearest + _LOOKUP, dims=dims, catalog=sql.Literal(attached.catalog_id)
    )
    if exact or session:
        rows = conn.execute(statement, params, binary=True).fetchall()
    else:
        # Iterative scans keep the HNSW walk going until enough rows pass the filter.
        with conn.transaction():
            conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            ef_search = sql.Literal(max(40, plan.candidates))
            conn.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(ef_search))
            rows = conn.execute(statement, params, binary=True).fetchall()
    found: dict[int, float] = {}
    looked_up: dict[int, float] = {}
    for is_nearest, position, value in rows:
        (found if is_nearest else looked_up)[int(position)] = float(value)
    return found, looked_up


# --- the statements: nearest tools (tagged true), then looked-up tools (false) -------------

_SIMILARITY = "1 - (embedding::vector({dims}) <=> %(vector)s::vector({dims}))"

_WALK = f"""(SELECT true, position, {_SIMILARITY}
    FROM {{schema}}.tools
    WHERE catalog_id = {{catalog}} AND dims = {{dims}}
    ORDER BY embedding::vector({{dims}}) <=> %(vector)s::vector({{dims}})
    LIMIT %(limit)s)"""

# get_bit numbers a bytea's bits from the least significant of its first byte.
_FILTERED_WALK = f"""(SELECT true, position, {_SIMILARITY}
    FROM {{schema}}.tools
    WHERE catalog_id = {{catalog}} AND dims = {{dims}} AND get_bit(%(bits)s, position) = 1
    ORDER BY embedding::vector({{dims}}) <=> %(vector)s::vector({{dims}})
    LIMIT %(limit)s)"""

# Materialised, so that the planner cannot answer it from the HNSW index.
_EXACT = f"""WITH scanned AS MATERIALIZED (
    SELECT position, {_SIMILARITY} AS similarity
    FROM {{schema}}.tools
    WHERE catalog_id = %(catalog)s AND dims = {{dims}} AND position = ANY(%(eligible)s::int4[]))
(SELECT true, position, similarity FROM scanned ORDER BY similarity DESC, position
    LIMIT %(limit)s)"""

_LOOKUP = f"""
UNION ALL
SELECT false, position, {_SIMILARITY}
FROM {{schema}}.tools
WHERE catalog_id = %(catalog)s AND dims = {{dims}} AND position = ANY(%(lookup)s::int4[])"""


def response_of(
    search_type: str, request: SearchRequest, hits: list[SearchHit], total: int, started: float
) -> SearchResponse:
    """The response of a search that started at ``started`` (``perf_counter``)."""
    return SearchResponse(
        hits=tuple(hits),
        total=total,
        search_type=search_type,
        query=request.query,
        time_ms=(time.perf_counter() - started) * 1000.0,
    )


# --- the index -----------------------------------------------------------------------

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
        """The best permitted tools for ``request``, ranked in the database.

        Raises:
            ConfigurationError: ``request`` carries a usage history, which this index does
                not rank with (an in-process index does).
        """
        if request.history is not None and len(request.history):
            raise ConfigurationError(
                "PostgresToolIndex does not rank with usage history; use an in-process index "
                "(default_index(), BM25ToolIndex, HybridToolIndex) with a usage_log, or none"
            )
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
                    if dims is not None:
                        self.schema.drop_shared_vector_indexes(conn)
                    catalog_id = self.schema.store_catalog(
                        conn,
                        fingerprint=fingerprint,
                        variant=variant,
                        rows=rows,
                        postings=postings,
                        dims=dims,
                    )
                    if dims is not None:
                        self.schema.create_vector_index(conn, catalog_id, dims)
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
