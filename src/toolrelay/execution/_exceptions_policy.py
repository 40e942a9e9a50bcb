"""What happens when a tool raises: feedback for the model, or an error for the caller.

The manager hands every exception a tool raises to a :class:`ToolExceptionProcessor`
(Spring AI's ``ToolExecutionExceptionProcessor``), through :func:`tool_error_text`. Its answer
is the error text the model reads. To abort the round instead, a processor raises the
exception it was given, or another one ``from`` it (``raise ToolExecutionError(...) from
exc``); anything else a processor raises is a failure of the processor itself: it is logged
and the model gets the default text, so a broken processor never costs the round's other
results.

However broken the exception is (a ``__str__`` or ``__repr__`` that raises), the text is
produced: :func:`error_text` falls back to naming the exception's type.

Exceptions that are not ``Exception`` subclasses are handled by the manager:
``KeyboardInterrupt``, ``MemoryError`` and an ``asyncio.CancelledError`` from outside the tool
(the round is being cancelled) always reach the caller, never a processor. Other ones a tool
raises (``SystemExit`` from ``sys.exit()`` or ``argparse`` inside a tool, ``GeneratorExit``, a
``CancelledError`` of the tool's own) end only that call: the processor receives them wrapped
in :class:`~toolrelay.exceptions.ToolExecutionError` (the original is its ``__cause__``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from toolrelay.exceptions import ToolExecutionError
from toolrelay.execution import _feedback as feedback

__all__ = [
    "DefaultToolExceptionProcessor",
    "ToolExceptionProcessor",
    "error_text",
    "tool_error_text",
]

_log = logging.getLogger("toolrelay.execution")


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
        message = error_text(tool_name, exc)
        if self.always_raise:
            raise ToolExecutionError(tool_name, message) from exc
        return message

    def __repr__(self) -> str:
        names = ", ".join(t.__name__ for t in self.rethrow)
        return f"DefaultToolExceptionProcessor(rethrow=({names}), always_raise={self.always_raise})"


def error_text(tool_name: str, exc: BaseException) -> str:
    """The exception's message, however broken the exception.

    ``Exception occurred in tool: <name> (<Type>)`` when the message is empty or cannot be
    read (a ``__str__`` that raises or returns something that is not a string).
    """
    try:
        message = str.strip(str(exc))
    except Exception:
        message = ""
    return message or feedback.tool_failed_without_message(tool_name, exc)


def tool_error_text(processor: ToolExceptionProcessor, tool_name: str, exc: Exception) -> str:
    """What the model reads for ``exc``, as ``processor`` decides (see the module docs).

    Raises:
        Exception: What the processor raises to abort the round: ``exc`` itself, or an
            exception whose ``__cause__`` is ``exc``; ``KeyboardInterrupt`` and
            ``MemoryError`` from the processor.
    """
    try:
        text = processor.process(tool_name, exc)
    except (KeyboardInterrupt, MemoryError):
        raise
    except BaseException as raised:
        if raised is exc or raised.__cause__ is exc:
            raise  # a deliberate abort
        _log.error(
            "the exception processor %s failed on the exception of tool %r; the model gets "
            "the default text",
            type(processor).__name__,
            tool_name,
            exc_info=raised,
        )
        return error_text(tool_name, exc)
    if type(text) is str:
        return text
    if isinstance(text, str):
        return str.__str__(text)  # a str subclass: its own methods may misbehave
    _log.error(
        "the exception processor %s returned %s for tool %r, not a string; the model gets the "
        "default text",
        type(processor).__name__,
        type(text).__name__,
        tool_name,
    )
    return error_text(tool_name, exc)
