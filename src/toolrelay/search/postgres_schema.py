"""The tables of :class:`~toolrelay.search.postgres.PostgresToolIndex` and how they are filled.

In one PostgreSQL schema (``toolrelay`` by default)::

    catalogs  one row per stored catalog: its fingerprint and variant (how it was analysed
              and embedded), tool count and embedding size
    terms     per catalog, how many tools each term occurs in (the rarest query terms are
              the ones searched)
    tools     one row per tool of a catalog: name, summary, categories, a weighted tsvector
              (name words A, description B, parameters C; GIN index), and with pgvector an
              embedding (HNSW index per embedding size, cosine distance)

Terms come from the search package's :class:`~toolrelay.search.text.Tokenizer` (identifiers
split, stop words dropped, stemmed) into the ``simple`` configuration, which only lower-cases:
the database matches the in-process indexes' terms, whatever the server's language settings.
Embeddings of any size share one ``vector`` column, with a partial HNSW index per size on
``embedding::vector(N)`` (queries repeat the cast). Writers take an advisory lock: workers
storing the same catalog at once store it once.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
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
from toolrelay.search.documents import dotted_categories, summarize, tool_text
from toolrelay.search.text import Tokenizer
from toolrelay.tools.base import ToolDefinition

__all__ = [
    "TOOL_WEIGHTS",
    "Categories",
    "Schema",
    "ToolRow",
    "catalog_variant",
    "categories_key",
    "connection_pool",
    "explicit_categories",
    "tool_rows",
    "tsquery_text",
    "vector_literal",
]

Categories = Mapping[str, str | Collection[str]]
"""Explicit categories per tool name, besides the prefixes of dotted names."""

TOOL_WEIGHTS = "{0.0, 0.2, 0.4, 1.0}"
"""ts_rank weights of the D, C, B, A parts: parameters count a fifth of a name word."""

_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,50}$")
# One advisory lock space for every writer of these tables (a 64-bit key, arbitrary).
_LOCK_CLASS = 0x746F6F6C72656C  # "toolrel"
_SAMPLE = 256  # tools per catalog whose similarities estimate the catalog's median


@dataclass(frozen=True, kw_only=True)
class ToolRow:
    """One tool as stored: its analysed text and, with embeddings, its vector."""

    position: int
    name: str
    summary: str
    categories: list[str]
    name_terms: str
    description_terms: str
    parameter_terms: str
    embedding: npt.NDArray[np.float32] | None = None


def vector_literal(vector: npt.NDArray[np.float32]) -> str:
    """A vector in pgvector's text form, ``[0.1,0.2,...]``."""
    return "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"


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


def catalog_variant(tokenizer: Tokenizer, model: str | None, categories: str) -> str:
    """How a catalog was analysed and embedded: stored catalogs are shared per variant."""
    t = tokenizer
    settings = (sorted(t.stop_words), t.stem, t.language, t.min_length, t.segment)
    analysis = hashlib.sha256(repr(settings).encode()).hexdigest()[:12]
    # v2: CJK text is cut into pieces, characters and words (v1 kept a CJK run as one term).
    return f"v2;terms={analysis};model={model or ''};categories={categories}"


def tool_rows(
    definitions: Sequence[ToolDefinition],
    tokenizer: Tokenizer,
    explicit: Mapping[str, tuple[str, ...]],
    embeddings: npt.NDArray[np.float32] | None,
) -> list[ToolRow]:
    """The rows of a catalog: analysed fields, categories and embeddings, in catalog order."""
    return [
        ToolRow(
            position=i,
            name=t.name,
            summary=summarize(t.description),
            categories=sorted({*dotted_categories(t.name), *explicit.get(t.name, ())}),
            name_terms=" ".join(tokenizer.terms(t.name_words)),
            description_terms=" ".join(tokenizer.terms(t.description)),
            parameter_terms=" ".join(tokenizer.terms(t.parameters)),
            embedding=None if embeddings is None else embeddings[i],
        )
        for i, t in enumerate(tool_text(d) for d in definitions)
    ]


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
        """Create the schema, tables and keyword indexes if missing (in the caller's transaction).

        Returns:
            Whether the ``vector`` extension is there (created when allowed and wanted).
        """
        # Set up already: no DDL at all, since DDL waits for (and blocks) other sessions.
        done = conn.execute("SELECT to_regclass(%s)", (f"{self.name}.tools_sample",)).fetchone()
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
        conn.execute(self.compose("CREATE SCHEMA IF NOT EXISTS {schema}"))
        conn.execute(
            self.compose(
                """CREATE TABLE IF NOT EXISTS {schema}.catalogs (
                    id bigserial PRIMARY KEY,
                    fingerprint text NOT NULL,
                    variant text NOT NULL,
                    tools integer NOT NULL,
                    dims integer,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    UNIQUE (fingerprint, variant))"""
            )
        )
        conn.execute(
            self.compose(
                """CREATE TABLE IF NOT EXISTS {schema}.tools (
                    catalog_id bigint NOT NULL REFERENCES {schema}.catalogs ON DELETE CASCADE,
                    position integer NOT NULL,
                    name text NOT NULL,
                    summary text NOT NULL,
                    categories text[] NOT NULL,
                    document tsvector NOT NULL,
                    sample boolean NOT NULL DEFAULT false,
                    dims integer,
                    PRIMARY KEY (catalog_id, name))"""
            )
        )
        conn.execute(
            self.compose(
                """CREATE TABLE IF NOT EXISTS {schema}.terms (
                    catalog_id bigint NOT NULL REFERENCES {schema}.catalogs ON DELETE CASCADE,
                    term text NOT NULL,
                    tools integer NOT NULL,
                    PRIMARY KEY (catalog_id, term))"""
            )
        )
        conn.execute(
            self.compose(
                "CREATE INDEX IF NOT EXISTS tools_document ON {schema}.tools USING gin (document)"
            )
        )
        conn.execute(
            self.compose(
                "CREATE INDEX IF NOT EXISTS tools_sample ON {schema}.tools (catalog_id) "
                "WHERE sample"
            )
        )
        if vectors and not self._has_embedding(conn):  # ALTER TABLE locks out readers
            conn.execute(self.compose("ALTER TABLE {schema}.tools ADD COLUMN embedding vector"))

        return vectors

    def _has_embedding(self, conn: Connection[Any]) -> bool:
        row = conn.execute(
            "SELECT 1 FROM pg_attribute WHERE attrelid = %s::regclass AND attname = 'embedding'",
            (f"{self.name}.tools",),
        ).fetchone()
        return row is not None

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

    def catalog_dims(self, conn: Connection[Any], catalog_id: int) -> int | None:
        """The embedding size of a stored catalog (``None``: stored without embeddings)."""
        row = conn.execute(
            self.compose("SELECT dims FROM {schema}.catalogs WHERE id = %s"), (catalog_id,)
        ).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def store_catalog(
        self,
        conn: Connection[Any],
        *,
        fingerprint: str,
        variant: str,
        rows: Sequence[ToolRow],
        dims: int | None,
    ) -> int:
        """Insert a catalog and its tools (in the caller's transaction); return its id."""
        found = conn.execute(
            self.compose(
                "INSERT INTO {schema}.catalogs (fingerprint, variant, tools, dims) "
                "VALUES (%s, %s, %s, %s) RETURNING id"
            ),
            (fingerprint, variant, len(rows), dims),
        ).fetchone()
        assert found is not None  # INSERT ... RETURNING returns the row
        catalog_id = int(found[0])
        conn.execute(
            "CREATE TEMP TABLE toolrelay_staging (position integer, name text, summary text, "
            "categories text[], name_terms text, description_terms text, parameter_terms text, "
            "embedding real[]) ON COMMIT DROP"
        )
        types = ["int4", "text", "text", "text[]", "text", "text", "text", "float4[]"]
        with conn.cursor().copy("COPY toolrelay_staging FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(types)
            for row in rows:
                vector = None if row.embedding is None else row.embedding.tolist()
                copy.write_row(
                    (
                        row.position,
                        row.name,
                        row.summary,
                        row.categories,
                        row.name_terms,
                        row.description_terms,
                        row.parameter_terms,
                        vector,
                    )
                )
        step = max(1, len(rows) // _SAMPLE)
        vectors = dims is not None
        embedding_columns = sql.SQL(", embedding" if vectors else "")
        embedding_values = sql.SQL(", embedding::vector" if vectors else "")
        conn.execute(
            self.compose(
                """INSERT INTO {schema}.tools
                    (catalog_id, position, name, summary, categories, document, sample, dims
                     {embedding_columns})
                SELECT %(id)s, position, name, summary, categories,
                    setweight(to_tsvector('simple', name_terms), 'A')
                    || setweight(to_tsvector('simple', description_terms), 'B')
                    || setweight(to_tsvector('simple', parameter_terms), 'C'),
                    position %% %(step)s = 0, %(dims)s {embedding_values}
                FROM toolrelay_staging""",
                embedding_columns=embedding_columns,
                embedding_values=embedding_values,
            ),
            {"id": catalog_id, "step": step, "dims": dims},
        )
        conn.execute("DROP TABLE toolrelay_staging")
        counts = Counter(
            term
            for row in rows
            for term in {
                *row.name_terms.split(),
                *row.description_terms.split(),
                *row.parameter_terms.split(),
            }
        )
        with conn.cursor().copy(
            self.compose("COPY {schema}.terms (catalog_id, term, tools) FROM STDIN")
        ) as copy:
            for term, tools in counts.items():
                copy.write_row((catalog_id, term, tools))
        conn.execute(self.compose("ANALYZE {schema}.tools, {schema}.terms"))  # fresh statistics
        return catalog_id

    def delete_catalogs(self, conn: Connection[Any], fingerprint: str) -> int:
        """Delete every stored variant of a catalog; return how many there were."""
        cursor = conn.execute(
            self.compose("DELETE FROM {schema}.catalogs WHERE fingerprint = %s"), (fingerprint,)
        )
        return cursor.rowcount


def tsquery_text(terms: Iterable[str]) -> str:
    """An OR of quoted terms for ``to_tsquery('simple', ...)``; empty when there are none."""
    quoted = ["'" + term.replace("'", "''").replace("\\", "\\\\") + "'" for term in terms]
    return " | ".join(dict.fromkeys(quoted))


def _has_vector(conn: Connection[Any]) -> bool:
    row = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
    return row is not None


def connection_pool(
    dsn: str, connect_timeout: float, statement_timeout: float, size: int
) -> ConnectionPool[Any]:
    """A pool of autocommit connections with connect and statement timeouts."""
    options = f"-c statement_timeout={round(statement_timeout * 1000)}"
    return ConnectionPool(
        dsn,
        open=False,
        min_size=1,
        max_size=size,
        timeout=connect_timeout + 1,
        check=ConnectionPool.check_connection,  # a restarted server's stale connections
        kwargs={
            "autocommit": True,
            "connect_timeout": max(2, round(connect_timeout)),
            "options": options,
            "application_name": "toolrelay",
        },
    )
