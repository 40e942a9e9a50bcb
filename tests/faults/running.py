"""Running a campaign's rounds: whatever a round raises is caught, its expected logs skipped.

A round may end in any ``BaseException`` (a ``KeyboardInterrupt`` the docs say propagates, or
one a bug lets out). :func:`caught` runs it as a task of its own and returns what it raised,
so the campaign counts it instead of ending: an exception thrown into a task's outermost
coroutine (as a ``GeneratorExit`` delivered through a future is) lands there, never in the
campaign. :func:`quiet_logs` keeps toolrelay from logging the thousands of failures a
campaign causes on purpose: formatting their tracebacks for a test's log capture would cost
more than running the cases.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import random
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

T = TypeVar("T")


async def caught(work: Coroutine[Any, Any, T]) -> T | BaseException:
    """``work``'s result, or whatever it raised, in a task of its own.

    A cancellation of the caller (a round's bound running out) still cancels ``work`` and
    propagates.
    """

    async def inside() -> T | BaseException:
        try:
            return await work
        except BaseException as exc:
            task = asyncio.current_task()
            if isinstance(exc, asyncio.CancelledError) and task is not None and task.cancelling():
                raise  # cancelled from outside
            return exc

    try:
        return await asyncio.create_task(inside())
    except asyncio.CancelledError:
        if inspect.getcoroutinestate(work) == inspect.CORO_CREATED:
            work.close()  # cancelled before its task began: it never will
        raise


def text_of(exc: BaseException) -> str:
    """``str(exc)``, or a stand-in when the exception cannot be printed."""
    try:
        return str(exc)
    except Exception:
        return f"<{type(exc).__name__} that cannot be printed>"


@contextlib.contextmanager
def quiet_logs() -> Iterator[None]:
    """Drop toolrelay's log records below ``CRITICAL`` inside the block."""
    logger = logging.getLogger("toolrelay")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def rounds_of(cases: list[T], seed: int, largest: int) -> list[list[T]]:
    """``cases`` cut into rounds of 1 to ``largest`` calls, the sizes drawn from ``seed``."""
    rng = random.Random(seed + 1)
    rounds, start = [], 0
    while start < len(cases):
        size = rng.randint(1, largest)
        rounds.append(cases[start : start + size])
        start += size
    return rounds
