"""Interceptors: the chain around each run, its order, and changed arguments."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from toolrelay.execution import (
    Proceed,
    ToolCallingManager,
    ToolCallInterceptor,
    ToolCallOutcome,
    ToolCallStatus,
    ToolInvocation,
    answer,
    proceed_with_arguments,
    validate_call_arguments,
)
from toolrelay.messages import ToolCall, ToolResponse, UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import tool_call_response
from toolrelay.tools import FunctionTool, tool

runs: list[int] = []


@tool
def double(x: int) -> int:
    """Double a number.

    Args:
        x: The number.
    """
    runs.append(x)
    return 2 * x


async def execute(interceptors: list[Any], *calls: dict[str, Any], **kwargs: Any) -> Any:
    runs.clear()
    manager = ToolCallingManager(interceptors=interceptors, **kwargs)
    prompt = Prompt(
        messages=(UserMessage(text="go"),),
        options=ChatOptions(tools=(FunctionTool.from_function(double),)),
    )
    response = tool_call_response(
        *(ToolCall(id=f"c{i}", name="double", arguments=json.dumps(a)) for i, a in enumerate(calls))
    )
    return await manager.execute_tool_calls(prompt, response)


async def test_interceptors_run_outermost_first_around_the_tool() -> None:
    seen: list[str] = []

    def named(name: str) -> ToolCallInterceptor:
        async def step(invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
            seen.append(f"{name} in")
            outcome = await proceed(invocation)
            seen.append(f"{name} out ({outcome.status})")
            return outcome

        return step

    result = await execute([named("a"), named("b")], {"x": 2})
    assert result.outcomes[0].response.data == "4"
    assert seen == ["a in", "b in", "b out (ok)", "a out (ok)"]


async def test_an_interceptor_may_answer_without_running_the_tool() -> None:
    async def cached(invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        call = invocation.call
        return ToolCallOutcome(
            call=call,
            tool_name=invocation.tool_name,
            response=ToolResponse(id=call.id, name=invocation.tool_name, data="42"),
            status=ToolCallStatus.OK,
        )

    result = await execute([cached], {"x": 2})
    assert result.outcomes[0].response.data == "42"
    assert runs == []


async def test_an_interceptor_that_answers_stops_the_chain_before_inner_steps() -> None:
    reached: list[str] = []

    async def deny(invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        return answer(invocation, "no")

    async def step(invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        reached.append(invocation.call.id)
        return await proceed(invocation)

    result = await execute([deny, step], {"x": 1})
    assert result.outcomes[0].status is ToolCallStatus.DENIED
    assert result.outcomes[0].response.data == "no"
    assert result.outcomes[0].response.is_error
    assert reached == []
    assert runs == []


async def test_the_invocation_reads_its_arguments_like_a_mapping() -> None:
    seen: list[Any] = []

    async def look(invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        arguments = invocation.arguments
        seen.append(
            (
                arguments["x"],
                arguments.get("y", "-"),
                "x" in arguments,
                dict(arguments),
                {**arguments},
                len(arguments),
                arguments.text,
            )
        )
        return await proceed(invocation)

    await execute([look], {"x": "3"})
    assert seen == [(3, "-", True, {"x": 3}, {"x": 3}, 1, '{"x": 3}')]


async def test_changed_arguments_pass_the_outer_arguments_check_first() -> None:
    checked: list[dict[str, Any]] = []

    async def outer(invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        async def check(changed: ToolInvocation, inner: Proceed) -> ToolCallOutcome:
            checked.append(dict(changed.arguments.values))
            return await inner(changed)

        return await proceed(dataclasses.replace(invocation, arguments_check=check))

    async def editor(invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        arguments = validate_call_arguments(invocation.tool, {"x": 5})
        return await proceed_with_arguments(invocation, arguments, proceed)

    result = await execute([outer, editor], {"x": 1})
    assert result.outcomes[0].response.data == "10"
    assert checked == [{"x": 5}]
    assert runs == [5]
    without_check = await execute([editor], {"x": 1})
    assert without_check.outcomes[0].response.data == "10"
