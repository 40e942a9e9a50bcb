"""The bounded pool of threads synchronous tool functions run in, apart from everything else.

A synchronous tool function cannot be stopped once it runs: when its call times out, its
thread stays busy until the function returns. Running such functions in the default executor
of ``asyncio`` (``asyncio.to_thread``) lets a few hung ones starve everything else that uses
it: the search index behind ``tool_search``, file and database stores, every later tool. So
tool functions get a pool of their own, :class:`WorkerPool`:

- it has at most ``max_workers`` threads (:data:`DEFAULT_SYNC_WORKERS` by default), started as
  needed; they are daemon threads, so a function that never returns cannot keep the process
  from exiting;
- a job's exception reaches its caller as it was raised, ``SystemExit`` and ``GeneratorExit``
  included, like any coroutine's; ``StopIteration``, which an ``asyncio`` future cannot carry,
  arrives as a ``RuntimeError`` caused by it;
- waiting for a job never blocks the event loop, and a wait that is cancelled (a timeout)
  ends at once: a job that has not started is dropped, one that runs is *abandoned*, counted
  as stuck until its function returns, and its result is kept on its future;
- :meth:`WorkerPool.status` tells how many threads are busy, how many of them are stuck, and
  how many jobs wait.

Nothing else in toolrelay uses this pool: index searches, stores and file writes run in the
event loop's default executor. :func:`sync_tool_workers` is the process-wide pool function
tools use unless the execution manager is given another one.

    status = sync_tool_workers().status()
    if status.stuck:
        log.warning("%d tool threads are stuck in calls that timed out", status.stuck)
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import itertools
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from toolrelay.exceptions import ConfigurationError

__all__ = [
    "DEFAULT_SYNC_WORKERS",
    "SyncRunner",
    "WorkerJob",
    "WorkerPool",
    "WorkerPoolStatus",
    "sync_tool_workers",
]

T = TypeVar("T")

DEFAULT_SYNC_WORKERS = 32
"""Threads of the process-wide pool: tool functions mostly wait on I/O, not on a core."""


@dataclass(frozen=True, kw_only=True)
class WorkerPoolStatus:
    """What a :class:`WorkerPool` is doing now.

    Attributes:
        max_workers: The most threads the pool runs.
        busy: Threads running a job, stuck ones included.
        stuck: Threads running a job whose caller stopped waiting (its call timed out or was
            cancelled); each stays busy until its function returns.
        queued: Jobs waiting for a free thread.
    """

    max_workers: int
    busy: int
    stuck: int
    queued: int

    @property
    def free(self) -> int:
        """Threads that could take a job now (started or not)."""
        return self.max_workers - self.busy


class SyncRunner(Protocol):
    """Runs a synchronous function off the event loop; :class:`WorkerPool` is one."""

    async def run(self, fn: Callable[[], T], /) -> T:
        """``fn()``'s result; cancelling the wait never waits for ``fn``."""
        ...


class WorkerJob(Generic[T]):
    """One function submitted to a :class:`WorkerPool`.

    Attributes:
        future: Completes with the function's result or exception, also after the caller
            stopped waiting (see :meth:`wait`).
    """

    __slots__ = ("_abandoned", "_context", "_finished", "_fn", "_pool", "_started", "future")

    def __init__(self, pool: WorkerPool, fn: Callable[[], T]) -> None:
        self.future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._pool = pool
        self._fn: Callable[[], T] | None = fn
        # The caller's context variables reach the function, as with asyncio.to_thread.
        self._context = contextvars.copy_context()
        self._started = False
        self._finished = False
        self._abandoned = False

    @property
    def started(self) -> bool:
        """Whether a thread has begun running the function."""
        return self._started

    @property
    def abandoned(self) -> bool:
        """Whether the caller stopped waiting while the function ran."""
        return self._abandoned

    async def wait(self) -> T:
        """The function's result.

        Cancelling the wait returns at once: a job that has not started never will, and a
        running one is abandoned (the pool counts it as stuck until the function returns).
        """
        ended = asyncio.wrap_future(self.future)
        try:
            # Waited for, not awaited: a task awaiting a future that holds GeneratorExit gets it
            # thrown into its outermost coroutine, past every handler in between.
            await asyncio.wait((ended,))
        except asyncio.CancelledError:
            ended.cancel()
            if not self.future.cancel():  # only a job no thread has taken can be cancelled
                self._pool._abandon(self)
            raise
        ended.exception()  # retrieved here; raised below, in this frame, like any other
        return self.future.result()

    def _run(self) -> tuple[bool, object]:
        """Run the function once: ``(True, result)`` or ``(False, exception)``."""
        fn, self._fn = self._fn, None  # no references to the function's arguments are kept
        assert fn is not None  # a job runs once
        try:
            return True, self._context.run(fn)
        except StopIteration as exc:
            # An asyncio future refuses StopIteration, so the caller would wait for ever;
            # it becomes a RuntimeError, as it does when a coroutine raises it (PEP 479).
            error = RuntimeError(f"the function raised StopIteration: {exc!r}")
            error.__cause__ = exc
            return False, error
        except BaseException as exc:  # delivered to the caller, like any outcome
            return False, exc
        finally:
            del fn

    def _settle(self, outcome: tuple[bool, object]) -> None:
        ok, value = outcome
        if ok:
            self.future.set_result(value)  # type: ignore[arg-type]
        else:
            assert isinstance(value, BaseException)
            self.future.set_exception(value)


class WorkerPool:
    """A bounded pool of daemon threads for synchronous tool functions (see the module docs).

    Args:
        max_workers: The most threads it runs at once (at least 1).
        name: The prefix of its threads' names.

    Raises:
        ConfigurationError: ``max_workers`` is below 1.
    """

    def __init__(
        self, max_workers: int = DEFAULT_SYNC_WORKERS, *, name: str = "toolrelay-tool"
    ) -> None:
        if isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1:
            raise ConfigurationError(f"max_workers must be an integer >= 1, not {max_workers!r}")
        self.max_workers = max_workers
        self.name = name
        self._jobs: queue.SimpleQueue[WorkerJob[object]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0
        self._busy = 0
        self._stuck = 0
        self._queued = 0
        self._numbers = itertools.count(1)

    def submit(self, fn: Callable[[], T], /) -> WorkerJob[T]:
        """Queue ``fn`` and return its job; a thread is started when none is free.

        Raises:
            RuntimeError: No thread could be started and none exists (the job is dropped).
        """
        job: WorkerJob[T] = WorkerJob(self, fn)
        job.future.add_done_callback(self._cancelled_while_queued)
        with self._lock:
            self._queued += 1
            start = self._idle < self._queued and self._threads < self.max_workers
            if start:
                self._threads += 1
        self._jobs.put(job)  # type: ignore[arg-type]
        if start:
            thread = threading.Thread(
                target=self._work, name=f"{self.name}-{next(self._numbers)}", daemon=True
            )
            try:
                thread.start()
            except RuntimeError:
                with self._lock:
                    self._threads -= 1
                    alone = self._threads == 0
                if alone and job.future.cancel():
                    raise
        return job

    async def run(self, fn: Callable[[], T], /) -> T:
        """Run ``fn`` in the pool and return its result (see :meth:`WorkerJob.wait`)."""
        return await self.submit(fn).wait()

    def status(self) -> WorkerPoolStatus:
        """How many threads are busy or stuck, and how many jobs wait."""
        with self._lock:
            return WorkerPoolStatus(
                max_workers=self.max_workers,
                busy=self._busy,
                stuck=self._stuck,
                queued=self._queued,
            )

    def __repr__(self) -> str:
        status = self.status()
        return (
            f"WorkerPool(max_workers={self.max_workers}, busy={status.busy}, "
            f"stuck={status.stuck}, queued={status.queued})"
        )

    # --- inside the pool ---------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            job = self._jobs.get()
            with self._lock:
                self._idle -= 1
                if not job.future.set_running_or_notify_cancel():
                    continue  # cancelled while queued; _cancelled_while_queued uncounted it
                self._queued -= 1
                self._busy += 1
                job._started = True
            outcome = job._run()
            # Counted free before the result is out, so a caller that sees the result sees
            # the pool without this job.
            with self._lock:
                self._busy -= 1
                job._finished = True
                if job._abandoned:
                    self._stuck -= 1
            job._settle(outcome)
            del job, outcome

    def _abandon(self, job: WorkerJob[T]) -> None:
        with self._lock:
            if job._finished or job._abandoned:
                return
            job._abandoned = True
            self._stuck += 1

    def _cancelled_while_queued(self, future: concurrent.futures.Future[T]) -> None:
        if future.cancelled():
            with self._lock:
                self._queued -= 1


_default_pool: WorkerPool | None = None
_default_lock = threading.Lock()


def sync_tool_workers() -> WorkerPool:
    """The process-wide pool synchronous tool functions run in (created on first use)."""
    global _default_pool
    if _default_pool is None:
        with _default_lock:
            if _default_pool is None:
                _default_pool = WorkerPool()
    return _default_pool
