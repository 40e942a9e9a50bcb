"""Guards, deprecated: a guard is now an interceptor at the head of the pipeline.

A guard (``async (invocation, /) -> str | None``: ``None`` allows the call, a text denies it,
``""`` with the standard denial text) still works wherever ``guards=`` is accepted, for one
release: :func:`guard_interceptors` turns each into an interceptor, with a
:class:`DeprecationWarning`. Write an interceptor instead, or an
:class:`~toolrelay.execution.AuthorizationInterceptor` for a yes/no check.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from toolrelay.execution import _feedback as feedback
from toolrelay.execution._interception import (
    Proceed,
    ToolCallInterceptor,
    ToolInvocation,
    answer,
)
from toolrelay.execution._result import ToolCallOutcome

__all__ = ["ToolCallGuard", "guard_interceptors"]


@runtime_checkable
class ToolCallGuard(Protocol):
    """Deprecated: decides whether a call may run; any ``async def guard(invocation, /)`` fits."""

    async def __call__(self, invocation: ToolInvocation, /) -> str | None:
        """``None`` to allow the call, or the text that tells the model why it was denied."""
        ...


class _GuardStep:
    """One guard as an interceptor."""

    __slots__ = ("guard",)

    def __init__(self, guard: ToolCallGuard) -> None:
        self.guard = guard

    async def __call__(self, invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        reason = await self.guard(invocation)
        if reason is None:
            return await proceed(invocation)
        return answer(invocation, reason or feedback.denied(invocation.tool_name))


def guard_interceptors(
    guards: Sequence[ToolCallGuard], *, owner: str, stacklevel: int = 3
) -> tuple[ToolCallInterceptor, ...]:
    """``guards`` as interceptors, in order, with a warning that ``owner`` is deprecated.

    Args:
        guards: The guards given.
        owner: Who took them, for the warning (``"ToolCallingManager(guards=...)"``).
        stacklevel: Of the warning, so it points at the caller's line.
    """
    if not guards:
        return ()
    warnings.warn(
        f"{owner} is deprecated; pass interceptors instead (an AuthorizationInterceptor for a "
        "yes/no check, or an async (invocation, proceed) step that answers without proceeding)",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
    return tuple(_GuardStep(guard) for guard in guards)
