"""Authorization: an allow/deny check (``authorize=``) as the head of a call's pipeline."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from toolrelay.execution import (
    IdempotencyInterceptor,
    InMemoryIdempotencyStore,
    ToolCallingManager,
    ToolCallStatus,
)
from toolrelay.execution._authorization import AuthorizationInterceptor
from toolrelay.execution._pipeline import META_TOOL
from toolrelay.messages import ToolCall, UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import tool_call_response
from toolrelay.tools import FunctionTool, Tool, ToolContext, ToolMetadata, as_tools, tool

ran: list[str] = []


@tool
def refund(order_id: str) -> str:
    """Refund an order."""
    ran.append(order_id)
    return f"refunded {order_id}"


@tool
def lookup(order_id: str) -> str:
    """Look up an order."""
    ran.append(f"lookup {order_id}")
    return f"{order_id} is paid"


TOOLS = as_tools(refund, lookup)


def prompt(context: Mapping[str, Any] | None = None) -> Prompt:
    return Prompt(
        messages=(UserMessage(text="go"),),
        options=ChatOptions(tools=TOOLS, tool_context=context or {"user_id": "u1"}),
    )


def calls(*names: str) -> Any:
    return tool_call_response(
        *(ToolCall(id=f"c{i}", name=n, arguments='{"order_id": "A1"}') for i, n in enumerate(names))
    )


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()


@pytest.mark.parametrize(
    ("verdict", "text"),
    [
        (False, "The call to tool 'refund' was denied."),
        ("", "The call to tool 'refund' was denied."),
        (None, "The call to tool 'refund' was denied."),  # anything but True denies
        ("Refunds need a lead.", "Refunds need a lead."),
    ],
)
async def test_anything_but_true_denies_with_the_reason_or_the_standard_text(
    verdict: object, text: str
) -> None:
    def check(context: ToolContext, tool: Tool, arguments: Mapping[str, Any]) -> Any:
        return True if tool.definition.name == "lookup" else verdict

    manager = ToolCallingManager(authorize=check)
    result = await manager.execute_tool_calls(prompt(), calls("refund", "lookup"))
    assert [(o.status, o.response.data) for o in result.outcomes] == [
        (ToolCallStatus.DENIED, text),
        (ToolCallStatus.OK, "A1 is paid"),
    ]
    assert ran == ["lookup A1"]


async def test_an_async_check_sees_the_context_tool_and_validated_arguments() -> None:
    asked: list[tuple[Any, str, dict[str, Any]]] = []

    async def check(context: ToolContext, tool: Tool, arguments: Mapping[str, Any]) -> bool:
        asked.append((context.user_id, tool.definition.name, dict(arguments)))
        return context.user_id == "lead"

    manager = ToolCallingManager(authorize=check)
    denied = await manager.execute_tool_calls(prompt(), calls("refund"))
    allowed = await manager.execute_tool_calls(prompt({"user_id": "lead"}), calls("refund"))
    assert denied.outcomes[0].status is ToolCallStatus.DENIED
    assert allowed.outcomes[0].status is ToolCallStatus.OK
    assert asked == [("u1", "refund", {"order_id": "A1"}), ("lead", "refund", {"order_id": "A1"})]


async def test_exempt_tools_are_never_asked_about() -> None:
    # A round's own check (as the gateway and the bridges add one per call) may exempt tools.
    asked: list[str] = []

    def never(context: ToolContext, tool: Tool, arguments: Mapping[str, Any]) -> bool:
        asked.append(tool.definition.name)
        return False

    interceptor = AuthorizationInterceptor(never, exempt=[TOOLS[1]])
    result = await ToolCallingManager().execute_tool_calls(
        prompt(), calls("refund", "lookup"), interceptors=[interceptor]
    )
    assert [o.status for o in result.outcomes] == [ToolCallStatus.DENIED, ToolCallStatus.OK]
    assert asked == ["refund"]


async def test_the_librarys_own_tools_are_never_asked_about() -> None:
    asked: list[str] = []

    def never(context: ToolContext, tool: Tool, arguments: Mapping[str, Any]) -> bool:
        asked.append(tool.definition.name)
        return False

    own = FunctionTool.from_function(lookup, metadata=ToolMetadata(extra={META_TOOL: True}))
    options = ChatOptions(tools=(TOOLS[0], own), tool_context={"user_id": "u1"})
    result = await ToolCallingManager(authorize=never).execute_tool_calls(
        Prompt(messages=(UserMessage(text="go"),), options=options), calls("refund", "lookup")
    )
    assert [o.status for o in result.outcomes] == [ToolCallStatus.DENIED, ToolCallStatus.OK]
    assert asked == ["refund"]


async def test_authorization_first_keeps_recorded_results_from_forbidden_callers() -> None:
    idempotent = FunctionTool.from_function(
        # Shared by the tenant's users: the lead's result is recorded for everyone.
        refund,
        metadata=ToolMetadata(idempotency_key="order_id", idempotency_scope="tenant"),
    )
    store = InMemoryIdempotencyStore()
    options = ChatOptions(
        tools=(idempotent,), tool_context={"tenant_id": "acme", "user_id": "lead"}
    )
    lead = Prompt(messages=(UserMessage(text="go"),), options=options)
    idempotency = IdempotencyInterceptor(store)
    await ToolCallingManager(idempotency=idempotency).execute_tool_calls(lead, calls("refund"))
    assert ran == ["A1"]

    def leads_only(context: ToolContext, tool: Tool, arguments: Mapping[str, Any]) -> bool:
        return context.user_id == "lead"

    # authorize= always runs first, so the store never answers a forbidden caller.
    manager = ToolCallingManager(authorize=leads_only, idempotency=idempotency)
    other = Prompt(
        messages=lead.messages,
        options=options.replace(tool_context={"tenant_id": "acme", "user_id": "u2"}),
    )
    result = await manager.execute_tool_calls(other, calls("refund"))
    assert result.outcomes[0].status is ToolCallStatus.DENIED
    assert not result.outcomes[0].replayed
    # The lead, allowed, gets the recorded result from the same store.
    replayed = await manager.execute_tool_calls(lead, calls("refund"))
    assert replayed.outcomes[0].status is ToolCallStatus.OK
    assert replayed.outcomes[0].replayed
    assert ran == ["A1"]
