"""An idempotency store in a SQLite file (stdlib ``sqlite3``, run in a worker thread).

Several processes on one machine may share the file: a reservation is taken inside a
``BEGIN IMMEDIATE`` transaction, so two processes reserving the same key at the same moment
cannot both acquire it. Keys and results UTF-8 cannot encode (a lone surrogate from a model)
are kept as bytes and come back exactly (:mod:`toolrelay._storable`).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from toolrelay._sqlite import SqliteStore
from toolrelay._storable import from_store, to_store
from toolrelay.exceptions import ConfigurationError
from toolrelay.execution.idempotency import Reservation, ReservationStatus

__all__ = ["SqliteIdempotencyStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS idempotency (
    key TEXT PRIMARY KEY,
    owner TEXT,
    result TEXT,
    since REAL NOT NULL
)
"""


class SqliteIdempotencyStore(SqliteStore):
    """Records idempotent results in one SQLite database.

    A row holds either a reservation (``owner`` set, no result) or a recorded result;
    ``since`` is when the reservation was taken or the result recorded.

    Args:
        path: The database file (missing parent folders are created); ``":memory:"`` for a
            private in-memory database.
        ttl: Seconds a recorded result is kept; ``None`` keeps it until deleted.
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
        if ttl is not None and ttl <= 0:
            raise ConfigurationError(f"ttl must be > 0 or None, not {ttl}")
        super().__init__(path, schema=_SCHEMA, label="idempotency")
        self.ttl = ttl
        self._clock = clock

    def _expired(self, since: float, now: float) -> bool:
        return self.ttl is not None and now - since >= self.ttl

    async def reserve(self, key: str, *, owner: str, lease: float) -> Reservation:
        """See :meth:`~toolrelay.execution.IdempotencyStore.reserve`."""
        stored_key = to_store(key)

        def work(db: sqlite3.Connection) -> Reservation:
            now = self._clock()
            row = db.execute(
                "SELECT result, since FROM idempotency WHERE key = ?", (stored_key,)
            ).fetchone()
            if row is not None:
                result, since = row
                if result is not None and not self._expired(since, now):
                    return Reservation(
                        status=ReservationStatus.COMPLETED, result=from_store(result)
                    )
                if result is None and now - since < lease:
                    return Reservation(status=ReservationStatus.RUNNING)
            db.execute(
                "INSERT OR REPLACE INTO idempotency (key, owner, result, since) "
                "VALUES (?, ?, NULL, ?)",
                (stored_key, to_store(owner), now),
            )
            return Reservation(status=ReservationStatus.ACQUIRED)

        return await self._run(work)

    async def complete(self, key: str, *, owner: str, result: str) -> None:
        """See :meth:`~toolrelay.execution.IdempotencyStore.complete`."""
        stored_key = to_store(key)

        def work(db: sqlite3.Connection) -> None:
            now = self._clock()
            row = db.execute(
                "SELECT result, since FROM idempotency WHERE key = ?", (stored_key,)
            ).fetchone()
            if row is not None and row[0] is not None and not self._expired(row[1], now):
                return  # the first recorded result stays
            db.execute(
                "INSERT OR REPLACE INTO idempotency (key, owner, result, since) "
                "VALUES (?, NULL, ?, ?)",
                (stored_key, to_store(result), now),
            )

        await self._run(work)

    async def release(self, key: str, *, owner: str) -> None:
        """See :meth:`~toolrelay.execution.IdempotencyStore.release`."""

        def work(db: sqlite3.Connection) -> None:
            db.execute(
                "DELETE FROM idempotency WHERE key = ? AND owner = ? AND result IS NULL",
                (to_store(key), to_store(owner)),
            )

        await self._run(work)

    async def delete(self, key: str) -> None:
        """Forget ``key``: its result or reservation (nothing happens when it is unknown)."""

        def work(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM idempotency WHERE key = ?", (to_store(key),))

        await self._run(work)
