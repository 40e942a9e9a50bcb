"""How a pydantic-ai run context becomes a toolrelay tool context, and back."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from pydantic_ai import RunContext

from toolrelay.bridges._convert import mapping_context
from toolrelay.tools import ToolContext

__all__ = ["ContextOf", "DepsOf", "tool_context"]

ContextOf: TypeAlias = Callable[[RunContext[Any]], Mapping[str, Any]]
"""What a tool sees as its :class:`~toolrelay.tools.ToolContext`, from pydantic-ai's run context."""

DepsOf: TypeAlias = Callable[[ToolContext], Any]
"""The ``deps`` a pydantic-ai tool is given, from the caller's tool context."""


def tool_context(ctx: RunContext[Any], context: ContextOf | None) -> ToolContext:
    """The tool context of a call.

    ``context(ctx)``, else the run's ``deps`` when they are a mapping (a
    :class:`~toolrelay.tools.ToolContext`, a ``dict``), else an empty one.
    """
    if context is not None:
        values = context(ctx)
        return values if isinstance(values, ToolContext) else ToolContext(values)
    return mapping_context(ctx.deps)
