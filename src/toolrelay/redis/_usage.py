"""The tool search's usage log in Redis, shared by every worker.

An entry ``(scope, query, tool)`` has a stable id (a hash of the three) and lives in columns,
so that the scripts read and update it without parsing JSON: the hashes
``{prefix}usage:scope``, ``usage:query``, ``usage:tool`` and ``usage:count`` map the id to
its parts, the sorted set ``{prefix}usage:recent`` holds every id by its last use (eviction
and age) and ``{prefix}usage:in:{scope}`` the ids of one scope (scoped reads). Every operation
is one Lua script, so a reader never sees an entry in half and two workers recording the same
entry at once both add their counts. A record carries a batch id (kept a day in
``{prefix}usage:batches``), so a record repeated after a lost reply adds nothing.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Sequence, Set
from typing import Any

from redis.asyncio import Redis

from toolrelay._storable import from_bytes
from toolrelay.redis._connection import DEFAULT_PREFIX, DEFAULT_TIMEOUT, RedisStore
from toolrelay.search._usage import (
    DEFAULT_MAX_AGE,
    DEFAULT_MAX_USAGE_ENTRIES,
    UsageEntry,
    check_bounds,
    stored_entry,
)

__all__ = ["RedisUsageLog"]

# Every script: KEYS[1..6] the scope, query, tool and count hashes, the recent set, the
# batches list; ARGV[1] the stem of the per-scope sets ("{prefix}usage:in:").
_COMMON = """
local SCOPE, QUERY, TOOL, COUNT, RECENT = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local function drop(id)
  local scope = redis.call('HGET', SCOPE, id)
  if scope then redis.call('ZREM', ARGV[1] .. scope, id) end
  redis.call('HDEL', SCOPE, id)
  redis.call('HDEL', QUERY, id)
  redis.call('HDEL', TOOL, id)
  redis.call('HDEL', COUNT, id)
  redis.call('ZREM', RECENT, id)
end
"""

# ARGV[2] batch id, ARGV[3] max entries, ARGV[4 + 6k ..] id, scope, query, tool, count, time.
# A repeated batch comes within seconds of the first: its id is remembered for a day.
_RECORD = (
    _COMMON
    + """
if redis.call('LPOS', KEYS[6], ARGV[2]) then return 0 end
redis.call('LPUSH', KEYS[6], ARGV[2])
redis.call('LTRIM', KEYS[6], 0, 999)
redis.call('PEXPIRE', KEYS[6], 86400000)
for i = 4, #ARGV, 6 do
  local id, scope, used = ARGV[i], ARGV[i + 1], ARGV[i + 5]
  if redis.call('HEXISTS', COUNT, id) == 0 then
    redis.call('HSET', SCOPE, id, scope)
    redis.call('HSET', QUERY, id, ARGV[i + 2])
    redis.call('HSET', TOOL, id, ARGV[i + 3])
  end
  redis.call('HINCRBY', COUNT, id, ARGV[i + 4])
  local known = redis.call('ZSCORE', RECENT, id)
  if not known or tonumber(used) > tonumber(known) then
    redis.call('ZADD', RECENT, used, id)
    redis.call('ZADD', ARGV[1] .. scope, used, id)
  end
end
local over = redis.call('ZCARD', RECENT) - tonumber(ARGV[3])
if over > 0 then
  for _, id in ipairs(redis.call('ZRANGE', RECENT, 0, over - 1)) do drop(id) end
end
return over
"""
)

# ARGV[2] the oldest time kept ("": any), ARGV[3] the scope ("" with ARGV[4] "all": every
# scope). Drops what is too old, then returns the live ids with their last use (most recent
# first) and, in that order, their scopes, queries, tools and counts.
_ENTRIES = (
    _COMMON
    + """
if ARGV[2] ~= '' then
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', RECENT, '-inf', '(' .. ARGV[2])) do
    drop(id)
  end
end
local source = RECENT
if ARGV[4] ~= 'all' then source = ARGV[1] .. ARGV[3] end
local scored = redis.call('ZREVRANGE', source, 0, -1, 'WITHSCORES')
local ids, times = {}, {}
for i = 1, #scored, 2 do
  ids[#ids + 1] = scored[i]
  times[#times + 1] = scored[i + 1]
end
local function column(hash)
  local values = {}
  for i = 1, #ids, 1000 do
    local part = redis.call('HMGET', hash, unpack(ids, i, math.min(i + 999, #ids)))
    for j = 1, #part do values[#values + 1] = part[j] end
  end
  return values
end
return {times, column(SCOPE), column(QUERY), column(TOOL), column(COUNT)}
"""
)

# ARGV[2..] the tools to keep. Drops the entries of every other tool; returns how many.
_RETAIN = (
    _COMMON
    + """
local keep = {}
for i = 2, #ARGV do keep[ARGV[i]] = true end
local tools = redis.call('HGETALL', TOOL)
local gone = 0
for i = 1, #tools, 2 do
  if not keep[tools[i + 1]] then
    drop(tools[i])
    gone = gone + 1
  end
end
return gone
"""
)

# ARGV[2] the scope ("" with ARGV[3] "all": every scope).
_CLEAR = (
    _COMMON
    + """
if ARGV[3] == 'all' then
  local seen = {}
  for _, scope in ipairs(redis.call('HVALS', SCOPE)) do
    if not seen[scope] then
      seen[scope] = true
      redis.call('DEL', ARGV[1] .. scope)
    end
  end
  redis.call('DEL', SCOPE, QUERY, TOOL, COUNT, RECENT)
  return 0
end
for _, id in ipairs(redis.call('ZRANGE', ARGV[1] .. ARGV[2], 0, -1)) do drop(id) end
return 0
"""
)


class RedisUsageLog(RedisStore):
    """A :class:`~toolrelay.search.UsageLog` in Redis, shared by every worker.

    Entries are aggregated by ``(scope, query, tool)`` over all workers: a repeat adds its
    count and keeps the later time of last use. At most ``max_entries`` entries are kept over
    all scopes (past it, the least recently used go first), and entries not used for
    ``max_age`` seconds are dropped when the log is next read. Queries longer than 1,000
    characters, or empty, are not kept; a query's lone surrogates become U+FFFD, while scopes
    and tool names are kept exactly.

    Args:
        redis: A Redis URL (``redis://host:6379/0``, ``rediss://`` for TLS, ``unix://``) or a
            ``redis.asyncio.Redis`` client that does not decode responses.
        max_entries: Distinct entries kept over all scopes.
        max_age: Seconds after its last use an entry is forgotten (``None``: never).
        prefix: Prepended to every key, to share one Redis database between applications.
        timeout: Seconds to connect and to wait for each reply.

    Raises:
        ConfigurationError: ``max_entries`` is below 1, or ``max_age`` or ``timeout`` is not
            positive.
        StorageUnavailableError: (from any method) Redis cannot be reached or timed out.
        StorageError: (from any method) Redis answered with an error.

    Example:
        >>> log = RedisUsageLog("redis://localhost:6379/0", max_entries=50_000)
        >>> await log.record([UsageEntry(query="money back", tool="billing.refund")])
        >>> await log.entries("")
    """

    _what = "usage log"

    def __init__(
        self,
        redis: str | Redis,
        *,
        max_entries: int = DEFAULT_MAX_USAGE_ENTRIES,
        max_age: float | None = DEFAULT_MAX_AGE,
        prefix: str = DEFAULT_PREFIX,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        check_bounds(max_entries, max_age)
        super().__init__(redis, prefix=prefix, timeout=timeout)
        self.max_entries = max_entries
        self.max_age = max_age

    def __repr__(self) -> str:
        return (
            f"RedisUsageLog({self.connection.describe()}, max_entries={self.max_entries}, "
            f"max_age={self.max_age})"
        )

    def _keys(self) -> list[str]:
        stem = f"{self.prefix}usage:"
        return [f"{stem}{part}" for part in ("scope", "query", "tool", "count", "recent")] + [
            f"{stem}batches"
        ]

    @property
    def _scope_stem(self) -> str:
        return f"{self.prefix}usage:in:"

    async def record(self, entries: Sequence[UsageEntry]) -> None:
        """See :meth:`~toolrelay.search.UsageLog.record`; then evicts past ``max_entries``."""
        args: list[Any] = []
        for entry in entries:
            kept = stored_entry(entry)
            if kept is not None:
                args += [_entry_id(kept), kept.scope, kept.query, kept.tool, kept.count]
                args.append(repr(kept.last_used))  # repr: the exact float, as Redis parses it
        if args:
            await self.connection.script(
                _RECORD, self._keys(), [self._scope_stem, uuid.uuid4().hex, self.max_entries, *args]
            )

    async def entries(self, scope: str | None = None) -> tuple[UsageEntry, ...]:
        """See :meth:`~toolrelay.search.UsageLog.entries` (drops entries older than ``max_age``)."""
        oldest = "" if self.max_age is None else repr(time.time() - self.max_age)
        times, scopes, queries, tools, counts = await self.connection.script(
            _ENTRIES,
            self._keys(),
            [self._scope_stem, oldest, scope or "", "all" if scope is None else "one"],
        )
        return tuple(
            UsageEntry(
                scope=from_bytes(s),
                query=from_bytes(q),
                tool=from_bytes(t),
                count=int(n),
                last_used=float(u),
            )
            for u, s, q, t, n in zip(times, scopes, queries, tools, counts, strict=True)
            if None not in (s, q, t, n)
        )

    async def retain(self, tools: Set[str]) -> int:
        """See :meth:`~toolrelay.search.UsageLog.retain`."""
        return int(
            await self.connection.script(_RETAIN, self._keys(), [self._scope_stem, *sorted(tools)])
        )

    async def clear(self, scope: str | None = None) -> None:
        """See :meth:`~toolrelay.search.UsageLog.clear`."""
        await self.connection.script(
            _CLEAR, self._keys(), [self._scope_stem, scope or "", "all" if scope is None else "one"]
        )


def _entry_id(entry: UsageEntry) -> str:
    """A stable id of ``(scope, query, tool)``, the same in every worker."""
    # ASCII JSON escapes lone surrogates, so every string has one unambiguous encoding.
    triple = json.dumps([entry.scope, entry.query, entry.tool])
    return hashlib.sha256(triple.encode("ascii")).hexdigest()[:32]
