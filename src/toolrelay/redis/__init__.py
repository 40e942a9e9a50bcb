"""Redis backends for running toolrelay in several worker processes (``toolrelay[redis]``).

Every worker points at the same Redis server and so shares the conversations' state::

    from toolrelay.redis import (
        RedisChatMemoryRepository, RedisIdempotencyStore, RedisSessionStore,
    )

    url = "redis://localhost:6379/0"
    advisor = ToolSearchAdvisor(catalog, session_store=RedisSessionStore(url, ttl=86400))
    memory = MessageWindowChatMemory(RedisChatMemoryRepository(url))
    idempotency = IdempotencyInterceptor(RedisIdempotencyStore(url, ttl=7 * 86400))

- :class:`RedisSessionStore`: the tool search's discovered tools per conversation, in order,
  and the ones it called, in one key expiring after ``ttl`` seconds unused.
- :class:`RedisChatMemoryRepository`: conversations as lists of message JSON; atomic
  :meth:`~RedisChatMemoryRepository.append` and window reads besides the repository protocol;
  its index of conversation ids holds the live ones (expired ids are pruned a batch a call).
- :class:`RedisIdempotencyStore`: the first reservation of a key wins; abandoned reservations
  expire after their lease. It refuses a server without an append-only file, whose restart
  would forget executed operations (:class:`RedisPersistence`, ``require_durable``).
- :class:`RedisUsageLog`: the tool search's usage log (which past queries led to which
  tools), aggregated over every worker and bounded by ``max_entries`` and ``max_age``.

Every operation is one atomic Lua script, safe to repeat. An operation that meets a lost
connection (Redis restarted) is sent once more on a fresh one; a Redis that cannot be reached,
or does not answer within ``timeout`` seconds, raises
:class:`~toolrelay.exceptions.StorageUnavailableError`. ``docs/scaling.md`` covers deployment.
"""

from toolrelay.redis._idempotency import RedisIdempotencyStore
from toolrelay.redis._memory import RedisChatMemoryRepository
from toolrelay.redis._persistence import RedisPersistence
from toolrelay.redis._sessions import RedisSessionStore
from toolrelay.redis._usage import RedisUsageLog

__all__ = [
    "RedisChatMemoryRepository",
    "RedisIdempotencyStore",
    "RedisPersistence",
    "RedisSessionStore",
    "RedisUsageLog",
]
