"""What happens when a tool raises: feedback for the model, or an error for the caller.

The manager hands every :class:`Exception` a tool raises to a :class:`ToolExceptionProcessor`
(Spring AI's ``ToolExecutionExceptionProcessor``). Its answer is the error text the model
reads; raising instead aborts the round. Whatever the processor does, exceptions that are not
``Exception`` subclasses (``asyncio.CancelledError``, ``KeyboardInterrupt``, ``SystemExit``) and
``MemoryError`` always reach the caller: the manager never hands them to a processor.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from toolrelay.exceptions import ToolExecutionError
from toolrelay.execution import feedback

__all__ = ["DefaultToolExceptionProcessor", "ToolExceptionProcessor"]


@runtime_checkable
class ToolExceptionProcessor(Protocol):
    """Turns a tool's exception into the error text the model reads, or raises."""

    def process(self, tool_name: str, exc: Exception) -> str:
        """Return the error text for the model, or raise to abort the round.

        Args:
            tool_name: The canonical name of the tool that raised.
            exc: What it raised.
        """
        ...


class DefaultToolExceptionProcessor:
    """Spring AI's default policy, completed.

    - The exception's message becomes the error text; an empty message becomes
      ``Exception occurred in tool: <name> (<ExceptionType>)``.
    - Instances of the ``rethrow`` types are raised to the caller unchanged (not wrapped).
    - ``always_raise=True`` raises every other exception too, wrapped in
      :class:`~toolrelay.exceptions.ToolExecutionError` with the original as ``__cause__``.
    - ``MemoryError`` is always raised unchanged.

    Args:
        rethrow: Exception types the caller wants to see as they are.
        always_raise: Never turn an exception into feedback.
    """

    def __init__(
        self, *, rethrow: Iterable[type[BaseException]] = (), always_raise: bool = False
    ) -> None:
        self.rethrow: tuple[type[BaseException], ...] = tuple(rethrow)
        self.always_raise = always_raise

    def process(self, tool_name: str, exc: Exception) -> str:
        """The error text for ``exc``, or raise it (see the class docstring)."""
        if isinstance(exc, (MemoryError, *self.rethrow)):
            raise exc
        message = str(exc).strip() or feedback.tool_failed_without_message(tool_name, exc)
        if self.always_raise:
            raise ToolExecutionError(tool_name, message) from exc
        return message

    def __repr__(self) -> str:
        names = ", ".join(t.__name__ for t in self.rethrow)
        return f"DefaultToolExceptionProcessor(rethrow=({names}), always_raise={self.always_raise})"
