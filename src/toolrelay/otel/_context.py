"""Keeping spans current across awaits, streams and turns, and marking failed spans.

OpenTelemetry's current span lives in a ``contextvars`` context, which asyncio tasks and
``asyncio.to_thread`` copy, so spans nest across the event loop and the worker threads of
sync tools by themselves. Streams need care: an async generator runs in its consumer's
context, so a span made current inside one would leak to the consumer between chunks.
:func:`within` makes a context current only while the wrapped stream computes its next chunk.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Mapping
from contextlib import aclosing, contextmanager
from dataclasses import dataclass
from typing import TypeVar

from opentelemetry import context, trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from toolrelay.otel._attributes import ERROR_TYPE, error_type

T = TypeVar("T")

_TURN_KEY = context.create_key("toolrelay.turn")


@dataclass(kw_only=True)
class TurnCounter:
    """Counts the model calls of one client request (shared by the request's tasks)."""

    model_calls: int = 0


def turn_context(span: Span) -> Context:
    """The current context with ``span`` current and a fresh turn counter."""
    return context.set_value(_TURN_KEY, TurnCounter(), trace.set_span_in_context(span))


def current_turn() -> TurnCounter | None:
    """The counter of the client request being traced, if any."""
    turn = context.get_value(_TURN_KEY)
    return turn if isinstance(turn, TurnCounter) else None


@contextmanager
def attached(ctx: Context) -> Iterator[None]:
    """Make ``ctx`` current for the block."""
    token = context.attach(ctx)
    try:
        yield
    finally:
        context.detach(token)


async def within(ctx: Context, start: Callable[[], AsyncIterator[T]]) -> AsyncGenerator[T, None]:
    """The items of the stream ``start()`` opens, each computed with ``ctx`` current.

    The stream is opened lazily, with ``ctx`` current too (see the module docs), and closed
    when this generator is.
    """
    with attached(ctx):
        stream = start()
    try:
        while True:
            with attached(ctx):
                try:
                    item = await anext(stream)
                except StopAsyncIteration:
                    return
            yield item
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            with attached(ctx):
                await close()


async def traced_stream(
    span: Span,
    ctx: Context,
    start: Callable[[], AsyncIterator[T]],
    *,
    add: Callable[[T], object],
    finish: Callable[[], None],
    fail: Callable[[BaseException], None],
) -> AsyncGenerator[T, None]:
    """The items of ``start()`` (each computed :func:`within` ``ctx``), each passed to ``add``.

    When the stream ends, ``finish()``; when it raises, ``fail(error)`` (both end the span).
    When the consumer stops early, that is no failure: the span just ends.
    """
    ended = False
    try:
        async with aclosing(within(ctx, start)) as items:
            async for item in items:
                add(item)
                yield item
    except GeneratorExit:
        raise
    except BaseException as exc:
        ended = True
        fail(exc)
        raise
    else:
        ended = True
        finish()
    finally:
        if not ended:
            span.end()


def mark_failed(span: Span, error: BaseException, *, capture_content: bool) -> str:
    """Set ``error.type`` and the error status on ``span``; returns the error type.

    The exception's message and stack trace are recorded only with content capture: a tool's
    or provider's message often quotes the arguments or the input.
    """
    kind = error_type(error)
    span.set_attribute(ERROR_TYPE, kind)
    if capture_content:
        try:
            span.record_exception(error)
            message = str(error)
        except Exception:  # an exception whose __str__ raises: its type is all there is
            message = ""
        span.set_status(Status(StatusCode.ERROR, message or kind))
    else:
        span.set_status(Status(StatusCode.ERROR))
    return kind


def present(attributes: Mapping[str, AttributeValue | None]) -> dict[str, AttributeValue]:
    """``attributes`` without the unknown (``None``) values."""
    return {key: value for key, value in attributes.items() if value is not None}
