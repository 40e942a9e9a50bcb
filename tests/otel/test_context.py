"""Keeping a span current only while a stream computes; marking failures without content."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing

from opentelemetry import trace
from opentelemetry.trace import StatusCode

from toolrelay.otel._context import current_turn, mark_failed, present, turn_context, within

from ._signals import Signals


async def test_within_makes_the_context_current_only_while_the_stream_computes(
    signals: Signals,
) -> None:
    span = signals.tracer_provider.get_tracer("test").start_span("outer")
    seen_inside: list[object] = []

    async def numbers() -> AsyncIterator[int]:
        for number in range(3):
            seen_inside.append(trace.get_current_span())
            yield number

    before = trace.get_current_span()
    seen_outside = []
    async for _ in within(trace.set_span_in_context(span), numbers):
        seen_outside.append(trace.get_current_span())

    assert seen_inside == [span, span, span]
    assert seen_outside == [before, before, before]


async def test_closing_within_closes_the_wrapped_stream_inside_the_context(
    signals: Signals,
) -> None:
    span = signals.tracer_provider.get_tracer("test").start_span("outer")
    closed_under: list[object] = []

    async def endless() -> AsyncIterator[int]:
        try:
            while True:
                yield 1
        finally:
            closed_under.append(trace.get_current_span())

    async with aclosing(within(trace.set_span_in_context(span), endless)) as items:
        await anext(items)

    assert closed_under == [span]


def test_a_turn_context_carries_the_span_and_a_fresh_counter(signals: Signals) -> None:
    span = signals.tracer_provider.get_tracer("test").start_span("request")
    first, second = turn_context(span), turn_context(span)

    assert current_turn() is None
    assert trace.get_current_span(first) is span
    assert first is not second


def test_mark_failed_keeps_the_message_out_unless_content_is_captured(signals: Signals) -> None:
    tracer = signals.tracer_provider.get_tracer("test")
    with tracer.start_as_current_span("quiet") as quiet:
        assert mark_failed(quiet, KeyError("SECRET"), capture_content=False) == "KeyError"
    with tracer.start_as_current_span("loud", record_exception=False) as loud:
        mark_failed(loud, KeyError("SECRET"), capture_content=True)

    found = {s.name: s for s in signals.spans()}
    assert found["quiet"].status.status_code is StatusCode.ERROR
    assert found["quiet"].status.description is None
    assert found["quiet"].events == ()
    assert "SECRET" in (found["loud"].status.description or "")
    assert [e.name for e in found["loud"].events] == ["exception"]


def test_present_drops_unknown_values() -> None:
    assert present({"a": 1, "b": None, "c": False}) == {"a": 1, "c": False}
