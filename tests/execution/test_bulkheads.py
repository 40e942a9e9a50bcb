"""Bulkheads: a synchronous tool stuck in its threads never starves the other tools."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest

from toolrelay.execution import ToolCallingManager, ToolCallOutcome, ToolCallStatus
from toolrelay.messages import ToolCall
from toolrelay.tools import FunctionTool, Tool, ToolMetadata, WorkerPool, WorkerPoolBusy

STUCK_CALLS = 64


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()  # lets the stuck threads of a test end


def stuck_tool(
    release: threading.Event, name: str = "stuck", thread_share: int | None = None
) -> Tool:
    def stuck() -> str:
        """Blocks its thread until the test releases it."""
        release.wait(30)
        return "late"

    return FunctionTool.from_function(
        stuck, name=name, metadata=ToolMetadata(timeout=0.1, thread_share=thread_share)
    )


def instant_tool() -> Tool:
    def instant() -> str:
        """Answers at once."""
        return "instant"

    return FunctionTool.from_function(instant)


def pool_threads(name: str) -> int:
    return sum(t.name.startswith(f"{name}-") for t in threading.enumerate())


async def settled(pool: WorkerPool, name: str) -> None:
    """Wait until no thread of the pool is stuck and the extra ones have ended."""
    async with asyncio.timeout(5):
        while pool.status().stuck or pool_threads(name) > pool.max_workers:  # noqa: ASYNC110
            await asyncio.sleep(0.01)


async def call(manager: ToolCallingManager, tool: Tool, call_id: str) -> ToolCallOutcome:
    return await manager.run_call(ToolCall(id=call_id, name=tool.definition.name), [tool])


async def test_a_stuck_tool_takes_only_its_share_and_an_instant_tool_answers_at_once(
    release: threading.Event,
) -> None:
    pool = WorkerPool(name="bulkhead")  # the default numbers: 32 workers, a share of 8, 64 in all
    manager = ToolCallingManager(sync_workers=pool)
    stuck, instant = stuck_tool(release), instant_tool()

    calls = [asyncio.ensure_future(call(manager, stuck, f"s{i}")) for i in range(STUCK_CALLS)]
    await asyncio.sleep(0.02)  # every stuck call has its thread or waits for one of its share
    assert pool.tool_status("stuck").busy == pool.tool_share == 8
    started = time.perf_counter()
    answered = await call(manager, instant, "i1")
    assert time.perf_counter() - started < 2.0
    assert answered.ok
    assert answered.response.data == "instant"

    outcomes = await asyncio.gather(*calls)
    assert all(o.status in (ToolCallStatus.TIMEOUT, ToolCallStatus.ERROR) for o in outcomes)
    assert sum(o.result_unknown for o in outcomes) == 8  # only its share ever ran
    assert pool.status().stuck == 8

    # Its share is all stuck threads: a further call is refused at once, not timed out.
    refused = await call(manager, stuck, "s-again")
    assert refused.status is ToolCallStatus.ERROR
    assert isinstance(refused.exception, WorkerPoolBusy)
    assert refused.response.data == (
        "Tool 'stuck' is busy: 8 earlier calls of it timed out and are still running, as many "
        "as it may run at once. This call did not run; try again later or use another tool."
    )
    assert not refused.result_unknown

    again = await call(manager, instant, "i2")
    assert again.response.data == "instant"
    assert pool_threads("bulkhead") <= pool.max_threads
    assert pool.status().threads <= pool.max_threads

    release.set()
    for outcome in outcomes:
        if outcome.late_result is not None:
            assert await asyncio.wrap_future(outcome.late_result) == "late"
    await settled(pool, "bulkhead")
    assert (await call(manager, stuck, "s-after")).response.data == "late"
    assert pool.status().stuck == 0


async def test_the_hard_cap_holds_and_threads_return_once_the_stuck_calls_end(
    release: threading.Event,
) -> None:
    pool = WorkerPool(2, name="capped", tool_share=2, max_threads=6)
    manager = ToolCallingManager(sync_workers=pool)
    tools = [stuck_tool(release, f"stuck_{n}") for n in range(4)]  # shares of 2 each
    instant = instant_tool()

    for n, tool in enumerate(tools[:3]):  # each fills its share: 2 stuck threads
        outcomes = await asyncio.gather(
            call(manager, tool, f"{n}-a"), call(manager, tool, f"{n}-b")
        )
        assert all(o.result_unknown for o in outcomes)  # both ran: stuck threads were replaced
    assert pool.status().stuck == 6
    assert pool.status().threads == pool_threads("capped") == 6

    # Every thread the pool may have is stuck: any sync call is refused at once.
    for tool in (tools[3], instant):
        refused = await call(manager, tool, "late-comer")
        assert refused.status is ToolCallStatus.ERROR
        assert "all 6 threads for synchronous tools are taken" in refused.response.data
    assert pool_threads("capped") == 6

    release.set()
    await settled(pool, "capped")
    assert pool_threads("capped") <= 2
    assert (await call(manager, instant, "i2")).response.data == "instant"


async def test_a_tool_of_a_smaller_share_is_held_to_it(release: threading.Event) -> None:
    pool = WorkerPool(4, name="small-share")
    manager = ToolCallingManager(sync_workers=pool)
    narrow = stuck_tool(release, "narrow", thread_share=1)

    first = await call(manager, narrow, "n1")
    assert first.status is ToolCallStatus.TIMEOUT
    assert pool.tool_status("narrow").stuck == 1
    refused = await call(manager, narrow, "n2")
    assert refused.response.data.startswith(
        "Tool 'narrow' is busy: 1 earlier call of it timed out and is still running"
    )
    assert (await call(manager, instant_tool(), "i1")).ok
