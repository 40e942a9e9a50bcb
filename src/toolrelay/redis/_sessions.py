"""The tool search's discovered tools per conversation, in Redis, shared by every worker.

Each conversation is one Redis list of tool names in discovery order, under
``{prefix}session:{key}``. Every operation is one Lua script, so it is atomic: two workers
adding names to the same conversation at the same moment both keep their names, each name
once, in the order the additions were applied. With a ``ttl``, a conversation nobody reads or
writes for that long expires by Redis's own key expiry (reading it renews the time).
"""

from __future__ import annotations

from collections.abc import Sequence

from toolrelay._storable import from_store
from toolrelay.redis._connection import RedisStore

__all__ = ["RedisSessionStore"]

# KEYS[1] the list; ARGV[1] ttl in ms ("0": none). Renews the ttl of a live list.
_GET = """
local names = redis.call('LRANGE', KEYS[1], 0, -1)
if #names > 0 and tonumber(ARGV[1]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return names
"""

# KEYS[1] the list; ARGV[1] ttl in ms, ARGV[2..] names. Appends the absent names in order.
_ADD = """
local stored = redis.call('LRANGE', KEYS[1], 0, -1)
local seen = {}
for _, name in ipairs(stored) do seen[name] = true end
for i = 2, #ARGV do
  local name = ARGV[i]
  if not seen[name] then
    seen[name] = true
    stored[#stored + 1] = name
    redis.call('RPUSH', KEYS[1], name)
  end
end
if #stored > 0 and tonumber(ARGV[1]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return stored
"""

# KEYS[1] the list; ARGV[1] ttl in ms, ARGV[2..] the names (already unique).
_REPLACE = """
redis.call('DEL', KEYS[1])
if #ARGV > 1 then
  for i = 2, #ARGV, 1000 do
    redis.call('RPUSH', KEYS[1], unpack(ARGV, i, math.min(i + 999, #ARGV)))
  end
  if tonumber(ARGV[1]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
end
return #ARGV - 1
"""

_DELETE = "return redis.call('DEL', KEYS[1])"


class RedisSessionStore(RedisStore):
    """A :class:`~toolrelay.toolsearch.SessionStore` in Redis.

    Args:
        redis: A Redis URL (``redis://host:6379/0``, ``rediss://`` for TLS, ``unix://``) or a
            ``redis.asyncio.Redis`` client that does not decode responses.
        prefix: Prepended to every key, to share one Redis database between applications.
        ttl: Seconds a conversation may stay unused (neither read nor written) before Redis
            expires it; ``None`` keeps it until deleted.
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
        """The Redis key holding a conversation's names."""
        return f"{self.prefix}session:{key}"

    async def get(self, key: str) -> tuple[str, ...]:
        """The names stored for ``key``, oldest first (renews the ttl)."""
        names = await self.connection.script(_GET, [self.key_of(key)], [self._ttl_ms()])
        return tuple(from_store(n) for n in names)

    async def add(self, key: str, names: Sequence[str]) -> tuple[str, ...]:
        """Append the ``names`` not stored yet, in their order; return all names now stored."""
        stored = await self.connection.script(_ADD, [self.key_of(key)], [self._ttl_ms(), *names])
        return tuple(from_store(n) for n in stored)

    async def replace(self, key: str, names: Sequence[str]) -> None:
        """Store exactly ``names`` (duplicates dropped, first kept); empty forgets ``key``."""
        unique = list(dict.fromkeys(names))
        await self.connection.script(_REPLACE, [self.key_of(key)], [self._ttl_ms(), *unique])

    async def delete(self, key: str) -> None:
        """Forget ``key``."""
        await self.connection.script(_DELETE, [self.key_of(key)], [])
