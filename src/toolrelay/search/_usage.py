"""The usage log: which past search queries led to which successful tool calls.

Tool search records ``(scope, query, tool)`` for every tool a ``tool_search`` of the turn
found and the model then called successfully (see :mod:`toolrelay.toolsearch`). An index
given the log's entries for a scope (:class:`~toolrelay.search._history.QueryHistory`) ranks a tool
by its description *and* by the past queries that led to it, so requests worded in the
users' language find the tools authors described in theirs.

A log is a :class:`UsageLog`: :class:`InMemoryUsageLog` (one process), :class:`SQLiteUsageLog`
(a file, shared by the processes of one machine) or :class:`toolrelay.redis.RedisUsageLog`
(several workers). Entries are aggregated by ``(scope, query, tool)``: a repeat raises the
count and the time of last use. Every log is bounded: at most ``max_entries`` (the least
recently used go first) and none older than ``max_age`` seconds. :func:`dump_usage` and
:func:`load_usage` move entries through JSONL files (the log's own lines, or benchmark query
lines ``{"query", "relevant": [...]}``).
"""

from __future__ import annotations

import asyncio
import heapq
import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence, Set
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from toolrelay._storable import from_store, json_text, to_store, valid_unicode
from toolrelay.exceptions import ConfigurationError

__all__ = [
    "DEFAULT_MAX_AGE",
    "DEFAULT_MAX_USAGE_ENTRIES",
    "InMemoryUsageLog",
    "SQLiteUsageLog",
    "UsageEntry",
    "UsageLog",
    "dump_usage",
    "load_usage",
]

DEFAULT_MAX_USAGE_ENTRIES = 10_000
"""Distinct ``(scope, query, tool)`` entries a log keeps by default."""

DEFAULT_MAX_AGE = 180 * 24 * 3600.0
"""Seconds after its last use an entry is forgotten by default (180 days)."""

_MAX_QUERY = 1_000  # as tool_search's own bound: longer queries are not kept


@dataclass(frozen=True, kw_only=True)
class UsageEntry:
    """A past query that led to a successful call of a tool.

    Attributes:
        query: The ``tool_search`` query, as the model wrote it.
        tool: The canonical name of the tool called.
        scope: Whose history it is: the tenant, or ``""`` for a log shared by all.
        count: How many times this query led to this tool.
        last_used: When it last did, in seconds since the epoch.
    """

    query: str
    tool: str
    scope: str = ""
    count: int = 1
    last_used: float = 0.0

    def to_json(self) -> str:
        r"""One JSONL line of the log's own format (lone surrogates as ``\uXXXX`` escapes)."""
        return json_text(
            {
                "scope": self.scope,
                "query": self.query,
                "tool": self.tool,
                "count": self.count,
                "last_used": self.last_used,
            }
        )


@runtime_checkable
class UsageLog(Protocol):
    """Where usage entries are kept: record, read per scope, drop tools, clear."""

    async def record(self, entries: Sequence[UsageEntry]) -> None:
        """Add ``entries`` (a known ``(scope, query, tool)``: count added, later time kept)."""
        ...

    async def entries(self, scope: str | None = None) -> tuple[UsageEntry, ...]:
        """The live entries of ``scope`` (``None``: of every scope), most recent first."""
        ...

    async def retain(self, tools: Set[str]) -> int:
        """Drop the entries of tools not in ``tools`` (they left the catalog); how many went."""
        ...

    async def clear(self, scope: str | None = None) -> None:
        """Forget the entries of ``scope`` (``None``: every entry)."""
        ...


def check_bounds(max_entries: int, max_age: float | None) -> None:
    """Raise :class:`ConfigurationError` unless the bounds are ones a log can honour."""
    if max_entries < 1:
        raise ConfigurationError(f"max_entries must be at least 1, not {max_entries}")
    if max_age is not None and not max_age > 0:  # NaN too
        raise ConfigurationError(f"max_age must be positive seconds or None, not {max_age}")


def stored_entry(entry: UsageEntry) -> UsageEntry | None:
    """The entry as a log keeps it, or ``None`` when it is not kept (empty or long query).

    The query is stripped and made valid Unicode (indexes and tokenizers read it); the scope
    and the tool are kept exactly, so a lookup by either finds what was recorded under it.
    """
    query = valid_unicode(entry.query).strip()
    if not query or len(query) > _MAX_QUERY or not entry.tool:
        return None
    return replace(
        entry,
        query=query,
        count=max(1, int(entry.count)),
        last_used=float(entry.last_used) or time.time(),
    )


class InMemoryUsageLog:
    """A :class:`UsageLog` in this process's memory.

    Args:
        max_entries: Distinct entries kept; past it, the least recently used go first.
        max_age: Seconds after its last use an entry is forgotten (``None``: never).
    """

    def __init__(
        self,
        *,
        max_entries: int = DEFAULT_MAX_USAGE_ENTRIES,
        max_age: float | None = DEFAULT_MAX_AGE,
    ) -> None:
        check_bounds(max_entries, max_age)
        self.max_entries = max_entries
        self.max_age = max_age
        self._entries: dict[tuple[str, str, str], UsageEntry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    async def record(self, entries: Sequence[UsageEntry]) -> None:
        """See :meth:`UsageLog.record`."""
        for entry in entries:
            kept = stored_entry(entry)
            if kept is None:
                continue
            key = (kept.scope, kept.query, kept.tool)
            known = self._entries.get(key)
            if known is not None:
                kept = replace(
                    kept,
                    count=known.count + kept.count,
                    last_used=max(known.last_used, kept.last_used),
                )
            self._entries[key] = kept
        # Least recently used by last_used, not by recording order: loaded entries may be old.
        overflow = len(self._entries) - self.max_entries
        if overflow > 0:
            used = {key: e.last_used for key, e in self._entries.items()}
            for key in heapq.nsmallest(overflow, used, key=used.__getitem__):
                del self._entries[key]

    async def entries(self, scope: str | None = None) -> tuple[UsageEntry, ...]:
        """See :meth:`UsageLog.entries`."""
        self._expire()
        found = [e for e in reversed(self._entries.values()) if scope is None or e.scope == scope]
        return tuple(sorted(found, key=lambda e: -e.last_used))

    async def retain(self, tools: Set[str]) -> int:
        """See :meth:`UsageLog.retain`."""
        gone = [key for key in self._entries if key[2] not in tools]
        for key in gone:
            del self._entries[key]
        return len(gone)

    async def clear(self, scope: str | None = None) -> None:
        """See :meth:`UsageLog.clear`."""
        for key in [k for k in self._entries if scope is None or k[0] == scope]:
            del self._entries[key]

    def _expire(self) -> None:
        if self.max_age is None:
            return
        oldest = time.time() - self.max_age
        for key in [k for k, e in self._entries.items() if e.last_used < oldest]:
            del self._entries[key]


_SCHEMA = """
CREATE TABLE IF NOT EXISTS usage (
    scope TEXT NOT NULL, query TEXT NOT NULL, tool TEXT NOT NULL,
    count INTEGER NOT NULL, last_used REAL NOT NULL,
    PRIMARY KEY (scope, query, tool)
);
CREATE INDEX IF NOT EXISTS usage_last_used ON usage (last_used);
"""


class SQLiteUsageLog:
    """A :class:`UsageLog` in a SQLite file, shared by the processes of one machine.

    Args:
        path: The database file (created with its folder).
        max_entries: Distinct entries kept; past it, the least recently used go first.
        max_age: Seconds after its last use an entry is forgotten (``None``: never).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        max_entries: int = DEFAULT_MAX_USAGE_ENTRIES,
        max_age: float | None = DEFAULT_MAX_AGE,
    ) -> None:
        check_bounds(max_entries, max_age)
        self.path = Path(path)
        self.max_entries = max_entries
        self.max_age = max_age
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._connect() as db:
                db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigurationError(f"cannot open the usage log {self.path}: {exc}") from exc

    def __repr__(self) -> str:
        return f"SQLiteUsageLog({str(self.path)!r})"

    async def record(self, entries: Sequence[UsageEntry]) -> None:
        """See :meth:`UsageLog.record`."""
        rows = [
            (to_store(e.scope), e.query, to_store(e.tool), e.count, e.last_used)
            for e in (stored_entry(entry) for entry in entries)
            if e is not None
        ]
        if rows:
            await asyncio.to_thread(self._write, rows)

    async def entries(self, scope: str | None = None) -> tuple[UsageEntry, ...]:
        """See :meth:`UsageLog.entries`."""
        return await asyncio.to_thread(self._read, scope)

    async def retain(self, tools: Set[str]) -> int:
        """See :meth:`UsageLog.retain`."""
        return await asyncio.to_thread(self._retain, frozenset(tools))

    async def clear(self, scope: str | None = None) -> None:
        """See :meth:`UsageLog.clear`."""

        def clear() -> None:
            with self._lock, self._connect() as db:
                if scope is None:
                    db.execute("DELETE FROM usage")
                else:
                    db.execute("DELETE FROM usage WHERE scope = ?", (to_store(scope),))

        await asyncio.to_thread(clear)

    def _write(self, rows: list[tuple[str | bytes, str, str | bytes, int, float]]) -> None:
        with self._lock, self._connect() as db:
            db.executemany(
                "INSERT INTO usage VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope, query, tool) DO "
                "UPDATE SET count = count + excluded.count, "
                "last_used = max(last_used, excluded.last_used)",
                rows,
            )
            db.execute(
                "DELETE FROM usage WHERE rowid NOT IN "
                "(SELECT rowid FROM usage ORDER BY last_used DESC LIMIT ?)",
                (self.max_entries,),
            )

    def _read(self, scope: str | None) -> tuple[UsageEntry, ...]:
        oldest = -1.0 if self.max_age is None else time.time() - self.max_age
        sql = "SELECT scope, query, tool, count, last_used FROM usage WHERE last_used >= ?"
        params: list[Any] = [oldest]
        if scope is not None:
            sql += " AND scope = ?"
            params.append(to_store(scope))
        with self._lock, self._connect() as db:
            db.execute("DELETE FROM usage WHERE last_used < ?", (oldest,))
            rows = db.execute(sql + " ORDER BY last_used DESC", params).fetchall()
        return tuple(
            UsageEntry(scope=from_store(s), query=q, tool=from_store(t), count=c, last_used=u)
            for s, q, t, c, u in rows
        )

    def _retain(self, tools: frozenset[str]) -> int:
        with self._lock, self._connect() as db:
            known = {from_store(row[0]) for row in db.execute("SELECT DISTINCT tool FROM usage")}
            removed = 0
            for tool in sorted(known - tools):
                removed += db.execute(
                    "DELETE FROM usage WHERE tool = ?", (to_store(tool),)
                ).rowcount
        return removed

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30.0)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            yield db
            db.commit()
        finally:
            db.close()


def dump_usage(entries: Iterable[UsageEntry], path: str | Path) -> int:
    """Write ``entries`` to ``path`` as JSONL (one :meth:`UsageEntry.to_json` line each).

    Returns:
        How many were written.
    """
    written = 0
    with Path(path).open("w", encoding="utf-8") as out:
        for entry in entries:
            out.write(entry.to_json() + "\n")
            written += 1
    return written


def load_usage(path: str | Path, *, scope: str = "") -> list[UsageEntry]:
    """The entries of a JSONL file: the log's own lines, or benchmark query lines.

    A line ``{"scope", "query", "tool", "count"?, "last_used"?}`` is one entry; a line
    ``{"query", "relevant": [names]}`` (the retrieval benchmarks' format) is one entry per
    relevant tool, in ``scope``. Lines without a scope take ``scope``.

    Raises:
        ConfigurationError: The file cannot be read, or a line is neither form (its number
            is named).
    """
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"cannot read the usage file {path}: {exc}") from exc
    now = time.time()
    found: list[UsageEntry] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            query = row["query"]
            tools = row["relevant"] if "relevant" in row else [row["tool"]]
            entry_scope = row.get("scope", scope)
            if not isinstance(tools, list):
                raise TypeError("relevant must be a list of tool names")
            if not all(isinstance(v, str) for v in (query, entry_scope, *tools)):
                raise TypeError("query, scope and tools must be strings")
            count = int(row.get("count", 1))
            last_used = float(row.get("last_used") or now)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ConfigurationError(
                f"{path}:{number}: not a usage line ({exc}); expected "
                '{"query": ..., "tool": ...} or {"query": ..., "relevant": [...]}'
            ) from exc
        found.extend(
            UsageEntry(query=query, tool=t, scope=entry_scope, count=count, last_used=last_used)
            for t in tools
        )
    return found
