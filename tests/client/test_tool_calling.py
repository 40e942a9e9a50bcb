from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from toolrelay.client import (
    HIGHEST_PRECEDENCE,
    LOWEST_PRECEDENCE,
    TOOL_CALLING_ADVISOR_ORDER,
    ChatClient,
    ChatClientRequest,
    ChatClientResponse,
    LoopStop,
    MessageChatMemoryAdvisor,
    ToolCallingAdvisor,
    ToolLoopState,
    ToolSearchAdvisor,
)
from toolrelay.client._tool_loop import TOOL_CALL_LIMIT_FINISH_REASON
from toolrelay.exceptions import (
    ConfigurationError,
    ModelCallLimitError,
    ToolNotFoundError,
    ToolsNotSupportedError,
)
from toolrelay.execution import (
    CallLimits,
    StaticToolResolver,
    ToolCallingManager,
    ToolCallStatus,
    ToolExecutionResult,
)
from toolrelay.memory import MessageWindowChatMemory
from toolrelay.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    Usage,
    UserMessage,
)
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.search import BM25ToolIndex
from toolrelay.testing import (
    FunctionModel,
    RecordingAdvisor,
    ScriptedModel,
    text_response,
    tool_call_response,
)
from toolrelay.tools import Tool, ToolContext, as_tools, tool


@tool
def ping(host: str) -> str:
    """Ping a host.

    Args:
        host: The host name.
    """
    return f"{host} is up"


@tool
def traceroute(host: str) -> str:
    """Trace the route to a host.

    Args:
        host: The host name.
    """
    return f"3 hops to {host}"


def client_for(model: Any, *advisors: Any, tools: tuple[Any, ...] = (ping,)) -> ChatClient:
    return ChatClient.builder(model).default_tools(*tools).default_advisors(*advisors).build()


def pinging(*hosts: str, usage: tuple[int, int] = (0, 0)) -> Any:
    return tool_call_response(*(("ping", {"host": h}) for h in hosts), usage=usage)


@pytest.mark.parametrize(
    "order", [HIGHEST_PRECEDENCE + 1, TOOL_CALLING_ADVISOR_ORDER, 0, LOWEST_PRECEDENCE - 1]
)
async def test_an_order_strictly_inside_the_range_places_the_loop_between_the_ends(
    order: int,
) -> None:
    outermost = RecordingAdvisor("outermost", HIGHEST_PRECEDENCE)
    innermost = RecordingAdvisor("innermost", LOWEST_PRECEDENCE)
    loop = ToolCallingAdvisor(order=order)
    # Given innermost first and outermost last: only the orders can put them in place.
    client = client_for(ScriptedModel([pinging("a"), "up"]), innermost, loop, outermost)
    assert client.prompt("ping a").call().content() == "up"
    assert loop.order == order
    assert (len(outermost.requests), len(innermost.requests)) == (1, 2)  # the turn; each call


@pytest.mark.parametrize(
    "order",
    [
        HIGHEST_PRECEDENCE,
        LOWEST_PRECEDENCE,
        HIGHEST_PRECEDENCE - 1,
        LOWEST_PRECEDENCE + 1,
        True,
        300.0,
        "300",
        None,
    ],
)
def test_an_order_outside_the_range_or_not_an_int_is_refused(order: Any) -> None:
    with pytest.raises(ConfigurationError) as refused:
        ToolCallingAdvisor(order=order)
    message = str(refused.value)
    assert f"strictly between HIGHEST_PRECEDENCE ({HIGHEST_PRECEDENCE})" in message
    assert f"LOWEST_PRECEDENCE ({LOWEST_PRECEDENCE}), not {order!r}" in message
    assert "tracing" in message  # why: the loop sits inside the outermost advisors
    with pytest.raises(ConfigurationError, match="order must be an int strictly between"):
        ToolSearchAdvisor([ping], index=BM25ToolIndex(), order=order)


async def test_usage_is_summed_over_every_round() -> None:
    model = ScriptedModel(
        [
            pinging("a", usage=(10, 2)),
            pinging("b", usage=(20, 3)),
            text_response("ok", usage=(30, 4)),
        ]
    )
    response = await client_for(model).prompt("go").acall()
    assert response.chat_response().usage == Usage(
        prompt_tokens=60, completion_tokens=9, total_tokens=69
    )
    assert response.tool_loop is not None
    assert response.tool_loop.model_calls == 3


async def test_the_model_is_shown_the_tool_definitions_every_round() -> None:
    model = ScriptedModel([pinging("a"), "done"])
    await client_for(model, tools=(ping, traceroute)).prompt("go").acall()
    assert model.tool_definitions[0] == model.tool_definitions[1]
    assert [d.name for d in model.tool_definitions[0]] == ["ping", "traceroute"]
    assert model.tool_definitions[0][0].input_schema["required"] == ["host"]


async def test_tool_names_are_resolved_for_the_model_and_for_execution() -> None:
    manager = ToolCallingManager(resolver=StaticToolResolver(as_tools(ping, traceroute)))
    model = ScriptedModel([tool_call_response(("traceroute", {"host": "x"})), "done"])
    client = ChatClient.builder(model).tool_calling_manager(manager).build()
    response = await client.prompt("go").options(ChatOptions(tool_names=("traceroute",))).acall()
    assert model.tool_names_shown(0) == ["traceroute"]
    assert response.tool_loop is not None
    assert response.tool_loop.rounds[0].responses[0].data == "3 hops to x"

    with pytest.raises(ToolNotFoundError) as caught:
        await client.prompt("go").options(ChatOptions(tool_names=("tracerout",))).acall()
    assert caught.value.suggestions[0] == "traceroute"


async def test_a_failing_call_becomes_feedback_and_the_loop_goes_on() -> None:
    model = ScriptedModel([tool_call_response(("pong", {"host": "a"})), "sorry, pinged nothing"])
    response = await client_for(model).prompt("go").acall()
    assert response.content() == "sorry, pinged nothing"
    feedback = model.prompts[1].messages[-1]
    assert isinstance(feedback, ToolResponseMessage)
    assert feedback.responses[0].is_error
    assert "Unknown tool 'pong'" in feedback.responses[0].data
    assert "ping" in feedback.responses[0].data


async def test_text_next_to_tool_calls_is_kept_in_the_history() -> None:
    first = tool_call_response(("ping", {"host": "a"}), text="Let me check.")
    model = ScriptedModel([first, "a is up"])
    response = await client_for(model).prompt("go").acall()
    assert model.prompts[1].messages[1] == AssistantMessage(
        text="Let me check.",
        tool_calls=(ToolCall(id="call_1", name="ping", arguments='{"host": "a"}'),),
    )
    assert response.content() == "a is up"


# --- stopping the loop -------------------------------------------------------------------------


def limited(on_breach: str) -> ToolCallingManager:
    return ToolCallingManager(limits=CallLimits(per_tool=2, on_breach=on_breach))  # type: ignore[arg-type]


@pytest.mark.parametrize("streamed", [False, True], ids=["call", "stream"])
async def test_a_limit_breach_ends_the_loop_with_tool_call_limit_exceeded(streamed: bool) -> None:
    model = ScriptedModel([pinging("a", "b"), pinging("c"), "never asked"])
    client = ChatClient.builder(model).default_tools(ping).tool_calling_manager(limited("raise"))
    request = client.build().prompt("ping everything")
    response = await (request.stream().collect() if streamed else request.acall())

    generations = response.chat_response().generations
    assert len(generations) == 1
    assert generations[0].finish_reason == TOOL_CALL_LIMIT_FINISH_REASON == "toolCallLimitExceeded"
    text = response.content() or ""
    assert "limit" in text.lower()
    assert "'ping'" in text
    assert model.call_count == 2
    report = response.tool_loop
    assert report is not None
    assert report.stop is LoopStop.TOOL_CALL_LIMIT
    # The partial round is kept: the breaching call got a "limit" response.
    assert [o.status for o in report.rounds[-1].outcomes] == [ToolCallStatus.LIMIT]
    assert isinstance(report.history[-2], ToolResponseMessage)


async def test_in_feedback_mode_a_limit_breach_is_feedback_and_the_model_answers() -> None:
    model = ScriptedModel([pinging("a", "b", "c"), "I pinged what I could"])
    client = ChatClient.builder(model).default_tools(ping).tool_calling_manager(limited("feedback"))
    response = await client.build().prompt("go").acall()
    assert response.content() == "I pinged what I could"
    statuses = [o.status for o in response.tool_loop.rounds[0].outcomes]  # type: ignore[union-attr]
    assert statuses == [ToolCallStatus.OK, ToolCallStatus.OK, ToolCallStatus.LIMIT]


@pytest.mark.parametrize("streamed", [False, True], ids=["call", "stream"])
async def test_a_runaway_loop_ends_with_model_call_limit_error(streamed: bool) -> None:
    model = FunctionModel(lambda prompt: pinging("again"))
    advisor = ToolCallingAdvisor(max_model_calls=3)
    request = client_for(model, advisor).prompt("go")

    async def run() -> object:
        if streamed:
            return [c async for c in request.stream().chat_responses()]
        return await request.acall()

    with pytest.raises(ModelCallLimitError, match="max_model_calls=3"):
        await run()
    assert model.call_count == 3


async def test_the_default_model_call_limit_is_fifty() -> None:
    model = FunctionModel(lambda prompt: pinging("again"))
    with pytest.raises(ModelCallLimitError, match="50"):
        await client_for(model).prompt("go").acall()
    assert model.call_count == 50


async def test_a_custom_eligibility_checker_returns_tool_calls_unexecuted() -> None:
    model = ScriptedModel([pinging("a")])
    advisor = ToolCallingAdvisor(eligibility_checker=lambda response: False)
    response = await client_for(model, advisor).prompt("go").acall()
    assert response.chat_response().has_tool_calls
    assert model.call_count == 1


async def test_tools_on_a_model_without_tool_support_is_an_error() -> None:
    model = ScriptedModel(["never"], supports_tools=False)
    with pytest.raises(ToolsNotSupportedError, match="ping"):
        await client_for(model).prompt("go").acall()
    assert await client_for(model, tools=()).prompt("go").acall()  # no tools: fine


async def test_the_managers_guards_apply_to_every_round_of_the_loop() -> None:
    def deny_b(context: ToolContext, tool: Tool, arguments: Mapping[str, Any]) -> bool | str:
        return "b is off limits" if arguments.get("host") == "b" else True

    model = ScriptedModel([pinging("a", "b"), "done"])
    manager = ToolCallingManager(authorize=deny_b)
    advisor = ToolCallingAdvisor(tool_calling_manager=manager)
    await client_for(model, advisor).prompt("go").acall()
    responses = model.prompts[1].messages[-1]
    assert isinstance(responses, ToolResponseMessage)
    assert [(r.data, r.is_error) for r in responses.responses] == [
        ("a is up", False),
        ("b is off limits", True),
    ]


async def test_the_clients_guards_apply_to_every_round_of_a_given_advisor() -> None:
    async def deny_b(context: ToolContext, tool: Tool, arguments: Mapping[str, Any]) -> bool | str:
        return "b is off limits" if arguments.get("host") == "b" else True

    model = ScriptedModel([pinging("a", "b"), "done"])
    advisor = ToolCallingAdvisor()  # no manager of its own: it runs the client's
    client = (
        ChatClient.builder(model)
        .default_tools(ping)
        .default_advisors(advisor)
        .guards(authorize=deny_b)
        .build()
    )
    await client.prompt("go").acall()
    responses = model.prompts[1].messages[-1]
    assert isinstance(responses, ToolResponseMessage)
    assert [(r.data, r.is_error) for r in responses.responses] == [
        ("a is up", False),
        ("b is off limits", True),
    ]


# --- history handling --------------------------------------------------------------------------


async def test_conversation_history_false_sends_only_new_messages() -> None:
    model = ScriptedModel([pinging("a"), "done"])
    advisor = ToolCallingAdvisor(conversation_history=False)
    await client_for(model, advisor).prompt("go").acall()
    assert model.prompts[1].messages == (
        ToolResponseMessage(responses=(ToolResponse(id="call_1", name="ping", data="a is up"),)),
    )


async def test_conversation_history_true_overrides_memory_inside_the_loop() -> None:
    memory = MessageChatMemoryAdvisor(MessageWindowChatMemory(), order=HIGHEST_PRECEDENCE + 400)
    model = ScriptedModel([pinging("a"), "done"])
    advisor = ToolCallingAdvisor(conversation_history=True)
    await client_for(model, advisor, memory).prompt("go").conversation("c").acall()
    # Full history from the loop plus the stored history from memory: duplicated, as asked.
    assert model.prompts[1].messages.count(UserMessage(text="go")) == 2


# --- hooks ---------------------------------------------------------------------------------


class Narrowing(ToolCallingAdvisor):
    """Offers only ``ping`` after the first round and records the hooks it went through."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    async def init_loop(
        self, request: ChatClientRequest, state: ToolLoopState
    ) -> ChatClientRequest:
        self.calls.append("init")
        state.data["rounds"] = 0
        return request

    async def before_call(
        self, request: ChatClientRequest, state: ToolLoopState
    ) -> ChatClientRequest:
        self.calls.append("before")
        if state.data["rounds"]:
            options = request.prompt.options
            narrowed = tuple(t for t in options.tools if t.definition.name == "ping")
            return request.with_options(options.replace(tools=narrowed))
        return request

    async def after_call(
        self, response: ChatClientResponse, state: ToolLoopState
    ) -> ChatClientResponse:
        self.calls.append("after")
        return response

    async def next_instructions(
        self,
        request: ChatClientRequest,
        response: ChatClientResponse,
        result: ToolExecutionResult,
        state: ToolLoopState,
    ) -> list[Message]:
        self.calls.append("next")
        state.data["rounds"] += 1
        return [*await super().next_instructions(request, response, result, state)]

    async def finalize_loop(
        self, response: ChatClientResponse, state: ToolLoopState
    ) -> ChatClientResponse:
        self.calls.append("finalize")
        return response.with_context(rounds=state.data["rounds"])


async def test_a_subclass_customises_the_loop_through_its_hooks() -> None:
    model = ScriptedModel([tool_call_response(("traceroute", {"host": "a"})), pinging("a"), "ok"])
    advisor = Narrowing()
    client = client_for(model, advisor, tools=(ping, traceroute))
    response = await client.prompt("go").acall()
    assert advisor.calls == [
        "init",
        *["before", "after", "next"] * 2,
        "before",
        "after",
        "finalize",
    ]
    assert [model.tool_names_shown(k) for k in range(3)] == [
        ["ping", "traceroute"],
        ["ping"],
        ["ping"],
    ]
    assert response.context["rounds"] == 2


async def test_a_streamed_round_with_text_and_tool_calls_forwards_the_text() -> None:
    first = tool_call_response(("ping", {"host": "a"}), text="Checking...")
    model = ScriptedModel([first, "a is up"], chunk_size=2)
    chunks = [c async for c in client_for(model).prompt("go").stream().chat_responses()]
    text = "".join(c.text or "" for c in chunks)
    assert text == "Checking...a is up"
    # The merged call ran with its complete arguments.
    assert model.prompts[1].messages[-1] == ToolResponseMessage(
        responses=(ToolResponse(id="call_1", name="ping", data="a is up"),)
    )


async def test_the_execution_prompt_carries_the_whole_turn() -> None:
    seen: list[Prompt] = []

    class Spy(ToolCallingManager):
        async def execute_tool_calls(self, prompt: Prompt, chat_response: Any, **kw: Any) -> Any:
            seen.append(prompt)
            return await super().execute_tool_calls(prompt, chat_response, **kw)

    model = ScriptedModel([pinging("a"), pinging("b"), "done"])
    memory = MessageChatMemoryAdvisor(MessageWindowChatMemory(), order=HIGHEST_PRECEDENCE + 400)
    client = ChatClient.builder(model).default_tools(ping).tool_calling_manager(Spy())
    await client.default_advisors(memory).build().prompt("go").conversation("c").acall()
    # Even with memory inside the loop (rounds send only new messages), the manager sees the
    # whole turn, so its per-turn limits count every round.
    assert [len(p.messages) for p in seen] == [1, 3]


async def test_memory_inside_keeps_no_dangling_tool_call_after_a_runaway_loop() -> None:
    memory = MessageWindowChatMemory()
    inside = MessageChatMemoryAdvisor(memory, order=HIGHEST_PRECEDENCE + 400)
    model = FunctionModel(lambda prompt: pinging("again"))
    client = client_for(model, ToolCallingAdvisor(max_model_calls=2), inside)
    with pytest.raises(ModelCallLimitError):
        await client.prompt("go").conversation("c").acall()
    stored = await memory.get("c")
    assert [type(m).__name__ for m in stored] == [
        "UserMessage",
        *["AssistantMessage", "ToolResponseMessage"] * 2,
    ]


async def test_memory_inside_keeps_the_limit_answer_after_a_limit_breach() -> None:
    memory = MessageWindowChatMemory()
    inside = MessageChatMemoryAdvisor(memory, order=HIGHEST_PRECEDENCE + 400)
    model = ScriptedModel([pinging("a", "b", "c")])
    client = ChatClient.builder(model).default_tools(ping).tool_calling_manager(limited("raise"))
    response = await client.default_advisors(inside).build().prompt("go").conversation("c").acall()
    stored = await memory.get("c")
    assert isinstance(stored[-2], ToolResponseMessage)
    assert stored[-1] == AssistantMessage(text=response.content())
