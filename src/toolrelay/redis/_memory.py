"""A chat memory repository in Redis, shared by every worker.

Each conversation is one Redis list of messages in their JSON form
(:func:`toolrelay.memory._base.message_to_json`), oldest first, under
``{prefix}memory:{conversation_id}``. Every operation is one Lua script, so a reader never
sees a half-saved conversation.

The sorted set ``{prefix}memory-ids`` lists the conversations, each scored by the time its
list expires (milliseconds of the server's clock; ``+inf`` without a ttl). The list is given
that very expiry (``PEXPIREAT``), so the ids scored from now on are exactly the live
conversations: listing reads only those, and every write and every listing removes up to
:data:`PRUNE_BATCH` ids whose time passed. No call walks the whole set, however many
conversations expired at once; a write adds at most one id and removes up to a batch, so the
expired ones never pile up.

Besides the repository protocol (``save_all`` replaces a conversation), :meth:`append` adds
messages atomically at the end: appends from several workers to one conversation are all
kept, each batch in one piece, in the order Redis applied them. :meth:`find_last` reads only
the most recent messages (a window), without loading the whole conversation.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from toolrelay._storable import from_store
from toolrelay.exceptions import ConfigurationError, StorageError
from toolrelay.memory._base import message_from_json, message_to_json
from toolrelay.messages import Message
from toolrelay.redis._connection import RedisStore

__all__ = ["PRUNE_BATCH", "RedisChatMemoryRepository"]

PRUNE_BATCH = 100
"""Most expired ids one operation removes from the id set (it adds at most one)."""

# The start of every script but the reads of one list. KEYS[1] is the id set, ARGV[1] the ttl
# in ms ("0": none). Sets `ttl`, `now` (the server's clock in ms) and `expiry` (when what is
# written now expires), and removes a batch of ids whose time passed.
_PRUNE = f"""
local ttl = tonumber(ARGV[1])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local expiry = ttl > 0 and now + ttl or '+inf'
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. now, 'LIMIT', 0, {PRUNE_BATCH})
if #expired > 0 then redis.call('ZREM', KEYS[1], unpack(expired)) end
"""

# KEYS[1] the id set, KEYS[2] the list; ARGV[1] ttl ms, ARGV[2] conversation id, ARGV[3..] JSON.
_SAVE_ALL = (
    _PRUNE
    + """
redis.call('DEL', KEYS[2])
if #ARGV > 2 then
  for i = 3, #ARGV, 1000 do
    redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV)))
  end
  redis.call('ZADD', KEYS[1], expiry, ARGV[2])
  if ttl > 0 then redis.call('PEXPIREAT', KEYS[2], expiry) end
else
  redis.call('ZREM', KEYS[1], ARGV[2])
end
return #ARGV - 2
"""
)

# Lua's unpack() takes a few thousand values at most, so long lists are pushed in chunks.

# KEYS as above plus KEYS[3], the ids of recent batches; ARGV[1] ttl ms, ARGV[2] conversation
# id, ARGV[3] keep at most this many (0: all), ARGV[4] batch id, ARGV[5..] JSON. A batch id
# already applied (a repeat after a lost reply) adds nothing.
_APPEND = (
    _PRUNE
    + """
if redis.call('LPOS', KEYS[3], ARGV[4]) then return redis.call('LLEN', KEYS[2]) end
redis.call('LPUSH', KEYS[3], ARGV[4])
redis.call('LTRIM', KEYS[3], 0, 99)
local size = 0
for i = 5, #ARGV, 1000 do
  size = redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
local keep = tonumber(ARGV[3])
if keep > 0 and size > keep then
  redis.call('LTRIM', KEYS[2], -keep, -1)
  size = keep
end
redis.call('ZADD', KEYS[1], expiry, ARGV[2])
if ttl > 0 then
  redis.call('PEXPIREAT', KEYS[2], expiry)
  redis.call('PEXPIREAT', KEYS[3], expiry)
else
  redis.call('PERSIST', KEYS[2])  -- kept until deleted, as its id's score says
end
return size
"""
)

# KEYS as for _APPEND; ARGV[1] ttl ms, ARGV[2] conversation id.
_DELETE = (
    _PRUNE
    + """
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('ZREM', KEYS[1], ARGV[2])
return 0
"""
)

# KEYS[1] the id set; ARGV[1] ttl ms. The live ids: those whose time has not passed.
_IDS = _PRUNE + "return redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf')"

# KEYS[1] the list; ARGV[1] start index (negative: from the end).
_RANGE = "return redis.call('LRANGE', KEYS[1], ARGV[1], -1)"

_LENGTH = "return redis.call('LLEN', KEYS[1])"


class RedisChatMemoryRepository(RedisStore):
    """A :class:`~toolrelay.memory.ChatMemoryRepository` in Redis.

    Args:
        redis: A Redis URL (``redis://host:6379/0``, ``rediss://`` for TLS, ``unix://``) or a
            ``redis.asyncio.Redis`` client that does not decode responses.
        prefix: Prepended to every key.
        ttl: Seconds a conversation is kept after its last write; ``None`` keeps it until
            deleted.
        timeout: Seconds to connect and to wait for each reply.

    Every message type, tool calls and tool responses included, comes back exactly as saved.
    Use it under :class:`~toolrelay.memory.MessageWindowChatMemory` like any repository: that
    memory appends with :meth:`append`, so workers running turns of the *same* conversation at
    the same time lose no message.

    Raises:
        ConfigurationError: ``ttl`` or ``timeout`` is not positive.
        StorageUnavailableError: (from any method) Redis cannot be reached or timed out.
        StorageError: (from any method) Redis answered with an error, or a stored message is
            not valid message JSON.
    """

    _what = "chat memory"

    def key_of(self, conversation_id: str) -> str:
        """The Redis key holding a conversation's messages."""
        return f"{self.prefix}memory:{conversation_id}"

    def _batches_key(self, conversation_id: str) -> str:
        return f"{self.prefix}memory-batches:{conversation_id}"

    @property
    def _ids_key(self) -> str:
        return f"{self.prefix}memory-ids"

    # --- the repository protocol ----------------------------------------------------------

    async def find_conversation_ids(self) -> list[str]:
        """Every conversation id that has messages (none whose ttl passed), sorted."""
        ids = await self.connection.script(_IDS, [self._ids_key], [self._ttl_ms()])
        return sorted(from_store(i) for i in ids)

    async def find_by_conversation_id(self, conversation_id: str) -> list[Message]:
        """The stored messages, oldest first (empty when unknown)."""
        return await self._range(conversation_id, 0)

    async def save_all(self, conversation_id: str, messages: Sequence[Message]) -> None:
        """Replace the conversation with ``messages`` (empty: forget it), atomically."""
        rows = [message_to_json(m) for m in messages]
        await self.connection.script(
            _SAVE_ALL,
            [self._ids_key, self.key_of(conversation_id)],
            [self._ttl_ms(), conversation_id, *rows],
        )

    async def delete_by_conversation_id(self, conversation_id: str) -> None:
        """Forget the conversation."""
        await self.connection.script(
            _DELETE,
            [self._ids_key, self.key_of(conversation_id), self._batches_key(conversation_id)],
            [self._ttl_ms(), conversation_id],
        )

    # --- beyond the protocol --------------------------------------------------------------

    async def append(
        self, conversation_id: str, messages: Sequence[Message], *, keep_last: int | None = None
    ) -> int:
        """Add ``messages`` at the end of the conversation, atomically.

        Args:
            conversation_id: The conversation.
            messages: The messages, oldest first; kept together and in this order.
            keep_last: Then drop the oldest messages beyond this many (a plain count: it may
                split a tool exchange, unlike :class:`~toolrelay.memory.MessageWindowChatMemory`).

        Returns:
            How many messages the conversation holds now.
        """
        if keep_last is not None and keep_last < 1:
            raise ConfigurationError(f"keep_last must be >= 1 or None, not {keep_last}")
        if not messages:
            return await self.count(conversation_id)
        rows = [message_to_json(m) for m in messages]
        size = await self.connection.script(
            _APPEND,
            [self._ids_key, self.key_of(conversation_id), self._batches_key(conversation_id)],
            [self._ttl_ms(), conversation_id, keep_last or 0, uuid.uuid4().hex, *rows],
        )
        return int(size)

    async def find_last(self, conversation_id: str, count: int) -> list[Message]:
        """The ``count`` most recent messages, oldest first (a window query)."""
        if count < 1:
            return []
        return await self._range(conversation_id, -count)

    async def count(self, conversation_id: str) -> int:
        """How many messages the conversation holds."""
        return int(await self.connection.script(_LENGTH, [self.key_of(conversation_id)], []))

    async def _range(self, conversation_id: str, start: int) -> list[Message]:
        rows = await self.connection.script(_RANGE, [self.key_of(conversation_id)], [start])
        try:
            return [message_from_json(from_store(row)) for row in rows]
        except (ValueError, KeyError, TypeError) as exc:
            raise StorageError(
                f"conversation {conversation_id!r} in Redis holds a message that is not "
                f"toolrelay message JSON: {exc}"
            ) from exc
