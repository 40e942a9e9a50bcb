"""The bounded pool synchronous tool functions run in."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import Any

import pytest

from toolrelay.exceptions import ConfigurationError
from toolrelay.tools import ToolMetadata
from toolrelay.tools._workers import (
    WorkerPool,
    WorkerPoolBusy,
    WorkerPoolStatus,
    sync_tool_workers,
)

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
    assert pool.status() == WorkerPoolStatus(
        max_workers=2, busy=0, stuck=0, queued=0, threads=1, max_threads=4
    )


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


# --- bulkheads ---------------------------------------------------------------------------------


async def test_a_tools_jobs_take_at_most_its_share_and_the_rest_wait_for_it() -> None:
    pool = WorkerPool(4, tool_share=2)
    release = threading.Event()
    jobs = [pool.submit(lambda: release.wait(10), tool="slow") for _ in range(3)]
    await asyncio.sleep(0.05)
    assert pool.tool_status("slow").busy == 2
    assert pool.tool_status("slow").queued == 1
    assert await pool.run(lambda: "other", tool="other") == "other"  # not held up
    release.set()
    for job in jobs:
        assert await job.wait() is True  # the third ran once a thread of its share was free


async def test_a_stuck_thread_is_replaced_and_a_share_of_stuck_threads_refuses_at_once() -> None:
    pool = WorkerPool(1, tool_share=1, max_threads=3, name="replaced")
    release = threading.Event()
    job = pool.submit(lambda: release.wait(10), tool="stuck")
    waiting = pool.submit(lambda: "never", tool="stuck")  # waits for the share of one
    waiter = asyncio.ensure_future(job.wait())
    await asyncio.sleep(0.02)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    # The share is all stuck: the waiting job is refused at once, and so is a new one.
    with pytest.raises(WorkerPoolBusy) as refused:
        await waiting.wait()
    assert refused.value.tool == "stuck"
    assert not refused.value.whole_pool
    assert waiting.refused is refused.value
    assert not waiting.started
    assert pool.submit(lambda: "never", tool="stuck").refused is not None
    # The stuck thread does not count against max_workers: another tool gets a new thread.
    name = await pool.run(lambda: threading.current_thread().name, tool="other")
    assert pool.status().threads == 2
    assert pool.status().stuck == 1
    release.set()
    assert await asyncio.wrap_future(job.future) is True
    await asyncio.sleep(0.05)
    assert pool.status().stuck == 0
    assert pool.status().threads == 1  # the extra thread ended
    assert await pool.run(lambda: "again", tool="stuck") == "again"
    assert name.startswith("replaced-")


async def test_a_pool_full_of_stuck_threads_refuses_every_job() -> None:
    pool = WorkerPool(1, tool_share=1, max_threads=1)
    release = threading.Event()
    job = pool.submit(lambda: release.wait(10), tool="stuck")
    waiter = asyncio.ensure_future(job.wait())
    await asyncio.sleep(0.02)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    for tool in ("other", None):
        refusal = pool.submit(lambda: "never", tool=tool).refused
        assert refusal is not None
        assert refusal.whole_pool
    release.set()
    await asyncio.wrap_future(job.future)
    assert await pool.run(lambda: "free again") == "free again"


def test_the_default_share_and_cap() -> None:
    pool = sync_tool_workers()
    assert (pool.max_workers, pool.tool_share, pool.max_threads) == (32, 8, 64)
    assert WorkerPool(2).tool_share == 1


@pytest.mark.parametrize("options", [{"tool_share": 0}, {"max_threads": 1}, {"max_threads": True}])
def test_the_share_and_the_cap_are_checked(options: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError):
        WorkerPool(2, **options)


def test_a_tools_share_is_checked() -> None:
    with pytest.raises(ConfigurationError, match="thread_share"):
        ToolMetadata(thread_share=0)
    assert ToolMetadata(thread_share=3).thread_share == 3
