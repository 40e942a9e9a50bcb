"""How long anything under test may take before it counts as a hang, and the loop's watch.

A hang is a failure, never a wait: every round, turn and search of the fault suite runs under
a bound, and an asyncio task that outlives it is cancelled and counted. Work that holds the
event loop cannot be cancelled from the loop, so :class:`LoopWatch` measures the longest the
loop went without running its other tasks; a gap over :data:`LOOP_BOUND` is a hang too (a
10 MB tool name folded inside the loop, a catastrophic regex).

The bounds are far above what the code under test needs (milliseconds) and far below what a
real hang costs, so a busy CI machine does not turn into failures.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

ROUND_BOUND = 20.0
"""Seconds a round, a turn or a search may take."""

LOOP_BOUND = 2.0
"""Seconds the event loop may go without running its other tasks."""

TICK = 0.01


class LoopWatch:
    """Measures the longest gap between ticks of a task on the running loop."""

    def __init__(self) -> None:
        self.longest = 0.0

    @contextlib.asynccontextmanager
    async def watching(self) -> AsyncIterator[LoopWatch]:
        """Watch the loop while the block runs; ``longest`` is its longest gap, in seconds."""
        self.longest = 0.0
        stop = asyncio.Event()

        async def tick() -> None:
            last = time.perf_counter()
            while not stop.is_set():
                await asyncio.sleep(TICK)
                now = time.perf_counter()
                self.longest = max(self.longest, now - last - TICK)
                last = now

        task = asyncio.create_task(tick())
        await asyncio.sleep(0)  # the watch starts before the block does
        try:
            yield self
        finally:
            stop.set()
            await task

    @property
    def held(self) -> bool:
        """Whether the loop was held longer than :data:`LOOP_BOUND`."""
        return self.longest > LOOP_BOUND
