"""Tools whose calls run other tools: ``call_tool(name, arguments)``.

Tool search's proxy channel and the MCP gateway show the model one fixed tool that runs any
tool it found by name. A :class:`ForwardingTool` is that tool as the manager sees it: a call
of it is read as the call of the tool it names, on the one path every call takes. Its
``name`` is resolved by :meth:`ForwardingTool.forward` (among what the caller may call: a
name the caller cannot use gets the text ``forward`` returns), and its ``arguments`` are read
as that tool's arguments exactly as a direct call's are (an object, the JSON text of one, a
mapping, ``null``). From there on, limits, validation, ``authorize``, audit, idempotency,
approval and the bound on the result all see the named tool; the history keeps the model's
call of the forwarding tool, answered under its id.

It never runs by itself: its ``call`` refuses, so a forwarded tool's guards cannot be
bypassed by calling it outside a manager.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from toolrelay.exceptions import ToolExecutionError
from toolrelay.tools._base import Tool, ToolBase, ToolContext, ToolDefinition, ToolMetadata

__all__ = ["FORWARDED_NAME", "Forward", "ForwardingTool"]

FORWARDED_NAME = "name"
"""The parameter naming the tool a forwarding call runs; ``arguments`` holds its arguments."""

Forward = Callable[[str, ToolContext], Awaitable[Tool | str]]
"""Finds the tool a forwarding call names for the caller: the tool, or the text answering
that the caller cannot use that name (the same for an unknown, hidden or forbidden name)."""


class ForwardingTool(ToolBase):
    """A tool whose calls stand for calls of the tool they name (see the module docs).

    Args:
        definition: What the model is shown (``name`` and ``arguments`` parameters).
        forward: Resolves a called name for the caller's tool context.
        metadata: Its metadata; the library's own tools are never asked ``authorize`` about
            (the named tool is).
    """

    def __init__(
        self, definition: ToolDefinition, forward: Forward, metadata: ToolMetadata
    ) -> None:
        super().__init__(definition, metadata)
        self._forward = forward

    def forward(self, name: str, context: ToolContext) -> Awaitable[Tool | str]:
        """The tool ``name`` means for the caller with ``context``, or the answer saying not."""
        return self._forward(name, context)

    async def call(self, arguments_json: str, context: ToolContext | None = None) -> str:
        """Refused: a forwarding tool runs only through a manager, under the named tool's guards.

        Raises:
            ToolExecutionError: Always.
        """
        raise ToolExecutionError(
            self.name,
            "this tool runs the tool it names only through a ToolCallingManager, which "
            "applies that tool's guards",
        )
