"""Spring AI's ToolCallingAdvisorTests, in toolrelay's API.

Spring AI's tests drive the advisor with a mocked manager and terminal advisors; here a
``ScriptedModel`` answers and a recording manager (a real ``ToolCallingManager`` that keeps the
prompts it was given) runs the tools. Null checks and builder getters have no counterpart;
provider cache metrics are per-response metadata in toolrelay and are not summed by the loop.
whenAdvisorOrderIsOutOfRangeThenThrow is tests/client/test_tool_calling.py's order tests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from toolrelay.client import (
    HIGHEST_PRECEDENCE,
    TOOL_CALLING_ADVISOR_ORDER,
    ChatClient,
    ChatClientRequest,
    ChatClientResponse,
    LoopStop,
    ToolCallingAdvisor,
    ToolLoopState,
)
from toolrelay.execution import CallLimits, ToolCallingManager, ToolExecutionResult
from toolrelay.messages import (
    ChatResponse,
    SystemMessage,
    ToolResponseMessage,
    Usage,
)
from toolrelay.prompt import Prompt
from toolrelay.testing import ScriptedModel, text_response, tool_call_response
from toolrelay.tools import ToolDefinition, ToolMetadata, tool


@tool(name="testTool")
def data_tool() -> str:
    """A tool the model calls."""
    return "Tool result data"


@tool(name="directTool", return_direct=True)
def direct_tool() -> str:
    """A tool whose result is the answer."""
    return "Tool result data"


class RecordingManager(ToolCallingManager):
    """A real manager that keeps every prompt it executes calls for."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.prompts: list[Prompt] = []

    async def execute_tool_calls(
        self, prompt: Prompt, chat_response: ChatResponse, **options: Any
    ) -> ToolExecutionResult:
        self.prompts.append(prompt)
        return await super().execute_tool_calls(prompt, chat_response, **options)


def calling(name: str = "testTool", usage: tuple[int, int] | None = None) -> ChatResponse:
    return tool_call_response((name, {}), usage=usage)


def client(model: ScriptedModel, advisor: ToolCallingAdvisor, *tools: object) -> ChatClient:
    return (
        ChatClient.builder(model)
        .default_advisors(advisor)
        .default_tools(*(tools or (data_tool,)))
        .build()
    )


def test_default_values_and_custom_order() -> None:
    # ports testBuilderMethodChaining, testDefaultValues, testGetName, testGetOrder,
    # testBuilderGetters and testExtendedBuilderWithCustomBuilder
    default = ToolCallingAdvisor()
    assert default.order == TOOL_CALLING_ADVISOR_ORDER == HIGHEST_PRECEDENCE + 300
    assert default.name == "tool_calling"
    manager = ToolCallingManager()
    custom = ToolCallingAdvisor(tool_calling_manager=manager, order=HIGHEST_PRECEDENCE + 500)
    assert (custom.order, custom.tool_calling_manager) == (HIGHEST_PRECEDENCE + 500, manager)


async def test_custom_checker_suppresses_tool_execution_in_call_path() -> None:
    # ports customCheckerSuppressesToolExecutionInCallPath
    manager = RecordingManager()
    advisor = ToolCallingAdvisor(tool_calling_manager=manager, eligibility_checker=lambda r: False)
    model = ScriptedModel([calling()])
    response = await client(model, advisor).prompt("test").acall()
    assert response.chat_response().has_tool_calls
    assert manager.prompts == []
    assert model.call_count == 1


async def test_custom_checker_suppresses_tool_execution_in_stream_path() -> None:
    # ports customCheckerSuppressesToolExecutionInStreamPath
    manager = RecordingManager()
    advisor = ToolCallingAdvisor(tool_calling_manager=manager, eligibility_checker=lambda r: False)
    model = ScriptedModel([calling()])
    collected = await client(model, advisor).prompt("test").stream().collect()
    assert collected.chat_response().has_tool_calls
    assert manager.prompts == []


async def test_custom_checker_forces_tool_execution_on_response_without_tool_calls() -> None:
    # ports customCheckerForcesToolExecutionOnResponseWithoutToolCalls: the checker decides,
    # and execute_tools (a hook) runs the round it asked for
    checks = []

    def first_only(response: ChatResponse) -> bool:
        checks.append(response)
        return len(checks) == 1

    class ForcedRound(ToolCallingAdvisor):
        rounds = 0

        async def execute_tools(
            self, request: ChatClientRequest, response: ChatClientResponse, state: ToolLoopState
        ) -> ToolExecutionResult:
            ForcedRound.rounds += 1
            return ToolExecutionResult(conversation_history=tuple(state.history))

    model = ScriptedModel(["response", "response"])
    response = await client(model, ForcedRound(eligibility_checker=first_only)).prompt("t").acall()
    assert model.call_count == 2
    assert ForcedRound.rounds == 1
    assert response.content() == "response"


async def test_a_request_without_tools_passes_through() -> None:
    # ports whenOptionsAreNullThenPassThrough,
    # whenOptionsAreNotToolCallingChatOptionsThenPassThrough,
    # whenStreamOptionsAreNotToolCallingChatOptionsThenPassThrough and
    # testAdviseCallWithoutToolCalls
    model = ScriptedModel(["response"])
    chat = ChatClient.builder(model).default_advisors(ToolCallingAdvisor()).build()
    response = await chat.prompt("test").acall()
    assert response.content() == "response"
    assert model.call_count == 1
    assert response.tool_loop is not None
    assert response.tool_loop.rounds == ()


async def test_advise_call_with_single_tool_call_iteration() -> None:
    # ports testAdviseCallWithSingleToolCallIteration
    manager = RecordingManager()
    model = ScriptedModel([calling(), "final"])
    response = (
        await client(model, ToolCallingAdvisor(tool_calling_manager=manager)).prompt("t").acall()
    )
    assert response.content() == "final"
    assert model.call_count == 2
    assert len(manager.prompts) == 1


async def test_advise_call_with_multiple_tool_call_iterations() -> None:
    # ports testAdviseCallWithMultipleToolCallIterations
    manager = RecordingManager()
    model = ScriptedModel([calling(), calling(), "final"])
    response = (
        await client(model, ToolCallingAdvisor(tool_calling_manager=manager)).prompt("t").acall()
    )
    assert response.content() == "final"
    assert model.call_count == 3
    assert len(manager.prompts) == 2


def usage(prompt: int, completion: int) -> Usage:
    return Usage(
        prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
    )


async def test_advise_call_accumulates_usage_across_tool_call_iterations() -> None:
    # ports adviseCallAccumulatesUsageAcrossToolCallIterations
    model = ScriptedModel([calling(usage=(10, 20)), text_response("done", usage=(1, 2))])
    response = await client(model, ToolCallingAdvisor()).prompt("t").acall()
    assert response.chat_response().usage == usage(11, 22)
    assert response.content() == "done"


async def test_advise_call_keeps_single_call_usage_when_no_tool_call() -> None:
    # ports adviseCallKeepsSingleCallUsageWhenNoToolCall
    model = ScriptedModel([text_response("done", usage=(1, 2))])
    response = await client(model, ToolCallingAdvisor()).prompt("t").acall()
    assert response.chat_response().usage == usage(1, 2)


async def test_advise_call_preserves_accumulated_usage_for_return_direct() -> None:
    # ports adviseCallPreservesAccumulatedUsageForReturnDirect and
    # testAdviseCallWithReturnDirectToolExecution
    model = ScriptedModel([calling(usage=(10, 20)), calling("directTool", usage=(1, 2))])
    response = await client(model, ToolCallingAdvisor(), data_tool, direct_tool).prompt("t").acall()
    assert response.chat_response().usage == usage(11, 22)
    assert len(response.chat_response().generations) == 1
    assert response.content() == "Tool result data"
    assert response.tool_loop is not None
    assert response.tool_loop.stop is LoopStop.RETURN_DIRECT
    assert model.call_count == 2


async def test_advise_stream_without_tool_calls_and_with_one_iteration() -> None:
    # ports testAdviseStreamWithoutToolCalls and testAdviseStreamWithSingleToolCallIteration
    manager = RecordingManager()
    model = ScriptedModel(["response", calling(), "final"])
    chat = client(model, ToolCallingAdvisor(tool_calling_manager=manager))
    assert [t async for t in chat.prompt("t").stream().content()] == ["resp", "onse"]
    collected = await chat.prompt("t").stream().collect()
    assert collected.content() == "final"
    assert model.call_count == 3
    assert len(manager.prompts) == 1


async def test_advise_stream_accumulates_usage_on_the_closing_chunk() -> None:
    # ports adviseStreamAccumulatesPreviousLoopUsageOnUsageBearingChunk,
    # adviseStreamAccumulatesPreviousLoopUsageOnlyOnUsageBearingChunks and
    # adviseStreamEmitsAccumulatedUsageWhenFinalRoundReportsNoUsage: text chunks carry no
    # usage; the closing chunk carries the turn's sum
    model = ScriptedModel([calling(usage=(10, 20)), text_response("Hello world!", usage=(1, 2))])
    chunks = [
        c async for c in client(model, ToolCallingAdvisor()).prompt("t").stream().chat_responses()
    ]
    texts = [c.generations[0].message.text for c in chunks[:-1]]
    assert "".join(t or "" for t in texts) == "Hello world!"
    assert all(c.usage == Usage() for c in chunks[:-1])
    assert chunks[-1].usage == usage(11, 22)


async def test_advise_stream_keeps_accumulated_usage_subscription_local() -> None:
    # ports adviseStreamKeepsAccumulatedUsageSubscriptionLocal
    model = ScriptedModel([calling(usage=(10, 20)), text_response("a", usage=(1, 2))] * 2)
    chat = client(model, ToolCallingAdvisor())
    first = await chat.prompt("t").stream().collect()
    second = await chat.prompt("t").stream().collect()
    assert first.chat_response().usage == second.chat_response().usage == usage(11, 22)
    assert model.call_count == 4


async def test_advise_stream_with_return_direct_tool_execution() -> None:
    # ports testAdviseStreamWithReturnDirectToolExecution and
    # adviseStreamPreservesAccumulatedUsageForReturnDirect
    model = ScriptedModel([calling(usage=(10, 20)), calling("directTool", usage=(1, 2))])
    chat = client(model, ToolCallingAdvisor(), data_tool, direct_tool)
    collected = await chat.prompt("t").stream().collect()
    assert collected.content() == "Tool result data"
    assert collected.chat_response().usage == usage(11, 22)
    assert model.call_count == 2


async def test_conversation_history_enabled_by_default() -> None:
    # ports testConversationHistoryEnabledDefaultValue
    model = ScriptedModel([calling(), "final"])
    await client(model, ToolCallingAdvisor()).prompt("test message").acall()
    kinds = [type(m).__name__ for m in model.prompts[1].messages]
    assert kinds == ["UserMessage", "AssistantMessage", "ToolResponseMessage"]


@pytest.mark.parametrize("streaming", [False, True])
async def test_when_conversation_history_disabled_tools_still_see_the_full_turn(
    streaming: bool,
) -> None:
    # ports testConversationHistoryEnabledSetToFalse,
    # testDisableInternalConversationHistoryBuilderMethod,
    # whenConversationHistoryDisabledThenExecuteToolCallsStillSeesFullTurnHistory and
    # whenConversationHistoryDisabledThenStreamExecuteToolCallsStillSeesFullTurnHistory
    manager = RecordingManager()
    advisor = ToolCallingAdvisor(tool_calling_manager=manager, conversation_history=False)
    model = ScriptedModel([calling(), calling(), "final"])
    request = client(model, advisor).prompt("test").system("You are a helpful assistant")
    if streaming:
        await request.stream().collect()
    else:
        await request.acall()
    # The model's next request: the system message and the new tool responses only.
    assert [type(m) for m in model.prompts[1].messages] == [SystemMessage, ToolResponseMessage]
    # The manager sees the whole turn each round: first the request, then the first
    # round's whole history.
    first, second = (p.messages for p in manager.prompts)
    assert [type(m).__name__ for m in first] == ["SystemMessage", "UserMessage"]
    assert [type(m).__name__ for m in second] == [
        "SystemMessage",
        "UserMessage",
        "AssistantMessage",
        "ToolResponseMessage",
    ]
    assert second[:2] == first


@pytest.mark.parametrize("streaming", [False, True])
async def test_when_tool_call_limit_exceeded_then_partial_result(streaming: bool) -> None:
    # ports whenToolCallLimitExceededThenAdviseCallReturnsPartialResult and
    # whenToolCallLimitExceededThenAdviseStreamReturnsPartialResult
    manager = ToolCallingManager(limits=CallLimits(per_tool=1, on_breach="raise"))
    model = ScriptedModel([tool_call_response(("testTool", {}), ("testTool", {}))])
    request = client(model, ToolCallingAdvisor(tool_calling_manager=manager)).prompt("t")
    response = await (request.stream().collect() if streaming else request.acall())
    [generation] = response.chat_response().generations
    assert generation.finish_reason == "toolCallLimitExceeded"
    assert "limit" in (generation.message.text or "")
    assert response.tool_loop is not None
    [partial] = response.tool_loop.rounds
    assert partial.responses[0].data == "Tool result data"
    assert "limit" in partial.responses[1].data


class CountingHooks(ToolCallingAdvisor):
    def __init__(self) -> None:
        super().__init__()
        self.counts = {"init_loop": 0, "before_call": 0, "after_call": 0}

    async def init_loop(
        self, request: ChatClientRequest, state: ToolLoopState
    ) -> ChatClientRequest:
        self.counts["init_loop"] += 1
        return request

    async def before_call(
        self, request: ChatClientRequest, state: ToolLoopState
    ) -> ChatClientRequest:
        self.counts["before_call"] += 1
        return request

    async def after_call(
        self, response: ChatClientResponse, state: ToolLoopState
    ) -> ChatClientResponse:
        self.counts["after_call"] += 1
        return response


@pytest.mark.parametrize(("script", "rounds"), [(["done"], 1), ([calling(), "done"], 2)])
async def test_extended_advisor_hooks(script: Sequence[Any], rounds: int) -> None:
    # ports testExtendedAdvisorWithCustomHooks and
    # testExtendedAdvisorHooksCalledMultipleTimesWithToolCalls
    advisor = CountingHooks()
    await client(ScriptedModel(list(script)), advisor).prompt("t").acall()
    assert advisor.counts == {"init_loop": 1, "before_call": rounds, "after_call": rounds}


class Injected:
    definition = ToolDefinition(name="injectedTool", description="Injected by a hook.")
    metadata = ToolMetadata()

    async def call(self, arguments_json: str, context: Mapping[str, Any] | None = None) -> str:
        return "injected ran"


class InjectingAdvisor(ToolCallingAdvisor):
    """Adds a tool to each round's options in before_call (as tool search does)."""

    async def before_call(
        self, request: ChatClientRequest, state: ToolLoopState
    ) -> ChatClientRequest:
        options = request.prompt.options
        return request.with_options(options.replace(tools=(*options.tools, Injected())))


@pytest.mark.parametrize("streaming", [False, True])
async def test_tool_execution_sees_options_mutated_by_before_call(streaming: bool) -> None:
    # ports callToolExecutionSeesOptionsMutatedByDoBeforeCallHook and
    # streamToolExecutionSeesOptionsMutatedByDoBeforeStreamHook
    manager = RecordingManager()
    model = ScriptedModel([calling("injectedTool"), "final"])
    request = client(model, InjectingAdvisor(tool_calling_manager=manager)).prompt("t")
    response = await (request.stream().collect() if streaming else request.acall())
    names = [t.definition.name for t in manager.prompts[0].options.tools]
    assert "injectedTool" in names
    assert response.tool_loop is not None
    assert response.tool_loop.rounds[0].responses[0].data == "injected ran"
