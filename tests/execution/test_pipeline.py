"""The manager's pipeline: declared guards always hold, in one fixed order."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

import pytest

from toolrelay.exceptions import ConfigurationError, ToolContextError
from toolrelay.execution import (
    ApprovalInterceptor,
    ApprovalStatus,
    Approve,
    AuditInterceptor,
    AuditRecord,
    IdempotencyInterceptor,
    InMemoryIdempotencyStore,
    Proceed,
    ToolCallingManager,
    ToolCallInterceptor,
    ToolCallOutcome,
    ToolCallStatus,
    ToolExecutionResult,
    ToolInvocation,
)
from toolrelay.execution._authorization import AuthorizationInterceptor
from toolrelay.execution._feedback import approval_not_configured
from toolrelay.execution._pipeline import check_context
from toolrelay.messages import ToolCall, UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import isolated_idempotency, tool_call_response
from toolrelay.tools import FunctionTool, Tool, ToolContext, ToolMetadata, tool

ran: list[str] = []
steps: list[str] = []


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()
    steps.clear()


@tool(requires_approval=True)
def wire(account: str, amount: int) -> str:
    """Send money.

    Args:
        account: Where to.
        amount: Cents.
    """
    ran.append(f"wire {account}")
    steps.append("tool")
    return f"sent {amount} to {account}"


@tool(idempotency_key=["refund_id"])
def refund(refund_id: str) -> str:
    """Refund once.

    Args:
        refund_id: The refund.
    """
    ran.append(f"refund {refund_id}")
    steps.append("tool")
    return f"refunded {refund_id}"


@tool(requires_approval=True, idempotency_key=["payout_id"])
def payout(payout_id: str) -> str:
    """Pay out once, after approval.

    Args:
        payout_id: The payout.
    """
    ran.append(f"payout {payout_id}")
    steps.append("tool")
    return f"paid {payout_id}"


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: The key.
    """
    ran.append(f"lookup {key}")
    return key.upper()


TOOLS = tuple(FunctionTool.from_function(f) for f in (wire, refund, payout, lookup))
WIRE = ("wire", {"account": "acme", "amount": 5})
REFUND = ("refund", {"refund_id": "r-1"})
PAYOUT = ("payout", {"payout_id": "p-1"})


def call(number: int, name: str, arguments: Mapping[str, Any]) -> ToolCall:
    return ToolCall(id=f"c{number}", name=name, arguments=json.dumps(dict(arguments)))


async def run_round(
    manager: ToolCallingManager, *calls: tuple[str, Mapping[str, Any]], **context: Any
) -> ToolExecutionResult:
    prompt = Prompt(
        messages=(UserMessage(text="go"),),
        options=ChatOptions(tools=TOOLS, tool_context=context or {"user_id": "u1"}),
    )
    response = tool_call_response(*(call(i, n, a) for i, (n, a) in enumerate(calls)))
    return await manager.execute_tool_calls(prompt, response)


class ListSink:
    def __init__(self) -> None:
        self.records: list[AuditRecord] = []

    async def write(self, record: AuditRecord) -> None:
        steps.append("audit")
        self.records.append(record)


class Approver:
    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, invocation: ToolInvocation, /) -> Approve:
        steps.append("approval")
        self.asked.append(invocation.call.id)
        return Approve()


# --- a tool requiring approval, with no approval configured -------------------------------------


async def test_a_call_needing_approval_is_refused_when_no_approval_is_configured(
    caplog: pytest.LogCaptureFixture,
) -> None:
    manager = ToolCallingManager()
    with caplog.at_level(logging.ERROR, logger="toolrelay.execution"):
        result = await run_round(manager, WIRE, ("lookup", {"key": "k"}))
    refused, looked_up = result.outcomes
    assert refused.status is ToolCallStatus.DENIED
    assert refused.response.is_error
    assert refused.response.data == approval_not_configured("wire")
    assert "requires approval" in refused.response.data
    assert looked_up.ok  # only the call that needs approval is refused
    assert ran == ["lookup k"]
    (logged,) = [r for r in caplog.records if r.name == "toolrelay.execution"]
    assert logged.levelno == logging.ERROR
    assert "'wire' requires approval" in logged.getMessage()
    assert "approval=" in logged.getMessage()


async def test_run_call_refuses_a_call_needing_approval_without_approval(
    caplog: pytest.LogCaptureFixture,
) -> None:
    manager = ToolCallingManager()
    with caplog.at_level(logging.ERROR, logger="toolrelay.execution"):
        outcome = await manager.run_call(call(1, *WIRE), TOOLS, ToolContext(user_id="u1"))
    assert outcome.status is ToolCallStatus.DENIED
    assert outcome.response.data == approval_not_configured("wire")
    assert ran == []
    assert any(
        r.levelno == logging.ERROR and "'wire' requires approval" in r.getMessage()
        for r in caplog.records
    )


async def test_the_refusal_is_audited_and_seen_by_the_users_interceptors() -> None:
    seen: list[ToolCallStatus] = []

    async def look(invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        outcome = await proceed(invocation)
        seen.append(outcome.status)
        return outcome

    sink = ListSink()
    result = await run_round(ToolCallingManager(audit=sink, interceptors=[look]), WIRE)
    assert result.outcomes[0].status is ToolCallStatus.DENIED
    assert seen == [ToolCallStatus.DENIED]
    assert [r.status for r in sink.records] == [ToolCallStatus.DENIED]
    assert ran == []


# --- idempotency, engaged by default ------------------------------------------------------------


async def test_idempotency_is_engaged_without_being_configured() -> None:
    manager = ToolCallingManager()
    first = await run_round(manager, REFUND, REFUND)  # twice in one round
    later = await run_round(manager, REFUND)  # and again in a later round
    assert ran == ["refund r-1"]
    outcomes = [*first.outcomes, *later.outcomes]
    assert all(o.ok for o in outcomes)
    assert [o.replayed for o in outcomes].count(True) == 2
    assert {o.idempotency_key for o in outcomes} == {later.outcomes[0].idempotency_key}
    assert later.outcomes[0].idempotency_key is not None


async def test_the_default_store_is_the_process_s_so_a_key_runs_once_across_managers() -> None:
    await run_round(ToolCallingManager(), REFUND)
    again = await run_round(ToolCallingManager(), REFUND)
    assert again.outcomes[0].replayed  # another manager, the same process store
    assert ran == ["refund r-1"]


async def test_an_isolated_slate_gives_a_test_a_fresh_process_store() -> None:
    await run_round(ToolCallingManager(), REFUND)
    with isolated_idempotency() as store:
        fresh = await run_round(ToolCallingManager(), REFUND)
        assert not fresh.outcomes[0].replayed
        assert len(store) == 1
    restored = await run_round(ToolCallingManager(), REFUND)
    assert restored.outcomes[0].replayed  # the process's own store is back, record and all
    assert ran == ["refund r-1", "refund r-1"]


async def test_a_store_given_as_idempotency_is_the_one_used() -> None:
    store = InMemoryIdempotencyStore()
    await run_round(ToolCallingManager(idempotency=store), REFUND)
    assert len(store) == 1
    again = await run_round(ToolCallingManager(idempotency=IdempotencyInterceptor(store)), REFUND)
    assert again.outcomes[0].replayed
    assert ran == ["refund r-1"]


# --- built-in steps have their own options ------------------------------------------------------


def _allow(context: ToolContext, tool: Tool, arguments: Mapping[str, Any]) -> bool:
    return True


@pytest.mark.parametrize(
    ("step", "option"),
    [
        (AuthorizationInterceptor(_allow), "authorize="),
        (AuditInterceptor(ListSink()), "audit="),
        (IdempotencyInterceptor(), "idempotency="),
        (ApprovalInterceptor(), "approval="),
    ],
    ids=lambda value: type(value).__name__ if not isinstance(value, str) else value,
)
def test_a_built_in_step_among_interceptors_is_a_configuration_error_naming_its_option(
    step: ToolCallInterceptor, option: str
) -> None:
    async def mine(invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        return await proceed(invocation)

    with pytest.raises(ConfigurationError, match=f"{type(step).__name__}.*pass {option}"):
        ToolCallingManager(interceptors=[mine, step])


def test_an_approval_that_is_no_handler_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="approval= takes an async handler"):
        ToolCallingManager(approval="yes")  # type: ignore[arg-type]


# --- the fixed order ----------------------------------------------------------------------------


def recording_step(label: str) -> ToolCallInterceptor:
    async def step(invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        steps.append(label)
        return await proceed(invocation)

    return step


async def test_the_steps_run_authorize_audit_interceptors_idempotency_approval_tool() -> None:
    def authorize(context: ToolContext, tool: Tool, arguments: Mapping[str, Any]) -> bool:
        steps.append("authorize")
        return True

    class Store(InMemoryIdempotencyStore):
        async def reserve(self, key: str, **options: Any) -> Any:
            steps.append("idempotency")
            return await super().reserve(key, **options)

    manager = ToolCallingManager(
        authorize=authorize,
        audit=ListSink(),
        interceptors=[recording_step("interceptor")],
        idempotency=Store(),
        approval=Approver(),
    )
    result = await run_round(manager, PAYOUT)
    assert result.outcomes[0].ok
    # The audit sink writes once the outcome is known, so its record comes last.
    assert steps == ["authorize", "interceptor", "idempotency", "approval", "tool", "audit"]


async def test_a_denial_by_authorize_reaches_no_other_step() -> None:
    def never(context: ToolContext, tool: Tool, arguments: Mapping[str, Any]) -> str:
        return "Not for you."

    sink, store, approver = ListSink(), InMemoryIdempotencyStore(), Approver()
    manager = ToolCallingManager(
        authorize=never,
        audit=sink,
        interceptors=[recording_step("interceptor")],
        idempotency=store,
        approval=approver,
    )
    result = await run_round(manager, PAYOUT, WIRE)
    assert [(o.status, o.response.data) for o in result.outcomes] == [
        (ToolCallStatus.DENIED, "Not for you."),
        (ToolCallStatus.DENIED, "Not for you."),
    ]
    assert sink.records == []
    assert len(store) == 0
    assert approver.asked == []
    assert steps == []
    assert ran == []


async def test_audit_records_replays_and_approval_is_not_asked_about_them() -> None:
    sink, approver = ListSink(), Approver()
    manager = ToolCallingManager(audit=sink, approval=approver)
    first = await run_round(manager, PAYOUT, PAYOUT)
    later = await run_round(manager, PAYOUT)
    assert ran == ["payout p-1"]
    assert len(approver.asked) == 1  # the replays never went before the approver
    outcomes = [*first.outcomes, *later.outcomes]
    assert all(o.ok for o in outcomes)
    assert [o.approval for o in outcomes].count(ApprovalStatus.APPROVED) == 1
    assert sorted(r.replayed for r in sink.records) == [False, True, True]
    assert all(r.idempotency_key is not None for r in sink.records)


async def test_the_users_interceptors_see_replays() -> None:
    replays: list[bool] = []

    async def look(invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        outcome = await proceed(invocation)
        replays.append(outcome.replayed)
        return outcome

    manager = ToolCallingManager(interceptors=[look])
    await run_round(manager, REFUND)
    await run_round(manager, REFUND)
    assert replays == [False, True]
    assert ran == ["refund r-1"]


# --- refused before anything runs: check_tools --------------------------------------------------


def test_check_tools_refuses_a_tool_needing_approval_without_approval() -> None:
    manager = ToolCallingManager()
    with pytest.raises(ConfigurationError, match=r"'payout', 'wire' require approval") as caught:
        manager.check_tools(TOOLS, owner="ToolCallingManager")
    assert "ToolCallingManager(..., approval=handler)" in str(caught.value)
    manager.check_tools([t for t in TOOLS if not t.metadata.requires_approval], owner="X")
    ToolCallingManager(approval=Approver()).check_tools(TOOLS, owner="ToolCallingManager")
    ToolCallingManager(approval=ApprovalInterceptor()).check_tools(TOOLS, owner="X")


def invoices(month: str) -> str:
    """List a month's invoices.

    Args:
        month: The month.
    """
    return month


@pytest.mark.parametrize("context", [{}, {"user_id": "u1"}, {"tenant_id": ""}, {"tenant_id": None}])
def test_check_context_refuses_a_context_lacking_a_declared_key(context: dict[str, Any]) -> None:
    scoped = FunctionTool.from_function(
        invoices, metadata=ToolMetadata(context_keys=("tenant_id",))
    )
    with pytest.raises(ToolContextError, match="'tenant_id'") as caught:
        check_context([scoped], context)
    assert (caught.value.tool, caught.value.key) == ("invoices", "tenant_id")
    check_context([scoped], {"tenant_id": "t1"})


def test_check_context_reads_context_keys_from_the_decorator() -> None:
    @tool(context_keys="tenant_id")
    def orders(day: str) -> str:
        """List a day's orders.

        Args:
            day: The day.
        """
        return day

    made = FunctionTool.from_function(orders)
    assert made.metadata.context_keys == ("tenant_id",)
    with pytest.raises(ToolContextError, match="'orders' requires 'tenant_id'"):
        check_context([made], {"user_id": "u1"})


def test_context_keys_must_be_a_tuple_of_names() -> None:
    with pytest.raises(ConfigurationError, match="context_keys"):
        ToolMetadata(context_keys="tenant_id")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="context_keys"):
        ToolMetadata(context_keys=("",))


def test_check_context_refuses_an_empty_context_for_a_tool_taking_one() -> None:
    @tool
    def whoami(greeting: str, context: ToolContext) -> str:
        """Greet the caller.

        Args:
            greeting: The greeting.
        """
        return f"{greeting} {context.user_id}"

    made = FunctionTool.from_function(whoami)
    assert made.context_required
    with pytest.raises(ToolContextError, match="'whoami' requires a ToolContext") as caught:
        check_context([made], {})
    assert (caught.value.tool, caught.value.key) == ("whoami", None)
    check_context([made], {"user_id": "u1"})


@pytest.mark.parametrize(
    ("option", "value"),
    [("idempotency", "redis://x"), ("audit", "audit.jsonl"), ("authorize", True)],
)
def test_a_guard_option_of_the_wrong_kind_is_refused_at_build(option: str, value: object) -> None:
    with pytest.raises(ConfigurationError, match=f"{option}= takes"):
        ToolCallingManager(**{option: value})  # type: ignore[arg-type]
