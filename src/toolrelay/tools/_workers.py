"""The bounded pool of threads synchronous tool functions run in, apart from everything else.

A synchronous tool function cannot be stopped once it runs: when its call times out, its
thread stays busy until the function returns. Running such functions in the default executor
of ``asyncio`` (``asyncio.to_thread``) lets a few hung ones starve everything else that uses
it: the search index behind ``tool_search``, file and database stores, every later tool. So
tool functions get a pool of their own, :class:`WorkerPool`, with a bulkhead per tool:

- at most ``max_workers`` threads (:data:`DEFAULT_SYNC_WORKERS`, 32, by default) run jobs
  whose callers still wait for them; threads are started as needed and are daemon threads,
  so a function that never returns cannot keep the process from exiting;
- the jobs of one tool (``submit(fn, tool=name)``) occupy at most its *share* of threads at
  once, stuck ones included: ``share=`` of the job (a tool's ``ToolMetadata.thread_share``),
  else the pool's ``tool_share`` (a quarter of ``max_workers``, at least 1: 8 of 32). More
  jobs of the tool wait for a thread of its share, so one tool can never take every thread;
  a job without a tool has no share;
- a thread whose job's caller stopped waiting (a timeout) is *stuck* until its function
  returns. It no longer counts against ``max_workers``: the pool starts another thread in its
  place, up to ``max_threads`` threads in all, stuck, running and idle ones together (twice
  ``max_workers`` by default: 64). It does count against its tool's share;
- a job that can never get a thread until a stuck one returns is refused at once, with
  :class:`WorkerPoolBusy`, instead of waiting for its whole timeout: when its tool's share is
  all stuck threads, or the pool has ``max_threads`` stuck threads. Jobs already waiting are
  refused the moment that becomes true. A job that can get a thread once a running (not
  stuck) one is free waits for it;
- once stuck functions return, their threads take waiting jobs; threads beyond
  ``max_workers`` that are not stuck end when they find no job;
- a job's exception reaches its caller as it was raised, ``SystemExit`` and ``GeneratorExit``
  included, like any coroutine's; ``StopIteration``, which an ``asyncio`` future cannot carry,
  arrives as a ``RuntimeError`` caused by it;
- waiting for a job never blocks the event loop, and a wait that is cancelled (a timeout)
  ends at once: a job that has not started is dropped, one that runs is *abandoned*, counted
  as stuck until its function returns, and its result is kept on its future;
- :meth:`WorkerPool.status` tells how many threads there are, how many are busy, how many of
  them are stuck, and how many jobs wait; :meth:`WorkerPool.tool_status` tells the same of one
  tool's share.

Nothing else in toolrelay uses this pool: index searches, stores and file writes run in the
event loop's default executor. :func:`sync_tool_workers` is the process-wide pool function
tools use unless the execution manager is given another one.

    status = sync_tool_workers().status()
    if status.stuck:
        log.warning("%d tool threads are stuck in calls that timed out", status.stuck)
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import contextvars
import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from toolrelay.exceptions import ConfigurationError

__all__ = [
    "DEFAULT_SYNC_WORKERS",
    "SyncRunner",
    "ToolThreadsStatus",
    "WorkerJob",
    "WorkerPool",
    "WorkerPoolBusy",
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
        max_workers: The most threads running jobs whose callers still wait.
        busy: Threads running a job, stuck ones included.
        stuck: Threads running a job whose caller stopped waiting (its call timed out or was
            cancelled); each stays busy until its function returns.
        queued: Jobs waiting for a thread.
        threads: The pool's threads now, idle ones included.
        max_threads: The most threads the pool has at once, stuck ones included.
    """

    max_workers: int
    busy: int
    stuck: int
    queued: int
    threads: int
    max_threads: int

    @property
    def free(self) -> int:
        """Threads that could take a job now (started or not), shares aside."""
        return max(
            0, min(self.max_workers - (self.busy - self.stuck), self.max_threads - self.busy)
        )


@dataclass(frozen=True, kw_only=True)
class ToolThreadsStatus:
    """What one tool's jobs are doing in a :class:`WorkerPool` (:meth:`~WorkerPool.tool_status`).

    Attributes:
        tool: The tool's name.
        share: The most threads its jobs occupy at once, stuck ones included.
        busy: Threads running its jobs, stuck ones included.
        stuck: Threads running its jobs whose callers stopped waiting.
        queued: Its jobs waiting for a thread.
    """

    tool: str
    share: int
    busy: int
    stuck: int
    queued: int


class WorkerPoolBusy(RuntimeError):
    """A job was refused: it could not get a thread until a stuck one returns.

    Attributes:
        tool: The job's tool, or ``None``.
        stuck: The stuck threads in the way: the tool's, or the whole pool's.
        limit: The tool's share, or the pool's ``max_threads``.
        whole_pool: The pool's every thread it may have is stuck (else the tool's share is).
    """

    def __init__(self, tool: str | None, *, stuck: int, limit: int, whole_pool: bool) -> None:
        self.tool = tool
        self.stuck = stuck
        self.limit = limit
        self.whole_pool = whole_pool
        if whole_pool:
            what = f"all {limit} threads of the pool are stuck in calls that timed out"
        else:
            what = f"all {limit} threads of tool {tool!r} are stuck in calls that timed out"
        super().__init__(what)


class SyncRunner(Protocol):
    """Runs a synchronous function off the event loop; :class:`WorkerPool` is one."""

    async def run(self, fn: Callable[[], T], /) -> T:
        """``fn()``'s result; cancelling the wait never waits for ``fn``."""
        ...


class WorkerJob(Generic[T]):
    """One function submitted to a :class:`WorkerPool`.

    Attributes:
        future: Completes with the function's result or exception, also after the caller
            stopped waiting (see :meth:`wait`); with :class:`WorkerPoolBusy` when the pool
            refused the job.
    """

    __slots__ = (
        "_abandoned",
        "_context",
        "_finished",
        "_fn",
        "_pool",
        "_refused",
        "_started",
        "_tool",
        "future",
    )

    def __init__(self, pool: WorkerPool, fn: Callable[[], T], tool: str | None = None) -> None:
        self.future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._pool = pool
        self._fn: Callable[[], T] | None = fn
        self._tool = tool
        # The caller's context variables reach the function, as with asyncio.to_thread.
        self._context = contextvars.copy_context()
        self._started = False
        self._finished = False
        self._abandoned = False
        self._refused: WorkerPoolBusy | None = None

    @property
    def started(self) -> bool:
        """Whether a thread has taken up the function (it runs, or will at once)."""
        return self._started

    @property
    def abandoned(self) -> bool:
        """Whether the caller stopped waiting while the function ran."""
        return self._abandoned

    @property
    def refused(self) -> WorkerPoolBusy | None:
        """Why the pool refused the job without running it, or ``None``."""
        return self._refused

    async def wait(self) -> T:
        """The function's result.

        Cancelling the wait returns at once: a job that has not started never will, and a
        running one is abandoned (the pool counts it as stuck until the function returns).

        Raises:
            WorkerPoolBusy: The pool refused the job (see the module docs).
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

    def _refuse(self, error: WorkerPoolBusy) -> None:
        self._fn = None
        self._refused = error
        with contextlib.suppress(concurrent.futures.InvalidStateError):
            self.future.set_exception(error)  # unless cancelled meanwhile: nobody waits then


class _Share:
    """One tool's jobs in a pool (the jobs without a tool share one, without a limit)."""

    __slots__ = ("busy", "limit", "pending", "stuck")

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.busy = 0
        self.stuck = 0
        self.pending: collections.deque[tuple[int, WorkerJob[object]]] = collections.deque()

    def has_room(self) -> bool:
        return self.limit is None or self.busy < self.limit


def _check_count(option: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(f"{option} must be an integer >= 1, not {value!r}")
    return value


class WorkerPool:
    """A bounded pool of daemon threads for synchronous tool functions (see the module docs).

    Args:
        max_workers: The most threads running jobs whose callers still wait (at least 1).
        name: The prefix of its threads' names.
        tool_share: The most threads one tool's jobs occupy at once, stuck ones included,
            unless a job gives its own ``share``; ``max_workers // 4`` (at least 1) when
            ``None``.
        max_threads: The most threads at once, stuck ones included (at least
            ``max_workers``); ``2 * max_workers`` when ``None``.

    Raises:
        ConfigurationError: A number is not an integer of at least 1, or ``max_threads`` is
            below ``max_workers``.
    """

    def __init__(
        self,
        max_workers: int = DEFAULT_SYNC_WORKERS,
        *,
        name: str = "toolrelay-tool",
        tool_share: int | None = None,
        max_threads: int | None = None,
    ) -> None:
        _check_count("max_workers", max_workers)
        if tool_share is None:
            tool_share = max(1, max_workers // 4)
        if max_threads is None:
            max_threads = 2 * max_workers
        _check_count("tool_share", tool_share)
        _check_count("max_threads", max_threads)
        if max_threads < max_workers:
            raise ConfigurationError(
                f"max_threads ({max_threads}) must be at least max_workers ({max_workers})"
            )
        self.max_workers = max_workers
        self.tool_share = tool_share
        self.max_threads = max_threads
        self.name = name
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._shares: dict[str | None, _Share] = {}
        self._handoff: collections.deque[WorkerJob[object]] = collections.deque()
        self._order = itertools.count()
        self._threads = 0
        self._idle = 0  # waiting threads no job was handed to yet
        self._busy = 0
        self._stuck = 0
        self._queued = 0
        self._numbers = itertools.count(1)

    def submit(
        self, fn: Callable[[], T], /, *, tool: str | None = None, share: int | None = None
    ) -> WorkerJob[T]:
        """Queue ``fn`` and return its job; a thread is started when none is free.

        Args:
            fn: The function.
            tool: The tool whose share of threads the job takes; ``None``: no share.
            share: The tool's share of threads; the pool's ``tool_share`` when ``None``.

        A job that can never get a thread until a stuck one returns is refused: its future
        holds :class:`WorkerPoolBusy` and it never runs. A job whose thread cannot be started
        fails with that ``RuntimeError``.
        """
        if share is not None:
            _check_count("share", share)
        job: WorkerJob[T] = WorkerJob(self, fn, tool)
        job.future.add_done_callback(_dequeue_when_cancelled(self, job))
        with self._lock:
            slot = self._shares.get(tool)
            if slot is None:
                slot = self._shares[tool] = _Share(None)
            if tool is not None:
                slot.limit = share if share is not None else self.tool_share
            refusal = self._refusal(tool, slot)
            if refusal is None:
                slot.pending.append((next(self._order), job))  # type: ignore[arg-type]
                self._queued += 1
                starts = self._dispatch()
            else:
                self._forget(tool, slot)
                starts = []
        if refusal is not None:
            job._refuse(refusal)
        self._start(starts)
        return job

    async def run(
        self, fn: Callable[[], T], /, *, tool: str | None = None, share: int | None = None
    ) -> T:
        """Run ``fn`` in the pool and return its result (:meth:`submit`, :meth:`WorkerJob.wait`)."""
        return await self.submit(fn, tool=tool, share=share).wait()

    def status(self) -> WorkerPoolStatus:
        """How many threads there are, are busy or stuck, and how many jobs wait."""
        with self._lock:
            return WorkerPoolStatus(
                max_workers=self.max_workers,
                busy=self._busy,
                stuck=self._stuck,
                queued=self._queued,
                threads=self._threads,
                max_threads=self.max_threads,
            )

    def tool_status(self, tool: str, *, share: int | None = None) -> ToolThreadsStatus:
        """How many threads of ``tool``'s share are busy or stuck, and how many of its jobs wait.

        ``share`` is the share to report when the pool has no job of the tool (its jobs give
        their own); the pool's ``tool_share`` when ``None``.
        """
        with self._lock:
            slot = self._shares.get(tool)
            if slot is None:
                limit = share if share is not None else self.tool_share
                return ToolThreadsStatus(tool=tool, share=limit, busy=0, stuck=0, queued=0)
            assert slot.limit is not None
            return ToolThreadsStatus(
                tool=tool,
                share=slot.limit,
                busy=slot.busy,
                stuck=slot.stuck,
                queued=len(slot.pending),
            )

    def __repr__(self) -> str:
        status = self.status()
        return (
            f"WorkerPool(max_workers={self.max_workers}, busy={status.busy}, "
            f"stuck={status.stuck}, queued={status.queued}, threads={status.threads})"
        )

    # --- bookkeeping, under the lock ----------------------------------------------------------

    def _refusal(self, tool: str | None, slot: _Share) -> WorkerPoolBusy | None:
        """Why a job of ``tool`` cannot get a thread until a stuck one returns, if so."""
        if self._stuck >= self.max_threads:
            return WorkerPoolBusy(tool, stuck=self._stuck, limit=self.max_threads, whole_pool=True)
        if slot.limit is not None and slot.stuck >= slot.limit:
            return WorkerPoolBusy(tool, stuck=slot.stuck, limit=slot.limit, whole_pool=False)
        return None

    def _dispatch(self) -> list[WorkerJob[object]]:
        """Hand waiting jobs to idle threads while they may run; the jobs that need a new one."""
        starts: list[WorkerJob[object]] = []
        while self._busy - self._stuck < self.max_workers and (
            self._idle or self._threads < self.max_threads
        ):
            first: _Share | None = None
            for slot in self._shares.values():
                if (
                    slot.pending
                    and slot.has_room()
                    and (first is None or slot.pending[0][0] < first.pending[0][0])
                ):
                    first = slot
            if first is None:
                break
            _, job = first.pending.popleft()
            self._queued -= 1
            if not job.future.set_running_or_notify_cancel():
                self._forget(job._tool, first)
                continue  # cancelled; its callback finds it gone from the queue
            job._started = True
            self._busy += 1
            first.busy += 1
            if self._idle:
                self._idle -= 1
                self._handoff.append(job)
                self._wake.notify()
            else:
                self._threads += 1
                starts.append(job)
        return starts

    def _finished(self, job: WorkerJob[object]) -> None:
        slot = self._shares[job._tool]
        self._busy -= 1
        slot.busy -= 1
        job._finished = True
        if job._abandoned:
            self._stuck -= 1
            slot.stuck -= 1
        self._forget(job._tool, slot)

    def _forget(self, tool: str | None, slot: _Share) -> None:
        if not slot.busy and not slot.pending:
            del self._shares[tool]

    def _refuse_waiting(self) -> list[tuple[WorkerJob[object], WorkerPoolBusy]]:
        """Take the waiting jobs that can no longer get a thread out of the queue."""
        refused: list[tuple[WorkerJob[object], WorkerPoolBusy]] = []
        for tool, slot in list(self._shares.items()):
            if not slot.pending:
                continue
            refusal = self._refusal(tool, slot)
            if refusal is None:
                continue
            refused.extend((job, refusal) for _, job in slot.pending)
            self._queued -= len(slot.pending)
            slot.pending.clear()
            self._forget(tool, slot)
        return refused

    # --- threads ------------------------------------------------------------------------------

    def _start(self, jobs: list[WorkerJob[object]]) -> None:
        for job in jobs:
            thread = threading.Thread(
                target=self._work,
                args=(job,),
                name=f"{self.name}-{next(self._numbers)}",
                daemon=True,
            )
            try:
                thread.start()
            except RuntimeError as exc:  # the process can start no more threads
                with self._lock:
                    self._threads -= 1
                    self._finished(job)
                job._settle((False, exc))

    def _work(self, job: WorkerJob[object] | None) -> None:
        while job is not None:
            outcome = job._run()
            # Counted free before the result is out, so a caller that sees the result sees
            # the pool without this job.
            with self._lock:
                self._finished(job)
                self._idle += 1
                starts = self._dispatch()
            job._settle(outcome)
            del job, outcome
            self._start(starts)
            job = self._next_job()

    def _next_job(self) -> WorkerJob[object] | None:
        """The next job handed to this idle thread, or ``None`` when the thread should end."""
        with self._wake:
            while not self._handoff:
                if self._threads - self._stuck > self.max_workers:
                    self._idle -= 1  # more threads than the pool keeps: this one ends
                    self._threads -= 1
                    return None
                self._wake.wait()
            return self._handoff.popleft()

    def _abandon(self, job: WorkerJob[T]) -> None:
        with self._lock:
            if job._finished or job._abandoned or not job._started:
                return  # it ended, or never ran (refused)
            job._abandoned = True
            slot = self._shares[job._tool]
            self._stuck += 1
            slot.stuck += 1
            refused = self._refuse_waiting()
            starts = self._dispatch()  # a thread in place of the stuck one, if one may wait
        for waiting, refusal in refused:
            waiting._refuse(refusal)
        self._start(starts)

    def _dequeue(self, job: WorkerJob[object]) -> None:
        """Drop a job cancelled while it waited for a thread."""
        if not job.future.cancelled():
            return
        with self._lock:
            slot = self._shares.get(job._tool)
            if slot is None:
                return
            for i, (_, waiting) in enumerate(slot.pending):
                if waiting is job:
                    del slot.pending[i]
                    self._queued -= 1
                    self._forget(job._tool, slot)
                    break
        job._fn = None


def _dequeue_when_cancelled(
    pool: WorkerPool, job: WorkerJob[T]
) -> Callable[[concurrent.futures.Future[T]], None]:
    """The callback that drops ``job`` from ``pool``'s queue when it is cancelled there."""
    return lambda _: pool._dequeue(job)  # type: ignore[arg-type]


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
