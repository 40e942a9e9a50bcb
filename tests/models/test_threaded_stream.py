"""Items made by a blocking producer in a worker thread, iterated from async code."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from toolrelay.models._threaded_stream import stream_from_thread


async def test_items_arrive_in_order_and_errors_after_them() -> None:
    def produce(emit: Callable[[int], None], cancelled: threading.Event) -> None:
        for i in range(3):
            emit(i)
        raise ValueError("broken")

    seen = []
    with pytest.raises(ValueError, match="broken"):  # noqa: PT012
        async for item in stream_from_thread(produce):
            seen.append(item)
    assert seen == [0, 1, 2]


async def test_stopping_early_cancels_the_producer_and_waits_for_it() -> None:
    finished = threading.Event()

    def produce(emit: Callable[[int], None], cancelled: threading.Event) -> None:
        i = 0
        while not cancelled.is_set():
            emit(i)
            i += 1
            time.sleep(0.001)
        finished.set()

    stream = stream_from_thread(produce)
    async for item in stream:
        if item == 2:
            break
    await stream.aclose()
    assert finished.is_set()
