"""A forwarding tool (``call_tool``) runs the tool it names on the one path every call takes."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from toolrelay.exceptions import ToolContextError, ToolExecutionError
from toolrelay.execution import (
    Approve,
    ForwardingTool,
    ToolCallingManager,
    ToolCallStatus,
    ToolInvocation,
)
from toolrelay.execution._pipeline import META_TOOL
from toolrelay.messages import ToolCall, UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import tool_call_response
from toolrelay.tools import FunctionTool, Tool, ToolContext, ToolDefinition, ToolMetadata, tool

paid: list[tuple[str, int]] = []


@tool(name="refund.issue", requires_approval=True, idempotency_key=["refund_id"])
def issue(refund_id: str, amount: int) -> str:
    """Issue a refund."""
    paid.append((refund_id, amount))
    return f"refunded {amount} on {refund_id}"


@tool(name="orders.find", context_keys=("tenant_id",))
def find(order_id: str) -> str:
    """Find an order."""
    return f"order {order_id}"


ISSUE = FunctionTool.from_function(issue)
FIND = FunctionTool.from_function(find)
HIDDEN = "Tool {name} is not available."


@pytest.fixture(autouse=True)
def _fresh() -> None:
    paid.clear()


async def _forward(name: str, context: ToolContext) -> Tool | str:
    found = {t.definition.name: t for t in (ISSUE, FIND)}.get(name)
    return found if found is not None else HIDDEN.format(name=repr(name))


CALL_TOOL = ForwardingTool(
    ToolDefinition(
        name="call_tool",
        description="Run a found tool.",
        input_schema={
            "type": "object",
            "properties": {"name": {"type": "string"}, "arguments": {"type": "object"}},
            "required": ["name"],
        },
    ),
    _forward,
    ToolMetadata(extra={META_TOOL: True}),
)

asked: list[tuple[str, Mapping[str, Any]]] = []


async def approve(invocation: ToolInvocation, /) -> Approve:
    asked.append((invocation.tool_name, dict(invocation.arguments)))
    return Approve()


async def run(arguments: object, **context: Any) -> Any:
    call = ToolCall(id="c9", name="call_tool", arguments=arguments)  # type: ignore[arg-type]
    prompt = Prompt(
        messages=(UserMessage(text="go"),),
        options=ChatOptions(
            tools=(CALL_TOOL,), tool_context=context or {"tenant_id": "acme", "user_id": "u1"}
        ),
    )
    manager = ToolCallingManager(approval=approve)
    return await manager.execute_tool_calls(prompt, tool_call_response(call))


INNER = {"refund_id": "r-1", "amount": 5}


@pytest.mark.parametrize(
    "arguments",
    [
        json.dumps({"name": "refund.issue", "arguments": INNER}),
        json.dumps({"name": "refund.issue", "arguments": json.dumps(INNER)}),
        json.dumps(json.dumps({"name": "refund.issue", "arguments": INNER})),
        {"name": "refund.issue", "arguments": INNER},
        {"name": "refund.issue", "arguments": dict(INNER)},
    ],
    ids=["object", "inner-text", "outer-text-of-text", "mapping", "mapping-of-mapping"],
)
async def test_every_shape_runs_the_named_tool_under_its_guards(arguments: object) -> None:
    asked.clear()
    result = await run(arguments)
    (outcome,) = result.outcomes
    assert outcome.status is ToolCallStatus.OK
    assert outcome.tool_name == "refund.issue"
    assert outcome.response.id == "c9"
    assert asked == [("refund.issue", INNER)]  # the approval saw the named tool
    assert paid == [("r-1", 5)]
    assert outcome.call.name == "call_tool"  # answered under the model's own call
    assert outcome.idempotency_key is not None


async def test_a_repeat_through_call_tool_is_a_replay_of_the_named_tool() -> None:
    arguments = json.dumps({"name": "refund.issue", "arguments": INNER})
    manager = ToolCallingManager(approval=approve)
    prompt = Prompt(
        messages=(UserMessage(text="go"),),
        options=ChatOptions(tools=(CALL_TOOL, ISSUE), tool_context={"user_id": "u1"}),
    )
    first = ToolCall(id="a", name="call_tool", arguments=arguments)
    direct = ToolCall(id="b", name="refund.issue", arguments=json.dumps(INNER))
    result = await manager.execute_tool_calls(prompt, tool_call_response(first, direct))
    assert [o.replayed for o in result.outcomes] == [False, True]
    assert paid == [("r-1", 5)]


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        (json.dumps({"arguments": {}}), "- name: Field required"),
        (json.dumps({"name": 7}), "- name: Input should be a valid string"),
        (json.dumps({"name": "refund.issue", "extra": 1}), "- extra: Extra inputs"),
        ("[1]", "Arguments must be a JSON object, not an array."),
        ('{"a":' * 5_000 + "{}" + "}" * 5_000, "nested too deeply"),
    ],
)
async def test_unusable_call_tool_arguments_are_feedback_for_call_tool(
    arguments: str, problem: str
) -> None:
    (outcome,) = (await run(arguments)).outcomes
    assert outcome.status is ToolCallStatus.INVALID_ARGUMENTS
    assert outcome.response.data.startswith("Invalid arguments for tool 'call_tool':")
    assert problem in outcome.response.data
    assert paid == []


@pytest.mark.parametrize(
    ("inner", "problem"),
    [
        ([1, 2], "Arguments must be a JSON object, not an array."),
        ("{bad", "Arguments are not valid JSON"),
        (json.loads(json.dumps({"a": [[[[[]]]]]})) | {"refund_id": "r"}, "amount"),
    ],
)
async def test_the_named_tool_s_arguments_are_read_and_validated_as_its_own(
    inner: object, problem: str
) -> None:
    result = await run({"name": "refund.issue", "arguments": inner})
    (outcome,) = result.outcomes
    assert outcome.status is ToolCallStatus.INVALID_ARGUMENTS
    assert outcome.response.data.startswith("Invalid arguments for tool 'refund.issue':")
    assert problem in outcome.response.data
    assert paid == []


async def test_deeply_nested_named_arguments_are_feedback_not_a_crash() -> None:
    deep: dict[str, object] = {}
    for _ in range(5_000):
        deep = {"a": deep}
    (outcome,) = (await run({"name": "refund.issue", "arguments": deep})).outcomes
    assert outcome.status is ToolCallStatus.INVALID_ARGUMENTS
    assert "nested too deeply" in outcome.response.data


async def test_a_name_the_caller_cannot_use_gets_the_forwarder_s_answer() -> None:
    (outcome,) = (await run({"name": "admin.wipe", "arguments": {}})).outcomes
    assert outcome.status is ToolCallStatus.UNKNOWN_TOOL
    assert outcome.response.data == "Tool 'admin.wipe' is not available."
    assert outcome.tool_name is None


async def test_the_named_tool_s_context_is_checked_before_it_runs() -> None:
    with pytest.raises(ToolContextError, match=r"'orders\.find' requires 'tenant_id'"):
        await run({"name": "orders.find", "arguments": {"order_id": "o1"}}, user_id="u1")


async def test_a_forwarding_tool_never_runs_outside_a_manager() -> None:
    with pytest.raises(ToolExecutionError, match="only through a ToolCallingManager"):
        await CALL_TOOL.call(json.dumps({"name": "refund.issue", "arguments": INNER}))
    assert paid == []


async def test_the_wrapper_takes_no_level_from_the_named_tool_s_arguments() -> None:
    inner: dict[str, object] = {}
    for _ in range(99):
        inner = {"a": inner}  # 100 levels: as deep as a direct call may send
    (outcome,) = (await run({"name": "refund.issue", "arguments": inner})).outcomes
    assert outcome.status is ToolCallStatus.INVALID_ARGUMENTS
    assert "nested too deeply" not in outcome.response.data
    assert outcome.response.data.startswith("Invalid arguments for tool 'refund.issue':")
