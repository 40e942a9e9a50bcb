"""Approval: approve, deny, edit or defer calls of tools with side effects."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import (
    ApprovalInterceptor,
    ApprovalStatus,
    Approve,
    Defer,
    Deny,
    Proceed,
    ToolCallingManager,
    ToolCallOutcome,
    ToolCallStatus,
    ToolExecutionResult,
    ToolInvocation,
)
from toolrelay.execution._approval import DEFAULT_APPROVAL_TIMEOUT, ResumedRound
from toolrelay.execution._feedback import denied
from toolrelay.execution._result import ApprovalVerdict
from toolrelay.messages import ToolCall, ToolResponse, UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import tool_call_response
from toolrelay.tools import FunctionTool, tool


class Ledger:
    """Tools that record every run."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, dict[str, Any]]] = []

    @tool(name="refund", requires_approval=True)
    def refund(self, order_id: str, amount: int) -> str:
        """Refund an order.

        Args:
            order_id: The order.
            amount: Cents to refund.
        """
        self.ran.append(("refund", {"order_id": order_id, "amount": amount}))
        return f"refunded {amount} on {order_id}"

    @tool(name="close_account", destructive=True)
    def close_account(self, account: str) -> str:
        """Close an account for good.

        Args:
            account: The account.
        """
        self.ran.append(("close_account", {"account": account}))
        return f"closed {account}"

    @tool(name="lookup", read_only=True)
    def lookup(self, order_id: str) -> str:
        """Look an order up.

        Args:
            order_id: The order.
        """
        self.ran.append(("lookup", {"order_id": order_id}))
        return f"order {order_id}"


class Handler:
    """An approval handler answering with a fixed verdict and recording what it was asked."""

    def __init__(self, verdict: ApprovalVerdict | Callable[[ToolInvocation], Any]) -> None:
        self.verdict = verdict
        self.asked: list[ToolInvocation] = []

    async def __call__(self, request: ToolInvocation, /) -> Any:
        self.asked.append(request)
        return self.verdict(request) if callable(self.verdict) else self.verdict


def prompt_for(ledger: Ledger, **context: Any) -> Prompt:
    tools = [FunctionTool.from_function(m) for m in (ledger.refund, ledger.close_account)]
    tools.append(FunctionTool.from_function(ledger.lookup))
    return Prompt(
        messages=(UserMessage(text="go"),),
        options=ChatOptions(tools=tuple(tools), tool_context=context),
    )


async def run(
    ledger: Ledger, interceptor: ApprovalInterceptor, *calls: Any, **context: Any
) -> ToolExecutionResult:
    response = tool_call_response(
        *(ToolCall(id=f"c{i}", name=n, arguments=json.dumps(a)) for i, (n, a) in enumerate(calls))
    )
    manager = ToolCallingManager(approval=interceptor)
    return await manager.execute_tool_calls(prompt_for(ledger, **context), response)


REFUND = ("refund", {"order_id": "A1", "amount": 500})


async def test_approved_call_runs_and_the_handler_sees_the_call() -> None:
    ledger, handler = Ledger(), Handler(Approve())
    result = await run(ledger, ApprovalInterceptor(handler), REFUND, tenant_id="t1")
    (outcome,) = result.outcomes
    assert outcome.status is ToolCallStatus.OK
    assert outcome.approval is ApprovalStatus.APPROVED
    assert outcome.edited_arguments is None
    assert outcome.response.data == "refunded 500 on A1"
    assert ledger.ran == [("refund", {"order_id": "A1", "amount": 500})]
    (request,) = handler.asked
    assert request.tool.definition.name == "refund"
    assert dict(request.arguments) == {"order_id": "A1", "amount": 500}
    assert request.context.tenant_id == "t1"
    assert request.call.id == "c0"


async def test_denied_call_does_not_run_and_the_model_reads_the_reason() -> None:
    ledger = Ledger()
    interceptor = ApprovalInterceptor(Handler(Deny(reason="Refunds above 4 EUR need a lead.")))
    result = await run(ledger, interceptor, REFUND)
    (outcome,) = result.outcomes
    assert outcome.status is ToolCallStatus.DENIED
    assert outcome.approval is ApprovalStatus.DENIED
    assert outcome.response.is_error
    assert outcome.response.data == "Refunds above 4 EUR need a lead."
    assert ledger.ran == []


async def test_denial_without_reason_uses_the_standard_text() -> None:
    result = await run(Ledger(), ApprovalInterceptor(Handler(Deny())), REFUND)
    assert result.outcomes[0].response.data == denied("refund")


async def test_edited_arguments_are_what_the_tool_runs_with() -> None:
    ledger = Ledger()
    handler = Handler(Approve(arguments={"order_id": "A1", "amount": 400}))
    result = await run(ledger, ApprovalInterceptor(handler), REFUND)
    (outcome,) = result.outcomes
    assert outcome.status is ToolCallStatus.OK
    assert outcome.approval is ApprovalStatus.EDITED
    assert json.loads(outcome.edited_arguments or "") == {"order_id": "A1", "amount": 400}
    assert outcome.call.arguments == json.dumps(REFUND[1])  # the model's call is unchanged
    assert ledger.ran == [("refund", {"order_id": "A1", "amount": 400})]


async def test_edited_arguments_are_validated_like_the_models() -> None:
    ledger = Ledger()
    handler = Handler(Approve(arguments={"order_id": "A1", "amount": "lots"}))
    result = await run(ledger, ApprovalInterceptor(handler), REFUND)
    (outcome,) = result.outcomes
    assert outcome.status is ToolCallStatus.INVALID_ARGUMENTS
    assert outcome.approval is ApprovalStatus.EDITED
    assert "amount" in outcome.response.data
    assert ledger.ran == []


async def test_edited_arguments_that_are_not_json_are_invalid() -> None:
    ledger = Ledger()
    handler = Handler(Approve(arguments={"order_id": "A1", "amount": {1, 2}}))
    result = await run(ledger, ApprovalInterceptor(handler), REFUND)
    (outcome,) = result.outcomes
    assert outcome.status is ToolCallStatus.INVALID_ARGUMENTS
    assert "edited arguments are unusable" in outcome.response.data
    assert ledger.ran == []


async def test_tools_without_approval_needs_are_never_asked_about() -> None:
    ledger, handler = Ledger(), Handler(Deny())
    result = await run(
        ledger,
        ApprovalInterceptor(handler),
        ("lookup", {"order_id": "A1"}),
        ("close_account", {"account": "x"}),
    )
    assert [o.status for o in result.outcomes] == [ToolCallStatus.OK, ToolCallStatus.OK]
    assert [o.approval for o in result.outcomes] == [None, None]
    assert handler.asked == []


async def test_destructive_tools_are_asked_about_when_configured() -> None:
    ledger, handler = Ledger(), Handler(Deny())
    interceptor = ApprovalInterceptor(handler, destructive=True)
    result = await run(
        ledger, interceptor, ("lookup", {"order_id": "A1"}), ("close_account", {"account": "x"})
    )
    assert [o.status for o in result.outcomes] == [ToolCallStatus.OK, ToolCallStatus.DENIED]
    assert [r.tool.definition.name for r in handler.asked] == ["close_account"]
    assert ledger.ran == [("lookup", {"order_id": "A1"})]


async def test_without_a_handler_calls_wait_for_a_person() -> None:
    ledger = Ledger()
    result = await run(ledger, ApprovalInterceptor(), REFUND, ("lookup", {"order_id": "A1"}))
    waiting, looked_up = result.outcomes
    assert waiting.status is ToolCallStatus.PENDING_APPROVAL
    assert waiting.approval is ApprovalStatus.PENDING
    assert result.pending == (waiting,)
    assert looked_up.ok
    assert not result.return_direct
    assert ledger.ran == [("lookup", {"order_id": "A1"})]


async def test_a_handler_may_defer_some_calls_and_decide_others() -> None:
    def verdict(request: ToolInvocation) -> ApprovalVerdict:
        return Defer() if request.arguments["amount"] > 1000 else Approve()

    ledger = Ledger()
    result = await run(
        ledger,
        ApprovalInterceptor(Handler(verdict)),
        ("refund", {"order_id": "A1", "amount": 500}),
        ("refund", {"order_id": "A2", "amount": 5000}),
    )
    assert [o.status for o in result.outcomes] == [
        ToolCallStatus.OK,
        ToolCallStatus.PENDING_APPROVAL,
    ]
    assert result.pending[0].call.id == "c1"
    assert ledger.ran == [("refund", {"order_id": "A1", "amount": 500})]


async def test_a_handler_answering_something_else_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="expected Approve, Deny or Defer"):
        await run(Ledger(), ApprovalInterceptor(Handler(True)), REFUND)


# --- resuming a round -----------------------------------------------------------------------


def first_answers(result: ToolExecutionResult) -> tuple[ToolCallOutcome | None, ...]:
    return tuple(
        None if o.status is ToolCallStatus.PENDING_APPROVAL else o for o in result.outcomes
    )


async def test_a_resumed_round_keeps_earlier_answers_and_applies_decisions() -> None:
    ledger = Ledger()
    interceptor = ApprovalInterceptor()
    response = tool_call_response(
        ToolCall(id="c0", name="lookup", arguments='{"order_id": "A1"}'),
        ToolCall(id="c1", name="refund", arguments=json.dumps(REFUND[1])),
    )
    manager = ToolCallingManager(approval=interceptor)
    prompt = prompt_for(ledger)
    first = await manager.execute_tool_calls(prompt, response)
    assert len(ledger.ran) == 1

    calls = response.generations[0].message.tool_calls
    resumed = ResumedRound(calls=calls, answered=first_answers(first), decisions={"c1": Approve()})
    second = await manager.execute_tool_calls(prompt, response, resumed=resumed)
    assert [o.status for o in second.outcomes] == [ToolCallStatus.OK, ToolCallStatus.OK]
    assert second.outcomes[0] == first.outcomes[0]
    assert second.outcomes[1].approval is ApprovalStatus.APPROVED
    assert [name for name, _ in ledger.ran] == ["lookup", "refund"]  # lookup ran once


async def test_a_pending_call_without_a_decision_is_asked_about_again() -> None:
    ledger = Ledger()
    manager = ToolCallingManager(approval=ApprovalInterceptor())
    response = tool_call_response(ToolCall(id="c1", name="refund", arguments=json.dumps(REFUND[1])))
    calls = response.generations[0].message.tool_calls
    resumed = ResumedRound(calls=calls, answered=(None,))
    result = await manager.execute_tool_calls(prompt_for(ledger), response, resumed=resumed)
    assert result.outcomes[0].status is ToolCallStatus.PENDING_APPROVAL
    assert ledger.ran == []


async def test_a_resumed_round_given_with_other_calls_is_refused_before_anything_runs() -> None:
    ledger = Ledger()
    manager = ToolCallingManager(approval=ApprovalInterceptor())
    waiting = ToolCall(id="c1", name="refund", arguments=json.dumps(REFUND[1]))
    other = ToolCall(id="c1", name="refund", arguments='{"order_id": "B7", "amount": 1}')
    resumed = ResumedRound(calls=(waiting,), answered=(None,), decisions={"c1": Approve()})
    with pytest.raises(ConfigurationError, match="another round's calls"):
        await manager.execute_tool_calls(
            prompt_for(ledger), tool_call_response(other), resumed=resumed
        )
    assert ledger.ran == []


async def test_a_decision_reaches_the_approval_interceptor_on_the_invocation() -> None:
    seen: list[object] = []

    async def look(invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        seen.append(invocation.decision)
        return await proceed(invocation)

    ledger = Ledger()
    manager = ToolCallingManager(interceptors=[look], approval=ApprovalInterceptor())
    call = ToolCall(id="c1", name="refund", arguments=json.dumps(REFUND[1]))
    decision = Deny("not this week")
    resumed = ResumedRound(calls=(call,), answered=(None,), decisions={"c1": decision})
    result = await manager.execute_tool_calls(
        prompt_for(ledger), tool_call_response(call), resumed=resumed
    )
    assert seen == [decision]
    assert result.outcomes[0].status is ToolCallStatus.DENIED
    assert result.outcomes[0].response.data == "not this week"
    assert ledger.ran == []
    # An ordinary round carries no decision.
    await manager.execute_tool_calls(prompt_for(ledger), tool_call_response(call))
    assert seen == [decision, None]


def test_resumed_round_checks_its_decisions_and_answers() -> None:
    call = ToolCall(id="c1", name="refund", arguments="{}")
    with pytest.raises(ConfigurationError, match="Approve"):
        ResumedRound(calls=(call,), answered=(None,), decisions={"c1": Defer()})  # type: ignore[dict-item]
    with pytest.raises(ConfigurationError, match="one answer slot per call"):
        ResumedRound(calls=(call,), answered=())
    answered = ToolCallOutcome(
        call=call,
        tool_name="refund",
        response=ToolResponse(id="c1", name="refund", data="done"),
        status=ToolCallStatus.OK,
    )
    round_ = ResumedRound(calls=(call,), answered=(answered,), decisions={"c1": Deny()})
    assert round_.decision_for(call) is None  # answered calls take no decisions


# --- validated arguments and silent handlers ----------------------------------------------------


async def test_the_handler_sees_validated_values_and_invalid_calls_are_never_asked_about() -> None:
    ledger, handler = Ledger(), Handler(Approve())
    interceptor = ApprovalInterceptor(handler)
    coerced = await run(ledger, interceptor, ("refund", {"order_id": "A1", "amount": "500"}))
    assert coerced.outcomes[0].ok
    assert dict(handler.asked[0].arguments) == {"order_id": "A1", "amount": 500}
    invalid = await run(ledger, interceptor, ("refund", {"order_id": "A1", "amount": "lots"}))
    assert invalid.outcomes[0].status is ToolCallStatus.INVALID_ARGUMENTS
    assert len(handler.asked) == 1  # nobody is asked about a call that cannot run
    nan = await run(ledger, interceptor, ("refund", {"order_id": "A1", "amount": float("nan")}))
    assert nan.outcomes[0].status is ToolCallStatus.INVALID_ARGUMENTS
    assert "NaN is not a JSON number" in nan.outcomes[0].response.data
    assert len(handler.asked) == 1


async def test_a_policy_on_amounts_never_approves_a_nan() -> None:
    async def up_to_100(request: ToolInvocation, /) -> ApprovalVerdict:
        return Deny("too much") if request.arguments["amount"] > 10_000 else Approve()

    ledger = Ledger()
    for text in ('{"order_id": "A1", "amount": NaN}', '{"order_id": "A1", "amount": Infinity}'):
        response = tool_call_response(ToolCall(id="c0", name="refund", arguments=text))
        manager = ToolCallingManager(approval=ApprovalInterceptor(up_to_100))
        result = await manager.execute_tool_calls(prompt_for(ledger), response)
        assert result.outcomes[0].status is ToolCallStatus.INVALID_ARGUMENTS
    assert ledger.ran == []


async def test_an_edit_with_a_nan_is_refused() -> None:
    ledger = Ledger()
    edit = Approve(arguments={"order_id": "A1", "amount": float("inf")})
    result = await run(ledger, ApprovalInterceptor(Handler(edit)), REFUND)
    assert result.outcomes[0].status is ToolCallStatus.INVALID_ARGUMENTS
    assert ledger.ran == []


async def test_a_handler_that_never_answers_is_a_denial_after_its_timeout() -> None:
    async def silent(request: ToolInvocation, /) -> ApprovalVerdict:
        await asyncio.sleep(30)
        return Approve()

    ledger = Ledger()
    interceptor = ApprovalInterceptor(silent, timeout=0.05)
    result = await run(ledger, interceptor, REFUND, ("lookup", {"order_id": "A1"}))
    refused, looked_up = result.outcomes
    assert refused.status is ToolCallStatus.DENIED
    assert refused.approval is ApprovalStatus.DENIED
    assert refused.response.data == (
        "The call to tool 'refund' was not approved within 0.05 s, so it did not run. "
        "Tell the user it needs approval."
    )
    assert looked_up.ok
    assert ledger.ran == [("lookup", {"order_id": "A1"})]


async def test_a_silent_handler_may_defer_to_a_person_instead() -> None:
    async def silent(request: ToolInvocation, /) -> ApprovalVerdict:
        await asyncio.sleep(30)
        return Approve()

    ledger = Ledger()
    interceptor = ApprovalInterceptor(silent, timeout=0.05, on_timeout="defer")
    result = await run(ledger, interceptor, REFUND)
    assert result.outcomes[0].status is ToolCallStatus.PENDING_APPROVAL
    assert ledger.ran == []


class NotAnException(BaseException):
    """A ``BaseException`` that is none of the standard ones."""


@pytest.mark.parametrize(
    "raised",
    [
        RuntimeError("approval service down"),
        TimeoutError(),
        asyncio.CancelledError(),
        SystemExit(1),
        NotAnException(),
    ],
    ids=type,
)
async def test_a_failing_handler_denies_its_call_and_the_round_goes_on(
    raised: BaseException,
) -> None:
    async def failing(request: ToolInvocation, /) -> ApprovalVerdict:
        raise raised

    ledger = Ledger()
    result = await run(ledger, ApprovalInterceptor(failing), REFUND, ("lookup", {"order_id": "A1"}))
    refused, looked_up = result.outcomes
    assert refused.status is ToolCallStatus.DENIED
    assert refused.approval is ApprovalStatus.DENIED
    assert refused.response.data == (
        "The call to tool 'refund' could not be approved (the approval check failed), so it did "
        "not run. Tell the user it needs approval."
    )
    assert looked_up.ok
    assert ledger.ran == [("lookup", {"order_id": "A1"})]


@pytest.mark.parametrize("raised", [KeyboardInterrupt(), MemoryError()], ids=type)
async def test_keyboard_interrupt_and_memory_error_from_a_handler_propagate(
    raised: BaseException,
) -> None:
    async def failing(request: ToolInvocation, /) -> ApprovalVerdict:
        raise raised

    ledger = Ledger()
    with pytest.raises(type(raised)):
        await run(ledger, ApprovalInterceptor(failing), REFUND)
    assert ledger.ran == []


async def test_a_handler_that_is_not_async_is_a_configuration_error_naming_the_fix() -> None:
    def blocking(request: ToolInvocation, /) -> ApprovalVerdict:
        return Approve()

    ledger = Ledger()
    with pytest.raises(ConfigurationError, match="define it with async def"):
        await run(ledger, ApprovalInterceptor(blocking), REFUND)  # type: ignore[arg-type]
    assert ledger.ran == []


def test_the_approval_timeout_is_finite_by_default_and_checked() -> None:
    assert ApprovalInterceptor().timeout == DEFAULT_APPROVAL_TIMEOUT == 60.0
    assert ApprovalInterceptor(timeout=None).timeout is None
    with pytest.raises(ConfigurationError, match="finite"):
        ApprovalInterceptor(timeout=float("inf"))
    with pytest.raises(ConfigurationError, match="on_timeout"):
        ApprovalInterceptor(on_timeout="approve")  # type: ignore[arg-type]
