"""Whatever names and argument text a model sends, the manager answers or raises as documented."""

from __future__ import annotations

import json
from typing import Any, Literal

from hypothesis import given
from hypothesis import strategies as st

from toolrelay.exceptions import ToolArgumentError, ToolCallLimitError, ToolNotFoundError
from toolrelay.execution import CallLimits, ToolCallingManager, ToolCallStatus, ToolExecutionResult
from toolrelay.execution._resolution import closest_names, match_tool_name
from toolrelay.messages import (
    AssistantMessage,
    ChatResponse,
    Generation,
    ToolCall,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.tools import FunctionTool, tool


@tool
def get_weather(city: str, unit: Literal["c", "f"] = "c") -> dict[str, Any]:
    """Current weather for a city."""
    return {"city": city, "unit": unit}


@tool(name="refund.find_failed_orders")
def find_failed_orders(customer_id: str, limit: int = 10) -> list[str]:
    """Failed orders of a customer."""
    return [customer_id] * min(limit, 3)


@tool
def parse_date(text: str) -> str:
    """Always fails."""
    raise ValueError(f"cannot parse {text!r}")


@tool
def ping() -> str:
    """No arguments."""
    return "pong"


@tool(return_direct=True)
def final_answer(text: str) -> str:
    """Returned to the user as is."""
    return text


TOOLS = tuple(
    FunctionTool.from_function(f)
    for f in (get_weather, find_failed_orders, parse_date, ping, final_answer)
)
RETURN_DIRECT = {"final_answer"}
NAMES = [t.definition.name for t in TOOLS]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)
argument_texts = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", " ", "{", "[]", "null", '"x"', '{"city": "Paris"}', '{"text": "t"}']),
    st.dictionaries(
        st.sampled_from(["city", "unit", "customer_id", "limit", "text", "extra"]),
        json_values,
        max_size=4,
    ).map(json.dumps),
    json_values.map(json.dumps),
)
call_names = st.one_of(
    st.sampled_from(
        [*NAMES, "getWeather", "refund__find_failed_orders", "PING", "getWether", "final-answer"]
    ),
    st.text(max_size=20),
)
calls = st.lists(
    st.builds(ToolCall, id=st.text(max_size=4), name=call_names, arguments=argument_texts),
    min_size=1,
    max_size=6,
)
policies = st.sampled_from(["feedback", "unknown-raise", "invalid-raise", "limit-raise"])


def make_manager(policy: str) -> ToolCallingManager:
    small = CallLimits(per_tool=2, total=4)
    match policy:
        case "unknown-raise":
            return ToolCallingManager(unknown_tool="raise")
        case "invalid-raise":
            return ToolCallingManager(invalid_arguments="raise")
        case "limit-raise":
            return ToolCallingManager(limits=CallLimits(per_tool=2, total=4, on_breach="raise"))
        case _:
            return ToolCallingManager(limits=small)


def check_result(result: ToolExecutionResult, tool_calls: list[ToolCall]) -> None:
    assert len(result.outcomes) == len(tool_calls)
    last = result.conversation_history[-1]
    assert isinstance(last, ToolResponseMessage)
    assert last.responses == tuple(o.response for o in result.outcomes)
    for call, outcome in zip(tool_calls, result.outcomes, strict=True):
        assert outcome.call == call
        assert outcome.response.id == call.id
        assert isinstance(outcome.status, ToolCallStatus)
        assert outcome.response.is_error is (outcome.status is not ToolCallStatus.OK)
        assert isinstance(outcome.response.data, str)
        if outcome.tool_name is None:
            assert outcome.status is ToolCallStatus.UNKNOWN_TOOL
            assert outcome.response.name == call.name
        else:
            assert outcome.tool_name in NAMES
            assert outcome.response.name == outcome.tool_name
    expected_direct = all(o.ok and o.tool_name in RETURN_DIRECT for o in result.outcomes)
    assert result.return_direct is expected_direct


@given(tool_calls=calls, policy=policies)
def test_only_tool_responses_or_documented_errors(tool_calls: list[ToolCall], policy: str) -> None:
    manager = make_manager(policy)
    prompt = Prompt(messages=(UserMessage(text="q"),), options=ChatOptions(tools=TOOLS))
    response = ChatResponse(
        generations=(Generation(message=AssistantMessage(tool_calls=tuple(tool_calls))),)
    )
    documented = (ToolNotFoundError, ToolArgumentError, ToolCallLimitError)
    error: Exception | None = None
    try:
        result = manager.execute_tool_calls_sync(prompt, response)
    except documented as exc:
        error = exc

    match error:
        case None:
            check_result(result, tool_calls)
        case ToolNotFoundError():
            assert policy == "unknown-raise"
            assert error.name in {c.name for c in tool_calls}
            assert len(error.suggestions) <= 5
        case ToolArgumentError():
            assert policy == "invalid-raise"
            assert error.tool in NAMES
            assert error.problems
        case ToolCallLimitError():
            assert policy == "limit-raise"
            assert isinstance(error.partial, ToolExecutionResult)
            check_result(error.partial, tool_calls)
            assert any(o.status is ToolCallStatus.LIMIT for o in error.partial.outcomes)


@given(name=st.text(max_size=30), candidates=st.lists(st.text(max_size=20), max_size=12))
def test_name_matching_only_returns_candidates(name: str, candidates: list[str]) -> None:
    match = match_tool_name(name, candidates)
    assert match is None or match in candidates
    suggestions = closest_names(name, candidates)
    assert len(suggestions) <= 5
    assert len(set(suggestions)) == len(suggestions)
    assert set(suggestions) <= set(candidates)
