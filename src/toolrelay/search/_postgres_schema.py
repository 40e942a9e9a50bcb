"""The tables of :class:`~toolrelay.search.PostgresToolIndex` and how they are filled.

In one PostgreSQL schema (``toolrelay`` by default)::

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
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, LiteralString

import numpy as np
import numpy.typing as npt

try:
    from psycopg import Connection, errors, sql
    from psycopg_pool import ConnectionPool
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError('PostgresToolIndex needs: pip install "toolrelay[postgres]"') from exc

from toolrelay.exceptions import ConfigurationError
from toolrelay.search._bm25 import BM25Analysis, Postings
from toolrelay.search._documents import dotted_categories, summarize, tool_text
from toolrelay.tools._base import ToolDefinition

__all__ = [
    "Categories",
    "Schema",
    "ToolRow",
    "catalog_postings",
    "catalog_variant",
    "categories_key",
    "connection_pool",
    "explicit_categories",
    "int32_array",
    "packed_int32",
    "tool_rows",
    "vector_literal",
]

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

    def create_vector_index(self, conn: Connection[Any], dims: int) -> None:
        """The HNSW index (cosine) of embeddings of size ``dims``, if missing."""
        conn.execute(
            self.compose(
                "CREATE INDEX IF NOT EXISTS {index} ON {schema}.tools "
                "USING hnsw ((embedding::vector({dims})) vector_cosine_ops) WHERE dims = {dims}",
                index=sql.Identifier(f"tools_embedding_{dims}"),
                dims=sql.Literal(dims),
            )
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
        """Delete every stored variant of a catalog; return how many there were."""
        cursor = conn.execute(
            self.compose("DELETE FROM {schema}.catalogs WHERE fingerprint = %s"), (fingerprint,)
        )
        return cursor.rowcount


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
