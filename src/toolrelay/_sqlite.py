"""The base of toolrelay's SQLite stores: one lazily opened connection, used from worker threads.

Every unit of work runs in a worker thread (the event loop never blocks on the disk) under a
lock, inside one ``BEGIN IMMEDIATE`` transaction: concurrent callers never interleave, and a
reader never sees half of a write. SQLite and file-system failures become
:class:`~toolrelay.exceptions.StorageError`. Stores pass text through
:func:`~toolrelay._storable.to_store`, so text from a model is never refused; should any text
still fail to encode, that is a ``StorageError`` too.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Self, TypeVar

from toolrelay.exceptions import StorageError

T = TypeVar("T")


class SqliteStore:
    """Subclasses pass their table's schema and a label for error messages."""

    def __init__(self, path: str | Path, *, schema: str, label: str) -> None:
        self.path: str | Path = path
        self._schema = schema
        self._label = label
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            if str(self.path) != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            # Autocommit mode: each unit of work opens its own transaction explicitly.
            connection = sqlite3.connect(
                self.path, check_same_thread=False, timeout=30, isolation_level=None
            )
            connection.execute(self._schema)
            self._connection = connection
        return self._connection

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        def locked() -> T:
            with self._lock:
                try:
                    db = self._connect()
                    db.execute("BEGIN IMMEDIATE")
                    try:
                        value = work(db)
                    except BaseException:
                        db.execute("ROLLBACK")
                        raise
                    db.execute("COMMIT")
                    return value
                except (sqlite3.Error, OSError, UnicodeError) as exc:
                    raise StorageError(
                        f"{self._label} database {str(self.path)!r} failed: {exc}"
                    ) from exc

        return await asyncio.to_thread(locked)

    def close(self) -> None:
        """Close the connection (a later call reopens it)."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
