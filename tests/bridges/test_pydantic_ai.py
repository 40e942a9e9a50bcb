"""The pydantic-ai bridge, end to end with pydantic-ai's own FunctionModel and TestModel.

And on the wire of Anthropic's Messages API (a scripted server): the tools of every request
the same, what a search found revealed by reference.
"""

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
    ToolDefinition,
)
from pydantic_ai import Tool as PydanticTool
from pydantic_ai.capabilities import ToolSearch
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    ToolSearchReturnPart,
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
    ToolSearchCapability,
    from_pydantic_ai,
    to_pydantic_ai,
)
from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import ApprovalInterceptor, Approve, Deny, ToolInvocation
from toolrelay.execution import _feedback as feedback
from toolrelay.tools import FunctionTool, ToolContext, tool
from toolrelay.tools._base import call_sync
from toolrelay.toolsearch import CHINESE, SearchOptions

SEARCH = ToolSearch.function_tool_name  # pydantic-ai's search tool: "search_tools"


def returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    """The answers of the tool calls, searches left out."""
    return [
        part
        for message in messages
        for part in getattr(message, "parts", ())
        if isinstance(part, ToolReturnPart) and not isinstance(part, ToolSearchReturnPart)
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


def search(*queries: str) -> tuple[str, dict[str, Any]]:
    """A call of pydantic-ai's search tool."""
    return (SEARCH, {"queries": list(queries)})


def found(messages: list[ModelMessage]) -> list[list[str]]:
    """What each search of pydantic-ai's tool-search channel revealed, in order."""
    return [
        [match["name"] for match in part.content["discovered_tools"]]
        for message in messages
        for part in getattr(message, "parts", ())
        if isinstance(part, ToolSearchReturnPart)
    ]


async def test_a_found_tool_reaches_the_model_through_the_tool_search_channel() -> None:
    seen: list[list[str]] = []
    model = scripted(
        search("current weather in a city"),
        ("weather__current", {"city": "Oslo"}),
        "It is sunny.",
        seen=seen,
    )
    agent = Agent(model, capabilities=[ToolSearchCapability(bridge())])
    result = await agent.run("Weather in Oslo?", deps={"user_id": "u7"}, conversation_id="c1")
    assert result.output == "It is sunny."
    assert seen[0] == [SEARCH]  # every catalog tool deferred
    assert found(result.all_messages()) == [["weather__current"]]
    assert "weather__current" in seen[1]
    assert returns(result.all_messages())[0].content == "Sunny in Oslo"
    assert RAN == [("weather.current", {"city": "Oslo", "user": "u7"})]  # deps -> ToolContext


async def test_anthropic_keeps_the_tools_and_reveals_by_reference() -> None:
    """On Anthropic the request's tools never change: found tools are referenced in the history."""
    pytest.importorskip("anthropic", reason=needs_extra("anthropic"))
    from anthropic import AsyncAnthropic
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    from tests.models._wire import MockServer, anthropic_sse

    def step(block: dict[str, Any], stop: str) -> Any:
        delta = (
            {"type": "input_json_delta", "partial_json": json.dumps(block.pop("input"))}
            if block["type"] == "tool_use"
            else {"type": "text_delta", "text": block.pop("text")}
        )
        empty = {"input": {}} if block["type"] == "tool_use" else {"text": ""}
        return anthropic_sse(
            {
                "type": "message_start",
                "message": {
                    "id": "msg",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-6",
                    "content": [],
                    "stop_reason": None,
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                },
            },
            {"type": "content_block_start", "index": 0, "content_block": block | empty},
            {"type": "content_block_delta", "index": 0, "delta": delta},
            {"type": "content_block_stop", "index": 0},
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop},
                "usage": {"output_tokens": 1},
            },
            {"type": "message_stop"},
        )

    def tool_use(call_id: str, name: str, arguments: dict[str, Any]) -> Any:
        block = {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
        return step(block, "tool_use")

    server = MockServer(
        tool_use("t1", SEARCH, {"queries": ["current weather in a city"]}),
        tool_use("t2", "weather__current", {"city": "Oslo"}),
        tool_use("t3", SEARCH, {"queries": ["latest stock price quote"]}),
        step({"type": "text", "text": "Sunny."}, "end_turn"),
    )
    client = AsyncAnthropic(api_key="test", http_client=server.http_client())
    model = AnthropicModel("claude-sonnet-4-6", provider=AnthropicProvider(anthropic_client=client))
    agent = Agent(model, capabilities=[ToolSearchCapability(bridge())])
    result = await agent.run("Weather?", deps={"role": "staff"}, conversation_id="c1")
    assert result.output == "Sunny."
    tools = [body["tools"] for body in server.bodies]
    assert all(listed == tools[0] for listed in tools)  # the cached prefix is kept
    assert {t["name"]: t.get("defer_loading") for t in tools[0]} == {
        "weather__current": True,
        "orders__cancel": True,
        "calendar__create_event": True,
        "stocks__quote": True,
        SEARCH: None,
    }  # payroll is hidden from staff: never listed, not even deferred
    references = [
        block["content"]
        for body in server.bodies[1:]
        for message in body["messages"][-1:]
        for block in message["content"]
        if block.get("type") == "tool_result" and block["content"][0]["type"] == "tool_reference"
    ]
    assert references == [
        [{"type": "tool_reference", "tool_name": "weather__current"}],
        [{"type": "tool_reference", "tool_name": "stocks__quote"}],
    ]
    assert RAN == [("weather.current", {"city": "Oslo", "user": None})]


async def test_the_instructions_name_the_search_tool() -> None:
    instructions: list[str | None] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        instructions.append(info.instructions)
        return ModelResponse(parts=[TextPart("hi")])

    capability = ToolSearchCapability(bridge())
    await Agent(FunctionModel(model), capabilities=[capability]).run("hi", conversation_id="c1")
    assert instructions == [f"Most tools are hidden; find them with {SEARCH}."]


async def test_the_search_tool_speaks_the_catalogs_language() -> None:
    @tool(name="weather.now")
    def now(city: str) -> str:
        """查询城市的当前天气情况。

        Args:
            city: 城市名称。
        """
        return "晴"

    seen: list[tuple[str | None, list[ToolDefinition]]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append((info.instructions, info.function_tools))
        return ModelResponse(parts=[TextPart("好")])

    capability = ToolSearchCapability(BridgeSearch([now]))
    await Agent(FunctionModel(model), capabilities=[capability]).run("天气", conversation_id="c1")
    [(instructions, [searcher])] = seen
    assert CHINESE.system_suffix is not None
    assert instructions == CHINESE.system_suffix.replace("tool_search", SEARCH)
    assert searcher.description == CHINESE.description
    assert (
        searcher.parameters_json_schema["properties"]["queries"]["description"]
        == (CHINESE.parameters["queries"])
    )


async def test_a_second_search_accumulates() -> None:
    search_ = bridge()
    seen: list[list[str]] = []
    model = scripted(
        search("current weather in a city"),
        search("latest stock price quote"),
        ("stocks__quote", {"symbol": "ACME"}),
        ("weather__current", {"city": "Oslo"}),
        "done",
        seen=seen,
    )
    agent = Agent(model, capabilities=[ToolSearchCapability(search_)])
    result = await agent.run("both", deps={"user_id": "u1"}, conversation_id="c1")
    assert found(result.all_messages()) == [["weather__current"], ["stocks__quote"]]
    assert {"weather__current", "stocks__quote"} <= set(seen[2])
    assert [part.content for part in returns(result.all_messages())] == [
        "ACME: 42.0",
        "Sunny in Oslo",
    ]
    assert (await search_.session_store.get("c1")).names == ("weather.current", "stocks.quote")


async def test_each_of_pydantic_ais_queries_is_its_own_search() -> None:
    # One hit per search: joined into one query, the two needs would find one tool.
    search_ = BridgeSearch(
        catalog(), options=SearchOptions(max_results=1), approval=ApprovalInterceptor()
    )
    model = scripted(
        search("current weather in a city", "latest stock price quote"),
        ("stocks__quote", {"symbol": "ACME"}),
        "done",
        seen=[],
    )
    agent = Agent(model, capabilities=[ToolSearchCapability(search_)])
    result = await agent.run("both", deps={"user_id": "u1"}, conversation_id="c1")
    # One call, two needs: each query finds its own tool (joined, they found one or none).
    assert sorted(found(result.all_messages())[0]) == ["stocks__quote", "weather__current"]
    assert returns(result.all_messages())[0].content == "ACME: 42.0"


async def test_discoveries_persist_for_the_conversation() -> None:
    search_ = bridge()
    capability = ToolSearchCapability(search_)
    first: list[list[str]] = []
    model = scripted(search("stock price quote"), "ok", seen=first)
    agent = Agent(model, capabilities=[capability])
    await agent.run("quote?", conversation_id="c1")
    # A later run without the history: the stored discovery is an ordinary tool from the start.
    later: list[list[str]] = []
    again = Agent(
        scripted(("stocks__quote", {"symbol": "ACME"}), "done", seen=later),
        capabilities=[capability],
    )
    result = await again.run("and now?", conversation_id="c1")
    assert later[0] == ["stocks__quote", SEARCH]
    assert later[1] == later[0]
    assert returns(result.all_messages())[0].content == "ACME: 42.0"
    other: list[list[str]] = []
    await Agent(scripted("done", seen=other), capabilities=[capability]).run(
        "hi", conversation_id="c2"
    )
    assert other[0] == [SEARCH]


async def test_a_discovery_the_history_holds_is_kept_in_the_session_store() -> None:
    seen: list[list[str]] = []
    model = scripted(search("stock price quote"), "ok", seen=seen)
    first = await Agent(model, capabilities=[ToolSearchCapability(bridge())]).run(
        "quote?", conversation_id="c1"
    )
    # Another bridge (an empty store): the history's discovery stays callable.
    fresh = bridge()
    model = scripted(("stocks__quote", {"symbol": "ACME"}), "done", seen=[])
    result = await Agent(model, capabilities=[ToolSearchCapability(fresh)]).run(
        "again", message_history=first.all_messages(), conversation_id="c1"
    )
    assert returns(result.all_messages())[-1].content == "ACME: 42.0"
    assert (await fresh.session_store.get("c1")).names == ("stocks.quote",)


async def test_a_forbidden_tool_is_never_offered_nor_run() -> None:
    seen: list[list[str]] = []
    corpus: list[list[str]] = []
    model = scripted(
        search("export payroll for a month"),
        ("payroll__export", {"month": "2026-01"}),
        "done",
        seen=seen,
    )
    capability = ToolSearchCapability(bridge())
    listed = capability.toolset.get_tools

    async def get_tools(ctx: RunContext[Any]) -> Any:
        tools = await listed(ctx)
        corpus.append(list(tools))
        return tools

    capability.toolset.get_tools = get_tools  # type: ignore[method-assign]
    result = await Agent(model, capabilities=[capability]).run(
        "payroll", deps={"role": "staff"}, conversation_id="c1"
    )
    assert corpus
    assert all("payroll__export" not in tools for tools in corpus)
    assert "weather__current" in corpus[0]
    assert all("payroll__export" not in tools for tools in seen)
    assert "payroll__export" not in str(found(result.all_messages()))
    # pydantic-ai answers a name it does not list as unknown: the model learns nothing.
    assert RAN == []


async def test_an_approval_gated_tool_pauses_the_run_until_approved() -> None:
    seen: list[list[str]] = []
    model = scripted(
        search("cancel an order"),
        ("orders__cancel", {"order_id": "A1"}),
        "cancelled",
        seen=seen,
    )
    capability = ToolSearchCapability(bridge(approval=ApprovalInterceptor()))
    agent = Agent(model, capabilities=[capability], output_type=[str, DeferredToolRequests])
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
        ToolSearchCapability(BridgeSearch(catalog()))
    with pytest.raises(ConfigurationError, match=r"'orders.cancel' requires approval"):
        to_pydantic_ai(FunctionTool.from_function(cancel_order))


async def test_a_tool_requiring_approval_added_later_is_refused_and_never_runs() -> None:
    live = ungated_catalog()
    capability = ToolSearchCapability(BridgeSearch(live))
    RAN.clear()
    add_gated_tool(live)
    seen: list[list[str]] = []
    model = scripted(
        search("cancel an order"),
        ("orders__cancel", {"order_id": "A1"}),
        "not cancelled",
        seen=seen,
    )
    result = await Agent(model, capabilities=[capability]).run("cancel A1", conversation_id="c1")
    assert "orders__cancel" in seen[1]
    assert returns(result.all_messages())[0].content == feedback.approval_not_configured(
        "orders.cancel"
    )
    assert RAN == []


async def test_the_agents_own_deferred_tools_are_refused() -> None:
    def note(text: str) -> str:
        """Keep a note."""
        return text

    agent = Agent(
        scripted(search("note"), "done", seen=[]),
        tools=[PydanticTool(note, defer_loading=True)],
        capabilities=[ToolSearchCapability(bridge())],
    )
    with pytest.raises(ConfigurationError, match=r"\['note'\] are marked defer_loading"):
        await agent.run("note", conversation_id="c1")


async def test_a_run_without_a_conversation_is_refused() -> None:
    capability = ToolSearchCapability(bridge(), conversation=lambda ctx: None)
    agent = Agent(scripted("hi", seen=[]), capabilities=[capability])
    with pytest.raises(ConfigurationError, match="conversation_id="):
        await agent.run("hi")


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
        search("weather in a city"),
        ("weather__current", {"town": "Oslo"}),
        "sorry",
        seen=seen,
    )
    result = await Agent(model, capabilities=[ToolSearchCapability(bridge())]).run(
        "w", deps={"user_id": "u1"}, conversation_id="c1"
    )
    assert "city" in returns(result.all_messages())[0].content
    assert RAN == []


async def test_a_search_toolrelay_refuses_is_feedback_to_the_model() -> None:
    model = scripted(search("weather " * 200), "sorry", seen=[])
    result = await Agent(model, capabilities=[ToolSearchCapability(bridge())]).run(
        "w", conversation_id="c1"
    )
    # The model is asked to retry (a retry prompt, or a return marked retried).
    [retry] = [
        part
        for message in result.all_messages()
        for part in getattr(message, "parts", ())
        if isinstance(part, RetryPromptPart | ToolReturnPart) and part.tool_name == SEARCH
    ]
    assert "at most 1000 characters" in str(retry.content)
    # Named as the model knows its search tool (pydantic-ai's name), never toolrelay's.
    assert SEARCH in str(retry.content)
    assert "tool_search" not in str(retry.content)
    assert found(result.all_messages()) == []


async def test_test_model_calls_every_tool_it_is_shown() -> None:
    agent = Agent(TestModel(call_tools=[SEARCH]), capabilities=[ToolSearchCapability(bridge())])
    result = await agent.run("anything", conversation_id="c1")
    assert len(found(result.all_messages())) == 1


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
