from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from toolrelay.exceptions import (
    ConfigurationError,
    ModelResponseError,
    ToolCallLimitError,
    ToolNotFoundError,
)
from toolrelay.execution import (
    CallLimits,
    DefaultToolExceptionProcessor,
    Proceed,
    StaticToolResolver,
    ToolCallingManager,
    ToolCallInterceptor,
    ToolCallOutcome,
    ToolCallStatus,
    ToolExecutionResult,
    ToolInvocation,
    answer,
)
from toolrelay.messages import (
    AssistantMessage,
    ChatResponse,
    Generation,
    SystemMessage,
    ToolCall,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.tools import FunctionTool, Tool, ToolContext, as_tools, tool
from toolrelay.tools._base import ToolDefinition, ToolMetadata


class RecordingTool:
    """An async tool that records its calls and can block, fail or return anything."""

    def __init__(
        self,
        name: str,
        *,
        result: Any = "ok",
        delay: float = 0.0,
        raises: BaseException | None = None,
        metadata: ToolMetadata | None = None,
    ) -> None:
        self.definition = ToolDefinition(name=name, description=f"{name} tool")
        self.metadata = metadata or ToolMetadata()
        self.result, self.delay, self.raises = result, delay, raises
        self.calls: list[tuple[str, Mapping[str, Any] | None]] = []
        self.cancelled = False
        self.started = asyncio.Event()
        self.running = 0
        self.peak = 0

    async def call(self, arguments_json: str, context: Mapping[str, Any] | None = None) -> Any:
        self.calls.append((arguments_json, context))
        self.started.set()
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            if self.raises is not None:
                raise self.raises
            return self.result
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        finally:
            self.running -= 1


def response_with(*calls: ToolCall) -> ChatResponse:
    return ChatResponse(generations=(Generation(message=AssistantMessage(tool_calls=calls)),))


def calls_to(*names: str) -> ChatResponse:
    return response_with(
        *(ToolCall(id=f"id{i}", name=n, arguments="{}") for i, n in enumerate(names))
    )


def prompt_with(tools: Sequence[Tool] = (), *, context: Mapping[str, Any] | None = None) -> Prompt:
    return Prompt(
        messages=(SystemMessage(text="be brief"), UserMessage(text="hi")),
        options=ChatOptions(tools=tuple(tools), tool_context=context or {}),
    )


# --- the round ---------------------------------------------------------------------------------


async def test_history_is_prompt_then_assistant_then_one_tool_message() -> None:
    a, b = RecordingTool("a", result="A"), RecordingTool("b", result="B")
    prompt = prompt_with([a, b])
    response = calls_to("a", "b")
    result = await ToolCallingManager().execute_tool_calls(prompt, response)
    assert isinstance(result, ToolExecutionResult)
    assert result.conversation_history[:2] == prompt.messages
    assert result.conversation_history[2] == response.generations[0].message
    message = result.conversation_history[3]
    assert isinstance(message, ToolResponseMessage)
    assert [(r.id, r.name, r.data, r.is_error) for r in message.responses] == [
        ("id0", "a", "A", False),
        ("id1", "b", "B", False),
    ]
    assert len(result.conversation_history) == 4
    assert not result.return_direct


async def test_first_generation_with_tool_calls_is_used() -> None:
    a = RecordingTool("a")
    response = ChatResponse(
        generations=(
            Generation(message=AssistantMessage(text="thinking")),
            Generation(message=AssistantMessage(tool_calls=(ToolCall(id="x", name="a"),))),
            Generation(message=AssistantMessage(tool_calls=(ToolCall(id="y", name="a"),))),
        )
    )
    result = await ToolCallingManager().execute_tool_calls(prompt_with([a]), response)
    assert [o.call.id for o in result.outcomes] == ["x"]
    assert result.conversation_history[2] == response.generations[1].message


@pytest.mark.parametrize(
    "response",
    [
        ChatResponse(),
        ChatResponse(generations=(Generation(message=AssistantMessage(text="done")),)),
    ],
)
async def test_no_tool_calls_is_a_model_response_error(response: ChatResponse) -> None:
    with pytest.raises(ModelResponseError):
        await ToolCallingManager().execute_tool_calls(prompt_with(), response)


async def test_tools_get_a_copy_of_the_request_context() -> None:
    a = RecordingTool("a")
    await ToolCallingManager().execute_tool_calls(
        prompt_with([a], context={"tenant_id": "acme", "user_id": 7}), calls_to("a")
    )
    ((_, context),) = a.calls
    assert isinstance(context, ToolContext)
    assert context == {"tenant_id": "acme", "user_id": 7}
    assert context.tenant_id == "acme"


async def test_tools_get_an_empty_context_when_the_request_has_none() -> None:
    a = RecordingTool("a")
    await ToolCallingManager().execute_tool_calls(prompt_with([a]), calls_to("a"))
    ((_, context),) = a.calls
    assert isinstance(context, ToolContext)
    assert len(context) == 0


async def test_only_offered_tools_run_unless_unoffered_ones_are_allowed() -> None:
    offered, hidden = RecordingTool("a", result="shown"), RecordingTool("admin.purge")
    resolver = StaticToolResolver([offered, hidden])
    manager = ToolCallingManager(resolver=resolver)
    result = await manager.execute_tool_calls(
        prompt_with([offered]), calls_to("admin.purge", "admin_purge", "a")
    )
    assert [str(o.status) for o in result.outcomes] == ["unknown_tool", "unknown_tool", "ok"]
    assert "No available tool has a similar name" in result.outcomes[1].response.data
    assert hidden.calls == []
    by_name = Prompt(messages=prompt_with([]).messages, options=ChatOptions(tool_names=("a",)))
    named = await manager.execute_tool_calls(by_name, calls_to("a", "admin.purge"))
    assert [str(o.status) for o in named.outcomes] == ["ok", "unknown_tool"]
    assert hidden.calls == []


async def test_resolver_tools_run_and_request_tools_take_precedence() -> None:
    local, shared, remote = (
        RecordingTool("a", result="local"),
        RecordingTool("a"),
        RecordingTool("crm.find", result="remote"),
    )
    manager = ToolCallingManager(
        resolver=StaticToolResolver([shared, remote]), allow_unoffered_tools=True
    )
    result = await manager.execute_tool_calls(prompt_with([local]), calls_to("a", "crm__find"))
    assert [(o.tool_name, o.response.data) for o in result.outcomes] == [
        ("a", "local"),
        ("crm.find", "remote"),
    ]
    assert shared.calls == []


async def test_calls_run_concurrently_bounded_by_max_concurrency() -> None:
    a = RecordingTool("a", delay=0.01)
    manager = ToolCallingManager(max_concurrency=3)
    result = await manager.execute_tool_calls(prompt_with([a]), calls_to(*["a"] * 10))
    assert a.peak == 3
    assert all(o.ok for o in result.outcomes)


async def test_sync_tools_run_in_worker_threads_at_the_same_time() -> None:
    barrier = threading.Barrier(3, timeout=10)

    @tool
    def meet(n: int) -> str:
        """Waits until three calls are running at once."""
        barrier.wait()
        return f"met {n}"

    calls = [ToolCall(id=str(i), name="meet", arguments=f'{{"n": {i}}}') for i in range(3)]
    result = await ToolCallingManager().execute_tool_calls(
        prompt_with([FunctionTool.from_function(meet)]), response_with(*calls)
    )
    assert [o.response.data for o in result.outcomes] == ["met 0", "met 1", "met 2"]


async def test_responses_keep_call_order_whatever_the_finish_order() -> None:
    tools = [RecordingTool(f"t{i}", result=str(i), delay=0.03 - i * 0.01) for i in range(3)]
    result = await ToolCallingManager().execute_tool_calls(
        prompt_with(tools), calls_to("t0", "t1", "t2")
    )
    assert [r.data for r in result.responses] == ["0", "1", "2"]


async def test_outcomes_carry_durations_and_exceptions() -> None:
    error = ValueError("bad")
    ok, bad = RecordingTool("ok", delay=0.001), RecordingTool("bad", raises=error)
    result = await ToolCallingManager().execute_tool_calls(
        prompt_with([ok, bad]), calls_to("ok", "bad", "missing")
    )
    first, second, third = result.outcomes
    assert first.duration_ms > 0
    assert first.exception is None
    assert second.exception is error
    assert second.status is ToolCallStatus.ERROR
    assert third.duration_ms == 0.0
    assert third.tool_name is None


async def test_non_text_results_become_json() -> None:
    tools = [RecordingTool("d", result={"ü": [1, 2]}), RecordingTool("n", result=3.5)]
    result = await ToolCallingManager().execute_tool_calls(prompt_with(tools), calls_to("d", "n"))
    assert [r.data for r in result.responses] == ['{"ü": [1, 2]}', "3.5"]


# --- failures and cancellation -------------------------------------------------------------------


async def test_a_raised_error_cancels_the_other_running_calls() -> None:
    slow = RecordingTool("slow", delay=30)
    fatal = RecordingTool("fatal", raises=PermissionError("denied by OS"))
    manager = ToolCallingManager(
        exception_processor=DefaultToolExceptionProcessor(rethrow=(PermissionError,))
    )
    with pytest.raises(PermissionError, match="denied by OS"):
        await manager.execute_tool_calls(prompt_with([slow, fatal]), calls_to("slow", "fatal"))
    assert slow.cancelled


async def test_memory_error_is_never_turned_into_feedback() -> None:
    class Swallow:
        def process(self, tool_name: str, exc: Exception) -> str:
            return "swallowed"

    tool_ = RecordingTool("a", raises=MemoryError())
    manager = ToolCallingManager(exception_processor=Swallow())
    with pytest.raises(MemoryError):
        await manager.execute_tool_calls(prompt_with([tool_]), calls_to("a"))
    other = RecordingTool("b", raises=ValueError("x"))
    result = await manager.execute_tool_calls(prompt_with([other]), calls_to("b"))
    assert result.responses[0].data == "swallowed"


async def test_timeout_cancels_the_tool() -> None:
    slow = RecordingTool("slow", delay=30, metadata=ToolMetadata(timeout=0.01))
    result = await ToolCallingManager().execute_tool_calls(prompt_with([slow]), calls_to("slow"))
    assert result.outcomes[0].status is ToolCallStatus.TIMEOUT
    assert slow.cancelled


async def test_tool_metadata_timeout_wins_over_the_default() -> None:
    quick = RecordingTool("quick", delay=0.02, metadata=ToolMetadata(timeout=10))
    manager = ToolCallingManager(default_timeout=0.001)
    result = await manager.execute_tool_calls(prompt_with([quick]), calls_to("quick"))
    assert result.outcomes[0].ok


async def test_a_tools_own_timeout_error_is_an_ordinary_error() -> None:
    http = RecordingTool("http", raises=TimeoutError("upstream timed out"))
    manager = ToolCallingManager(default_timeout=10)
    result = await manager.execute_tool_calls(prompt_with([http]), calls_to("http"))
    assert result.outcomes[0].status is ToolCallStatus.ERROR
    assert result.responses[0].data == "upstream timed out"


async def test_cancelling_the_round_cancels_its_tools() -> None:
    tools = [RecordingTool("a", delay=30), RecordingTool("b", delay=30)]
    manager = ToolCallingManager()
    task = asyncio.create_task(manager.execute_tool_calls(prompt_with(tools), calls_to("a", "b")))
    for t in tools:
        await t.started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert all(t.cancelled for t in tools)


# --- the pipeline ------------------------------------------------------------------------------


def denying(label: str, order: list[str], text: str | None) -> ToolCallInterceptor:
    """An interceptor that records itself, then denies with ``text`` or lets the call go on."""

    async def step(invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        order.append(label)
        if text is None:
            return await proceed(invocation)
        return answer(invocation, text)

    return step


async def test_a_denying_interceptor_answers_the_call_and_the_tool_does_not_run() -> None:
    seen: list[ToolContext] = []

    def no_deletes(context: ToolContext, tool: Tool, arguments: Mapping[str, Any]) -> bool | str:
        seen.append(context)
        if tool.definition.name == "delete":
            return f"Deleting {arguments['path']} needs approval."
        return True

    delete, read = RecordingTool("delete"), RecordingTool("read")
    manager = ToolCallingManager(authorize=no_deletes)
    response = response_with(
        ToolCall(id="1", name="delete", arguments='{"path": "/etc"}'),
        ToolCall(id="2", name="read", arguments=""),
    )
    result = await manager.execute_tool_calls(
        prompt_with([delete, read], context={"user_id": "u1"}), response
    )
    assert [(o.status, o.response.data) for o in result.outcomes] == [
        (ToolCallStatus.DENIED, "Deleting /etc needs approval."),
        (ToolCallStatus.OK, "ok"),
    ]
    assert result.responses[0].is_error
    assert delete.calls == []
    assert seen == [{"user_id": "u1"}, {"user_id": "u1"}]


async def test_a_rounds_interceptors_run_outside_the_managers_and_the_first_denial_wins() -> None:
    order: list[str] = []
    manager = ToolCallingManager(interceptors=[denying("manager", order, None)])
    a = RecordingTool("a")
    result = await manager.execute_tool_calls(
        prompt_with([a]),
        calls_to("a"),
        interceptors=[denying("round-1", order, None), denying("round-2", order, "no")],
    )
    assert order == ["round-1", "round-2"]
    assert result.responses[0].data == "no"
    assert a.calls == []
    assert len(manager.guards.interceptors) == 1  # a round's interceptors are not kept
    order.clear()
    await manager.execute_tool_calls(
        prompt_with([a]), calls_to("a"), interceptors=[denying("round", order, None)]
    )
    assert order == ["round", "manager"]
    assert len(a.calls) == 1


async def test_interceptors_are_not_consulted_for_calls_that_cannot_run() -> None:
    consulted: list[str] = []

    async def record(invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        consulted.append(invocation.call.id)
        return await proceed(invocation)

    response = response_with(
        ToolCall(id="unknown", name="nope"),
        ToolCall(id="bad-json", name="a", arguments="{"),
        ToolCall(id="fine", name="a"),
    )
    await ToolCallingManager(interceptors=[record]).execute_tool_calls(
        prompt_with([RecordingTool("a")]), response
    )
    assert consulted == ["fine"]


async def test_a_raising_interceptor_aborts_the_round() -> None:
    async def broken(invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        raise RuntimeError("policy store unavailable")

    a = RecordingTool("a")
    with pytest.raises(RuntimeError, match="policy store unavailable"):
        await ToolCallingManager().execute_tool_calls(
            prompt_with([a]), calls_to("a", "a"), interceptors=[broken]
        )
    assert a.calls == []


# --- one call ------------------------------------------------------------------------------------


async def test_run_call_answers_one_call_through_validation_and_the_pipeline() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    order: list[str] = []
    manager = ToolCallingManager(interceptors=[denying("manager", order, None)])
    tools = as_tools(add)
    ok = await manager.run_call(
        ToolCall(id="g1", name="add", arguments='{"a": "2", "b": 3}'),
        tools,
        interceptors=[denying("call", order, None)],
    )
    assert (ok.status, ok.response.data, ok.tool_name) == (ToolCallStatus.OK, "5", "add")
    assert order == ["call", "manager"]
    invalid = await manager.run_call(ToolCall(id="g2", name="add", arguments='{"a": 1}'), tools)
    assert invalid.status is ToolCallStatus.INVALID_ARGUMENTS
    unknown = await manager.run_call(ToolCall(id="g3", name="sub", arguments="{}"), tools)
    assert unknown.status is ToolCallStatus.UNKNOWN_TOOL
    denied = await manager.run_call(
        ToolCall(id="g4", name="add", arguments='{"a": 1, "b": 1}'),
        tools,
        ToolContext(user_id="u1"),
        interceptors=[denying("call", order, "not for you")],
    )
    assert (denied.status, denied.response.data) == (ToolCallStatus.DENIED, "not for you")


async def test_run_call_hands_the_context_to_the_tool() -> None:
    who = RecordingTool("who")
    await ToolCallingManager().run_call(
        ToolCall(id="g1", name="who", arguments=""), [who], ToolContext(tenant_id="t1")
    )
    assert who.calls == [("{}", {"tenant_id": "t1"})]


# --- limits -------------------------------------------------------------------------------------


async def test_limit_error_carries_the_complete_round() -> None:
    a = RecordingTool("a")
    manager = ToolCallingManager(limits=CallLimits(per_tool=1, on_breach="raise"))
    with pytest.raises(ToolCallLimitError) as info:
        await manager.execute_tool_calls(prompt_with([a]), calls_to("a", "a"))
    partial = info.value.partial
    assert isinstance(partial, ToolExecutionResult)
    assert [o.status for o in partial.outcomes] == [ToolCallStatus.OK, ToolCallStatus.LIMIT]
    assert [r.id for r in partial.responses] == ["id0", "id1"]
    assert len(a.calls) == 1


# --- definitions, sync wrapper, configuration ---------------------------------------------------


def test_resolve_tool_definitions() -> None:
    a, b, c = RecordingTool("a"), RecordingTool("b"), RecordingTool("crm.find")
    manager = ToolCallingManager(resolver=StaticToolResolver([b, c]))
    options = ChatOptions(tools=(a,), tool_names=("b", "crm__find", "a", "b"))
    names = [d.name for d in manager.resolve_tool_definitions(options)]
    assert names == ["a", "b", "crm.find"]


def test_resolve_tool_definitions_unknown_name() -> None:
    manager = ToolCallingManager(resolver=StaticToolResolver([RecordingTool("get_weather")]))
    with pytest.raises(ToolNotFoundError) as info:
        manager.resolve_tool_definitions(ChatOptions(tool_names=("get_wether",)))
    assert info.value.suggestions == ("get_weather",)


def test_sync_wrapper_outside_a_loop() -> None:
    result = ToolCallingManager().execute_tool_calls_sync(
        prompt_with([RecordingTool("a", result="A")]), calls_to("a")
    )
    assert result.responses[0].data == "A"


async def test_sync_wrapper_inside_a_running_loop() -> None:
    result = ToolCallingManager().execute_tool_calls_sync(
        prompt_with([RecordingTool("a", result="A")]), calls_to("a")
    )
    assert result.responses[0].data == "A"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_concurrency": 0},
        {"default_timeout": 0},
        {"unknown_tool": "ignore"},
        {"invalid_arguments": "crash"},
    ],
)
def test_invalid_configuration(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError):
        ToolCallingManager(**kwargs)


async def test_a_tool_error_is_logged_with_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    bad = RecordingTool("bad", raises=ValueError("broken"))
    with caplog.at_level("WARNING", logger="toolrelay.execution"):
        await ToolCallingManager().execute_tool_calls(prompt_with([bad]), calls_to("bad"))
    (record,) = caplog.records
    assert "'bad'" in record.getMessage()
    assert record.exc_info is not None
    assert record.exc_info[1] is bad.raises
