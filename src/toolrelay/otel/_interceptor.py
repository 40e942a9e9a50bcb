"""``TracingInterceptor``: an ``execute_tool {tool}`` span around every tool execution.

Give it to the execution manager, first among the interceptors: the manager puts your
interceptors before its idempotency and approval steps, so the span covers them and sees the
final outcome (replays, approvals, deferrals)::

    manager = ToolCallingManager(
        interceptors=[TracingInterceptor(telemetry)], audit=sink, approval=handler
    )

The span (kind ``INTERNAL``) is a child of whatever span is current when the round runs: the
client request's span under a :class:`~toolrelay.otel.TracingAdvisor`. Spans a tool makes
itself nest under it, also for sync tools, which run in a worker thread that inherits the
context. The span carries the tool's name and type, the call id, the outcome's status, and
``error.type`` for a failed, timed-out or invalid call (the exception's class, or
``"timeout"``); denials, approvals and replays are told by ``toolrelay.tool.*`` attributes.
Arguments and results are recorded (``gen_ai.tool.call.arguments`` / ``.result``) only with
content capture. Each execution also adds its duration to ``gen_ai.client.operation.duration``.

Calls the manager answers before the interceptors (unknown names, arguments that are not JSON
or break the tool's schema, limits) and calls refused outside this one (a round's visibility
check, the manager's ``authorize=``, which always runs first) never run, so they get no span;
the request's span counts them.
"""

from __future__ import annotations

from time import perf_counter

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from toolrelay.execution import Proceed, ToolCallOutcome, ToolCallStatus, ToolInvocation
from toolrelay.otel._attributes import (
    ERROR_TYPE,
    EXECUTE_TOOL,
    GEN_AI_OPERATION_NAME,
    GEN_AI_TOOL_CALL_ARGUMENTS,
    GEN_AI_TOOL_CALL_ID,
    GEN_AI_TOOL_CALL_RESULT,
    GEN_AI_TOOL_NAME,
    GEN_AI_TOOL_TYPE,
    TOOLRELAY_TOOL_APPROVAL,
    TOOLRELAY_TOOL_REPLAYED,
    TOOLRELAY_TOOL_STATUS,
    TOOLRELAY_TURN_MODEL_CALL,
)
from toolrelay.otel._context import attached, current_turn, mark_failed, present
from toolrelay.otel._instruments import Instruments

__all__ = ["TracingInterceptor"]

_TIMEOUT = "timeout"
_FAILED = {ToolCallStatus.ERROR, ToolCallStatus.TIMEOUT, ToolCallStatus.INVALID_ARGUMENTS}


class TracingInterceptor:
    """Traces and measures every tool execution (see the module docs).

    Args:
        telemetry: Where spans and metrics go, a :class:`~toolrelay.otel.Telemetry`; the
            global providers, without content, when omitted.
    """

    def __init__(self, telemetry: Instruments | None = None) -> None:
        self.telemetry = telemetry if telemetry is not None else Instruments()

    def __repr__(self) -> str:
        return f"TracingInterceptor({self.telemetry!r})"

    async def __call__(self, invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        """Run the call inside its span; an exception that aborts the round marks it failed."""
        name = invocation.tool_name
        metric: dict[str, AttributeValue | None] = {
            GEN_AI_OPERATION_NAME: EXECUTE_TOOL,
            GEN_AI_TOOL_NAME: name,
        }
        attributes: dict[str, AttributeValue | None] = {
            **metric,
            GEN_AI_TOOL_TYPE: "function",
            GEN_AI_TOOL_CALL_ID: invocation.call.id or None,
        }
        turn = current_turn()
        if turn is not None and turn.model_calls:
            attributes[TOOLRELAY_TURN_MODEL_CALL] = turn.model_calls
        if self.telemetry.capture_content:
            attributes[GEN_AI_TOOL_CALL_ARGUMENTS] = invocation.arguments.text
        span = self.telemetry.tracer.start_span(
            f"{EXECUTE_TOOL} {name}", kind=SpanKind.INTERNAL, attributes=present(attributes)
        )
        started = perf_counter()
        try:
            with attached(trace.set_span_in_context(span)):
                outcome = await proceed(invocation)
        except BaseException as exc:
            kind = mark_failed(span, exc, capture_content=self.telemetry.capture_content)
            span.end()
            self.telemetry.record_operation(perf_counter() - started, {**metric, ERROR_TYPE: kind})
            raise
        failure = self._finish(span, outcome)
        span.end()
        metric[TOOLRELAY_TOOL_STATUS] = outcome.status.value
        self.telemetry.record_operation(perf_counter() - started, {**metric, ERROR_TYPE: failure})
        return outcome

    def _finish(self, span: Span, outcome: ToolCallOutcome) -> str | None:
        """Put the outcome on the span; returns its error type, if it failed."""
        capture = self.telemetry.capture_content
        span.set_attributes(
            present(
                {
                    TOOLRELAY_TOOL_STATUS: outcome.status.value,
                    TOOLRELAY_TOOL_APPROVAL: outcome.approval.value if outcome.approval else None,
                    TOOLRELAY_TOOL_REPLAYED: True if outcome.replayed else None,
                    GEN_AI_TOOL_CALL_ARGUMENTS: outcome.edited_arguments if capture else None,
                    GEN_AI_TOOL_CALL_RESULT: outcome.response.data if capture else None,
                }
            )
        )
        if outcome.status not in _FAILED:
            return None
        error = outcome.exception
        if error is not None:
            return mark_failed(span, error, capture_content=capture)
        kind = _TIMEOUT if outcome.status is ToolCallStatus.TIMEOUT else outcome.status.value
        span.set_attribute(ERROR_TYPE, kind)
        span.set_status(Status(StatusCode.ERROR))
        return kind
