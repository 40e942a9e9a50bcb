from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from toolrelay.execution._concurrency import run_all


def job(
    value: int,
    *,
    delay: float = 0.0,
    raises: BaseException | None = None,
    log: list[str] | None = None,
) -> Callable[[], Awaitable[int]]:
    async def run() -> int:
        try:
            await asyncio.sleep(delay)
        except asyncio.CancelledError:
            if log is not None:
                log.append(f"cancelled {value}")
            raise
        if raises is not None:
            raise raises
        return value

    return run


async def test_results_in_job_order() -> None:
    assert await run_all([job(1, delay=0.02), job(2, delay=0.0), job(3, delay=0.01)]) == [1, 2, 3]
    assert await run_all([]) == []
    assert await run_all([job(7)]) == [7]


@pytest.mark.parametrize("error", [ValueError("x"), KeyboardInterrupt(), SystemExit(3)])
async def test_first_failure_cancels_the_rest_and_is_raised_unwrapped(error: BaseException) -> None:
    log: list[str] = []
    with pytest.raises(type(error)) as info:
        await run_all([job(1, delay=30, log=log), job(2, raises=error), job(3, delay=30, log=log)])
    assert info.value is error
    assert sorted(log) == ["cancelled 1", "cancelled 3"]


async def test_a_jobs_own_cancelled_error_is_raised() -> None:
    with pytest.raises(asyncio.CancelledError):
        await run_all([job(1, raises=asyncio.CancelledError()), job(2, delay=30)])
    current = asyncio.current_task()
    assert current is not None
    assert current.cancelling() == 0


async def test_cancelling_the_caller_cancels_the_jobs() -> None:
    log: list[str] = []
    task = asyncio.create_task(run_all([job(1, delay=30, log=log), job(2, delay=30, log=log)]))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sorted(log) == ["cancelled 1", "cancelled 2"]
