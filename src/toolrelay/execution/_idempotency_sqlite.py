"""An idempotency store in a SQLite file (stdlib ``sqlite3``, run in a worker thread).

Several processes on one machine may share the file: a reservation is taken inside a
``BEGIN IMMEDIATE`` transaction, so two processes reserving the same key at the same moment
cannot both acquire it. Keys and results UTF-8 cannot encode (a lone surrogate from a model)
are kept as bytes and come back exactly (:mod:`toolrelay._storable`). Expired rows are
deleted now and then as the store is written.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from toolrelay._sqlite import SqliteStore
from toolrelay._storable import from_store, to_store
from toolrelay.execution._idempotency import Reservation, ReservationStatus
from toolrelay.tools._base import check_seconds

__all__ = ["SqliteIdempotencyStore"]

# lease: seconds a reservation is live (0 marks an unknown outcome); NULL for a result.
# started: 0 for a reservation whose run has not been confirmed (it never started).
# fingerprint, summary: the arguments of the call holding the key; ran_at: when it took it.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS idempotency (
    key TEXT PRIMARY KEY,
    owner TEXT,
    result TEXT,
    since REAL NOT NULL,
    lease REAL,
    fingerprint TEXT NOT NULL,
    summary TEXT NOT NULL,
    ran_at REAL NOT NULL,
    started INTEGER NOT NULL DEFAULT 1
)
"""
_WRITE = (
    "INSERT OR REPLACE INTO idempotency "
    "(key, owner, result, since, lease, fingerprint, summary, ran_at, started) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_PURGE_EVERY = 256  # writes between two deletions of expired rows


class SqliteIdempotencyStore(SqliteStore):
    """Records idempotent results in one SQLite database.

    A row holds a reservation (``owner`` and its ``lease`` set, no result; ``started`` once
    confirmed), an unknown outcome (a reservation with ``lease`` 0) or a recorded result;
    ``since`` is when the row was last written. Each row also holds the ``fingerprint`` and
    ``summary`` of the arguments of the call holding the key, and when it took the key
    (``ran_at``).

    Args:
        path: The database file (missing parent folders are created); ``":memory:"`` for a
            private in-memory database.
        ttl: Seconds a recorded result or unknown outcome is kept; ``None`` keeps it until
            deleted.
        clock: Current time in seconds (for tests).

    One connection is opened lazily and shared; every statement runs in a worker thread
    under a lock. Use as an (async) context manager or call :meth:`close` when done.

    Raises:
        StorageError: (from any method) the database cannot be opened, read or written.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        ttl: float | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        check_seconds("ttl", ttl)
        super().__init__(path, schema=_SCHEMA, label="idempotency")
        self.ttl = ttl
        self._clock = clock
        self._writes = 0

    def _expired(self, since: float, now: float) -> bool:
        return self.ttl is not None and now - since >= self.ttl

    def _written(self, db: sqlite3.Connection, now: float) -> None:
        """Now and then, delete what has expired (live reservations stay)."""
        self._writes += 1
        if self.ttl is None or self._writes % _PURGE_EVERY:
            return
        db.execute(
            "DELETE FROM idempotency WHERE since <= ? "
            "AND (result IS NOT NULL OR ? - since >= COALESCE(lease, 0))",
            (now - self.ttl, now),
        )

    async def reserve(
        self, key: str, *, owner: str, lease: float, fingerprint: str = "", summary: str = ""
    ) -> Reservation:
        """See :meth:`~toolrelay.execution.IdempotencyStore.reserve`."""
        stored_key = to_store(key)

        def work(db: sqlite3.Connection) -> Reservation:
            now = self._clock()
            row = db.execute(
                "SELECT result, since, lease, fingerprint, summary, ran_at, started "
                "FROM idempotency WHERE key = ?",
                (stored_key,),
            ).fetchone()
            if row is not None:
                result, since, row_lease, held_by, held_summary, ran_at, started = row
                found = {
                    "fingerprint": from_store(held_by),
                    "summary": from_store(held_summary),
                    "ran_at": ran_at,
                }
                held_for = lease if row_lease is None else row_lease
                live = result is None and now - since < held_for
                if live:
                    return Reservation(status=ReservationStatus.RUNNING, **found)
                # A reservation whose lease ended before its run started is taken over.
                if (result is not None or started) and not self._expired(since, now):
                    if result is not None:
                        return Reservation(
                            status=ReservationStatus.COMPLETED, result=from_store(result), **found
                        )
                    return Reservation(status=ReservationStatus.UNKNOWN, **found)
            recorded = (to_store(fingerprint), to_store(summary), now)
            db.execute(_WRITE, (stored_key, to_store(owner), None, now, lease, *recorded, 0))
            self._written(db, now)
            return Reservation(status=ReservationStatus.ACQUIRED)

        return await self._run(work)

    async def confirm(self, key: str, *, owner: str) -> bool:
        """See :meth:`~toolrelay.execution.IdempotencyStore.confirm`."""

        def work(db: sqlite3.Connection) -> bool:
            changed = db.execute(
                "UPDATE idempotency SET started = 1, since = ? "
                "WHERE key = ? AND owner = ? AND result IS NULL AND lease > 0",
                (self._clock(), to_store(key), to_store(owner)),
            )
            return changed.rowcount == 1

        return await self._run(work)

    def _kept(
        self,
        db: sqlite3.Connection,
        stored_key: str | bytes,
        owner: str,
        fingerprint: str,
        summary: str,
        now: float,
    ) -> tuple[str | bytes, str | bytes, float]:
        """What a write by ``owner`` records: its reservation's, unless it gives new ones."""
        row = db.execute(
            "SELECT fingerprint, summary, ran_at FROM idempotency WHERE key = ? AND owner = ?",
            (stored_key, to_store(owner)),
        ).fetchone()
        if row is None:
            return to_store(fingerprint), to_store(summary), now
        return (
            to_store(fingerprint) if fingerprint else row[0],
            to_store(summary) if summary else row[1],
            row[2],
        )

    async def complete(
        self, key: str, *, owner: str, result: str, fingerprint: str = "", summary: str = ""
    ) -> None:
        """See :meth:`~toolrelay.execution.IdempotencyStore.complete`."""
        stored_key = to_store(key)

        def work(db: sqlite3.Connection) -> None:
            now = self._clock()
            row = db.execute(
                "SELECT result, since FROM idempotency WHERE key = ?", (stored_key,)
            ).fetchone()
            if row is not None and row[0] is not None and not self._expired(row[1], now):
                return  # the first recorded result stays
            kept = self._kept(db, stored_key, owner, fingerprint, summary, now)
            db.execute(_WRITE, (stored_key, None, to_store(result), now, None, *kept, 1))
            self._written(db, now)

        await self._run(work)

    async def release(self, key: str, *, owner: str) -> None:
        """See :meth:`~toolrelay.execution.IdempotencyStore.release`."""

        def work(db: sqlite3.Connection) -> None:
            db.execute(
                "DELETE FROM idempotency WHERE key = ? AND owner = ? AND result IS NULL",
                (to_store(key), to_store(owner)),
            )

        await self._run(work)

    async def mark_unknown(
        self, key: str, *, owner: str, fingerprint: str = "", summary: str = ""
    ) -> None:
        """See :meth:`~toolrelay.execution.IdempotencyStore.mark_unknown`."""
        stored_key, stored_owner = to_store(key), to_store(owner)

        def work(db: sqlite3.Connection) -> None:
            now = self._clock()
            row = db.execute(
                "SELECT owner, result FROM idempotency WHERE key = ?", (stored_key,)
            ).fetchone()
            if row is not None and (row[1] is not None or row[0] != stored_owner):
                return  # a result, or another owner's row: nothing of ours to mark
            kept = self._kept(db, stored_key, owner, fingerprint, summary, now)
            db.execute(_WRITE, (stored_key, stored_owner, None, now, 0, *kept, 1))
            self._written(db, now)

        await self._run(work)

    async def delete(self, key: str) -> None:
        """Forget ``key``: its result or reservation (nothing happens when it is unknown)."""

        def work(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM idempotency WHERE key = ?", (to_store(key),))

        await self._run(work)
