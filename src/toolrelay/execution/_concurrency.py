"""Running a round's calls concurrently: results in order; the first failure aborts the rest."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar, cast

T = TypeVar("T")


class _Failure:
    """The first exception any call of a round raised; it aborts the round."""

    def __init__(self) -> None:
        self.error: BaseException | None = None


async def run_all(jobs: list[Callable[[], Awaitable[T]]]) -> list[T]:
    """Run the jobs concurrently; results in job order.

    The first exception (any ``BaseException``) cancels the other jobs and is re-raised here,
    unwrapped, in the caller's task. Capturing it inside the job's task matters:
    ``KeyboardInterrupt`` or ``SystemExit`` escaping a task would otherwise break out of the
    event loop itself instead of reaching the caller.
    """
    if len(jobs) <= 1:  # no task, and no frame of a comprehension under the job
        return [await jobs[0]()] if jobs else []
    failure = _Failure()
    tasks: list[asyncio.Task[T | None]] = []

    # Each job's coroutine is created inside its task, so a task cancelled before it starts
    # leaves no never-awaited coroutine behind.
    async def capture(job: Callable[[], Awaitable[T]]) -> T | None:
        try:
            return await job()
        except BaseException as exc:
            me = asyncio.current_task()
            if isinstance(exc, asyncio.CancelledError) and me is not None and me.cancelling():
                raise  # cancelled by the caller or by a failing sibling
            if failure.error is None:
                failure.error = exc
                for task in tasks:
                    if task is not me:
                        task.cancel()
            return None

    tasks.extend(asyncio.create_task(capture(job)) for job in jobs)
    results = await asyncio.gather(*tasks, return_exceptions=True)
    if failure.error is not None:
        error, failure.error = failure.error, None  # no reference cycle through the frame
        raise error
    outcomes: list[T] = []
    for result in results:
        if isinstance(result, BaseException):
            raise result  # only a job cancelled from outside the round gets here
        outcomes.append(cast(T, result))  # None only ever comes with a recorded failure
    return outcomes
