"""Guards: last checks before a tool runs (gating, permissions, approval).

A guard sees the resolved tool, the validated arguments and the context, and either allows the
call (returns ``None``) or denies it (returns the text the model reads, status ``denied``).
Guards run after name resolution and argument validation, before the tool; the first denial wins and
the tool does not run. A guard that raises aborts the round: denying is done by returning.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from toolrelay.messages import ToolCall
from toolrelay.tools._base import Tool, ToolContext

__all__ = ["ToolCallGuard", "ToolCallRequest"]


@dataclass(frozen=True, kw_only=True)
class ToolCallRequest:
    """A call about to run.

    Attributes:
        call: The call as the model wrote it.
        tool: The tool it resolved to (``tool.definition.name`` is the canonical name).
        arguments: The validated arguments (coerced where the tool coerces, defaults filled
            in; blank text is ``{}``), read-only.
        context: The request's tool context (empty when it has none).
    """

    call: ToolCall
    tool: Tool
    arguments: Mapping[str, Any]
    context: ToolContext


@runtime_checkable
class ToolCallGuard(Protocol):
    """Decides whether a call may run; any ``async def guard(request, /)`` fits."""

    async def __call__(self, request: ToolCallRequest, /) -> str | None:
        """``None`` to allow the call, or the text that tells the model why it was denied."""
        ...
