"""Run a coroutine to completion from synchronous code, inside or outside an event loop."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` and return its result.

    Without a running loop this is ``asyncio.run``. Inside one (a notebook, an async test) the
    coroutine runs on a fresh loop in a helper thread, because blocking the caller's own loop
    would deadlock it.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)

    outcome: dict[str, Any] = {}
    context = contextvars.copy_context()

    def runner() -> None:
        try:
            outcome["value"] = context.run(asyncio.run, coro)
        except BaseException as exc:  # re-raised in the caller's thread below
            outcome["error"] = exc

    thread = threading.Thread(target=runner, name="toolrelay-sync", daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]  # type: ignore[no-any-return]
