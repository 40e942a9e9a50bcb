"""``TracingInterceptor``: one span per tool execution, its outcome, errors and nesting."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from opentelemetry.trace import SpanKind, StatusCode

from toolrelay.exceptions import ToolExecutionError
from toolrelay.execution import (
    ApprovalInterceptor,
    Approve,
    DefaultToolExceptionProcessor,
    Deny,
    ToolCallingManager,
    ToolCallInterceptor,
    ToolExecutionResult,
    ToolInvocation,
)
from toolrelay.messages import ToolCall, UserMessage
from toolrelay.otel import TracingInterceptor
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import tool_call_response
from toolrelay.tools import as_tools, tool

from ._signals import Signals, attributes, parent_id, span_id


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


@tool(timeout=0.05)
async def slow() -> str:
    """Wait far longer than the timeout allows."""
    await asyncio.sleep(30)
    return "late"


@tool
def explode() -> str:
    """Fail with the secret in the message."""
    raise ValueError("boom SECRET")


@tool(requires_approval=True)
def wire(amount: int) -> str:
    """Send money.

    Args:
        amount: How much.
    """
    return f"sent {amount}"


async def run_round(
    interceptors: list[ToolCallInterceptor],
    *calls: tuple[str, dict[str, Any] | str],
    **manager_options: Any,
) -> ToolExecutionResult:
    """Run one round of ``calls`` (ids ``c1``, ``c2``, ...) through a manager."""
    manager = ToolCallingManager(interceptors=interceptors, **manager_options)
    prompt = Prompt(
        messages=(UserMessage(text="go"),),
        options=ChatOptions(tools=tuple(as_tools(add, slow, explode, wire))),
    )
    response = tool_call_response(
        *(
            ToolCall(
                id=f"c{number}",
                name=name,
                arguments=arguments if isinstance(arguments, str) else json.dumps(arguments),
            )
            for number, (name, arguments) in enumerate(calls, 1)
        )
    )
    return await manager.execute_tool_calls(prompt, response)


async def test_a_successful_run_is_an_internal_span_named_after_the_tool(signals: Signals) -> None:
    result = await run_round([TracingInterceptor(signals.telemetry())], ("add", {"a": 1, "b": 2}))

    assert result.responses[0].data == "3"
    span = signals.one("execute_tool add")
    assert span.kind is SpanKind.INTERNAL
    assert span.parent is None  # nothing was current: a root span
    assert attributes(span) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": "c1",
        "toolrelay.tool.status": "ok",
    }
    assert span.status.status_code is StatusCode.UNSET


async def test_a_timeout_is_an_error_of_type_timeout(signals: Signals) -> None:
    await run_round([TracingInterceptor(signals.telemetry())], ("slow", {}))

    span = signals.one("execute_tool slow")
    assert attributes(span)["toolrelay.tool.status"] == "timeout"
    assert attributes(span)["error.type"] == "timeout"
    assert span.status.status_code is StatusCode.ERROR


async def test_arguments_the_schema_rejects_never_reach_the_interceptor(signals: Signals) -> None:
    # Validated before any interceptor runs, like an unknown name: nothing was executed.
    result = await run_round([TracingInterceptor(signals.telemetry())], ("add", {"a": 1}))

    assert result.outcomes[0].status.value == "invalid_arguments"
    assert signals.named("execute_tool add") == []


async def test_a_failing_tool_records_its_message_only_with_capture(signals: Signals) -> None:
    await run_round([TracingInterceptor(signals.telemetry())], ("explode", {}))
    quiet = signals.one("execute_tool explode")
    assert attributes(quiet)["error.type"] == "ValueError"
    assert quiet.events == ()
    assert quiet.status.description is None

    signals.exporter.clear()
    await run_round([TracingInterceptor(signals.telemetry(capture_content=True))], ("explode", {}))
    loud = signals.one("execute_tool explode")
    assert loud.status.description == "boom SECRET"
    (event,) = loud.events
    assert event.name == "exception"
    assert event.attributes is not None
    assert event.attributes["exception.type"] == "ValueError"


async def test_an_exception_aborting_the_round_marks_the_span_and_propagates(
    signals: Signals,
) -> None:
    with pytest.raises(ToolExecutionError):
        await run_round(
            [TracingInterceptor(signals.telemetry())],
            ("explode", {}),
            exception_processor=DefaultToolExceptionProcessor(always_raise=True),
        )

    span = signals.one("execute_tool explode")
    assert attributes(span)["error.type"] == "ToolExecutionError"
    assert span.status.status_code is StatusCode.ERROR
    (point,) = signals.points("gen_ai.client.operation.duration")
    assert point.attributes is not None
    assert point.attributes["error.type"] == "ToolExecutionError"


async def test_approval_outcomes_are_attributes_not_errors(signals: Signals) -> None:
    async def deny(request: ToolInvocation, /) -> Deny:
        return Deny("not today")

    tracing = TracingInterceptor(signals.telemetry())
    await run_round([tracing], ("wire", {"amount": 5}), approval=ApprovalInterceptor(deny))
    denied = attributes(signals.one("execute_tool wire"))
    assert denied["toolrelay.tool.status"] == "denied"
    assert denied["toolrelay.tool.approval"] == "denied"
    assert "error.type" not in denied

    signals.exporter.clear()
    await run_round([tracing], ("wire", {"amount": 5}), approval=ApprovalInterceptor())
    assert attributes(signals.one("execute_tool wire"))["toolrelay.tool.status"] == (
        "pending_approval"
    )


async def test_capture_records_the_arguments_an_approval_changed(signals: Signals) -> None:
    async def halve(request: ToolInvocation, /) -> Approve:
        return Approve(arguments={"amount": 2})

    tracing = TracingInterceptor(signals.telemetry(capture_content=True))
    await run_round([tracing], ("wire", {"amount": 4}), approval=halve)

    found = attributes(signals.one("execute_tool wire"))
    assert found["toolrelay.tool.approval"] == "edited"
    assert found["gen_ai.tool.call.arguments"] == '{"amount": 2}'
    assert found["gen_ai.tool.call.result"] == "sent 2"


async def test_calls_answered_before_the_interceptors_get_no_span(signals: Signals) -> None:
    result = await run_round(
        [TracingInterceptor(signals.telemetry())], ("nope", {}), ("add", "{not json")
    )

    assert [o.status.value for o in result.outcomes] == ["unknown_tool", "invalid_arguments"]
    assert signals.spans() == []


async def test_spans_a_sync_tool_makes_in_its_worker_thread_nest_under_its_run(
    signals: Signals,
) -> None:
    tracer = signals.tracer_provider.get_tracer("test")

    @tool
    def lookup(key: str) -> str:
        """Look a key up.

        Args:
            key: The key.
        """
        with tracer.start_as_current_span("database query"):
            return key.upper()

    manager = ToolCallingManager(interceptors=[TracingInterceptor(signals.telemetry())])
    prompt = Prompt(
        messages=(UserMessage(text="go"),), options=ChatOptions(tools=tuple(as_tools(lookup)))
    )
    await manager.execute_tool_calls(prompt, tool_call_response(("lookup", {"key": "k"})))

    run = signals.one("execute_tool lookup")
    assert parent_id(signals.one("database query")) == span_id(run)


async def test_each_run_adds_its_duration_by_tool_and_status(signals: Signals) -> None:
    await run_round(
        [TracingInterceptor(signals.telemetry())], ("add", {"a": 1, "b": 2}), ("explode", {})
    )

    found = sorted(
        (
            (dict(p.attributes or {}), p.count)
            for p in signals.points("gen_ai.client.operation.duration")
        ),
        key=lambda item: str(item[0]["gen_ai.tool.name"]),
    )
    assert found == [
        (
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "add",
                "toolrelay.tool.status": "ok",
            },
            1,
        ),
        (
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "explode",
                "toolrelay.tool.status": "error",
                "error.type": "ValueError",
            },
            1,
        ),
    ]
