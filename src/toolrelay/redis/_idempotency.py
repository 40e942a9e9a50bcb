"""An idempotency store in Redis: the first worker to reserve a key runs the call, once.

Each key is a Redis hash under ``{prefix}idempotency:{key}`` holding a reservation (``state``
"reserved" until its run is confirmed to start, then "running"; its ``owner`` and the server
time in ms it is live ``until``), an unknown outcome (``state`` "unknown": the run timed out or
was cancelled while running) or a recorded result (``state`` "done"), and always the
``fingerprint`` and ``summary`` of the arguments of the call holding the key and the server
time in ms it took the key (``ran_at``). A running reservation whose lease ran out without a
result (its owner crashed) reports an unknown outcome; it is never taken over, so an operation
that may have run is not run again. A reserved one whose lease ran out never started (the
reservation's reply was lost, or its owner crashed before the tool): it is taken over. Results
and unknown outcomes expire after ``ttl``. Reserving is one Lua script: of two workers
reserving the same key at the same moment, exactly one acquires it.

A record is only as durable as the server: before its first reservation the store reads the
server's persistence (:class:`~toolrelay.redis.RedisPersistence`) and refuses one that keeps no
append-only file, where a restart would forget executed operations and retried calls would run
again (``require_durable=False`` accepts it, with a warning).
"""

from __future__ import annotations

import logging

from redis.asyncio import Redis

from toolrelay._storable import from_store
from toolrelay.exceptions import ConfigurationError
from toolrelay.execution._idempotency import Reservation, ReservationStatus
from toolrelay.redis._connection import DEFAULT_PREFIX, DEFAULT_TIMEOUT, MAX_CONNECTIONS, RedisStore
from toolrelay.redis._persistence import RedisPersistence, read_persistence

__all__ = ["RedisIdempotencyStore"]

_log = logging.getLogger("toolrelay.redis")

# Every script that may write the record: the server's time in ms, and what the record of
# KEYS[1] holds now (nothing is false).
_NOW_AND_ENTRY = """
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local entry = redis.call('HMGET', KEYS[1], 'state', 'owner', 'result', 'until',
                         'fingerprint', 'summary', 'ran_at')
"""

# Writes by an owner (result, unknown mark) keep what its reservation recorded of the call,
# unless they give new values (ARGV[FP], ARGV[FP + 1] not empty); else they record them now.
_KEPT = """
local fingerprint, summary, ran = ARGV[FP], ARGV[FP + 1], now
if entry[1] and entry[2] == ARGV[1] then
  if fingerprint == '' then fingerprint = entry[5] or '' end
  if summary == '' then summary = entry[6] or '' end
  ran = entry[7] or now
end
"""

# KEYS[1] the hash; ARGV[1] owner, ARGV[2] lease ms, ARGV[3] ttl ms ("0": none), ARGV[4]
# fingerprint, ARGV[5] summary. A repeat by the same owner acquires again, so a reservation
# whose reply was lost can be retried. What it did not acquire comes with the record.
_RESERVE = (
    _NOW_AND_ENTRY
    + """
local held = {entry[5] or '', entry[6] or '', entry[7] or ''}
if entry[1] == 'done' then return {'completed', held[1], held[2], held[3], entry[3]} end
if entry[1] == 'unknown' then return {'unknown', held[1], held[2], held[3]} end
if (entry[1] == 'running' or entry[1] == 'reserved') and entry[2] ~= ARGV[1] then
  if tonumber(entry[4] or 0) > now then return {'running', held[1], held[2], held[3]} end
  if entry[1] == 'running' then return {'unknown', held[1], held[2], held[3]} end
end
local lease = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'state', 'reserved', 'owner', ARGV[1], 'until', now + lease,
           'lease', lease,
           'fingerprint', ARGV[4], 'summary', ARGV[5], 'ran_at', now)
local ttl = tonumber(ARGV[3])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], math.max(ttl, lease))
else
  redis.call('PERSIST', KEYS[1])
end
return {'acquired'}
"""
)

# KEYS[1] the hash; ARGV[1] owner, ARGV[2] ttl ms ("0": none), ARGV[3] fingerprint, ARGV[4]
# summary. Only the owner's reservation (or a key that is gone) becomes unknown.
_MARK_UNKNOWN = (
    _NOW_AND_ENTRY
    + """
if entry[1] == 'done' then return 0 end
if entry[1] and entry[2] ~= ARGV[1] then return 0 end
"""
    + _KEPT.replace("FP", "3")
    + """
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'state', 'unknown', 'owner', ARGV[1],
           'fingerprint', fingerprint, 'summary', summary, 'ran_at', ran)
if tonumber(ARGV[2]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
"""
)

# KEYS[1] the hash; ARGV[1] owner, ARGV[2] ttl ms ("0": none), ARGV[3] result, ARGV[4]
# fingerprint, ARGV[5] summary. The first result stays.
_COMPLETE = (
    _NOW_AND_ENTRY
    + """
if entry[1] == 'done' then return 0 end
"""
    + _KEPT.replace("FP", "4")
    + """
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'state', 'done', 'result', ARGV[3],
           'fingerprint', fingerprint, 'summary', summary, 'ran_at', ran)
if tonumber(ARGV[2]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
"""
)

# KEYS[1] the hash; ARGV[1] owner. The owner's reservation starts running: its lease anew.
_CONFIRM = """
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local entry = redis.call('HMGET', KEYS[1], 'state', 'owner', 'lease')
if entry[1] ~= 'reserved' or entry[2] ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', 'running', 'until', now + tonumber(entry[3]))
return 1
"""

# KEYS[1] the hash; ARGV[1] owner. Only the owner's reservation or unknown mark is dropped.
_RELEASE = """
local entry = redis.call('HMGET', KEYS[1], 'state', 'owner')
if entry[1] ~= 'done' and entry[2] == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

_DELETE = "return redis.call('DEL', KEYS[1])"

_STATUSES = {
    "acquired": ReservationStatus.ACQUIRED,
    "completed": ReservationStatus.COMPLETED,
    "running": ReservationStatus.RUNNING,
    "unknown": ReservationStatus.UNKNOWN,
}


class RedisIdempotencyStore(RedisStore):
    """An :class:`~toolrelay.execution.IdempotencyStore` in Redis, shared by every worker.

    Args:
        redis: A Redis URL (``redis://host:6379/0``, ``rediss://`` for TLS, ``unix://``) or a
            ``redis.asyncio.Redis`` client that does not decode responses.
        prefix: Prepended to every key.
        ttl: Seconds a recorded result or unknown outcome is kept; ``None`` keeps it until
            deleted.
        timeout: Seconds to connect and to wait for each reply.
        max_connections: Most connections the store opens, for a URL.
        require_durable: Refuse (``True``, the default) a server that keeps no append-only
            file, or accept it with a logged warning (``False``): there a restart forgets
            executed operations, and a retried call runs again.

    Example:
        >>> store = RedisIdempotencyStore("redis://localhost:6379/0", ttl=7 * 24 * 3600)
        >>> manager = ToolCallingManager(idempotency=store)

    Raises:
        ConfigurationError: ``ttl`` or ``timeout`` is not positive. From the first
            :meth:`reserve`: the server keeps no append-only file (or will not say whether
            it does) and ``require_durable`` is true.
        StorageUnavailableError: (from any method) Redis cannot be reached or timed out.
        StorageError: (from any method) Redis answered with an error.
    """

    _what = "idempotency store"

    def __init__(
        self,
        redis: str | Redis,
        *,
        prefix: str = DEFAULT_PREFIX,
        ttl: float | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_connections: int = MAX_CONNECTIONS,
        require_durable: bool = True,
    ) -> None:
        super().__init__(
            redis, prefix=prefix, ttl=ttl, timeout=timeout, max_connections=max_connections
        )
        self.require_durable = require_durable
        self._durability_checked = False

    async def persistence(self) -> RedisPersistence:
        """The server's persistence, read now (see :class:`~toolrelay.redis.RedisPersistence`)."""
        return await read_persistence(self.connection)

    async def check_durability(self) -> RedisPersistence:
        """Read the server's persistence and refuse (or warn about) one that forgets.

        :meth:`reserve` calls this once, before its first reservation; call it at start-up to
        fail before the first request instead.

        Raises:
            ConfigurationError: The server keeps no append-only file (or will not say) and
                ``require_durable`` is true.
            StorageUnavailableError: Redis cannot be reached.
        """
        persistence = await self.persistence()
        if not persistence.keeps_acknowledged_writes:
            problem = (
                f"Redis at {self.connection.describe()} keeps no append-only file "
                f"(persistence: {persistence.mode}): a restart would forget executed "
                "operations, and a retried call would run again"
            )
            if self.require_durable:
                raise ConfigurationError(
                    f"{problem}; turn on appendonly yes (appendfsync everysec or always), or "
                    "pass require_durable=False to accept it"
                )
            _log.warning("idempotency store: %s (accepted: require_durable=False)", problem)
        self._durability_checked = True
        return persistence

    def key_of(self, key: str) -> str:
        """The Redis key of an idempotency key."""
        return f"{self.prefix}idempotency:{key}"

    async def reserve(
        self, key: str, *, owner: str, lease: float, fingerprint: str = "", summary: str = ""
    ) -> Reservation:
        """See :meth:`~toolrelay.execution.IdempotencyStore.reserve`."""
        if lease <= 0:
            raise ConfigurationError(f"lease must be > 0 seconds, not {lease}")
        if not self._durability_checked:
            await self.check_durability()
        lease_ms = max(1, round(lease * 1000))
        reply = await self.connection.script(
            _RESERVE,
            [self.key_of(key)],
            [owner, lease_ms, self._ttl_ms(), fingerprint, summary],
        )
        status = _STATUSES[from_store(reply[0])]
        if status is ReservationStatus.ACQUIRED:
            return Reservation(status=status)
        ran_at = from_store(reply[3])
        return Reservation(
            status=status,
            result=from_store(reply[4]) if status is ReservationStatus.COMPLETED else None,
            fingerprint=from_store(reply[1]),
            summary=from_store(reply[2]),
            ran_at=int(ran_at) / 1000 if ran_at else None,
        )

    async def confirm(self, key: str, *, owner: str) -> bool:
        """See :meth:`~toolrelay.execution.IdempotencyStore.confirm`."""
        reply = await self.connection.script(_CONFIRM, [self.key_of(key)], [owner])
        return int(reply) == 1

    async def complete(
        self, key: str, *, owner: str, result: str, fingerprint: str = "", summary: str = ""
    ) -> None:
        """See :meth:`~toolrelay.execution.IdempotencyStore.complete`."""
        await self.connection.script(
            _COMPLETE, [self.key_of(key)], [owner, self._ttl_ms(), result, fingerprint, summary]
        )

    async def mark_unknown(
        self, key: str, *, owner: str, fingerprint: str = "", summary: str = ""
    ) -> None:
        """See :meth:`~toolrelay.execution.IdempotencyStore.mark_unknown`."""
        await self.connection.script(
            _MARK_UNKNOWN, [self.key_of(key)], [owner, self._ttl_ms(), fingerprint, summary]
        )

    def _ttl_ms(self) -> int:
        return 0 if self.ttl is None else max(1, round(self.ttl * 1000))

    async def release(self, key: str, *, owner: str) -> None:
        """See :meth:`~toolrelay.execution.IdempotencyStore.release`."""
        await self.connection.script(_RELEASE, [self.key_of(key)], [owner])

    async def delete(self, key: str) -> None:
        """Forget ``key``: its result or reservation (nothing happens when it is unknown)."""
        await self.connection.script(_DELETE, [self.key_of(key)], [])
