"""One Redis connection per event loop, Lua scripts that survive a restart, and error translation.

redis-py's asyncio connections belong to the event loop that opened them, while toolrelay's
stores may be used from several loops (``run_sync`` runs one per blocking call). A store
built from a URL therefore keeps one client per loop. A store given a client uses that client
as it is.

Every operation is one Lua script that is safe to repeat (appends carry a batch id, so a
repeated append adds nothing). A script that fails on a lost connection is sent once more on a
fresh connection, which is how clients get over a Redis restart; when that fails too, or a
reply takes longer than the timeout, the caller gets
:class:`~toolrelay.exceptions.StorageUnavailableError` and nothing is retried further.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Sequence
from typing import Any, ClassVar

from toolrelay._storable import to_bytes
from toolrelay.exceptions import ConfigurationError, StorageError, StorageUnavailableError

try:
    from redis import exceptions as redis_errors
    from redis.asyncio import BlockingConnectionPool, Redis
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff
    from redis.commands.core import AsyncScript
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        'toolrelay.redis needs the redis extra: pip install "toolrelay[redis]"'
    ) from exc

__all__ = ["DEFAULT_PREFIX", "DEFAULT_TIMEOUT", "MAX_CONNECTIONS", "RedisConnection"]

DEFAULT_PREFIX = "toolrelay:"
DEFAULT_TIMEOUT = 5.0
"""Seconds to connect, and to wait for any one reply, before giving up."""
MAX_CONNECTIONS = 64
"""Connections per store and event loop, for clients built from a URL."""


class RedisConnection:
    """The Redis client(s) of one store, and its scripts.

    Args:
        redis: A ``redis://`` / ``rediss://`` / ``unix://`` URL, or a ``redis.asyncio.Redis``
            client (used as given; it must not decode responses).
        what: Names the store in error messages ("session store", ...).
        timeout: Connect and reply timeout in seconds, for clients built from a URL.
    """

    def __init__(self, redis: str | Redis, *, what: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        if timeout <= 0:
            raise ConfigurationError(f"timeout must be > 0 seconds, not {timeout}")
        self.what = what
        self.timeout = timeout
        self._url = redis if isinstance(redis, str) else None
        self._given = None if isinstance(redis, str) else redis
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Redis] = (
            weakref.WeakKeyDictionary()
        )
        self._scripts: weakref.WeakKeyDictionary[Redis, dict[str, AsyncScript]] = (
            weakref.WeakKeyDictionary()
        )

    def __repr__(self) -> str:
        return f"RedisConnection({self.describe()})"

    def describe(self) -> str:
        """Where the store lives, without credentials."""
        if self._url is None:
            return "a given client"
        scheme, _, rest = self._url.partition("://")
        return f"{scheme}://{rest.rpartition('@')[2]}"

    def client(self) -> Redis:
        """The client for the running event loop (created on first use)."""
        if self._given is not None:
            return self._given
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            assert self._url is not None  # either a URL or a client was given
            # A blocking pool: a burst of concurrent operations waits for a free connection
            # (up to the timeout) instead of failing with "too many connections".
            pool = BlockingConnectionPool.from_url(
                self._url,
                max_connections=MAX_CONNECTIONS,
                timeout=self.timeout,
                socket_timeout=self.timeout,
                socket_connect_timeout=self.timeout,
                retry=Retry(NoBackoff(), 0),
            )
            client = Redis(connection_pool=pool, retry=Retry(NoBackoff(), 0))
            self._clients[loop] = client
        return client

    async def script(self, lua: str, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """Run a Lua script atomically (``EVALSHA``, loading it again after a restart)."""
        client = self.client()
        scripts = self._scripts.get(client)
        if scripts is None:
            scripts = self._scripts[client] = {}
        script = scripts.get(lua)
        if script is None:
            script = scripts[lua] = client.register_script(lua)
        # Text as UTF-8 with a model's lone surrogates passed through, read back exactly.
        sent_keys = [to_bytes(k) for k in keys]
        sent_args = [to_bytes(a) if isinstance(a, str) else a for a in args]
        try:
            try:
                return await script(keys=sent_keys, args=sent_args)
            except redis_errors.ConnectionError:
                # Most likely a pooled connection the server closed (it restarted): drop the
                # idle ones and send once more on a fresh connection. Every script of the
                # stores is safe to repeat, so a command that did run is not applied twice.
                await client.connection_pool.disconnect(inuse_connections=False)
                return await script(keys=sent_keys, args=sent_args)
        except (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError) as exc:
            raise StorageUnavailableError(
                f"Redis {self.what} at {self.describe()} is unavailable: "
                f"{exc or type(exc).__name__}"
            ) from exc
        except redis_errors.RedisError as exc:
            raise StorageError(f"Redis {self.what} at {self.describe()} failed: {exc}") from exc

    async def aclose(self) -> None:
        """Close the client of the running loop (a given client is left to its owner)."""
        if self._given is not None:
            return
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()
            await client.connection_pool.disconnect()  # built here, so closed here


class RedisStore:
    """What every Redis store shares: a key prefix, an optional TTL and one connection.

    Subclasses name what they store in ``_what`` (used in error messages).
    """

    _what: ClassVar[str]

    def __init__(
        self,
        redis: str | Redis,
        *,
        prefix: str = DEFAULT_PREFIX,
        ttl: float | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        if ttl is not None and ttl <= 0:
            raise ConfigurationError(f"ttl must be > 0 seconds or None, not {ttl}")
        self.prefix = prefix
        self.ttl = ttl
        self.connection = RedisConnection(redis, what=self._what, timeout=timeout)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.connection.describe()}, ttl={self.ttl})"
