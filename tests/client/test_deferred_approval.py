"""Deferred approval: the loop stops for a person, the state travels as JSON, the turn resumes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolrelay.client import (
    ApprovalState,
    ChatClient,
    LoopStop,
    MessageChatMemoryAdvisor,
    ToolSearchAdvisor,
)
from toolrelay.client._tool_loop import APPROVAL_REQUIRED_FINISH_REASON
from toolrelay.exceptions import ConfigurationError, LoadError
from toolrelay.execution import (
    ApprovalInterceptor,
    ApprovalStatus,
    Approve,
    Deny,
    IdempotencyStore,
    InMemoryIdempotencyStore,
    ToolInvocation,
)
from toolrelay.memory import MessageWindowChatMemory
from toolrelay.messages import (
    AssistantMessage,
    ToolCall,
    ToolResponseMessage,
    Usage,
    UserMessage,
)
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.testing import ScriptedModel, text_response, tool_call_response
from toolrelay.tools import tool, tools_from


class Desk:
    """Refund tools that record what they did."""

    def __init__(self) -> None:
        self.refunds: list[tuple[str, int]] = []
        self.lookups: list[str] = []
        self.retries: list[str] = []

    @tool(name="refund.issue", requires_approval=True)
    def issue(self, order_id: str, amount: int) -> str:
        """Refund part of an order.

        Args:
            order_id: The order.
            amount: Cents to refund.
        """
        self.refunds.append((order_id, amount))
        return f"refunded {amount} on {order_id}"

    @tool(name="orders.lookup", read_only=True)
    def lookup(self, order_id: str) -> str:
        """Look an order up.

        Args:
            order_id: The order.
        """
        self.lookups.append(order_id)
        return f"order {order_id}: paid 500"

    @tool(
        name="refund.retry",
        destructive=True,
        idempotency_key=lambda args, ctx: f"refund-retry:{args['refund_id']}",
    )
    def retry(self, refund_id: str) -> str:
        """Retry a failed refund.

        Args:
            refund_id: The failed refund.
        """
        self.retries.append(refund_id)
        return f"refund {refund_id} paid, payout #{len(self.retries)}"


def client_for(
    model: ScriptedModel,
    desk: Desk,
    approval: ApprovalInterceptor | None = None,
    idempotency: IdempotencyStore | None = None,
) -> ChatClient:
    return (
        ChatClient.builder(model)
        .default_system("You handle refunds.")
        .default_tools(*tools_from(desk))
        .guards(approval=approval or ApprovalInterceptor(), idempotency=idempotency)
        .build()
    )


LOOKUP = ("orders.lookup", {"order_id": "A1"})
ISSUE = ("refund.issue", {"order_id": "A1", "amount": 500})


def stopped_turn() -> tuple[Desk, ScriptedModel, Any]:
    desk = Desk()
    model = ScriptedModel([tool_call_response(LOOKUP, ISSUE, usage=(10, 5))])
    return desk, model, client_for(model, desk).prompt("Refund A1").call()


def test_the_loop_stops_with_the_pending_calls() -> None:
    desk, model, response = stopped_turn()
    generation = response.chat_response().result
    assert generation.finish_reason == APPROVAL_REQUIRED_FINISH_REASON
    assert "refund.issue" in (response.content() or "")
    (pending,) = response.pending_approvals
    assert (pending.call_id, pending.tool_name) == ("call_2", "refund.issue")
    assert dict(pending.arguments) == {"order_id": "A1", "amount": 500}
    assert desk.lookups == ["A1"]
    assert desk.refunds == []
    assert model.call_count == 1
    assert response.tool_loop.stop is LoopStop.APPROVAL_REQUIRED
    state = response.approval
    assert state.answered[0].response.data == "order A1: paid 500"
    assert state.answered[1] is None
    assert state.model_calls == 1
    assert state.usage == Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15)
    assert [type(m) for m in state.history] == [type(m) for m in model.prompts[0].messages]


def test_the_state_survives_a_json_round_trip() -> None:
    _, _, response = stopped_turn()
    text = response.approval.to_json()
    assert json.loads(text)["format"] == "toolrelay.approval_state/2"
    assert ApprovalState.from_json(text) == response.approval


def test_the_json_of_a_state_is_valid_utf8_whatever_the_model_wrote() -> None:
    # Lone surrogates (UTF-8 cannot encode them) in the call id, the arguments and the text.
    issue = ToolCall(
        id="c\ud83d", name="refund.issue", arguments='{"order_id": "A\\ud83d", "amount": 5}'
    )
    client = client_for(ScriptedModel([tool_call_response(issue)]), Desk())
    text = client.prompt("Refund A\udc00").call().approval.to_json()
    text.encode("utf-8")  # storable anywhere text goes
    state = ApprovalState.from_json(text)
    assert state.pending[0].call == issue
    assert dict(state.pending[0].arguments) == {"order_id": "A\ud83d", "amount": 5}
    assert state.history[-1] == UserMessage(text="Refund A\udc00")


def resume_elsewhere(decisions: dict[str, Any], *replies: Any) -> tuple[Desk, ScriptedModel, Any]:
    """Stop a turn, then resume it from JSON with a brand-new client, model and tools."""
    first_desk, _, stopped = stopped_turn()
    saved = stopped.approval.to_json()
    assert first_desk.refunds == []
    desk = Desk()
    model = ScriptedModel(list(replies) or [text_response("Done.", usage=(20, 3))])
    answer = client_for(model, desk).prompt().resume(saved, decisions).call()
    return desk, model, answer


def test_an_approved_call_runs_once_in_a_fresh_client_and_the_turn_goes_on() -> None:
    desk, model, answer = resume_elsewhere({"call_2": Approve()})
    assert answer.content() == "Done."
    assert desk.refunds == [("A1", 500)]
    assert desk.lookups == []  # answered before the stop; not run again
    prompt = model.last_prompt.messages
    assert isinstance(prompt[1], UserMessage)
    assert prompt[1].text == "Refund A1"
    assert isinstance(prompt[2], AssistantMessage)
    assert len(prompt[2].tool_calls) == 2
    responses = prompt[3]
    assert isinstance(responses, ToolResponseMessage)
    assert [(r.id, r.data) for r in responses.responses] == [
        ("call_1", "order A1: paid 500"),
        ("call_2", "refunded 500 on A1"),
    ]
    report = answer.tool_loop
    assert report.model_calls == 2
    assert answer.chat_response().usage == Usage(
        prompt_tokens=30, completion_tokens=8, total_tokens=38
    )
    assert report.rounds[0].outcomes[1].approval is ApprovalStatus.APPROVED
    assert answer.pending_approvals == ()


def test_approved_with_edited_arguments() -> None:
    edited = {"order_id": "A1", "amount": 300}
    desk, model, answer = resume_elsewhere({"call_2": Approve(arguments=edited)})
    assert desk.refunds == [("A1", 300)]
    responses = model.last_prompt.messages[3]
    assert isinstance(responses, ToolResponseMessage)
    assert responses.responses[1].data == "refunded 300 on A1"
    assert answer.tool_loop.rounds[0].outcomes[1].approval is ApprovalStatus.EDITED


def test_a_denial_is_feedback_for_the_model() -> None:
    desk, model, answer = resume_elsewhere(
        {"call_2": Deny("Refunds need a team lead.")}, "I could not refund A1."
    )
    assert desk.refunds == []
    responses = model.last_prompt.messages[3]
    assert isinstance(responses, ToolResponseMessage)
    denial = responses.responses[1]
    assert (denial.data, denial.is_error) == ("Refunds need a team lead.", True)
    assert answer.content() == "I could not refund A1."


def test_a_call_without_a_decision_waits_again() -> None:
    _, _, stopped = stopped_turn()
    desk, model = Desk(), ScriptedModel(["Done."])
    client = client_for(model, desk)
    again = client.prompt().resume(stopped.approval).call()
    assert [p.call_id for p in again.pending_approvals] == ["call_2"]
    assert model.call_count == 0
    assert desk.refunds == []
    assert again.approval.model_calls == 1
    final = client.prompt().resume(again.approval, {"call_2": Approve()}).call()
    assert final.content() == "Done."
    assert desk.refunds == [("A1", 500)]


def test_resuming_is_checked() -> None:
    _, _, stopped = stopped_turn()
    state = stopped.approval
    client = client_for(ScriptedModel([]), Desk())
    with pytest.raises(ConfigurationError, match="not waiting"):
        client.prompt().resume(state, {"call_1": Approve()})
    with pytest.raises(ConfigurationError, match="no new messages"):
        client.prompt("and also...").resume(state, {"call_2": Approve()}).call()
    with pytest.raises(LoadError):
        client.prompt().resume("{not json", {})
    with pytest.raises(LoadError):
        ApprovalState.from_dict({"format": "something else"})
    without_loop = ChatClient.builder(ScriptedModel([])).tool_calling(False).build()
    with pytest.raises(ConfigurationError, match="tool-calling advisor"):
        without_loop.prompt().resume(state, {"call_2": Approve()}).call()


async def test_streams_stop_and_resume_too() -> None:
    desk = Desk()
    model = ScriptedModel([tool_call_response(ISSUE), "Refund done."])
    client = client_for(model, desk)
    stopped = await client.prompt("Refund A1").stream().collect()
    assert stopped.chat_response().result.finish_reason == APPROVAL_REQUIRED_FINISH_REASON
    (pending,) = stopped.pending_approvals
    resumed = client.prompt().resume(stopped.approval, {pending.call_id: Approve()})
    texts = [t async for t in resumed.stream().content()]
    assert "".join(texts) == "Refund done."
    assert desk.refunds == [("A1", 500)]


class CountingApprover:
    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, request: ToolInvocation, /) -> Approve:
        self.asked.append(request.call.id)
        return Approve()


def test_a_retry_called_twice_per_round_and_again_later_is_approved_and_paid_once() -> None:
    desk, approver = Desk(), CountingApprover()
    retry = ("refund.retry", {"refund_id": "r-9"})
    model = ScriptedModel(
        [tool_call_response(retry, retry), tool_call_response(retry), "Refund r-9 is paid."]
    )
    # The client's idempotency (an in-process store, engaged by default) runs outside approval.
    approval = ApprovalInterceptor(approver, destructive=True)
    answer = client_for(model, desk, approval).prompt("Retry r-9").call()
    assert answer.content() == "Refund r-9 is paid."
    assert desk.retries == ["r-9"]
    assert len(approver.asked) == 1
    outcomes = [o for r in answer.tool_loop.rounds for o in r.outcomes]
    assert len(outcomes) == 3
    assert {o.recorded_result or o.response.data for o in outcomes} == {
        "refund r-9 paid, payout #1"
    }


def test_deferred_duplicates_need_one_decision_and_pay_once() -> None:
    retry = ("refund.retry", {"refund_id": "r-9"})
    store = InMemoryIdempotencyStore()  # shared, as a database would be between processes

    def client(model: ScriptedModel, desk: Desk) -> ChatClient:
        return client_for(model, desk, ApprovalInterceptor(destructive=True), store)

    first = client(ScriptedModel([tool_call_response(retry, retry)]), Desk())
    stopped = first.prompt("Retry r-9").call()
    pending = stopped.pending_approvals
    assert [p.call_id for p in pending] == ["call_1", "call_2"]
    assert {p.idempotency_key for p in pending} == {"refund-retry:r-9"}

    desk = Desk()
    model = ScriptedModel([tool_call_response(retry), "Paid."])
    saved = stopped.approval.to_json()
    answer = client(model, desk).prompt().resume(saved, {"call_1": Approve()}).call()
    assert answer.content() == "Paid."
    assert desk.retries == [
        "r-9"
    ]  # the duplicate and the later retry were answered from the record
    outcomes = [o for r in answer.tool_loop.rounds for o in r.outcomes]
    assert [o.replayed for o in outcomes] == [False, True, True]


async def test_an_outer_memory_keeps_the_conversation_across_the_stop() -> None:
    memory = MessageWindowChatMemory()
    desk = Desk()
    model = ScriptedModel([tool_call_response(ISSUE), "Refunded."])
    client = (
        ChatClient.builder(model)
        .default_tools(*tools_from(desk))
        .guards(approval=ApprovalInterceptor())
        .default_advisors(MessageChatMemoryAdvisor(memory))
        .build()
    )
    stopped = await client.prompt("Refund A1").conversation("c1").acall()
    state = ApprovalState.from_json(stopped.approval.to_json())
    await client.prompt().resume(state, {"call_1": Approve()}).conversation("c1").acall()
    stored = await memory.get("c1")
    assert [getattr(m, "text", None) for m in stored] == [
        "Refund A1",
        "Waiting for approval: refund.issue (call call_1).",
        "Refunded.",
    ]
    assert desk.refunds == [("A1", 500)]


async def test_tool_search_turns_stop_and_resume() -> None:
    desk = Desk()
    # The advisor has no manager of its own: the found tools run with the client's approval.
    advisor = ToolSearchAdvisor(tools_from(desk), index=BM25ToolIndex())
    model = ScriptedModel(
        [
            tool_call_response(("tool_search", {"queries": ["refund part of an order"]})),
            tool_call_response(ISSUE),
            "Refunded A1.",
        ]
    )
    client = ChatClient(model, advisors=[advisor], approval=ApprovalInterceptor())
    stopped = await client.prompt("Refund A1").conversation("c1").acall()
    (pending,) = stopped.pending_approvals
    assert pending.tool_name == "refund.issue"
    assert desk.refunds == []
    saved = stopped.approval.to_json()
    answer = await (
        client.prompt().resume(saved, {pending.call_id: Approve()}).conversation("c1").acall()
    )
    assert answer.content() == "Refunded A1."
    assert desk.refunds == [("A1", 500)]


# --- a decision binds to exactly one call, as it was shown ---------------------------------------


def refund_call(call_id: str, order_id: str, amount: int) -> ToolCall:
    arguments = json.dumps({"order_id": order_id, "amount": amount})
    return ToolCall(id=call_id, name="refund.issue", arguments=arguments)


def test_calls_sharing_an_id_wait_under_ids_of_their_own() -> None:
    # Models repeat ids: approving one call must not run the other.
    small, large = refund_call("call_1", "A", 100), refund_call("call_1", "B", 990_000)
    stopped = client_for(ScriptedModel([tool_call_response(small, large)]), Desk())
    response = stopped.prompt("Refund A and B").call()
    first, second = response.pending_approvals
    assert first.call_id != second.call_id
    assert (dict(first.arguments)["order_id"], dict(second.arguments)["order_id"]) == ("A", "B")

    desk = Desk()
    client = client_for(ScriptedModel(["Refunded A; B waits."]), desk)
    again = client.prompt().resume(response.approval, {first.call_id: Approve()}).call()
    assert desk.refunds == [("A", 100)]
    assert [p.call_id for p in again.pending_approvals] == [second.call_id]


def test_ids_repeated_from_an_earlier_round_are_renamed_too() -> None:
    model = ScriptedModel(
        [
            tool_call_response(
                ToolCall(id="x", name="orders.lookup", arguments='{"order_id": "A"}')
            ),
            tool_call_response(refund_call("x", "A", 100)),
        ]
    )
    response = client_for(model, Desk()).prompt("Refund A").call()
    (pending,) = response.pending_approvals
    first_round = response.approval.history[-2]
    assert isinstance(first_round, AssistantMessage)
    assert pending.call_id != first_round.tool_calls[0].id == "x"


def edited(state_json: str, change: Any) -> str:
    data = json.loads(state_json)
    change(data)
    return json.dumps(data)


def test_a_state_edited_to_run_other_arguments_than_it_shows_is_refused() -> None:
    _, _, stopped = stopped_turn()
    saved = stopped.approval.to_json()

    def run_other(data: dict[str, Any]) -> None:
        data["assistant"]["tool_calls"][1]["arguments"] = '{"order_id": "B", "amount": 990000}'
        data["pending"][0]["call"]["arguments"] = '{"order_id": "B", "amount": 990000}'

    def show_other(data: dict[str, Any]) -> None:
        data["pending"][0]["arguments"] = {"order_id": "A1", "amount": 5}

    def repeat_ids(data: dict[str, Any]) -> None:
        data["assistant"]["tool_calls"][0]["id"] = "call_2"
        data["answered"][0]["call"]["id"] = "call_2"

    for change in (run_other, show_other, repeat_ids):
        with pytest.raises(LoadError, match="refused"):
            ApprovalState.from_json(edited(saved, change))
    desk = Desk()
    with pytest.raises(LoadError):
        client_for(ScriptedModel([]), desk).prompt().resume(edited(saved, show_other), {})
    assert desk.refunds == []


def test_a_decision_keyed_by_what_was_shown_applies_to_nothing_else() -> None:
    _, _, stopped = stopped_turn()
    (shown,) = stopped.pending_approvals
    saved = stopped.approval.to_json()

    def other_refund(data: dict[str, Any]) -> None:  # consistent: shows and runs B
        other = '{"order_id": "B", "amount": 990000}'
        data["assistant"]["tool_calls"][1]["arguments"] = other
        data["pending"][0]["call"]["arguments"] = other
        data["pending"][0]["arguments"] = json.loads(other)

    desk = Desk()
    client = client_for(ScriptedModel(["Done."]), desk)
    with pytest.raises(ConfigurationError, match="applies only to the call it was shown"):
        client.prompt().resume(edited(saved, other_refund), {shown: Approve()})
    assert client.prompt().resume(saved, {shown: Approve()}).call().content() == "Done."
    assert desk.refunds == [("A1", 500)]


def test_a_decision_does_not_apply_to_a_call_that_now_runs_another_tool() -> None:
    _, _, stopped = stopped_turn()

    def shown_as_lookup(data: dict[str, Any]) -> None:
        data["pending"][0]["tool_name"] = "orders.lookup"

    saved = edited(stopped.approval.to_json(), shown_as_lookup)
    desk = Desk()
    again = client_for(ScriptedModel([]), desk).prompt().resume(saved, {"call_2": Approve()}).call()
    assert desk.refunds == []  # asked about again, and deferred again
    assert [(p.call_id, p.tool_name) for p in again.pending_approvals] == [
        ("call_2", "refund.issue")
    ]


def test_a_state_resumes_only_in_its_own_tenant_and_conversation() -> None:
    model = ScriptedModel([tool_call_response(ISSUE)])
    stopped = (
        client_for(model, Desk())
        .prompt("Refund A1")
        .conversation("c1")
        .tool_context({"tenant_id": "acme"})
        .call()
    )
    saved = stopped.approval.to_json()
    assert json.loads(saved)["conversation"] == "tenant:acme:c1"
    desk = Desk()
    client = client_for(ScriptedModel(["Refunded."]), desk)
    decisions = {"call_1": Approve()}
    for conversation, tenant in [("c1", "globex"), ("c2", "acme"), ("c1", None)]:
        spec = client.prompt().resume(saved, decisions).conversation(conversation)
        if tenant is not None:
            spec = spec.tool_context({"tenant_id": tenant})
        with pytest.raises(ConfigurationError, match="belongs to another conversation"):
            spec.call()
    assert desk.refunds == []
    resumed = client.prompt().resume(saved, decisions).conversation("c1")
    assert resumed.tool_context({"tenant_id": "acme"}).call().content() == "Refunded."
    assert desk.refunds == [("A1", 500)]
