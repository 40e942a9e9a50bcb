"""One bounded connection pool per store, Lua scripts that survive a restart, error translation.

redis-py's asyncio connections belong to the event loop that opened them, while toolrelay's
stores are used from many loops: every blocking ``call()`` runs on a fresh loop of its own
(``run_sync``), and a loop that ends does not close the connections opened on it. A store
built from a URL therefore keeps its client and its one bounded pool on a background loop of
the process (:class:`~toolrelay._loop.BackgroundLoop`), whatever loop or thread calls it:
connections are reused across calls, at most ``MAX_CONNECTIONS`` per store, and closed by
``aclose()``/``close()``. A process forked after using a store builds a loop and a pool of its
own on first use (the parent's sockets are never shared). A store given a client uses that
client as it is, on the caller's loop.

Every operation is one Lua script that is safe to repeat (appends carry a batch id, so a
repeated append adds nothing). A script that fails on a lost connection is sent once more on a
fresh connection, which is how clients get over a Redis restart; when that fails too, or a
reply takes longer than the timeout, the caller gets
:class:`~toolrelay.exceptions.StorageUnavailableError` and nothing is retried further. Text is
sent with :func:`~toolrelay._storable.to_bytes`, so a model's lone surrogates are stored and
read back exactly.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar, Self, TypeVar

from toolrelay._loop import BackgroundLoop
from toolrelay._storable import to_bytes
from toolrelay.exceptions import ConfigurationError, StorageError, StorageUnavailableError

try:
    from redis import exceptions as redis_errors
    from redis.asyncio import ConnectionPool, Redis
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff
    from redis.commands.core import AsyncScript
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("toolrelay.redis needs the redis extra: pip install -e '.[redis]'") from exc

__all__ = ["DEFAULT_PREFIX", "DEFAULT_TIMEOUT", "MAX_CONNECTIONS", "RedisConnection", "RedisStore"]

T = TypeVar("T")

DEFAULT_PREFIX = "toolrelay:"
DEFAULT_TIMEOUT = 5.0
"""Seconds to connect, and to wait for any one reply, before giving up."""
MAX_CONNECTIONS = 64
"""Most connections one store built from a URL opens (a burst beyond waits for a free one)."""


_INHERITED: list[object] = []
"""What a forked child inherited: the parent's loop and clients, kept and never touched.

Their sockets and the loop's epoll instance are shared with the parent: closing one of those
connections in the child, even by garbage collection, would unregister the parent's socket
from that shared epoll and leave the parent waiting for replies forever.
"""


class _ProcessLoop:
    """The background loop of this process's Redis clients, started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: BackgroundLoop | None = None
        self._pid = 0

    def get(self) -> BackgroundLoop:
        with self._lock:
            if self._loop is None or self._pid != os.getpid():
                if self._loop is not None:
                    _INHERITED.append(self._loop)  # a forked child: its thread is gone
                self._loop = BackgroundLoop("toolrelay-redis")
                self._pid = os.getpid()
            return self._loop


_PROCESS_LOOP = _ProcessLoop()


class RedisConnection:
    """The Redis client of one store, and its scripts.

    Args:
        redis: A ``redis://`` / ``rediss://`` / ``unix://`` URL, or a ``redis.asyncio.Redis``
            client (used as given; it must not decode responses).
        what: Names the store in error messages ("session store", ...).
        timeout: Connect and reply timeout in seconds, for clients built from a URL.
        max_connections: The pool's bound, for clients built from a URL.
    """

    def __init__(
        self,
        redis: str | Redis,
        *,
        what: str,
        timeout: float = DEFAULT_TIMEOUT,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        if timeout <= 0:
            raise ConfigurationError(f"timeout must be > 0 seconds, not {timeout}")
        if max_connections < 1:
            raise ConfigurationError(f"max_connections must be >= 1, not {max_connections}")
        self.what = what
        self.timeout = timeout
        self.max_connections = max_connections
        self._url = redis if isinstance(redis, str) else None
        self._given = None if isinstance(redis, str) else redis
        # Built and used on the process loop only; rebuilt in a forked child.
        self._own: Redis | None = None
        self._own_pid = 0
        self._slots: asyncio.Semaphore | None = None
        self._scripts: dict[str, AsyncScript] = {}

    def __repr__(self) -> str:
        return f"RedisConnection({self.describe()})"

    def describe(self) -> str:
        """Where the store lives, without credentials."""
        if self._url is None:
            return "a given client"
        scheme, _, rest = self._url.partition("://")
        return f"{scheme}://{rest.rpartition('@')[2]}"

    def pool(self) -> ConnectionPool | None:
        """The store's own pool (``None`` for a given client, or before first use)."""
        if self._own is None or self._own_pid != os.getpid():
            return None
        return self._own.connection_pool

    def _client(self) -> Redis:
        if self._given is not None:
            return self._given
        if self._own is None or self._own_pid != os.getpid():
            assert self._url is not None  # either a URL or a client was given
            if self._own is not None:
                _INHERITED.append(self._own)  # the parent's, in a forked child
            pool = ConnectionPool.from_url(
                self._url,
                max_connections=self.max_connections,
                socket_timeout=self.timeout,
                socket_connect_timeout=self.timeout,
                retry=Retry(NoBackoff(), 0),
            )
            self._own = Redis(connection_pool=pool, retry=Retry(NoBackoff(), 0))
            self._own_pid = os.getpid()
            # One slot per connection: a burst beyond the bound waits for a free one (up to
            # the timeout) instead of failing with "too many connections".
            self._slots = asyncio.Semaphore(self.max_connections)
            self._scripts = {}
        return self._own

    async def execute(self, work: Callable[[Redis], Awaitable[T]]) -> T:
        """``await work(client)`` where the client lives, with failures translated.

        ``work`` must be safe to repeat: one that meets a dropped connection is run once more
        on a fresh one.

        Raises:
            StorageUnavailableError: Redis cannot be reached, or did not answer in time.
            StorageError: Redis answered with an error.
        """
        if self._given is not None:
            return await self._translated(work)
        return await _PROCESS_LOOP.get().run(self._translated(work))

    async def script(self, lua: str, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """Run a Lua script atomically (``EVALSHA``, loading it again after a restart)."""
        sent_keys = [to_bytes(k) for k in keys]
        sent_args = [to_bytes(a) if isinstance(a, str) else a for a in args]

        async def run(client: Redis) -> Any:
            script = self._scripts.get(lua)
            if script is None:
                script = self._scripts[lua] = client.register_script(lua)
            return await script(keys=sent_keys, args=sent_args)

        return await self.execute(run)

    async def _translated(self, work: Callable[[Redis], Awaitable[T]]) -> T:
        client = self._client()
        slots = self._slots if client is self._own else None
        if slots is not None:
            try:
                async with asyncio.timeout(self.timeout):
                    await slots.acquire()
            except TimeoutError as exc:
                raise StorageUnavailableError(
                    f"Redis {self.what} at {self.describe()}: all {self.max_connections} "
                    f"connections stayed busy for {self.timeout:g} s"
                ) from exc
        try:
            try:
                return await work(client)
            except redis_errors.ConnectionError:
                # Most likely a pooled connection the server closed (it restarted); redis-py
                # dropped it, and the pool checks the next one before lending it. Every
                # operation of the stores is safe to repeat: one that did run is not applied
                # twice.
                return await work(client)
        except (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError) as exc:
            raise StorageUnavailableError(
                f"Redis {self.what} at {self.describe()} is unavailable: "
                f"{exc or type(exc).__name__}"
            ) from exc
        except redis_errors.RedisError as exc:
            raise StorageError(f"Redis {self.what} at {self.describe()} failed: {exc}") from exc
        finally:
            if slots is not None:
                slots.release()

    async def aclose(self) -> None:
        """Close the store's own connections (a given client is left to its owner).

        A later operation opens new ones.
        """
        if self._given is not None or self.pool() is None:
            return
        await _PROCESS_LOOP.get().run(self._close_own())

    def close(self) -> None:
        """Blocking :meth:`aclose`, for synchronous code."""
        if self._given is not None or self.pool() is None:
            return
        _PROCESS_LOOP.get().run_blocking(self._close_own())

    async def _close_own(self) -> None:
        client, self._own = self._own, None
        if client is not None:
            await client.aclose()
            await client.connection_pool.disconnect()  # built here, so closed here


class RedisStore:
    """What every Redis store shares: a key prefix, an optional TTL and one connection.

    Subclasses name what they store in ``_what`` (used in error messages). A store is an
    (async) context manager; leaving it closes its connections. Every Redis store is
    ``shared`` between processes and tenants: a client over one refuses requests without a
    ``tenant_id`` unless it is declared ``single_tenant``.
    """

    _what: ClassVar[str]
    shared: ClassVar[bool] = True

    def __init__(
        self,
        redis: str | Redis,
        *,
        prefix: str = DEFAULT_PREFIX,
        ttl: float | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        if ttl is not None and ttl <= 0:
            raise ConfigurationError(f"ttl must be > 0 seconds or None, not {ttl}")
        self.prefix = prefix
        self.ttl = ttl
        self.connection = RedisConnection(
            redis, what=self._what, timeout=timeout, max_connections=max_connections
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.connection.describe()}, ttl={self.ttl})"

    def _ttl_ms(self) -> int:
        return 0 if self.ttl is None else max(1, round(self.ttl * 1000))

    async def aclose(self) -> None:
        """Close the store's connections (a given client is left open)."""
        await self.connection.aclose()

    def close(self) -> None:
        """Blocking :meth:`aclose`."""
        self.connection.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
