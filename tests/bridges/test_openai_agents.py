"""The OpenAI Agents SDK bridge, end to end with a scripted Model subclass (a fake model)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.extras import needs_extra

pytest.importorskip("agents", reason=needs_extra("openai-agents"))

from agents import (
    Agent,
    FunctionTool,
    Model,
    ModelResponse,
    RunContextWrapper,
    Runner,
    Usage,
    function_tool,
    set_tracing_disabled,
)
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

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
from toolrelay.bridges.openai_agents import (
    ToolSearchTools,
    from_openai_agents,
    to_openai_agents,
)
from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import ApprovalInterceptor, Approve, Deny, ToolInvocation
from toolrelay.execution import _feedback as feedback
from toolrelay.tools import FunctionTool as RelayFunctionTool
from toolrelay.tools import ToolContext

set_tracing_disabled(True)  # nothing to export traces to: no provider runs here

Step = tuple[str, dict[str, Any]] | str


class ScriptedModel(Model):
    """Answers with one scripted step per request; notes the tools each request offered."""

    def __init__(self, *steps: Step) -> None:
        self.steps = steps
        self.seen: list[list[str]] = []

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        tools = kwargs["tools"] if "tools" in kwargs else args[3]
        self.seen.append([t.name for t in tools])
        step = self.steps[min(len(self.seen), len(self.steps)) - 1]
        if isinstance(step, str):
            output: Any = ResponseOutputMessage(
                id="msg",
                type="message",
                role="assistant",
                status="completed",
                content=[
                    ResponseOutputText(text=step, type="output_text", annotations=[], logprobs=[])
                ],
            )
        else:
            name, arguments = step
            output = ResponseFunctionToolCall(
                id=f"fc_{len(self.seen)}",
                call_id=f"call_{len(self.seen)}",
                type="function_call",
                name=name,
                arguments=json.dumps(arguments),
            )
        return ModelResponse(output=[output], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


def outputs(result: Any) -> list[str]:
    return [str(item.output) for item in result.new_items if item.type == "tool_call_output_item"]


async def test_found_by_search_in_one_turn_and_called_in_the_next() -> None:
    model = ScriptedModel(
        ("tool_search", {"queries": ["current weather in a city"]}),
        ("weather__current", {"city": "Oslo"}),
        "Sunny.",
    )
    agent = Agent(name="desk", model=model, tools=ToolSearchTools(bridge()).tools())
    result = await Runner.run(agent, "Weather?", context={"session_id": "c1", "user_id": "u1"})
    assert result.final_output == "Sunny."
    assert model.seen[0] == ["tool_search"]
    assert model.seen[1] == ["tool_search", "weather__current"]
    assert outputs(result)[1] == "Sunny in Oslo"
    assert RAN == [("weather.current", {"city": "Oslo", "user": "u1"})]


async def test_the_agent_lists_only_what_it_shows() -> None:
    model = ScriptedModel(
        ("tool_search", {"queries": ["current weather in a city"]}),
        ("weather__current", {"city": "Oslo"}),
        "Sunny.",
    )
    agent = ToolSearchTools(bridge()).agent(name="desk", model=model, instructions="Be brief.")
    assert agent.instructions == "Be brief.\n\nMost tools are hidden; find them with tool_search."
    result = await Runner.run(agent, "Weather?", context={"session_id": "c1", "user_id": "u1"})
    assert result.final_output == "Sunny."
    assert model.seen[:2] == [["tool_search"], ["tool_search", "weather__current"]]
    assert RAN == [("weather.current", {"city": "Oslo", "user": "u1"})]


async def test_the_agent_pauses_an_approval_gated_call() -> None:
    model = ScriptedModel(
        ("tool_search", {"queries": ["cancel an order"]}),
        ("orders__cancel", {"order_id": "A1"}),
        "cancelled",
    )
    agent = ToolSearchTools(bridge(approval=ApprovalInterceptor())).agent(name="desk", model=model)
    paused = await Runner.run(agent, "cancel A1", context={"session_id": "c1"})
    [pending] = paused.interruptions
    assert RAN == []
    state = paused.to_state()
    state.approve(pending)
    assert (await Runner.run(agent, state)).final_output == "cancelled"
    assert RAN == [("orders.cancel", {"order_id": "A1"})]


async def test_discoveries_persist_for_the_session() -> None:
    tools = ToolSearchTools(bridge())
    first = ScriptedModel(("tool_search", {"queries": ["stock price quote"]}), "ok")
    await Runner.run(
        Agent(name="a", model=first, tools=tools.tools()), "q", context={"session_id": "s"}
    )
    later = ScriptedModel("done")
    await Runner.run(
        Agent(name="a", model=later, tools=tools.tools()), "q", context={"session_id": "s"}
    )
    assert later.seen[0] == ["tool_search", "stocks__quote"]
    other = ScriptedModel("done")
    await Runner.run(
        Agent(name="a", model=other, tools=tools.tools()), "q", context={"session_id": "o"}
    )
    assert other.seen[0] == ["tool_search"]


async def test_a_forbidden_tool_is_never_shown_nor_run() -> None:
    model = ScriptedModel(
        ("tool_search", {"queries": ["export payroll for a month"]}),
        ("payroll__export", {"month": "2026-01"}),
        "done",
    )
    agent = Agent(name="desk", model=model, tools=ToolSearchTools(bridge()).tools())
    with pytest.raises(Exception, match="payroll__export"):
        # The SDK refuses a call of a tool it did not offer (ModelBehaviorError).
        await Runner.run(agent, "payroll", context={"session_id": "c1", "role": "staff"})
    assert all("payroll__export" not in tools for tools in model.seen)
    assert RAN == []


@pytest.mark.parametrize("how", ["agent", "tools"])
async def test_under_its_run_config_a_call_of_a_tool_not_listed_is_answered(how: str) -> None:
    model = ScriptedModel(
        ("weather__current", {"city": "Oslo"}),  # not found yet
        ("tool_search", {"queries": ["export payroll for a month"]}),
        ("payroll__export", {"month": "2026-01"}),  # forbidden for staff
        ("tool_search", {"queries": ["current weather in a city"]}),
        ("weather__curent", {"city": "Oslo"}),  # a typo of a shown tool
        "done",
    )
    searching = ToolSearchTools(bridge())
    if how == "agent":
        agent = searching.agent(name="desk", model=model)
    else:
        agent = Agent(name="desk", model=model, tools=searching.tools())
    context = {"session_id": "c1", "role": "staff"}
    result = await Runner.run(agent, "go", context=context, run_config=searching.run_config())
    assert result.final_output == "done"
    answers = outputs(result)
    texts = searching.search.texts()
    # Undiscovered and forbidden read alike: nothing tells the model the tool exists.
    assert answers[0] == texts.unavailable_answer("weather__current", [])
    assert answers[2] == texts.unavailable_answer("payroll__export", [])
    # The only names suggested are listed ones: the typo gets the listed tool's name.
    assert answers[4] == texts.unavailable_answer("weather__curent", ["weather__current"])
    assert "weather__current" in answers[4]
    assert all("payroll" not in answer for answer in answers[3:])
    assert RAN == []


async def test_the_run_config_keeps_the_other_options_and_formatter() -> None:
    seen: list[str] = []

    def others(args: Any) -> str:
        seen.append(args.kind)
        return "formatted"

    searching = ToolSearchTools(bridge())
    config = searching.run_config(workflow_name="desk", tool_error_formatter=others)
    assert config.workflow_name == "desk"
    assert config.tool_not_found_behavior == "return_error_to_model"
    with pytest.raises(ConfigurationError, match="tool_not_found_behavior"):
        searching.run_config(tool_not_found_behavior="raise_error")


async def test_an_approval_gated_tool_interrupts_the_run_until_approved() -> None:
    model = ScriptedModel(
        ("tool_search", {"queries": ["cancel an order"]}),
        ("orders__cancel", {"order_id": "A1"}),
        "cancelled",
    )
    agent = Agent(
        name="desk",
        model=model,
        tools=ToolSearchTools(bridge(approval=ApprovalInterceptor())).tools(),
    )
    paused = await Runner.run(agent, "cancel A1", context={"session_id": "c1"})
    [pending] = paused.interruptions
    assert pending.tool_name == "orders__cancel"
    assert RAN == []
    state = paused.to_state()
    state.approve(pending)
    resumed = await Runner.run(agent, state)
    assert resumed.final_output == "cancelled"
    assert RAN == [("orders.cancel", {"order_id": "A1"})]


def test_a_catalog_with_a_tool_requiring_approval_is_refused_without_approval() -> None:
    with pytest.raises(ConfigurationError, match=r"'orders.cancel' requires approval"):
        ToolSearchTools(BridgeSearch(catalog()))
    with pytest.raises(ConfigurationError, match=r"'orders.cancel' requires approval"):
        to_openai_agents(RelayFunctionTool.from_function(cancel_order))


async def test_a_tool_requiring_approval_added_later_is_refused_and_never_runs() -> None:
    live = ungated_catalog()
    searching = ToolSearchTools(BridgeSearch(live))
    RAN.clear()
    add_gated_tool(live)
    model = ScriptedModel(
        ("tool_search", {"queries": ["cancel an order"]}),
        ("orders__cancel", {"order_id": "A1"}),
        "not cancelled",
    )
    agent = searching.agent(name="desk", model=model)
    result = await Runner.run(agent, "cancel A1", context={"session_id": "c1"})
    assert result.interruptions == []  # nobody is asked: nothing is configured to decide
    assert "orders__cancel" in model.seen[1]
    assert outputs(result)[1] == feedback.approval_not_configured("orders.cancel")
    assert RAN == []


async def test_a_converted_tool_requiring_approval_is_decided_as_configured() -> None:
    cancel = RelayFunctionTool.from_function(cancel_order)
    # A person decides through the SDK: the run stops until they approve the call.
    paused = to_openai_agents(cancel, approval=ApprovalInterceptor())
    assert paused.needs_approval is True
    agent = Agent(
        name="a",
        model=ScriptedModel(("orders__cancel", {"order_id": "A1"}), "cancelled"),
        tools=[paused],
    )
    RAN.clear()
    first = await Runner.run(agent, "cancel", context={})
    [pending] = first.interruptions
    assert RAN == []
    state = first.to_state()
    state.approve(pending)
    assert (await Runner.run(agent, state)).final_output == "cancelled"
    assert RAN == [("orders.cancel", {"order_id": "A1"})]

    # A handler decides in toolrelay: the SDK runs the call, the handler refuses it.
    async def refuse(invocation: ToolInvocation) -> Approve | Deny:
        return Deny("not today")

    decided = to_openai_agents(cancel, approval=refuse)
    assert decided.needs_approval is False
    RAN.clear()
    model = ScriptedModel(("orders__cancel", {"order_id": "A1"}), "no")
    result = await Runner.run(Agent(name="a", model=model, tools=[decided]), "c", context={})
    assert "not today" in outputs(result)[0]
    assert RAN == []


async def test_to_openai_agents_keeps_definition_and_maps_the_context() -> None:
    weather = RelayFunctionTool.from_function(current_weather)
    converted = to_openai_agents(weather)
    assert converted.name == "weather__current"
    assert converted.description == weather.definition.description
    assert converted.params_json_schema == dict(weather.definition.input_schema)
    model = ScriptedModel(("weather__current", {"city": "Rome"}), "ok")
    RAN.clear()
    await Runner.run(
        Agent(name="a", model=model, tools=[converted]), "w", context={"user_id": "u3"}
    )
    assert RAN == [("weather.current", {"city": "Rome", "user": "u3"})]
    [back] = from_openai_agents(converted)
    assert back.definition == converted_definition(converted)


async def test_a_keyed_tool_converted_twice_never_runs_a_refund_twice() -> None:
    keyed = RelayFunctionTool.from_function(refund)
    first_audit, second_audit = AuditRecords(), AuditRecords()
    answers = []
    RAN.clear()
    # Two conversions, two managers: both keep keys in the process's store.
    for converted in (
        to_openai_agents(keyed, audit=first_audit),
        to_openai_agents(keyed, audit=second_audit),
    ):
        model = ScriptedModel(("billing__refund", {"order_id": 7}), "done")
        agent = Agent(name="a", model=model, tools=[converted])
        answers.extend(outputs(await Runner.run(agent, "refund 7", context={"user_id": "clerk"})))
    done, again = answers
    assert done == "refunded order 7"
    assert again.endswith(done)  # the recorded result,
    assert again != done  # marked as such
    assert RAN == [("billing.refund", {"order_id": 7})]
    assert [r.replayed for r in first_audit.records + second_audit.records] == [False, True]


def converted_definition(tool: FunctionTool) -> Any:
    from toolrelay.tools import ToolDefinition

    return ToolDefinition(
        name=tool.name, description=tool.description, input_schema=tool.params_json_schema
    )


async def test_from_openai_agents_runs_with_the_tool_context() -> None:
    @function_tool
    def greet(wrapper: RunContextWrapper[ToolContext], greeting: str) -> str:
        """Greet the current user.

        Args:
            greeting: The greeting.
        """
        return f"{greeting} {wrapper.context.user_id}"

    [converted] = from_openai_agents([greet])
    assert converted.definition.name == "greet"
    assert converted.definition.description == "Greet the current user."
    assert set(converted.definition.input_schema["properties"]) == {"greeting"}
    assert await converted.call('{"greeting": "hi"}', ToolContext(user_id="u1")) == "hi u1"
