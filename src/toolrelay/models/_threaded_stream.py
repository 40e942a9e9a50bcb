"""Iterating, from async code, the items a blocking producer makes in a worker thread.

In-process models generate in a blocking loop; :func:`stream_from_thread` runs that loop in a
worker thread and hands each item over to the event loop as soon as it exists, so a stream
yields tokens while they are generated without blocking other tasks.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

__all__ = ["Producer", "stream_from_thread"]

T = TypeVar("T")

Producer = Callable[[Callable[[T], None], threading.Event], None]
"""``produce(emit, cancelled)``: calls ``emit`` per item; should stop once ``cancelled`` is set."""


class _Done:
    """Marks the end of the items."""


_DONE = _Done()


async def stream_from_thread(produce: Producer[T]) -> AsyncIterator[T]:
    """Run ``produce`` in a worker thread and yield what it emits, in order.

    An exception raised by ``produce`` is raised here, after the items emitted before it.
    When the consumer stops early, ``cancelled`` is set and the thread is awaited, so a
    producer that checks it releases its resources before this generator finishes.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[T | BaseException | _Done] = asyncio.Queue()
    cancelled = threading.Event()

    def put(item: T | BaseException | _Done) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, item)

    def work() -> None:
        try:
            produce(put, cancelled)
        except BaseException as exc:  # handed over to the consumer, raised there
            put(exc)
        finally:
            put(_DONE)

    worker = loop.run_in_executor(None, work)
    try:
        while not isinstance(item := await queue.get(), _Done):
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        cancelled.set()
        await worker
