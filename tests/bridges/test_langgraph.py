"""The LangGraph bridge, end to end: real StateGraphs, a scripted chat model that binds tools."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from tests.extras import needs_extra

pytest.importorskip("langgraph", reason=needs_extra("langgraph"))

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool as langchain_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition
from langgraph.types import Command

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
from toolrelay.bridges.langgraph import (
    ToolRelayNode,
    bound_tools,
    create_agent,
    from_langchain,
    retrieve_tools_functions,
    to_langchain,
)
from toolrelay.exceptions import ConfigurationError, ToolContextError
from toolrelay.execution import ApprovalInterceptor, Approve, Deny, ToolInvocation
from toolrelay.execution import _feedback as feedback
from toolrelay.tools import FunctionTool, ToolContext


class ScriptedChatModel(BaseChatModel):
    """Answers with one scripted step per call; notes the tools bound before each."""

    steps: list[AIMessage]
    seen: list[list[str]]

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        self.seen.append([_name(t) for t in tools])
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        calls = sum(isinstance(m, AIMessage) for m in messages)
        step = self.steps[min(calls, len(self.steps) - 1)]
        return ChatResult(generations=[ChatGeneration(message=step)])


def _name(tool: Any) -> str:
    return tool["function"]["name"] if isinstance(tool, dict) else tool.name


def calls(name: str, **arguments: Any) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": arguments, "id": f"id_{name}"}])


def config(thread: str = "t1", **context: Any) -> RunnableConfig:
    return {"configurable": {"thread_id": thread, "tool_context": context}}


def graph_of(search: BridgeSearch, model: ScriptedChatModel, **compile: Any) -> Any:
    """A hand-built ReAct graph: model node binding bound_tools, ToolRelayNode, tools_condition."""

    async def agent(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        llm = model.bind_tools(await bound_tools(search, config))
        return {"messages": [await llm.ainvoke(state["messages"], config)]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolRelayNode(search))
    builder.set_entry_point("agent")
    builder.add_conditional_edges("agent", tools_condition, path_map=["tools", END])
    builder.add_edge("tools", "agent")
    return builder.compile(**compile)


def tool_messages(state: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in state["messages"] if isinstance(m, ToolMessage)]


async def test_found_by_search_in_one_step_and_called_in_the_next() -> None:
    model = ScriptedChatModel(
        steps=[
            calls("tool_search", queries=["current weather in a city"]),
            calls("weather__current", city="Oslo"),
            AIMessage(content="Sunny."),
        ],
        seen=[],
    )
    graph = graph_of(bridge(), model)
    state = await graph.ainvoke({"messages": "Weather in Oslo?"}, config(user_id="u1"))
    assert state["messages"][-1].content == "Sunny."
    assert model.seen[0] == ["tool_search"]
    assert model.seen[1][:2] == ["tool_search", "weather__current"]
    assert tool_messages(state)[1].content == "Sunny in Oslo"
    assert RAN == [("weather.current", {"city": "Oslo", "user": "u1"})]


async def test_a_forbidden_tool_is_never_bound_nor_run() -> None:
    model = ScriptedChatModel(
        steps=[
            calls("tool_search", queries=["export payroll for a month"]),
            calls("payroll__export", month="2026-01"),
            AIMessage(content="done"),
        ],
        seen=[],
    )
    state = await graph_of(bridge(), model).ainvoke({"messages": "payroll"}, config())
    assert all("payroll__export" not in tools for tools in model.seen)
    search_answer, call_answer = (m.content for m in tool_messages(state))
    assert "payroll" not in search_answer
    assert "not available" in call_answer
    assert RAN == []


async def test_an_approval_gated_tool_interrupts_the_graph_until_approved() -> None:
    model = ScriptedChatModel(
        steps=[
            calls("tool_search", queries=["cancel an order"]),
            calls("orders__cancel", order_id="A1"),
            AIMessage(content="cancelled"),
        ],
        seen=[],
    )
    graph = graph_of(bridge(approval=ApprovalInterceptor()), model, checkpointer=InMemorySaver())
    paused = await graph.ainvoke({"messages": "cancel A1"}, config())
    [pending] = paused["__interrupt__"]
    assert pending.value["tool"] == "orders.cancel"
    assert pending.value["arguments"] == {"order_id": "A1"}
    assert RAN == []
    done = await graph.ainvoke(Command(resume=True), config())
    assert done["messages"][-1].content == "cancelled"
    assert RAN == [("orders.cancel", {"order_id": "A1"})]


async def test_a_denied_approval_does_not_run_the_tool() -> None:
    model = ScriptedChatModel(
        steps=[
            calls("tool_search", queries=["cancel an order"]),
            calls("orders__cancel", order_id="A1"),
            AIMessage(content="not cancelled"),
        ],
        seen=[],
    )
    graph = graph_of(bridge(approval=ApprovalInterceptor()), model, checkpointer=InMemorySaver())
    await graph.ainvoke({"messages": "cancel A1"}, config())
    done = await graph.ainvoke(Command(resume=False), config())
    assert tool_messages(done)[-1].status == "error"
    assert RAN == []


def test_a_catalog_with_a_tool_requiring_approval_is_refused_without_approval() -> None:
    with pytest.raises(ConfigurationError, match=r"'orders.cancel' requires approval"):
        ToolRelayNode(BridgeSearch(catalog()))
    cancel = FunctionTool.from_function(cancel_order)
    with pytest.raises(ConfigurationError, match=r"'orders.cancel' requires approval"):
        to_langchain(cancel)
    # bigtool's agent builds its search from the guard options, or takes a search with them.
    model = ScriptedChatModel(steps=[AIMessage(content="hi")], seen=[])
    registry = {"id-weather": to_langchain(FunctionTool.from_function(current_weather))}
    with pytest.raises(ConfigurationError, match="pass them to that BridgeSearch"):
        create_agent(model, registry, search=bridge(), approval=ApprovalInterceptor())


async def test_a_tool_requiring_approval_added_later_is_refused_and_never_runs() -> None:
    live = ungated_catalog()
    model = ScriptedChatModel(
        steps=[
            calls("tool_search", queries=["cancel an order"]),
            calls("orders__cancel", order_id="A1"),
            AIMessage(content="not cancelled"),
        ],
        seen=[],
    )
    graph = graph_of(BridgeSearch(live), model, checkpointer=InMemorySaver())
    RAN.clear()
    add_gated_tool(live)
    state = await graph.ainvoke({"messages": "cancel A1"}, config())
    assert "__interrupt__" not in state  # nobody is asked: nothing is configured to decide
    assert "orders__cancel" in model.seen[1]
    refused = tool_messages(state)[1]
    assert refused.content == feedback.approval_not_configured("orders.cancel")
    assert refused.status == "error"
    assert RAN == []


async def test_a_converted_tool_requiring_approval_is_decided_by_its_handler() -> None:
    cancel = FunctionTool.from_function(cancel_order)

    async def refuse(invocation: ToolInvocation) -> Approve | Deny:
        return Deny("not today")

    async def allow(invocation: ToolInvocation) -> Approve | Deny:
        return Approve()

    RAN.clear()
    assert "not today" in await to_langchain(cancel, approval=refuse).ainvoke({"order_id": "A1"})
    assert RAN == []
    assert await to_langchain(cancel, approval=allow).ainvoke({"order_id": "A1"}) == (
        "order A1 cancelled"
    )
    assert RAN == [("orders.cancel", {"order_id": "A1"})]


async def test_bigtool_create_agent_drop_in() -> None:
    registry = {
        "id-weather": to_langchain(FunctionTool.from_function(current_weather)),
        "id-stocks": _stock_quote,
    }
    model = ScriptedChatModel(
        steps=[
            calls("retrieve_tools", queries=["weather in a city"]),
            calls("weather__current", city="Rome"),
            AIMessage(content="ok"),
        ],
        seen=[],
    )
    RAN.clear()
    graph = create_agent(model, registry).compile()
    state = await graph.ainvoke({"messages": "weather?"}, config(user_id="u2"))
    assert state["selected_tool_ids"] == ["id-weather"]
    assert model.seen[0] == ["retrieve_tools"]
    assert "weather__current" in model.seen[1]
    assert tool_messages(state)[1].content == "Sunny in Rome"
    assert RAN == [("weather.current", {"city": "Rome", "user": "u2"})]


def test_bigtool_create_agent_runs_synchronously_too() -> None:
    registry = {"id-weather": to_langchain(FunctionTool.from_function(current_weather))}
    model = ScriptedChatModel(
        steps=[
            calls("retrieve_tools", queries=["weather in a city"]),
            calls("weather__current", city="Rome"),
            AIMessage(content="ok"),
        ],
        seen=[],
    )
    RAN.clear()
    graph = create_agent(model, registry).compile()
    state = graph.invoke({"messages": "weather?"}, config(user_id="u3"))
    assert state["messages"][-1].content == "ok"
    assert RAN == [("weather.current", {"city": "Rome", "user": "u3"})]


def test_the_node_as_a_runnable_runs_in_a_synchronous_graph() -> None:
    from toolrelay._sync import run_sync

    search = bridge()
    model = ScriptedChatModel(
        steps=[
            calls("tool_search", queries=["current weather in a city"]),
            calls("weather__current", city="Oslo"),
            AIMessage(content="Sunny."),
        ],
        seen=[],
    )

    def agent(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        llm = model.bind_tools(run_sync(bound_tools(search, config)))
        return {"messages": [llm.invoke(state["messages"], config)]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolRelayNode(search).as_runnable())
    builder.set_entry_point("agent")
    builder.add_conditional_edges("agent", tools_condition, path_map=["tools", END])
    builder.add_edge("tools", "agent")
    state = builder.compile().invoke({"messages": "Weather?"}, config(user_id="u1"))
    assert tool_messages(state)[1].content == "Sunny in Oslo"
    assert RAN == [("weather.current", {"city": "Oslo", "user": "u1"})]


@langchain_tool
def _stock_quote(symbol: str) -> str:
    """The latest stock price quote for a ticker symbol."""
    return f"{symbol}: 1"


async def test_retrieval_functions_for_bigtools_own_agent() -> None:
    bigtool = pytest.importorskip("langgraph_bigtool", reason=needs_extra("langgraph"))
    tools = [to_langchain(FunctionTool.from_function(current_weather)), _stock_quote]
    registry = {f"id-{i}": t for i, t in enumerate(tools)}
    search = BridgeSearch(from_langchain(tools))
    function, coroutine = retrieve_tools_functions(search, registry)
    model = ScriptedChatModel(
        steps=[calls("retrieve_tools", query="stock price quote"), AIMessage(content="ok")],
        seen=[],
    )
    graph = bigtool.create_agent(
        model, registry, retrieve_tools_function=function, retrieve_tools_coroutine=coroutine
    ).compile(store=None)
    state = await graph.ainvoke({"messages": "quote?"}, config())
    assert state["selected_tool_ids"] == ["id-1"]
    assert function("weather in a city", config()) == ["id-0"]


async def test_to_langchain_keeps_definition_and_maps_the_config() -> None:
    weather = FunctionTool.from_function(current_weather)
    converted = to_langchain(weather)
    assert converted.name == "weather__current"
    assert converted.description == weather.definition.description
    [back] = from_langchain(converted)
    assert dict(back.definition.input_schema) == dict(weather.definition.input_schema)
    RAN.clear()
    text = await converted.ainvoke({"city": "Oslo"}, config(user_id="u4"))
    assert text == "Sunny in Oslo"
    assert RAN == [("weather.current", {"city": "Oslo", "user": "u4"})]
    wrong = await converted.ainvoke({"town": "Oslo"}, config(user_id="u4"))
    assert "city" in wrong  # invalid arguments are feedback, not an exception
    # The tool takes a ToolContext: a call without one is refused before it runs.
    with pytest.raises(ToolContextError, match=r"'weather\.current'"):
        await converted.ainvoke({"city": "Oslo"}, config())
    assert len(RAN) == 1


async def test_a_keyed_tool_converted_twice_never_runs_a_refund_twice() -> None:
    keyed = FunctionTool.from_function(refund)
    first_audit, second_audit = AuditRecords(), AuditRecords()
    # Two conversions, two managers: both keep keys in the process's store.
    first = to_langchain(keyed, audit=first_audit)
    second = to_langchain(keyed, audit=second_audit)
    RAN.clear()
    done = await first.ainvoke({"order_id": 7}, config(user_id="clerk"))
    again = await second.ainvoke({"order_id": 7}, config(user_id="clerk"))
    plain = await to_langchain(keyed).ainvoke({"order_id": 7}, config(user_id="clerk"))
    assert done == "refunded order 7"
    assert again.endswith(done)  # the recorded result,
    assert again != done  # marked as such
    assert plain == again
    assert RAN == [("billing.refund", {"order_id": 7})]
    assert [r.replayed for r in first_audit.records + second_audit.records] == [False, True]
    # The key is kept per caller: another clerk's refund of order 7 is their own.
    await second.ainvoke({"order_id": 7}, config(user_id="other clerk"))
    assert len(RAN) == 2
    with pytest.raises(ToolContextError, match=r"'billing\.refund'"):  # a key names its caller
        await first.ainvoke({"order_id": 8}, config())
    assert len(RAN) == 2


async def test_from_langchain_passes_the_tool_context_in_the_config() -> None:
    @langchain_tool
    def whoami(greeting: str, config: RunnableConfig) -> str:
        """Greet the current user."""
        return f"{greeting} {config['configurable']['tool_context']['user_id']}"

    [converted] = from_langchain([whoami])
    assert converted.definition.name == "whoami"
    assert converted.definition.description == "Greet the current user."
    assert set(converted.definition.input_schema["properties"]) == {"greeting"}
    text = await converted.call(json.dumps({"greeting": "hi"}), ToolContext(user_id="u1"))
    assert text == "hi u1"


async def test_arguments_nested_5000_levels_deep_are_feedback() -> None:
    search = bridge()
    node = ToolRelayNode(search)
    deep: dict[str, Any] = {}
    for _ in range(5_000):
        deep = {"a": deep}
    found = await node([calls("tool_search", queries=["current weather in a city"])], config())
    assert "weather__current" in found["messages"][0].content
    for name in ("tool_search", "weather__current"):
        answer = await node([calls(name, **deep)], config(user_id="u1"))
        [message] = answer["messages"]
        assert message.status == "error"
        assert "nested too deeply" in message.content
    assert RAN == []


async def test_a_thread_is_required() -> None:
    from toolrelay.exceptions import ConfigurationError

    with pytest.raises(ConfigurationError, match="thread_id"):
        await bound_tools(bridge(), {"configurable": {}})
