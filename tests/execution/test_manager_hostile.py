"""Hostile tools and hostile calls: whatever they do, every call of the round is answered."""

from __future__ import annotations

import asyncio
import logging
import math
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from toolrelay.exceptions import ConfigurationError, ToolContextError
from toolrelay.execution import (
    DEFAULT_TIMEOUT,
    StaticToolResolver,
    ToolCallingManager,
    ToolCallStatus,
    ToolExecutionResult,
)
from toolrelay.execution import _resolution as resolution_module
from toolrelay.messages import ToolCall, UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import tool_call_response
from toolrelay.tools import FunctionTool, Tool, ToolContext, WorkerPool, WorkerPoolBusy, tool
from toolrelay.tools._base import ToolDefinition, ToolMetadata


class Unprintable(Exception):
    """An exception whose message cannot be read."""

    def __str__(self) -> str:
        raise RuntimeError("__str__ is broken")

    def __repr__(self) -> str:
        raise RuntimeError("__repr__ is broken")


class Unconvertible:
    """A value that cannot be written as JSON nor as text."""

    def __str__(self) -> str:
        raise ValueError("no text for you")

    __repr__ = __str__


class Hostile:
    """An async tool that does one hostile thing."""

    def __init__(self, name: str, behaviour: Any, *, timeout: float | None = None) -> None:
        self.definition = ToolDefinition(name=name, description=name)
        self.metadata = ToolMetadata(timeout=timeout)
        self.behaviour = behaviour

    async def call(self, arguments_json: str, context: Mapping[str, Any] | None = None) -> Any:
        if isinstance(self.behaviour, BaseException):
            raise self.behaviour
        if callable(self.behaviour):
            return await self.behaviour()
        return self.behaviour


@tool
def fine(n: int) -> str:
    """A tool that works."""
    return f"fine {n}"


def prompt_with(*tools: Tool, context: Mapping[str, Any] | None = None) -> Prompt:
    return Prompt(
        messages=(UserMessage(text="go"),),
        options=ChatOptions(tools=tools, tool_context=context or {}),
    )


async def run(manager: ToolCallingManager, tools: list[Tool], *calls: str) -> ToolExecutionResult:
    response = tool_call_response(
        *(ToolCall(id=f"c{i}", name=name, arguments="{}") for i, name in enumerate(calls)),
        ToolCall(id="last", name="fine", arguments='{"n": 1}'),
    )
    return await manager.execute_tool_calls(
        prompt_with(*tools, FunctionTool.from_function(fine)), response
    )


# --- broken exceptions, results and processors ------------------------------------------------


async def test_an_exception_whose_str_and_repr_raise_is_an_error_response() -> None:
    tool_ = Hostile("broken", Unprintable())
    result = await run(ToolCallingManager(), [tool_], "broken")
    broken, last = result.outcomes
    assert broken.status is ToolCallStatus.ERROR
    assert broken.response.data == "Exception occurred in tool: broken (Unprintable)"
    assert isinstance(broken.exception, Unprintable)
    assert last.ok
    assert last.response.data == "fine 1"


async def test_a_failing_exception_processor_costs_only_its_own_text() -> None:
    class Buggy:
        def process(self, tool_name: str, exc: Exception) -> str:
            return {"not": "a string"}["missing"]

    class NotText:
        def process(self, tool_name: str, exc: Exception) -> str:
            return 42  # type: ignore[return-value]

    for processor in (Buggy(), NotText()):
        manager = ToolCallingManager(exception_processor=processor)
        result = await run(manager, [Hostile("boom", RuntimeError("disk full"))], "boom")
        assert [o.status for o in result.outcomes] == [ToolCallStatus.ERROR, ToolCallStatus.OK]
        assert result.outcomes[0].response.data == "disk full"


async def test_a_processor_that_raises_on_purpose_still_aborts_the_round() -> None:
    class Strict:
        def process(self, tool_name: str, exc: Exception) -> str:
            raise LookupError("stop") from exc

    manager = ToolCallingManager(exception_processor=Strict())
    with pytest.raises(LookupError, match="stop"):
        await run(manager, [Hostile("boom", RuntimeError("disk full"))], "boom")


async def test_a_result_that_cannot_become_text_is_an_error_response() -> None:
    result = await run(ToolCallingManager(), [Hostile("odd", Unconvertible())], "odd")
    odd, last = result.outcomes
    assert odd.status is ToolCallStatus.ERROR
    assert odd.response.data == (
        "Tool 'odd' returned a value that cannot be turned into text (ValueError)."
    )
    assert last.ok


async def test_a_function_tool_returning_unconvertible_values_is_an_error_response() -> None:
    @tool
    def weird() -> object:
        """Returns something odd."""
        return Unconvertible()

    result = await run(ToolCallingManager(), [FunctionTool.from_function(weird)], "weird")
    assert [o.status for o in result.outcomes] == [ToolCallStatus.ERROR, ToolCallStatus.OK]


@pytest.mark.parametrize("raised", [SystemExit(2), GeneratorExit(), asyncio.CancelledError()])
async def test_system_exit_and_the_like_from_a_tool_end_only_its_call(
    raised: BaseException,
) -> None:
    result = await run(ToolCallingManager(), [Hostile("quits", raised)], "quits")
    quits, last = result.outcomes
    assert quits.status is ToolCallStatus.ERROR
    assert quits.exception is not None
    assert quits.exception.__cause__ is raised
    assert last.ok


async def test_system_exit_from_a_sync_tool_in_its_thread_ends_only_its_call() -> None:
    @tool
    def cli() -> str:
        """Parses arguments like a command line program."""
        raise SystemExit("usage: cli [-h]")

    result = await run(ToolCallingManager(), [FunctionTool.from_function(cli)], "cli")
    assert result.outcomes[0].status is ToolCallStatus.ERROR
    assert result.outcomes[0].response.data == "usage: cli [-h]"
    assert result.outcomes[1].ok


@pytest.mark.parametrize(
    "raised", [GeneratorExit(), StopIteration(), asyncio.CancelledError()], ids=type
)
async def test_what_no_future_carries_from_a_sync_tool_ends_only_its_call(
    raised: BaseException,
) -> None:
    @tool(timeout=5)
    def odd() -> str:
        """Raises what asyncio futures handle badly."""
        raise raised

    result = await run(ToolCallingManager(), [FunctionTool.from_function(odd)], "odd")
    failed, last = result.outcomes
    assert failed.status is ToolCallStatus.ERROR  # not a timeout, nor the round's end
    assert failed.exception is not None
    assert failed.exception.__cause__ is raised
    assert last.ok


@pytest.mark.parametrize("raised", [KeyboardInterrupt(), MemoryError()])
async def test_keyboard_interrupt_and_memory_error_propagate(raised: BaseException) -> None:
    with pytest.raises(type(raised)):
        await run(ToolCallingManager(), [Hostile("x", raised)], "x")


async def test_cancelling_the_round_from_outside_propagates() -> None:
    started = asyncio.Event()

    async def forever() -> str:
        started.set()
        await asyncio.sleep(30)
        return "never"

    task = asyncio.ensure_future(run(ToolCallingManager(), [Hostile("slow", forever)], "slow"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


# --- a developer's mistake reaches the developer ---------------------------------------------


async def test_a_missing_tool_context_raises_to_the_caller() -> None:
    @tool
    def whoami(context: ToolContext) -> str:
        """Who is asking."""
        return str(context.tenant_id)

    with pytest.raises(ToolContextError, match="requires a ToolContext"):
        await run(ToolCallingManager(), [FunctionTool.from_function(whoami)], "whoami")


class Recorder(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


async def test_a_failing_tool_writes_nothing_to_stderr_without_logging_configured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An application that configured no logging: no handler anywhere, so logging would fall
    # back to its last resort, which writes warnings and tracebacks to stderr.
    last_resort = Recorder()
    monkeypatch.setattr(logging, "lastResort", last_resort)
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    result = await run(ToolCallingManager(), [Hostile("boom", RuntimeError("db-7 down"))], "boom")
    assert result.outcomes[0].response.data == "db-7 down"  # the model still reads it
    assert last_resort.records == []


async def test_a_failing_tool_is_logged_when_logging_is_configured(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="toolrelay.execution")
    await run(ToolCallingManager(), [Hostile("boom", Unprintable())], "boom")
    (record,) = [r for r in caplog.records if r.name == "toolrelay.execution"]
    assert "tool 'boom' raised" in record.getMessage()
    assert record.exc_info is not None


# --- timeouts ----------------------------------------------------------------------------------


def test_the_default_timeout_is_finite_and_none_means_no_limit() -> None:
    assert ToolCallingManager().default_timeout == DEFAULT_TIMEOUT == 120.0
    assert ToolCallingManager(default_timeout=None).default_timeout is None
    assert ToolCallingManager(default_timeout=2.5).default_timeout == 2.5


@pytest.mark.parametrize("seconds", [math.nan, math.inf, -math.inf, 0, -1])
def test_timeouts_that_are_not_finite_positive_numbers_are_refused(seconds: float) -> None:
    with pytest.raises(ConfigurationError, match="finite number of seconds"):
        ToolCallingManager(default_timeout=seconds)
    with pytest.raises(ConfigurationError, match="finite number of seconds"):
        ToolMetadata(timeout=seconds)


async def test_the_default_timeout_applies_to_a_hanging_async_tool() -> None:
    async def forever() -> str:
        await asyncio.sleep(30)
        return "never"

    manager = ToolCallingManager(default_timeout=0.05)
    result = await run(manager, [Hostile("hangs", forever)], "hangs")
    hangs, last = result.outcomes
    assert hangs.status is ToolCallStatus.TIMEOUT
    assert hangs.response.data == "Tool 'hangs' timed out after 0.05 s and was cancelled."
    assert hangs.result_unknown
    assert last.ok


# --- stuck synchronous tools -------------------------------------------------------------------


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()  # lets the stuck threads of a test end


async def test_stuck_sync_tools_never_block_other_calls_and_a_full_pool_refuses_at_once(
    release: threading.Event,
) -> None:
    @tool(timeout=0.05)
    def stuck() -> str:
        """Never returns in time."""
        release.wait(30)
        return "late"

    @tool(timeout=5.0)
    def lookup() -> str:
        """A quick synchronous tool."""
        return "found"

    async def quick() -> str:
        return "quick"

    pool = WorkerPool(2, tool_share=2, max_threads=2)
    manager = ToolCallingManager(sync_workers=pool)
    prompt = prompt_with(
        FunctionTool.from_function(stuck),
        FunctionTool.from_function(lookup),
        Hostile("quick", quick),
    )

    def calls(*names: str) -> Any:
        return tool_call_response(*(ToolCall(id=f"c{i}", name=n) for i, n in enumerate(names)))

    first = await manager.execute_tool_calls(prompt, calls("stuck", "stuck"))
    assert [o.status for o in first.outcomes] == [ToolCallStatus.TIMEOUT] * 2
    assert first.outcomes[0].response.data == (
        "Tool 'stuck' timed out after 0.05 s. It could not be stopped and may still finish, "
        "but its result will not reach you."
    )
    assert first.outcomes[0].result_unknown
    late = first.outcomes[0].late_result
    assert late is not None
    assert pool.status().stuck == 2

    # Every thread the pool may have is stuck: a sync call is refused at once, not after its
    # timeout of 5 s, saying why; an async tool is not held up at all.
    second = await manager.execute_tool_calls(prompt, calls("lookup", "quick"))
    refused, quick_outcome = second.outcomes
    assert refused.status is ToolCallStatus.ERROR
    assert refused.duration_ms < 2_000
    assert refused.response.data == (
        "Tool 'lookup' is busy: all 2 threads for synchronous tools are taken by calls that "
        "timed out and are still running. This call did not run; try again later or use "
        "another tool."
    )
    assert not refused.result_unknown  # it never ran
    assert isinstance(refused.exception, WorkerPoolBusy)
    assert quick_outcome.ok

    release.set()
    assert await asyncio.wrap_future(late) == "late"  # the real result, for whoever wants it
    other = first.outcomes[1].late_result
    assert other is not None
    await asyncio.wrap_future(other)
    third = await manager.execute_tool_calls(prompt, calls("lookup"))
    assert third.outcomes[0].response.data == "found"
    assert pool.status().stuck == 0


async def test_a_sync_call_waiting_for_a_running_thread_times_out_saying_so() -> None:
    free = threading.Event()

    @tool(timeout=5.0)
    def slow() -> str:
        """Runs a while, within its timeout."""
        free.wait(5)
        return "slow"

    @tool(timeout=0.1)
    def lookup() -> str:
        """A quick synchronous tool."""
        return "found"

    pool = WorkerPool(1)
    manager = ToolCallingManager(sync_workers=pool)
    prompt = prompt_with(FunctionTool.from_function(slow), FunctionTool.from_function(lookup))
    round_ = asyncio.ensure_future(
        manager.execute_tool_calls(prompt, tool_call_response(ToolCall(id="s", name="slow")))
    )
    while not pool.status().busy:  # noqa: ASYNC110 - a pool has no event
        await asyncio.sleep(0.005)
    waited = await manager.execute_tool_calls(
        prompt, tool_call_response(ToolCall(id="l", name="lookup"))
    )
    free.set()
    assert (await round_).outcomes[0].response.data == "slow"
    outcome = waited.outcomes[0]
    assert outcome.status is ToolCallStatus.TIMEOUT
    assert outcome.response.data == (
        "Tool 'lookup' did not start within its timeout of 0.1 s: all 1 threads for synchronous "
        "tools are busy. It did not run; try again later or answer without it."
    )
    assert not outcome.result_unknown


async def test_sync_tools_do_not_run_in_the_default_executor() -> None:
    @tool
    def where() -> str:
        """Names its thread."""
        return threading.current_thread().name

    result = await run(ToolCallingManager(), [FunctionTool.from_function(where)], "where")
    assert result.outcomes[0].response.data.startswith("toolrelay-tool-")


# --- bounded input -----------------------------------------------------------------------------


class CountingResolver(StaticToolResolver):
    def __init__(self, tools: list[Tool]) -> None:
        super().__init__(tools)
        self.asked: list[int] = []

    def resolve(self, name: str) -> Tool | None:
        self.asked.append(len(name))
        return super().resolve(name)


async def test_a_huge_name_is_refused_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    folded: list[int] = []
    real_fold = resolution_module.fold_name

    def spy(name: str) -> str:
        folded.append(len(name))
        return real_fold(name)

    monkeypatch.setattr(resolution_module, "fold_name", spy)
    resolver = CountingResolver([FunctionTool.from_function(fine)])
    manager = ToolCallingManager(resolver=resolver, allow_unoffered_tools=True)
    huge = "get_" + "x" * 10_000_000
    result = await run(manager, [], huge)
    refused = result.outcomes[0]
    assert refused.status is ToolCallStatus.UNKNOWN_TOOL
    assert refused.response.data.startswith(
        "The tool name in this call is 10,000,004 characters long; tool names have at most 256."
    )
    assert max(folded, default=0) <= 256
    assert all(length <= 256 for length in resolver.asked)
    assert result.outcomes[1].ok


def test_lenient_matching_and_suggestions_ignore_huge_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folded: list[int] = []
    monkeypatch.setattr(resolution_module, "fold_name", lambda n: folded.append(len(n)) or n)
    huge = "getWeather" * 1_000
    assert resolution_module.match_tool_name(huge, ["get_weather"]) is None
    assert resolution_module.closest_names(huge, ["get_weather"]) == []
    assert folded == []


async def test_huge_arguments_are_refused_unread() -> None:
    manager = ToolCallingManager(max_arguments_length=1_000)
    response = tool_call_response(
        ToolCall(id="c0", name="fine", arguments='{"n": 1' + " " * 5_000 + "}")
    )
    result = await manager.execute_tool_calls(
        prompt_with(FunctionTool.from_function(fine)), response
    )
    (outcome,) = result.outcomes
    assert outcome.status is ToolCallStatus.INVALID_ARGUMENTS
    assert "The arguments are 5,008 characters long; at most 1,000 are accepted." in (
        outcome.response.data
    )


@pytest.mark.parametrize("option", ["max_name_length", "max_arguments_length", "max_concurrency"])
def test_limits_are_checked(option: str) -> None:
    with pytest.raises(ConfigurationError, match=option):
        ToolCallingManager(**{option: 0})
