"""What a Redis server keeps across a restart, read from the server itself.

A Redis without persistence forgets everything when it restarts; with snapshots only (RDB),
whatever was written since the last snapshot. For an idempotency store that means executed
operations forgotten, and a retried refund paid again. :class:`RedisIdempotencyStore
<toolrelay.redis.RedisIdempotencyStore>` therefore reads the server's persistence before its
first reservation and refuses a server that keeps no append-only file.

Modes, and what an acknowledged write survives (``docs/scaling.md`` has the table):

- ``none``: nothing survives a restart;
- ``rdb``: a clean shutdown saves a snapshot; a crash loses every write since the last one;
- ``aof`` with ``appendfsync no`` / ``everysec`` / ``always``: every acknowledged write
  survives a restart of Redis, a crash included (Redis writes the file before it answers);
  a crash of the host loses what the kernel had not flushed yet: up to about 30 seconds, about
  one second, nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from toolrelay._storable import from_store
from toolrelay.exceptions import StorageError, StorageUnavailableError
from toolrelay.redis._connection import RedisConnection

__all__ = ["RedisPersistence", "read_persistence"]


@dataclass(frozen=True, kw_only=True)
class RedisPersistence:
    """A Redis server's persistence settings.

    Attributes:
        append_only: Whether it keeps an append-only file (``appendonly yes``); ``None`` when
            the server would not say.
        fsync: Its ``appendfsync`` (``"always"``, ``"everysec"``, ``"no"``), or ``None``
            when unknown (``CONFIG`` is disabled on some managed servers).
        snapshots: Its ``save`` schedule (``""``: no snapshots), or ``None`` when unknown.
    """

    append_only: bool | None
    fsync: str | None = None
    snapshots: str | None = None

    @property
    def mode(self) -> str:
        """``"aof everysec"`` (and the like), ``"rdb"``, ``"none"`` or ``"unknown"``."""
        if self.append_only:
            return f"aof {self.fsync}" if self.fsync else "aof"
        if self.append_only is None:
            return "unknown"
        if self.snapshots is None:
            return "rdb or none"
        return "rdb" if self.snapshots.strip() else "none"

    @property
    def keeps_acknowledged_writes(self) -> bool:
        """Whether every acknowledged write survives a restart of Redis (a crash included)."""
        return bool(self.append_only)


async def read_persistence(connection: RedisConnection) -> RedisPersistence:
    """The persistence of the server behind ``connection``.

    Raises:
        StorageUnavailableError: Redis cannot be reached.
    """

    async def read(client: Redis) -> RedisPersistence:
        info = await client.info("persistence")
        settings: dict[str, str] = {}
        try:
            for name in ("appendfsync", "save"):
                for key, value in (await client.config_get(name)).items():
                    if key is not None and value is not None:
                        settings[from_store(key)] = from_store(value)
        except ResponseError:  # CONFIG renamed or denied (managed servers): INFO has to do
            pass
        enabled = info.get("aof_enabled")
        return RedisPersistence(
            append_only=None if enabled is None else bool(int(enabled)),
            fsync=settings.get("appendfsync"),
            snapshots=settings.get("save"),
        )

    try:
        return await connection.execute(read)
    except StorageUnavailableError:
        raise
    except StorageError:  # INFO itself was refused: the server will not say
        return RedisPersistence(append_only=None)
