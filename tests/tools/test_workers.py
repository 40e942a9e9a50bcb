"""The bounded pool synchronous tool functions run in."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest

from toolrelay.exceptions import ConfigurationError
from toolrelay.tools._workers import WorkerPool, WorkerPoolStatus, sync_tool_workers

REQUEST = contextvars.ContextVar("REQUEST", default="none")


def status(pool: WorkerPool) -> tuple[int, int, int]:
    now = pool.status()
    return now.busy, now.stuck, now.queued


async def test_a_job_runs_in_a_daemon_thread_of_the_pool_with_the_callers_context() -> None:
    pool = WorkerPool(2, name="test-pool")
    REQUEST.set("r-7")
    seen = await pool.run(lambda: (threading.current_thread(), REQUEST.get()))
    thread, request = seen
    assert thread.name.startswith("test-pool-")
    assert thread.daemon
    assert request == "r-7"
    assert pool.status() == WorkerPoolStatus(max_workers=2, busy=0, stuck=0, queued=0)


async def test_exceptions_of_any_kind_reach_the_caller() -> None:
    pool = WorkerPool(1)

    def leave() -> None:
        raise SystemExit(3)

    with pytest.raises(SystemExit):
        await pool.run(leave)
    assert await pool.run(lambda: "still working") == "still working"


async def test_a_generator_exit_reaches_the_callers_own_handler() -> None:
    pool = WorkerPool(1)

    def closing() -> None:
        raise GeneratorExit

    async def handled() -> str:
        try:
            await pool.run(closing)
        except GeneratorExit:
            return "handled where it was awaited"
        return "not raised"

    # Awaited as a future, it would be thrown into the outermost coroutine of the task.
    assert await handled() == "handled where it was awaited"


async def test_a_stop_iteration_reaches_the_caller_as_a_runtime_error() -> None:
    pool = WorkerPool(1)

    def exhausted() -> None:
        next(iter(()))

    async with asyncio.timeout(5):  # an asyncio future refuses StopIteration: no answer ever
        with pytest.raises(RuntimeError, match="StopIteration") as raised:
            await pool.run(exhausted)
    assert isinstance(raised.value.__cause__, StopIteration)


async def test_a_cancelled_wait_returns_at_once_and_the_running_job_counts_as_stuck() -> None:
    pool = WorkerPool(2)
    release = threading.Event()
    started = threading.Event()

    def hang() -> str:
        started.set()
        release.wait(10)
        return "late"

    job = pool.submit(hang)
    waiter = asyncio.ensure_future(job.wait())
    await asyncio.to_thread(started.wait, 10)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert job.started
    assert job.abandoned
    assert status(pool) == (1, 1, 0)
    release.set()
    assert await asyncio.wrap_future(job.future) == "late"  # the result is kept
    await asyncio.sleep(0.01)
    assert status(pool) == (0, 0, 0)


async def test_stuck_threads_bound_the_pool_and_a_waiting_job_never_starts_once_cancelled() -> None:
    pool = WorkerPool(2)
    release = threading.Event()
    runs: list[str] = []
    hung = [pool.submit(lambda: release.wait(10)) for _ in range(2)]
    queued = pool.submit(lambda: runs.append("queued"))
    await asyncio.sleep(0.05)
    assert status(pool) == (2, 0, 1)
    waiter = asyncio.ensure_future(queued.wait())
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert not queued.started
    assert queued.future.cancelled()
    assert status(pool) == (2, 0, 0)
    release.set()
    for job in hung:
        await asyncio.wrap_future(job.future)
    assert await pool.run(lambda: "next") == "next"
    assert runs == []  # the cancelled job never ran


async def test_the_pool_starts_no_more_threads_than_its_bound() -> None:
    pool = WorkerPool(3, name="bounded")
    barrier = threading.Barrier(3, timeout=10)
    names = await asyncio.gather(
        *(pool.run(lambda: (barrier.wait(), threading.current_thread().name)[1]) for _ in range(3))
    )
    assert len(set(names)) == 3
    more = await asyncio.gather(
        *(pool.run(lambda: threading.current_thread().name) for _ in range(9))
    )
    assert set(more) <= set(names)


def test_the_size_is_checked() -> None:
    with pytest.raises(ConfigurationError, match="max_workers"):
        WorkerPool(0)


def test_the_process_wide_pool_is_one_object() -> None:
    assert sync_tool_workers() is sync_tool_workers()
    assert sync_tool_workers().max_workers == 32
