"""The pydantic-ai bridge, end to end with pydantic-ai's own FunctionModel and TestModel."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.extras import needs_extra

pytest.importorskip("pydantic_ai", reason=needs_extra("pydantic-ai"))

from pydantic_ai import (
    Agent,
    DeferredToolRequests,
    DeferredToolResults,
    FunctionToolset,
    RunContext,
)
from pydantic_ai import Tool as PydanticTool
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from tests.bridges._catalog import (
    RAN,
    AuditRecords,
    add_gated_tool,
    bridge,
    cancel_order,
    catalog,
    current_weather,
    refund,
    ungated_catalog,
)
from toolrelay.bridges import BridgeSearch
from toolrelay.bridges.pydantic_ai import (
    ToolSearchToolset,
    from_pydantic_ai,
    to_pydantic_ai,
)
from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import ApprovalInterceptor, Approve, Deny, ToolInvocation
from toolrelay.execution import _feedback as feedback
from toolrelay.tools import FunctionTool, ToolContext
from toolrelay.tools._base import call_sync


def returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    return [
        part
        for message in messages
        for part in getattr(message, "parts", ())
        if isinstance(part, ToolReturnPart)
    ]


def scripted(*steps: tuple[str, dict[str, Any]] | str, seen: list[list[str]]) -> FunctionModel:
    """A model taking one scripted step per request, noting the tools each request offered."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append([t.name for t in info.function_tools])
        step = steps[min(len(seen), len(steps)) - 1]
        if isinstance(step, str):
            return ModelResponse(parts=[TextPart(step)])
        name, arguments = step
        return ModelResponse(parts=[ToolCallPart(name, json.dumps(arguments))])

    return FunctionModel(model)


async def test_found_by_search_in_one_step_and_called_in_the_next() -> None:
    seen: list[list[str]] = []
    model = scripted(
        ("tool_search", {"query": "current weather in a city"}),
        ("weather__current", {"city": "Oslo"}),
        "It is sunny.",
        seen=seen,
    )
    agent = Agent(model, toolsets=[ToolSearchToolset(bridge())])
    result = await agent.run("Weather in Oslo?", deps={"user_id": "u7"}, conversation_id="c1")
    assert result.output == "It is sunny."
    assert seen[0] == ["tool_search"]
    assert seen[1][:2] == ["tool_search", "weather__current"]
    answers = [part.content for part in returns(result.all_messages())]
    assert answers[1] == "Sunny in Oslo"
    assert RAN == [("weather.current", {"city": "Oslo", "user": "u7"})]  # deps -> ToolContext


async def test_the_instructions_say_how_to_find_tools() -> None:
    instructions: list[str | None] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        instructions.append(info.instructions)
        return ModelResponse(parts=[TextPart("hi")])

    await Agent(FunctionModel(model), toolsets=[ToolSearchToolset(bridge())]).run(
        "hi", conversation_id="c1"
    )
    assert instructions == ["Most tools are hidden; find them with tool_search."]


async def test_discoveries_persist_for_the_conversation() -> None:
    search = bridge()
    first: list[list[str]] = []
    agent = Agent(
        scripted(("tool_search", {"query": "stock price quote"}), "ok", seen=first),
        toolsets=[ToolSearchToolset(search)],
    )
    await agent.run("quote?", conversation_id="c1")
    later: list[list[str]] = []
    again = Agent(scripted("done", seen=later), toolsets=[ToolSearchToolset(search)])
    await again.run("and now?", conversation_id="c1")
    assert "stocks__quote" in later[0]
    other: list[list[str]] = []
    await Agent(scripted("done", seen=other), toolsets=[ToolSearchToolset(search)]).run(
        "hi", conversation_id="c2"
    )
    assert other[0] == ["tool_search"]


async def test_a_forbidden_tool_is_never_shown_nor_run() -> None:
    seen: list[list[str]] = []
    model = scripted(
        ("tool_search", {"query": "export payroll for a month"}),
        ("payroll__export", {"month": "2026-01"}),
        "done",
        seen=seen,
    )
    agent = Agent(model, toolsets=[ToolSearchToolset(bridge())])
    result = await agent.run("payroll", deps={"role": "staff"}, conversation_id="c1")
    assert all("payroll__export" not in tools for tools in seen)
    search_answer = returns(result.all_messages())[0].content
    assert "payroll" not in search_answer
    # pydantic-ai answers a name its toolsets do not list as unknown: the model learns nothing.
    assert RAN == []


async def test_an_approval_gated_tool_pauses_the_run_until_approved() -> None:
    search = bridge(approval=ApprovalInterceptor())
    seen: list[list[str]] = []
    model = scripted(
        ("tool_search", {"query": "cancel an order"}),
        ("orders__cancel", {"order_id": "A1"}),
        "cancelled",
        seen=seen,
    )
    agent = Agent(
        model, toolsets=[ToolSearchToolset(search)], output_type=[str, DeferredToolRequests]
    )
    paused = await agent.run("cancel A1", conversation_id="c1")
    assert isinstance(paused.output, DeferredToolRequests)
    [request] = paused.output.approvals
    assert request.tool_name == "orders__cancel"
    assert RAN == []
    resumed = await agent.run(
        message_history=paused.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={request.tool_call_id: True}),
        conversation_id="c1",
    )
    assert resumed.output == "cancelled"
    assert RAN == [("orders.cancel", {"order_id": "A1"})]


def test_a_catalog_with_a_tool_requiring_approval_is_refused_without_approval() -> None:
    with pytest.raises(ConfigurationError, match=r"'orders.cancel' requires approval"):
        ToolSearchToolset(BridgeSearch(catalog()))
    with pytest.raises(ConfigurationError, match=r"'orders.cancel' requires approval"):
        to_pydantic_ai(FunctionTool.from_function(cancel_order))


async def test_a_tool_requiring_approval_added_later_is_refused_and_never_runs() -> None:
    live = ungated_catalog()
    toolset = ToolSearchToolset(BridgeSearch(live))
    RAN.clear()
    add_gated_tool(live)
    seen: list[list[str]] = []
    model = scripted(
        ("tool_search", {"query": "cancel an order"}),
        ("orders__cancel", {"order_id": "A1"}),
        "not cancelled",
        seen=seen,
    )
    result = await Agent(model, toolsets=[toolset]).run("cancel A1", conversation_id="c1")
    assert "orders__cancel" in seen[1]
    assert returns(result.all_messages())[1].content == feedback.approval_not_configured(
        "orders.cancel"
    )
    assert RAN == []


async def test_a_converted_tool_requiring_approval_is_decided_as_configured() -> None:
    cancel = FunctionTool.from_function(cancel_order)
    # A person decides through pydantic-ai: it defers the call until they approve it.
    paused = to_pydantic_ai(cancel, approval=ApprovalInterceptor())
    assert paused.requires_approval
    agent = Agent(
        TestModel(call_tools=["orders__cancel"]),
        tools=[paused],
        output_type=[str, DeferredToolRequests],
    )
    RAN.clear()
    first = await agent.run("cancel")
    assert isinstance(first.output, DeferredToolRequests)
    [request] = first.output.approvals
    assert RAN == []
    await agent.run(
        message_history=first.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={request.tool_call_id: True}),
    )
    assert RAN == [("orders.cancel", {"order_id": "a"})]

    # A handler decides in toolrelay: pydantic-ai runs the call, the handler refuses it.
    async def refuse(invocation: ToolInvocation) -> Approve | Deny:
        return Deny("not today")

    decided = to_pydantic_ai(cancel, approval=refuse)
    assert not decided.requires_approval
    RAN.clear()
    result = await Agent(TestModel(call_tools=["orders__cancel"]), tools=[decided]).run("c")
    assert "not today" in returns(result.all_messages())[0].content
    assert RAN == []


async def test_invalid_arguments_are_feedback_to_the_model() -> None:
    seen: list[list[str]] = []
    model = scripted(
        ("tool_search", {"query": "weather in a city"}),
        ("weather__current", {"town": "Oslo"}),
        "sorry",
        seen=seen,
    )
    result = await Agent(model, toolsets=[ToolSearchToolset(bridge())]).run(
        "w", deps={"user_id": "u1"}, conversation_id="c1"
    )
    assert "city" in returns(result.all_messages())[1].content
    assert RAN == []


async def test_test_model_calls_every_tool_it_is_shown() -> None:
    agent = Agent(TestModel(call_tools=["tool_search"]), toolsets=[ToolSearchToolset(bridge())])
    result = await agent.run("anything", conversation_id="c1")
    [answer] = returns(result.all_messages())
    assert answer.tool_name == "tool_search"
    assert isinstance(json.loads(answer.content), list)


async def test_to_pydantic_ai_keeps_name_description_schema_and_maps_deps() -> None:
    weather = FunctionTool.from_function(current_weather)
    converted = to_pydantic_ai(weather)
    tool_def = converted.tool_def
    assert tool_def.name == "weather__current"
    assert tool_def.description == weather.definition.description
    assert tool_def.parameters_json_schema == dict(weather.definition.input_schema)
    model = TestModel(call_tools=["weather__current"], custom_output_text="done")
    RAN.clear()
    await Agent(model, tools=[converted]).run("w", deps=ToolContext(user_id="u3"))
    assert RAN == [("weather.current", {"city": "a", "user": "u3"})]


async def test_a_keyed_tool_converted_twice_never_runs_a_refund_twice() -> None:
    keyed = FunctionTool.from_function(refund)
    first_audit, second_audit = AuditRecords(), AuditRecords()
    answers = []
    RAN.clear()
    # Two conversions, two managers: both keep keys in the process's store.
    for converted in (
        to_pydantic_ai(keyed, audit=first_audit),
        to_pydantic_ai(keyed, audit=second_audit),
    ):
        model = scripted(("billing__refund", {"order_id": 7}), "done", seen=[])
        result = await Agent(model, tools=[converted]).run("refund 7", deps={"user_id": "clerk"})
        answers.append(returns(result.all_messages())[0].content)
    done, again = answers
    assert done == "refunded order 7"
    assert again.endswith(done)  # the recorded result,
    assert again != done  # marked as such
    assert RAN == [("billing.refund", {"order_id": 7})]
    assert [r.replayed for r in first_audit.records + second_audit.records] == [False, True]


async def test_from_pydantic_ai_runs_with_the_tool_context_as_deps() -> None:
    def discount(ctx: RunContext[ToolContext], percent: int) -> str:
        """Apply a discount to the customer's basket.

        Args:
            percent: How many percent off.
        """
        return f"{percent}% off for {ctx.deps.user_id}"

    original = PydanticTool(discount, requires_approval=True)
    [converted] = from_pydantic_ai(FunctionToolset([original]))
    assert converted.definition.name == "discount"
    assert converted.definition.description == original.tool_def.description
    assert dict(converted.definition.input_schema) == original.tool_def.parameters_json_schema
    assert converted.metadata.requires_approval
    text = await converted.call('{"percent": 5}', ToolContext(user_id="u1"))
    assert text == "5% off for u1"


def test_round_trip_keeps_the_definition() -> None:
    weather = FunctionTool.from_function(current_weather)
    [back] = from_pydantic_ai(to_pydantic_ai(weather))
    assert back.definition.name == "weather__current"
    assert back.definition.description == weather.definition.description
    assert dict(back.definition.input_schema) == dict(weather.definition.input_schema)
    RAN.clear()
    assert call_sync(back, '{"city": "Oslo"}', ToolContext(user_id="u5")) == "Sunny in Oslo"
    assert RAN == [("weather.current", {"city": "Oslo", "user": "u5"})]
