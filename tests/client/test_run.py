"""RunResult: a turn's answer, messages, usage and reports, read from what the loop left."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest

from tests.search_only import SEARCH_ONLY
from toolrelay.client import (
    ChatClient,
    LoopStop,
    MessageChatMemoryAdvisor,
    RunResult,
    ToolSearchAdvisor,
)
from toolrelay.client._tool_loop import APPROVAL_REQUIRED_FINISH_REASON
from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import ApprovalInterceptor, Approve, Deny
from toolrelay.execution._result import RETURN_DIRECT_FINISH_REASON
from toolrelay.memory import MessageWindowChatMemory
from toolrelay.messages import (
    AssistantMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    Usage,
    UserMessage,
)
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.testing import ScriptedModel, text_response, tool_call_response
from toolrelay.tools import ToolContext, tool


class Desk:
    """Order tools that record what they did."""

    def __init__(self) -> None:
        self.refunds: list[str] = []

    @tool(name="order.status", read_only=True)
    def status(self, order_id: str, context: ToolContext) -> str:
        """Where an order is.

        Args:
            order_id: The order's id.
        """
        return f"{order_id} of {context.tenant_id}: shipped"

    @tool(name="order.refund", destructive=True)
    def refund(self, order_id: str) -> str:
        """Refund an order in full.

        Args:
            order_id: The order's id.
        """
        self.refunds.append(order_id)
        return f"refunded {order_id}"


def approving() -> ApprovalInterceptor:
    """A person decides later about every destructive call."""
    return ApprovalInterceptor(destructive=True)


def test_a_turn_with_two_rounds_gives_its_text_messages_and_summed_usage() -> None:
    model = ScriptedModel(
        [
            tool_call_response(("order__status", {"order_id": "A-1"}), usage=(50, 10)),
            tool_call_response(("order__status", {"order_id": "A-2"}), usage=(70, 11)),
            text_response("Both shipped.", usage=(90, 12)),
        ]
    )
    client = ChatClient(model, system="You help.", tools=[Desk()], context={"tenant_id": "acme"})
    result = client.run_sync("Where are A-1 and A-2?")

    assert isinstance(result, RunResult)
    assert result.text == "Both shipped."
    assert result.usage == Usage(prompt_tokens=210, completion_tokens=33, total_tokens=243)
    assert result.finish_reason == "stop"
    assert result.messages == (
        UserMessage(text="Where are A-1 and A-2?"),
        AssistantMessage(
            tool_calls=(
                ToolCall(id="call_1", name="order__status", arguments='{"order_id": "A-1"}'),
            )
        ),
        ToolResponseMessage(
            responses=(ToolResponse(id="call_1", name="order.status", data="A-1 of acme: shipped"),)
        ),
        AssistantMessage(
            tool_calls=(
                ToolCall(id="call_2", name="order__status", arguments='{"order_id": "A-2"}'),
            )
        ),
        ToolResponseMessage(
            responses=(ToolResponse(id="call_2", name="order.status", data="A-2 of acme: shipped"),)
        ),
        AssistantMessage(text="Both shipped."),
    )
    assert result.tool_loop is not None
    assert (result.tool_loop.model_calls, len(result.tool_loop.rounds)) == (3, 2)
    assert result.tool_loop.stop is LoopStop.ANSWER
    assert result.tool_search is None
    assert result.approval is None
    assert result.response.chat_response.text == "Both shipped."
    with pytest.raises(FrozenInstanceError):
        result.text = "edited"  # type: ignore[misc]


def test_messages_are_this_turn_only_when_memory_keeps_the_earlier_ones() -> None:
    model = ScriptedModel(
        ["Hello.", tool_call_response(("order__status", {"order_id": "A-1"})), "Shipped."]
    )
    client = ChatClient(
        model,
        system="You help.",
        tools=[Desk()],
        advisors=[MessageChatMemoryAdvisor(MessageWindowChatMemory())],
        context={"tenant_id": "acme"},
    )
    client.run_sync("Hi", conversation="c1")
    result = client.run_sync("Where is A-1?", conversation="c1")

    assert [m.text for m in model.prompts[1].messages[:3]] == ["You help.", "Hi", "Hello."]
    assert [type(m).__name__ for m in result.messages] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResponseMessage",
        "AssistantMessage",
    ]
    assert result.messages[0] == UserMessage(text="Where is A-1?")
    assert result.text == "Shipped."


def test_a_return_direct_turn_ends_with_the_tools_answer() -> None:
    @tool(return_direct=True)
    def ticket(title: str) -> str:
        """Open a ticket."""
        return f"ticket opened: {title}"

    model = ScriptedModel([tool_call_response(("ticket", {"title": "late"}), usage=(5, 1))])
    result = ChatClient(model, tools=[ticket]).run_sync("Open a ticket: late")
    assert result.finish_reason == RETURN_DIRECT_FINISH_REASON
    assert result.text == "ticket opened: late"
    assert result.tool_loop is not None
    assert result.tool_loop.stop is LoopStop.RETURN_DIRECT
    assert result.messages[-1] == AssistantMessage(text="ticket opened: late")
    assert result.usage.total_tokens == 6


def test_without_a_tool_loop_the_messages_are_the_answer_and_the_text_may_be_empty() -> None:
    model = ScriptedModel([tool_call_response(("order__status", {"order_id": "A-1"}))])
    result = ChatClient(model, tools=[Desk()], tool_calling=False).run_sync("Where is A-1?")
    assert result.text == ""
    assert result.tool_loop is None
    assert result.messages == (
        AssistantMessage(
            tool_calls=(
                ToolCall(id="call_1", name="order__status", arguments='{"order_id": "A-1"}'),
            )
        ),
    )


def test_tool_search_reports_what_the_turn_searched_and_found() -> None:
    model = ScriptedModel(
        [
            tool_call_response(("tool_search", {"queries": ["where is an order"]})),
            tool_call_response(("order__status", {"order_id": "A-1"})),
            "Shipped.",
        ]
    )
    search = ToolSearchAdvisor(Desk(), index=BM25ToolIndex(), channel="rewrite", **SEARCH_ONLY)
    client = ChatClient(model, advisors=[search])
    result = client.run_sync("Where is A-1?", conversation="c1", context={"tenant_id": "acme"})

    assert result.text == "Shipped."
    assert result.tool_search is not None
    assert [s.query for s in result.tool_search.searches] == ["where is an order"]
    assert result.tool_search.discovered[0] == "order.status"
    assert model.tool_names_shown(0) == ["tool_search"]
    assert "order.status" in model.tool_names_shown(1)
    assert result.tool_loop is not None
    assert len(result.tool_loop.rounds) == 2
    assert result.messages[4].responses[0].data == "A-1 of acme: shipped"  # type: ignore[union-attr]


def test_a_deferred_call_stops_the_turn_and_resume_finishes_it() -> None:
    desk = Desk()
    model = ScriptedModel(
        [
            tool_call_response(
                ("order__status", {"order_id": "A-1"}),
                ("order__refund", {"order_id": "A-1"}),
                usage=(40, 8),
            ),
            text_response("Refunded A-1.", usage=(60, 9)),
        ]
    )
    client = ChatClient(model, tools=[desk], approval=approving())
    stopped = client.run_sync("Refund A-1", conversation="c9", context={"tenant_id": "acme"})

    assert stopped.finish_reason == APPROVAL_REQUIRED_FINISH_REASON
    assert stopped.approval is not None
    assert [(p.call_id, p.tool_name) for p in stopped.approval.pending] == [
        ("call_2", "order.refund")
    ]
    assert stopped.tool_loop is not None
    assert stopped.tool_loop.stop is LoopStop.APPROVAL_REQUIRED
    assert stopped.text == "Waiting for approval: order.refund (call call_2)."
    assert stopped.usage.total_tokens == 48
    assert desk.refunds == []

    # The state travels as JSON; the resumed turn runs the waiting call once, on approval.
    finished = client.resume_sync(
        stopped.approval.to_json(),
        {"call_2": Approve()},
        conversation="c9",
        context={"tenant_id": "acme"},
    )
    assert finished.text == "Refunded A-1."
    assert finished.approval is None
    assert finished.usage.total_tokens == 48 + 69  # summed over the whole turn
    assert desk.refunds == ["A-1"]
    assert model.call_count == 2  # the waiting round was not asked of the model again
    assert [type(m).__name__ for m in finished.messages] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResponseMessage",
        "AssistantMessage",
    ]
    assert [r.data for r in finished.messages[2].responses] == [  # type: ignore[union-attr]
        "A-1 of acme: shipped",
        "refunded A-1",
    ]


async def test_resume_refuses_a_state_of_another_tenant_and_a_denial_never_runs() -> None:
    desk = Desk()
    model = ScriptedModel(
        [tool_call_response(("order__refund", {"order_id": "B-2"})), "Not refunded."]
    )
    client = ChatClient(model, tools=[desk], approval=approving())
    stopped = await client.run("Refund B-2", conversation="c3", context={"tenant_id": "acme"})
    assert stopped.approval is not None
    with pytest.raises(ConfigurationError, match="belongs to another conversation"):
        await client.resume(
            stopped.approval,
            {"call_1": Approve()},
            conversation="c3",
            context={"tenant_id": "evil"},
        )
    denied = await client.resume(
        stopped.approval,
        {"call_1": Deny("over the limit")},
        conversation="c3",
        context={"tenant_id": "acme"},
    )
    assert denied.text == "Not refunded."
    assert desk.refunds == []
    assert "over the limit" in str(denied.messages[2].responses[0].data)  # type: ignore[union-attr]


def test_tool_search_and_approval_are_reported_together() -> None:
    desk = Desk()
    model = ScriptedModel(
        [
            tool_call_response(("tool_search", {"queries": ["refund an order"]})),
            tool_call_response(("order__refund", {"order_id": "C-3"})),
        ]
    )
    search = ToolSearchAdvisor(desk, index=BM25ToolIndex(), channel="rewrite", **SEARCH_ONLY)
    client = ChatClient(model, advisors=[search], approval=approving())
    result = client.run_sync("Refund C-3", conversation="c4", context={"tenant_id": "acme"})
    assert result.tool_search is not None
    assert "order.refund" in result.tool_search.discovered
    assert result.approval is not None
    assert [p.tool_name for p in result.approval.pending] == ["order.refund"]
    assert desk.refunds == []
