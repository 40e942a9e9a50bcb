"""Bad and odd tool calls, each with its exact outcome.

Every case runs one round through a ``ToolCallingManager`` over real ``@tool`` functions (plus
a few hand-written tools for what decorated functions cannot do) and asserts either the exact
``(id, name, status, text)`` of every response, or the exact error raised to the caller.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict

from toolrelay.exceptions import (
    InvalidJsonError,
    ToolArgumentError,
    ToolCallLimitError,
    ToolContextError,
    ToolExecutionError,
    ToolNotFoundError,
)
from toolrelay.execution import (
    CallLimits,
    DefaultToolExceptionProcessor,
    ToolCallingManager,
    ToolCallStatus,
)
from toolrelay.messages import (
    AssistantMessage,
    ChatResponse,
    Generation,
    Message,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.tools import FunctionTool, Tool, ToolContext, tool
from toolrelay.tools._base import ToolDefinition, ToolMetadata

OK = ToolCallStatus.OK
ERROR = ToolCallStatus.ERROR
UNKNOWN = ToolCallStatus.UNKNOWN_TOOL
INVALID = ToolCallStatus.INVALID_ARGUMENTS
TIMEOUT = ToolCallStatus.TIMEOUT
LIMIT = ToolCallStatus.LIMIT


class QuotaExceededError(Exception):
    """A failure the application wants to handle itself (put on the rethrow list)."""


@tool
def get_weather(city: str, unit: Literal["c", "f"] = "c") -> dict[str, Any]:
    """Current weather for a city.

    Args:
        city: City name.
        unit: Temperature unit.
    """
    return {"city": city, "temp": 21, "unit": unit}


@tool
def get_time(city: str) -> str:
    """Local time in a city."""
    return f"12:00 in {city}"


@tool(name="refund.find_failed_orders")
def find_failed_orders(customer_id: str) -> list[str]:
    """Failed orders of a customer."""
    return [f"{customer_id}-1"]


@tool
def parse_date(text: str) -> str:
    """Parse a date."""
    raise ValueError(f"cannot parse date {text!r}")


@tool
def fail_silently() -> str:
    """Fails with an empty message."""
    raise RuntimeError()


@tool
def charge_card(amount: int) -> str:
    """Charge the card."""
    raise QuotaExceededError("daily quota exceeded")


@tool
def interrupt() -> str:
    """Simulates Ctrl-C while the tool runs."""
    raise KeyboardInterrupt


@tool
async def cancelled_inside() -> str:
    """A tool whose own awaitable was cancelled."""
    raise asyncio.CancelledError


@tool(timeout=0.05)
async def slow_report() -> str:
    """Takes far longer than its timeout."""
    await asyncio.sleep(30)
    return "never"


@tool
async def slow_search(query: str) -> str:
    """Slow without its own timeout."""
    await asyncio.sleep(30)
    return "never"


@tool(return_direct=True)
def final_answer(text: str) -> str:
    """The answer, shown to the user as is."""
    return text


@tool(return_direct=True)
def show_chart(chart_id: str) -> str:
    """Render a chart for the user."""
    return f"<chart {chart_id}>"


@tool
def whoami(ctx: ToolContext) -> str:
    """The current tenant."""
    return f"tenant={ctx.tenant_id}"


@tool
def ping() -> str:
    """No arguments."""
    return "pong"


class RefundRequest(BaseModel):
    """Declares no extra behaviour: pydantic alone would drop unknown keys."""

    order_id: str
    reason: str = "other"


class Feedback(BaseModel):
    """Takes any further keys on purpose."""

    model_config = ConfigDict(extra="allow")

    text: str


def refund(request: RefundRequest) -> str:
    """Refund an order."""
    return f"refunded {request.order_id} ({request.reason})"


def send_feedback(feedback: Feedback) -> str:
    """Send feedback with any tags."""
    return f"{feedback.text} {feedback.model_extra}"


class TenantRequiredTool:
    """A hand-written tool that needs a tenant in its context."""

    definition = ToolDefinition(name="list_invoices", description="Invoices of the tenant.")
    metadata = ToolMetadata()

    async def call(self, arguments_json: str, context: Mapping[str, Any] | None = None) -> str:
        if not context or "tenant_id" not in context:
            raise ToolContextError(self.definition.name)
        return f"invoices of {context['tenant_id']}"


class NothingTool:
    """A hand-written tool that returns None."""

    definition = ToolDefinition(name="fire_and_forget", description="Returns nothing.")
    metadata = ToolMetadata()

    async def call(self, arguments_json: str, context: Mapping[str, Any] | None = None) -> Any:
        return None


TOOLS: list[Tool] = [
    *(
        FunctionTool.from_function(f)
        for f in (
            get_weather,
            get_time,
            find_failed_orders,
            parse_date,
            fail_silently,
            charge_card,
            interrupt,
            cancelled_inside,
            slow_report,
            slow_search,
            final_answer,
            show_chart,
            whoami,
            ping,
        )
    ),
    TenantRequiredTool(),
    NothingTool(),
]

Expected = tuple[str, str, ToolCallStatus, str]


@dataclass(frozen=True)
class Case:
    id: str
    calls: Sequence[tuple[str, str, str]]  # (id, name, arguments)
    expect: Sequence[Expected] = ()
    raises: type[BaseException] | None = None
    message: str | None = None
    manager: Mapping[str, Any] = field(default_factory=dict)
    history: Sequence[Message] = ()
    context: Mapping[str, Any] = field(default_factory=dict)
    tools: Sequence[Tool] | None = None
    return_direct: bool = False


def invalid(tool_name: str, *problems: str) -> str:
    lines = "\n".join(f"- {p}" for p in problems)
    return (
        f"Invalid arguments for tool '{tool_name}':\n{lines}\n"
        "Fix the arguments and call the tool again."
    )


def unknown(name: str, *suggestions: str) -> str:
    if not suggestions:
        return (
            f"Unknown tool '{name}'. No available tool has a similar name. "
            "Call one of the available tools with its exact name."
        )
    return (
        f"Unknown tool '{name}'. Available tools with similar names: {', '.join(suggestions)}. "
        "Call one of the available tools with its exact name."
    )


PER_TOOL_LIMIT_2 = (
    "Tool call limit reached: 'get_time' may be called at most 2 times per turn. "
    "Do not call it again; answer with the information you have."
)
TOTAL_LIMIT_3 = (
    "Tool call limit reached: at most 3 tool calls are allowed per turn. "
    "Do not call more tools; answer with the information you have."
)
PARIS = '{"city": "Paris", "temp": 21, "unit": "c"}'


def earlier_turn_calls(*names: str) -> list[Message]:
    """History of the current turn: a user question, then earlier rounds' calls of ``names``."""
    calls = tuple(ToolCall(id=f"h{i}", name=n, arguments="{}") for i, n in enumerate(names))
    return [
        UserMessage(text="an earlier question"),
        AssistantMessage(tool_calls=calls),
        ToolResponseMessage(
            responses=tuple(ToolResponse(id=c.id, name=c.name, data="x") for c in calls)
        ),
        UserMessage(text="what time is it?"),
        AssistantMessage(tool_calls=calls),
        ToolResponseMessage(
            responses=tuple(ToolResponse(id=c.id, name=c.name, data="x") for c in calls)
        ),
    ]


def mixed_round(n: int) -> tuple[list[tuple[str, str, str]], list[Expected]]:
    """``n`` calls cycling through success, tool error, unknown name, bad JSON, near-miss name."""
    calls: list[tuple[str, str, str]] = []
    expect: list[Expected] = []
    for i in range(n):
        cid = f"c{i}"
        match i % 5:
            case 0:
                calls.append((cid, "get_time", f'{{"city": "city{i}"}}'))
                expect.append((cid, "get_time", OK, f"12:00 in city{i}"))
            case 1:
                calls.append((cid, "parse_date", f'{{"text": "day {i}"}}'))
                expect.append((cid, "parse_date", ERROR, f"cannot parse date 'day {i}'"))
            case 2:
                calls.append((cid, "no_such_tool", "{}"))
                expect.append((cid, "no_such_tool", UNKNOWN, unknown("no_such_tool")))
            case 3:
                calls.append((cid, "get_weather", '{"city": '))
                expect.append(
                    (
                        cid,
                        "get_weather",
                        INVALID,
                        invalid(
                            "get_weather",
                            "Arguments are not valid JSON: Expecting value at line 1, column 10.",
                        ),
                    )
                )
            case _:
                calls.append((cid, "getWeather", f'{{"city": "town{i}"}}'))
                expect.append(
                    (cid, "get_weather", OK, f'{{"city": "town{i}", "temp": 21, "unit": "c"}}')
                )
    return calls, expect


MIXED_CALLS, MIXED_EXPECT = mixed_round(200)
LONG_NAME = "x" * 200  # longer than the feedback shows, shorter than any name limit

CASES = [
    # --- arguments ---------------------------------------------------------------------------
    Case(
        id="malformed JSON",
        calls=[("1", "get_weather", '{"city": "Paris"')],
        expect=[
            (
                "1",
                "get_weather",
                INVALID,
                invalid(
                    "get_weather",
                    "Arguments are not valid JSON: Expecting ',' delimiter at line 1, column 17.",
                ),
            )
        ],
    ),
    Case(
        id="single-quoted pseudo JSON",
        calls=[("1", "get_weather", "{'city': 'Paris'}")],
        expect=[
            (
                "1",
                "get_weather",
                INVALID,
                invalid(
                    "get_weather",
                    "Arguments are not valid JSON: Expecting property name enclosed in double "
                    "quotes at line 1, column 2.",
                ),
            )
        ],
    ),
    Case(
        id="JSON array instead of object",
        calls=[("1", "get_weather", '["Paris"]')],
        expect=[
            (
                "1",
                "get_weather",
                INVALID,
                invalid("get_weather", "Arguments must be a JSON object, not an array."),
            )
        ],
    ),
    Case(
        id="bare JSON string",
        calls=[("1", "get_weather", '"Paris"')],
        expect=[
            (
                "1",
                "get_weather",
                INVALID,
                invalid("get_weather", "Arguments must be a JSON object, not a string."),
            )
        ],
    ),
    Case(
        id="JSON null",
        calls=[("1", "get_weather", "null")],
        expect=[
            (
                "1",
                "get_weather",
                INVALID,
                invalid("get_weather", "Arguments must be a JSON object, not null."),
            )
        ],
    ),
    Case(
        id="double-encoded object is unwrapped",
        calls=[("1", "get_weather", '"{\\"city\\": \\"Paris\\"}"')],
        expect=[("1", "get_weather", OK, PARIS)],
    ),
    Case(
        id="wrong types",
        calls=[("1", "get_weather", '{"city": 3, "unit": "kelvin"}')],
        expect=[
            (
                "1",
                "get_weather",
                INVALID,
                invalid(
                    "get_weather",
                    "city: Input should be a valid string",
                    "unit: Input should be 'c' or 'f'",
                ),
            )
        ],
    ),
    Case(
        id="missing required",
        calls=[("1", "get_weather", '{"unit": "f"}')],
        expect=[("1", "get_weather", INVALID, invalid("get_weather", "city: Field required"))],
    ),
    Case(
        id="extra fields",
        calls=[("1", "get_weather", '{"city": "Paris", "country": "FR"}')],
        expect=[
            (
                "1",
                "get_weather",
                INVALID,
                invalid("get_weather", "country: Extra inputs are not permitted"),
            )
        ],
    ),
    Case(
        id="extra fields of a model-input tool",
        calls=[
            ("1", "refund", '{"order_id": "A-1", "amount": 5}'),
            ("2", "refund", '{"amount": 5, "reason": "late"}'),
            ("3", "refund", '{"order_id": "A-1"}'),
            ("4", "send_feedback", '{"text": "great", "mood": "happy"}'),
        ],
        tools=[
            FunctionTool.from_model_function(refund),
            FunctionTool.from_model_function(send_feedback),
        ],
        expect=[
            ("1", "refund", INVALID, invalid("refund", "amount: Extra inputs are not permitted")),
            (
                "2",
                "refund",
                INVALID,
                invalid(
                    "refund", "order_id: Field required", "amount: Extra inputs are not permitted"
                ),
            ),
            ("3", "refund", OK, "refunded A-1 (other)"),
            ("4", "send_feedback", OK, "great {'mood': 'happy'}"),
        ],
    ),
    Case(
        id="blank arguments are an empty object",
        calls=[("1", "ping", ""), ("2", "get_weather", "  ")],
        expect=[
            ("1", "ping", OK, "pong"),
            ("2", "get_weather", INVALID, invalid("get_weather", "city: Field required")),
        ],
    ),
    Case(
        id="invalid JSON raised by policy",
        calls=[("1", "get_time", '{"city": "Oslo"}'), ("2", "get_weather", "[1]")],
        manager={"invalid_arguments": "raise"},
        raises=InvalidJsonError,
        message=(
            "invalid arguments for tool 'get_weather':\n"
            "- Arguments must be a JSON object, not an array."
        ),
    ),
    Case(
        id="schema violation raised by policy",
        calls=[("1", "get_weather", "{}")],
        manager={"invalid_arguments": "raise"},
        raises=ToolArgumentError,
        message="invalid arguments for tool 'get_weather':\n- city: Field required",
    ),
    # --- names -------------------------------------------------------------------------------
    Case(
        id="unknown name",
        calls=[("1", "book_flight", '{"to": "Oslo"}')],
        expect=[("1", "book_flight", UNKNOWN, unknown("book_flight"))],
    ),
    Case(
        id="near-miss camelCase name resolves",
        calls=[("1", "getWeather", '{"city": "Paris"}')],
        expect=[("1", "get_weather", OK, PARIS)],
    ),
    Case(
        id="typo gets suggestions",
        calls=[("1", "getWether", '{"city": "Paris"}')],
        expect=[("1", "getWether", UNKNOWN, unknown("getWether", "get_weather", "get_time"))],
    ),
    Case(
        id="dotted name sent in provider-safe form",
        calls=[("1", "refund__find_failed_orders", '{"customer_id": "C7"}')],
        expect=[("1", "refund.find_failed_orders", OK, '["C7-1"]')],
    ),
    Case(
        id="dotted name sent dotted",
        calls=[("1", "refund.find_failed_orders", '{"customer_id": "C7"}')],
        expect=[("1", "refund.find_failed_orders", OK, '["C7-1"]')],
    ),
    Case(
        id="ambiguous folded name is not guessed",
        calls=[("1", "getweather", '{"city": "Paris"}')],
        tools=[
            FunctionTool.from_function(get_weather),
            FunctionTool.from_function(get_weather, name="GetWeather"),
        ],
        expect=[("1", "getweather", UNKNOWN, unknown("getweather", "GetWeather", "get_weather"))],
    ),
    Case(
        id="runaway name is shortened in the feedback",
        calls=[("1", LONG_NAME, "{}")],
        expect=[
            (
                "1",
                LONG_NAME,
                UNKNOWN,
                f"Unknown tool '{'x' * 80}...'. No available tool has a similar name. "
                "Call one of the available tools with its exact name.",
            )
        ],
    ),
    Case(
        id="a name over the length limit is refused without being looked up",
        calls=[("1", "get_weather" * 30, "{}"), ("2", "get_time", '{"city": "Oslo"}')],
        expect=[
            (
                "1",
                "get_weather" * 30,
                UNKNOWN,
                "The tool name in this call is 330 characters long; tool names have at most "
                "256. Call one of the available tools with its exact name.",
            ),
            ("2", "get_time", OK, "12:00 in Oslo"),
        ],
    ),
    Case(
        id="the name limit is the manager's",
        calls=[("1", "get_weather", '{"city": "Oslo"}')],
        manager={"max_name_length": 5},
        expect=[
            (
                "1",
                "get_weather",
                UNKNOWN,
                "The tool name in this call is 11 characters long; tool names have at most "
                "5. Call one of the available tools with its exact name.",
            )
        ],
    ),
    Case(
        id="arguments over the length limit are refused unread",
        calls=[("1", "get_weather", '{"city": "' + "O" * 100 + '"}')],
        manager={"max_arguments_length": 50},
        expect=[
            (
                "1",
                "get_weather",
                INVALID,
                "Invalid arguments for tool 'get_weather':\n"
                "- The arguments are 112 characters long; at most 50 are accepted. "
                "Send shorter arguments.\n"
                "Fix the arguments and call the tool again.",
            )
        ],
    ),
    Case(
        id="NaN and Infinity are not JSON numbers",
        calls=[
            ("1", "get_weather", '{"city": NaN}'),
            ("2", "get_weather", '{"city": -Infinity}'),
            ("3", "get_weather", '{"city": 1e999}'),
        ],
        expect=[
            (
                str(i),
                "get_weather",
                INVALID,
                "Invalid arguments for tool 'get_weather':\n"
                f"- Arguments are not valid JSON: {number} is not a JSON number; send a finite "
                "number or null.\n"
                "Fix the arguments and call the tool again.",
            )
            for i, number in ((1, "NaN"), (2, "-Infinity"), (3, "1e999"))
        ],
    ),
    Case(
        id="no tools at all",
        calls=[("1", "get_weather", "{}")],
        tools=[],
        expect=[
            (
                "1",
                "get_weather",
                UNKNOWN,
                "Unknown tool 'get_weather'. No tools are available; answer without calling tools.",
            )
        ],
    ),
    Case(
        id="unknown name raised by policy before any tool runs",
        calls=[("1", "get_time", '{"city": "Oslo"}'), ("2", "getWether", "{}")],
        manager={"unknown_tool": "raise"},
        raises=ToolNotFoundError,
        message="Unknown tool 'getWether'. Did you mean: get_weather, get_time?",
    ),
    # --- ids ---------------------------------------------------------------------------------
    Case(
        id="duplicate call ids are all answered",
        calls=[("dup", "get_time", '{"city": "Oslo"}'), ("dup", "get_time", '{"city": "Rome"}')],
        expect=[
            ("dup", "get_time", OK, "12:00 in Oslo"),
            ("dup", "get_time", OK, "12:00 in Rome"),
        ],
    ),
    Case(
        id="empty id is echoed",
        calls=[("", "get_time", '{"city": "Oslo"}')],
        expect=[("", "get_time", OK, "12:00 in Oslo")],
    ),
    # --- tool failures -----------------------------------------------------------------------
    Case(
        id="tool raises ValueError, sibling still answered",
        calls=[("1", "parse_date", '{"text": "soon"}'), ("2", "get_time", '{"city": "Oslo"}')],
        expect=[
            ("1", "parse_date", ERROR, "cannot parse date 'soon'"),
            ("2", "get_time", OK, "12:00 in Oslo"),
        ],
    ),
    Case(
        id="exception with empty message",
        calls=[("1", "fail_silently", "{}")],
        expect=[
            (
                "1",
                "fail_silently",
                ERROR,
                "Exception occurred in tool: fail_silently (RuntimeError)",
            )
        ],
    ),
    Case(
        id="rethrow-listed error reaches the caller unwrapped",
        calls=[("1", "get_time", '{"city": "Oslo"}'), ("2", "charge_card", '{"amount": 5}')],
        manager={
            "exception_processor": DefaultToolExceptionProcessor(rethrow=(QuotaExceededError,))
        },
        raises=QuotaExceededError,
        message="daily quota exceeded",
    ),
    Case(
        id="always_raise wraps the tool's error",
        calls=[("1", "parse_date", '{"text": "soon"}')],
        manager={"exception_processor": DefaultToolExceptionProcessor(always_raise=True)},
        raises=ToolExecutionError,
        message="cannot parse date 'soon'",
    ),
    Case(
        id="KeyboardInterrupt propagates",
        calls=[("1", "get_time", '{"city": "Oslo"}'), ("2", "interrupt", "{}")],
        raises=KeyboardInterrupt,
    ),
    Case(
        id="KeyboardInterrupt propagates from a single call",
        calls=[("1", "interrupt", "{}")],
        raises=KeyboardInterrupt,
    ),
    Case(
        id="a tool's own CancelledError ends only its call",
        calls=[("1", "cancelled_inside", "{}"), ("2", "get_time", '{"city": "Oslo"}')],
        expect=[
            (
                "1",
                "cancelled_inside",
                ERROR,
                "Exception occurred in tool: cancelled_inside (CancelledError)",
            ),
            ("2", "get_time", OK, "12:00 in Oslo"),
        ],
    ),
    Case(
        id="tool timeout from metadata",
        calls=[("1", "slow_report", "{}"), ("2", "get_time", '{"city": "Oslo"}')],
        expect=[
            (
                "1",
                "slow_report",
                TIMEOUT,
                "Tool 'slow_report' timed out after 0.05 s and was cancelled.",
            ),
            ("2", "get_time", OK, "12:00 in Oslo"),
        ],
    ),
    Case(
        id="tool timeout from the manager default",
        calls=[("1", "slow_search", '{"query": "x"}')],
        manager={"default_timeout": 0.02},
        expect=[
            (
                "1",
                "slow_search",
                TIMEOUT,
                "Tool 'slow_search' timed out after 0.02 s and was cancelled.",
            )
        ],
    ),
    Case(
        id="200 calls in one round with mixed failures",
        calls=MIXED_CALLS,
        manager={"limits": CallLimits.unlimited()},
        expect=MIXED_EXPECT,
    ),
    # --- context -----------------------------------------------------------------------------
    Case(
        id="context required but missing: the developer's mistake is raised",
        calls=[("1", "list_invoices", "{}")],
        raises=ToolContextError,
        message=(
            "tool 'list_invoices' requires a ToolContext, but the request has none; "
            "pass it with the request's tool context "
            "(ChatClient(..., context={'tenant_id': ...}) or .prompt(...).tool_context({...}))"
        ),
    ),
    Case(
        id="decorated tool requiring a context reports an empty one as missing",
        calls=[("1", "whoami", "{}")],
        raises=ToolContextError,
        message=(
            "tool 'whoami' requires a ToolContext, but the request has none; "
            "pass it with the request's tool context "
            "(ChatClient(..., context={'tenant_id': ...}) or .prompt(...).tool_context({...}))"
        ),
    ),
    Case(
        id="context is passed to tools",
        calls=[("1", "whoami", "{}"), ("2", "list_invoices", "")],
        context={"tenant_id": "acme"},
        expect=[("1", "whoami", OK, "tenant=acme"), ("2", "list_invoices", OK, "invoices of acme")],
    ),
    Case(
        id="None result is empty text",
        calls=[("1", "fire_and_forget", "{}")],
        expect=[("1", "fire_and_forget", OK, "")],
    ),
    # --- return direct -----------------------------------------------------------------------
    Case(
        id="return direct when every tool returns direct",
        calls=[("1", "final_answer", '{"text": "42"}'), ("2", "show_chart", '{"chart_id": "q3"}')],
        expect=[("1", "final_answer", OK, "42"), ("2", "show_chart", OK, "<chart q3>")],
        return_direct=True,
    ),
    Case(
        id="return direct mixed with a normal tool",
        calls=[("1", "final_answer", '{"text": "42"}'), ("2", "get_time", '{"city": "Oslo"}')],
        expect=[("1", "final_answer", OK, "42"), ("2", "get_time", OK, "12:00 in Oslo")],
    ),
    Case(
        id="return direct with a failing call goes back to the model",
        calls=[("1", "final_answer", '{"text": "42"}'), ("2", "show_chart", "{}")],
        expect=[
            ("1", "final_answer", OK, "42"),
            ("2", "show_chart", INVALID, invalid("show_chart", "chart_id: Field required")),
        ],
    ),
    Case(
        id="return direct with an unknown name goes back to the model",
        calls=[("1", "final_answer", '{"text": "42"}'), ("2", "nope", "{}")],
        expect=[("1", "final_answer", OK, "42"), ("2", "nope", UNKNOWN, unknown("nope"))],
    ),
    # --- limits ------------------------------------------------------------------------------
    Case(
        id="per-tool limit breached, feedback",
        calls=[
            ("1", "get_time", '{"city": "Oslo"}'),
            ("2", "get_time", '{"city": "Rome"}'),
            ("3", "get_time", '{"city": "Lima"}'),
            ("4", "ping", ""),
        ],
        manager={"limits": CallLimits(per_tool=2)},
        expect=[
            ("1", "get_time", OK, "12:00 in Oslo"),
            ("2", "get_time", OK, "12:00 in Rome"),
            ("3", "get_time", LIMIT, PER_TOOL_LIMIT_2),
            ("4", "ping", OK, "pong"),
        ],
    ),
    Case(
        id="total limit counts earlier rounds of the turn only",
        history=earlier_turn_calls("ping", "ping"),
        calls=[("1", "get_time", '{"city": "Oslo"}'), ("2", "ping", "")],
        manager={"limits": CallLimits(total=3)},
        expect=[("1", "get_time", OK, "12:00 in Oslo"), ("2", "ping", LIMIT, TOTAL_LIMIT_3)],
    ),
    Case(
        id="per-tool override and exclusion",
        calls=[("1", "get_time", '{"city": "Oslo"}'), ("2", "ping", ""), ("3", "ping", "")],
        manager={
            "limits": CallLimits(
                per_tool=0, overrides={"get_time": 1}, excluded=frozenset({"ping"})
            )
        },
        expect=[
            ("1", "get_time", OK, "12:00 in Oslo"),
            ("2", "ping", OK, "pong"),
            ("3", "ping", OK, "pong"),
        ],
    ),
    Case(
        id="limit breached, raise",
        calls=[
            ("1", "get_time", '{"city": "Oslo"}'),
            ("2", "get_time", '{"city": "Rome"}'),
            ("3", "get_time", '{"city": "Lima"}'),
        ],
        manager={"limits": CallLimits(per_tool=2, on_breach="raise")},
        raises=ToolCallLimitError,
        message="tool call limit reached: 'get_time' went over its limit of 2 calls per turn",
    ),
]


def make_prompt(case: Case) -> Prompt:
    tools = TOOLS if case.tools is None else case.tools
    history = list(case.history) or [UserMessage(text="help me")]
    return Prompt(
        messages=tuple(history), options=ChatOptions(tools=tuple(tools), tool_context=case.context)
    )


def make_response(calls: Sequence[tuple[str, str, str]]) -> ChatResponse:
    tool_calls = tuple(ToolCall(id=i, name=n, arguments=a) for i, n, a in calls)
    return ChatResponse(generations=(Generation(message=AssistantMessage(tool_calls=tool_calls)),))


def test_there_are_enough_cases() -> None:
    assert len(CASES) >= 30
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_case(case: Case) -> None:
    manager = ToolCallingManager(**case.manager)
    prompt, response = make_prompt(case), make_response(case.calls)

    if case.raises is not None:
        with pytest.raises(case.raises) as info:
            await manager.execute_tool_calls(prompt, response)
        if case.message is not None:
            assert str(info.value) == case.message
        return

    result = await manager.execute_tool_calls(prompt, response)
    got = [(o.response.id, o.response.name, o.status, o.response.data) for o in result.outcomes]
    assert got == list(case.expect)
    assert [r.is_error for r in result.responses] == [s is not OK for _, _, s, _ in case.expect]
    assert result.return_direct is case.return_direct
    assert result.conversation_history == (
        *prompt.messages,
        response.generations[0].message,
        ToolResponseMessage(responses=tuple(o.response for o in result.outcomes)),
    )
