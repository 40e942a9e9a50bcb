"""What the converters of every bridge share: the manager a converted tool runs through."""

from __future__ import annotations

import functools

from toolrelay.execution import ToolCallingManager

__all__ = ["manager_or_plain"]


@functools.cache
def _plain() -> ToolCallingManager:
    return ToolCallingManager()


def manager_or_plain(manager: ToolCallingManager | None) -> ToolCallingManager:
    """``manager``, or one shared manager with no interceptors (validation, timeouts, feedback).

    A toolrelay tool converted for another framework runs through a manager either way, so
    that invalid arguments and failures become feedback as in toolrelay's own loop.
    """
    return manager if manager is not None else _plain()
