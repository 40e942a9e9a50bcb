"""An event loop in a daemon thread that owns connections bound to one loop.

Some clients' connections belong to the loop that opened them: the MCP SDK's live in anyio
task groups entered and left on one loop, redis-py's asyncio connections read and write
through that loop's transports. Keeping them on a loop of their own lets them be opened once
and used from any loop or thread: each pytest test's loop, a synchronous ``call()`` (which
runs on a fresh loop of its own), the gateway's server loop. A caller awaiting
:meth:`BackgroundLoop.run` that is cancelled (a tool timeout) cancels the work on the
background loop too.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class BackgroundLoop:
    """A started event loop in a daemon thread; :meth:`stop` ends it."""

    def __init__(self, name: str) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The background loop."""
        return self._loop

    def in_loop(self) -> bool:
        """Whether the caller runs on the background loop."""
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return False

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the background loop."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` on the background loop from any loop (directly when already on it)."""
        if self.in_loop():
            return await coro
        return await asyncio.wrap_future(self.submit(coro))

    def run_blocking(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the background loop and block until it is done.

        Raises:
            RuntimeError: Called from the background loop itself (it would deadlock).
        """
        if self.in_loop():
            coro.close()
            raise RuntimeError(f"run_blocking called on the background loop {self._thread.name!r}")
        return self.submit(coro).result(timeout)

    def stop(self) -> None:
        """Stop the loop and wait for its thread (idempotent)."""
        if self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        if threading.current_thread() is not self._thread:
            self._thread.join()

    def _main(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_forever()
        finally:
            # Close async generators and cancel what is left, so nothing warns at exit.
            pending = asyncio.all_tasks(self._loop)
            for task in pending:
                task.cancel()
            if pending:
                self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()
