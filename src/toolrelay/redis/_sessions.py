"""The tool search's discovered tools per conversation, in Redis, shared by every worker.

Each conversation is one Redis sorted set under ``{prefix}session:{key}``: every discovered
tool as ``d:`` and its name, scored by its place in discovery order (1, 2, ...), every tool
the model called as ``u:`` and its name, scored 0, and, once the conversation's first reveal
pinned its tools, the marker ``p`` and each pinned tool as ``p:`` and its name, scored below
0 in their order (the marker first, so pinning none is kept too). One key per conversation,
so a ttl (or Redis's own eviction under memory pressure) takes its discoveries, used and
pinned tools together. Every operation is one Lua script, so it is atomic: two workers adding
names to the same conversation at the same moment both keep their names, each name once, in
the order the additions were applied. With a ``ttl``, a conversation nobody reads or writes
for that long expires by Redis's own key expiry (reading it renews the time).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from toolrelay._storable import from_store
from toolrelay.redis._connection import RedisStore
from toolrelay.toolsearch import StoredTools

__all__ = ["RedisSessionStore"]

# KEYS[1] the set; ARGV[1] ttl in ms ("0": none). Renews the ttl of a live conversation.
_GET = """
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
if #members > 0 and tonumber(ARGV[1]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return members
"""

# KEYS[1] the set; ARGV[1] ttl in ms, ARGV[2] how many names follow, then the names to append
# in order, then the used ones.
_ADD = """
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
-- Names take places from 1 on: the last member may be a used (0) or pinned (< 0) one.
local place = math.max(tonumber(last[2] or 0), 0)
local count = tonumber(ARGV[2])
for i = 3, 2 + count do
  if redis.call('ZADD', KEYS[1], 'NX', place + 1, 'd:' .. ARGV[i]) == 1 then
    place = place + 1
  end
end
for i = 3 + count, #ARGV do redis.call('ZADD', KEYS[1], 0, 'u:' .. ARGV[i]) end
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
if #members > 0 and tonumber(ARGV[1]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return members
"""

# KEYS[1] the set; ARGV[1] ttl in ms, ARGV[2..] the names (already unique). Keeps the used
# (score 0) and pinned (below 0) tools; an empty set is no key at all.
_REPLACE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '(0', '+inf')
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], i - 1, 'd:' .. ARGV[i]) end
if tonumber(ARGV[1]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return #ARGV - 1
"""

# KEYS[1] the set; ARGV[1] ttl in ms, ARGV[2..] the names to pin (already unique). Only the
# first pin of a conversation is kept: its marker 'p' is then there.
_PIN = """
if not redis.call('ZSCORE', KEYS[1], 'p') then
  local count = #ARGV - 1
  redis.call('ZADD', KEYS[1], -(count + 1), 'p')
  for i = 2, #ARGV do redis.call('ZADD', KEYS[1], i - 2 - count, 'p:' .. ARGV[i]) end
end
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
if tonumber(ARGV[1]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return members
"""

_DELETE = "return redis.call('DEL', KEYS[1])"


class RedisSessionStore(RedisStore):
    """A :class:`~toolrelay.toolsearch.SessionStore` in Redis.

    Args:
        redis: A Redis URL (``redis://host:6379/0``, ``rediss://`` for TLS, ``unix://``) or a
            ``redis.asyncio.Redis`` client that does not decode responses.
        prefix: Prepended to every key, to share one Redis database between applications.
        ttl: Seconds a conversation may stay unused (neither read nor written) before Redis
            expires it, discovered, used and pinned tools alike; ``None`` keeps it until
            deleted.
        timeout: Seconds to connect and to wait for each reply.

    Raises:
        ConfigurationError: ``ttl`` or ``timeout`` is not positive.
        StorageUnavailableError: (from any method) Redis cannot be reached or timed out.
        StorageError: (from any method) Redis answered with an error.

    Example:
        >>> store = RedisSessionStore("redis://localhost:6379/0", ttl=24 * 3600)
        >>> advisor = ToolSearchAdvisor(catalog, session_store=store)
    """

    _what = "session store"

    def key_of(self, key: str) -> str:
        """The Redis key holding a conversation's tools."""
        return f"{self.prefix}session:{key}"

    async def get(self, key: str) -> StoredTools:
        """What is stored for ``key`` (renews the ttl)."""
        members = await self.connection.script(_GET, [self.key_of(key)], [self._ttl_ms()])
        return _stored(members)

    async def add(
        self, key: str, names: Sequence[str] = (), *, used: Collection[str] = ()
    ) -> StoredTools:
        """Append the new ``names`` in their order, add ``used``; return what is stored now."""
        members = await self.connection.script(
            _ADD, [self.key_of(key)], [self._ttl_ms(), len(names), *names, *used]
        )
        return _stored(members)

    async def replace(self, key: str, names: Sequence[str]) -> None:
        """Store exactly ``names`` (duplicates dropped, first kept), keeping the rest."""
        unique = list(dict.fromkeys(names))
        await self.connection.script(_REPLACE, [self.key_of(key)], [self._ttl_ms(), *unique])

    async def pin(self, key: str, names: Sequence[str]) -> StoredTools:
        """Pin ``names`` for ``key`` unless it has pinned tools; return what is stored now."""
        unique = list(dict.fromkeys(names))
        members = await self.connection.script(_PIN, [self.key_of(key)], [self._ttl_ms(), *unique])
        return _stored(members)

    async def delete(self, key: str) -> None:
        """Forget ``key``, its names, used and pinned tools."""
        await self.connection.script(_DELETE, [self.key_of(key)], [])


def _stored(members: list[bytes]) -> StoredTools:
    """The members of a conversation's set (pinned ones first, then used, then names)."""
    names = [from_store(m[2:]) for m in members if m.startswith(b"d:")]
    used = frozenset(from_store(m[2:]) for m in members if m.startswith(b"u:"))
    pinned = [from_store(m[2:]) for m in members if m.startswith(b"p:")]
    marked = b"p" in members
    return StoredTools(names=tuple(names), used=used, pinned=tuple(pinned) if marked else None)
