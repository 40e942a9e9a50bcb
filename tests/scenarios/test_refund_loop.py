"""The refund triage of the seed texts, end to end with real decorated tools.

"Find yesterday's failed refunds, retry the recoverable ones, open a ticket for those still
failing and notify the owner": four tool rounds, then the answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolrelay.client import (
    HIGHEST_PRECEDENCE,
    ChatClient,
    LoopStop,
    MessageChatMemoryAdvisor,
    tenant_scope,
)
from toolrelay.execution import ToolCallStatus
from toolrelay.memory import (
    InMemoryChatMemoryRepository,
    MessageWindowChatMemory,
    SqliteChatMemoryRepository,
)
from toolrelay.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    Usage,
    UserMessage,
)
from toolrelay.testing import ScriptedModel, text_response, tool_call_response
from toolrelay.tools import ToolContext, tool

SYSTEM = "You triage failed refunds for merchants."
ASK = (
    "Find yesterday's failed refunds for merchant M-88, retry the recoverable ones, open a "
    "ticket for those still failing and notify the owner."
)
ANSWER = "R1001 was refunded on retry. R1002 and R1003 still fail: ticket INC-1, owner notified."
TOOL_NAMES = [
    "refund.find_failed_orders",
    "refund.retry_failed_order",
    "ticket.create_incident",
    "notification.send_to_owner",
]
CONTEXT = {"tenant_id": "t-1", "user_id": "u-7"}


class RefundDesk:
    """The refund system and the ticket platform, in memory."""

    def __init__(self) -> None:
        self.failed = {"R1001": "CHANNEL_TIMEOUT", "R1002": "CHANNEL_TIMEOUT", "R1003": "CLOSED"}
        self.recovers = {"R1001"}
        self.retried: list[tuple[str, Any]] = []
        self.tickets: list[dict[str, Any]] = []

    @tool(name="refund.find_failed_orders", read_only=True)
    def find_failed_orders(self, merchant_id: str, start_time: str, end_time: str) -> list[Any]:
        """Read-only lookup of refund orders that failed in a time range.

        Never retries a refund and never changes an order.

        Args:
            merchant_id: The merchant's id.
            start_time: Start of the range, ISO-8601.
            end_time: End of the range, ISO-8601.
        """
        return [
            {"refund_order_no": no, "error_code": code, "retryable": code == "CHANNEL_TIMEOUT"}
            for no, code in sorted(self.failed.items())
        ]

    @tool(name="refund.retry_failed_order", destructive=True)
    def retry_failed_order(self, refund_order_no: str, context: ToolContext) -> dict[str, str]:
        """Retry one refund that is allowed to be retried (changes the refund's state).

        Args:
            refund_order_no: The refund order to retry.
        """
        self.retried.append((refund_order_no, context.tenant_id))
        if refund_order_no in self.recovers:
            del self.failed[refund_order_no]
            return {"refund_order_no": refund_order_no, "status": "SUCCEEDED"}
        return {"refund_order_no": refund_order_no, "status": "FAILED"}

    @tool(name="ticket.create_incident")
    def create_incident(self, refund_order_nos: list[str], summary: str) -> dict[str, str]:
        """Open an incident ticket for refunds that still fail.

        Args:
            refund_order_nos: The refund orders concerned.
            summary: What went wrong.
        """
        ticket_id = f"INC-{len(self.tickets) + 1}"
        self.tickets.append({"id": ticket_id, "orders": refund_order_nos, "summary": summary})
        return {"ticket_id": ticket_id}


def make_notifier(sent: list[str], *, return_direct: bool = False) -> Any:
    @tool(name="notification.send_to_owner", return_direct=return_direct)
    async def send_to_owner(ticket_id: str, message: str) -> str:
        """Tell the merchant's refund owner about a ticket.

        Args:
            ticket_id: The ticket to point to.
            message: What to tell the owner.
        """
        sent.append(ticket_id)
        return f"Owner notified about {ticket_id}."

    return send_to_owner


FIND_ARGS = {
    "merchant_id": "M-88",
    "start_time": "2025-06-01T00:00:00",
    "end_time": "2025-06-02T00:00:00",
}
TICKET_ARGS = {"refund_order_nos": ["R1002", "R1003"], "summary": "Refunds fail after retry"}
NOTIFY_ARGS = {"ticket_id": "INC-1", "message": "Two refunds need attention, see INC-1."}
USAGES = [(120, 30), (210, 40), (300, 50), (360, 25), (400, 35)]


def script() -> list[Any]:
    # The model writes provider-safe names ("." → "__"), as it saw them.
    return [
        tool_call_response(("refund__find_failed_orders", FIND_ARGS), usage=USAGES[0]),
        tool_call_response(
            ("refund__retry_failed_order", {"refund_order_no": "R1001"}),
            ("refund__retry_failed_order", {"refund_order_no": "R1002"}),
            usage=USAGES[1],
        ),
        tool_call_response(("ticket__create_incident", TICKET_ARGS), usage=USAGES[2]),
        tool_call_response(("notification__send_to_owner", NOTIFY_ARGS), usage=USAGES[3]),
        text_response(ANSWER, usage=USAGES[4]),
    ]


def call(id_: str, name: str, arguments: str) -> ToolCall:
    return ToolCall(id=id_, name=name, arguments=arguments)


def results(*responses: tuple[str, str, str]) -> ToolResponseMessage:
    return ToolResponseMessage(
        responses=tuple(ToolResponse(id=i, name=n, data=d) for i, n, d in responses)
    )


ROUNDS: list[Message] = [
    AssistantMessage(
        tool_calls=(
            call(
                "call_1",
                "refund__find_failed_orders",
                '{"merchant_id": "M-88", "start_time": "2025-06-01T00:00:00", '
                '"end_time": "2025-06-02T00:00:00"}',
            ),
        )
    ),
    results(
        (
            "call_1",
            "refund.find_failed_orders",
            '[{"refund_order_no": "R1001", "error_code": "CHANNEL_TIMEOUT", "retryable": true}, '
            '{"refund_order_no": "R1002", "error_code": "CHANNEL_TIMEOUT", "retryable": true}, '
            '{"refund_order_no": "R1003", "error_code": "CLOSED", "retryable": false}]',
        )
    ),
    AssistantMessage(
        tool_calls=(
            call("call_2", "refund__retry_failed_order", '{"refund_order_no": "R1001"}'),
            call("call_3", "refund__retry_failed_order", '{"refund_order_no": "R1002"}'),
        )
    ),
    results(
        (
            "call_2",
            "refund.retry_failed_order",
            '{"refund_order_no": "R1001", "status": "SUCCEEDED"}',
        ),
        ("call_3", "refund.retry_failed_order", '{"refund_order_no": "R1002", "status": "FAILED"}'),
    ),
    AssistantMessage(
        tool_calls=(
            call(
                "call_4",
                "ticket__create_incident",
                '{"refund_order_nos": ["R1002", "R1003"], "summary": "Refunds fail after retry"}',
            ),
        )
    ),
    results(("call_4", "ticket.create_incident", '{"ticket_id": "INC-1"}')),
    AssistantMessage(
        tool_calls=(
            call(
                "call_5",
                "notification__send_to_owner",
                '{"ticket_id": "INC-1", "message": "Two refunds need attention, see INC-1."}',
            ),
        )
    ),
    results(("call_5", "notification.send_to_owner", "Owner notified about INC-1.")),
]
START: list[Message] = [SystemMessage(text=SYSTEM), UserMessage(text=ASK)]
HISTORY: list[Message] = [*START, *ROUNDS, AssistantMessage(text=ANSWER)]


def total_usage(rounds: int) -> Usage:
    prompt = sum(p for p, _ in USAGES[:rounds])
    completion = sum(c for _, c in USAGES[:rounds])
    return Usage(
        prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
    )


class Setup:
    def __init__(self, *advisors: Any, return_direct: bool = False, more: Any = ()) -> None:
        self.model = ScriptedModel([*script(), *more])
        self.desk = RefundDesk()
        self.sent: list[str] = []
        self.client = (
            ChatClient.builder(self.model)
            .default_system(SYSTEM)
            .default_tools(self.desk, make_notifier(self.sent, return_direct=return_direct))
            .default_tool_context(CONTEXT)
            .default_advisors(*advisors)
            .build()
        )

    def request(self) -> Any:
        return self.client.prompt().user(ASK).conversation("triage-1")


def memory_advisor(inside: bool, repository: Any = None) -> MessageChatMemoryAdvisor:
    order = HIGHEST_PRECEDENCE + 400 if inside else HIGHEST_PRECEDENCE + 200
    memory = MessageWindowChatMemory(repository or InMemoryChatMemoryRepository())
    return MessageChatMemoryAdvisor(memory, order=order)


async def stored(advisor: MessageChatMemoryAdvisor) -> list[Message]:
    # Kept within the request's tenant, as every conversation is.
    return await advisor.chat_memory.get(tenant_scope("triage-1", ToolContext(CONTEXT)))


# --- the loop ----------------------------------------------------------------------------------


def test_four_tool_rounds_then_the_answer() -> None:
    setup = Setup()
    response = setup.request().call()

    assert response.content() == ANSWER
    report = response.tool_loop
    assert report is not None
    assert list(report.history) == HISTORY
    assert report.stop is LoopStop.ANSWER
    assert report.model_calls == 5
    assert response.chat_response().usage == total_usage(5)
    assert report.usage == total_usage(5)
    assert [[o.status for o in r.outcomes] for r in report.rounds] == [
        [ToolCallStatus.OK],
        [ToolCallStatus.OK, ToolCallStatus.OK],
        [ToolCallStatus.OK],
        [ToolCallStatus.OK],
    ]
    # Each round's prompt is the history so far; every round offered the four tools.
    assert [list(p.messages) for p in setup.model.prompts] == [
        HISTORY[: 2 + 2 * k] for k in range(5)
    ]
    assert all(setup.model.tool_names_shown(k) == TOOL_NAMES for k in range(5))
    # The tools really ran, with the caller's tool context and not the model's arguments.
    assert sorted(setup.desk.retried) == [("R1001", "t-1"), ("R1002", "t-1")]  # concurrent
    assert setup.desk.tickets == [
        {"id": "INC-1", "orders": ["R1002", "R1003"], "summary": "Refunds fail after retry"}
    ]
    assert setup.sent == ["INC-1"]
    assert setup.model.remaining == 0


async def test_async_call_gives_the_same_turn() -> None:
    setup = Setup()
    response = await setup.request().acall()
    assert response.tool_loop is not None
    assert list(response.tool_loop.history) == HISTORY
    assert response.chat_response().usage == total_usage(5)


async def test_streamed_turn_gives_the_same_history_and_text() -> None:
    called, streamed = Setup(), Setup()
    called.request().call()

    pieces = [text async for text in streamed.request().stream().content()]
    assert "".join(pieces) == ANSWER
    assert len(pieces) > 1  # the answer really arrived in chunks
    assert [p.messages for p in streamed.model.prompts] == [
        p.messages for p in called.model.prompts
    ]

    again = Setup()
    collected = await again.request().stream().collect()
    assert collected.content() == ANSWER
    assert collected.tool_loop is not None
    assert list(collected.tool_loop.history) == HISTORY
    assert collected.chat_response().usage == total_usage(5)


async def test_streamed_chunks_carry_the_total_usage_once_at_the_end() -> None:
    setup = Setup()
    chunks = [c async for c in setup.request().stream().chat_responses()]
    assert all(c.usage == Usage() for c in chunks[:-1])
    assert chunks[-1].usage == total_usage(5)
    assert chunks[-1].generations[0].finish_reason == "stop"
    assert not any(g.message.tool_calls for c in chunks for g in c.generations)


# --- memory outside and inside the loop ----------------------------------------------------


@pytest.mark.parametrize("streamed", [False, True], ids=["call", "stream"])
async def test_memory_outside_the_loop_keeps_the_question_and_the_answer(streamed: bool) -> None:
    advisor = memory_advisor(inside=False)
    setup = Setup(advisor)
    if streamed:
        await setup.request().stream().collect()
    else:
        await setup.request().acall()

    assert await stored(advisor) == [UserMessage(text=ASK), AssistantMessage(text=ANSWER)]
    assert [list(p.messages) for p in setup.model.prompts] == [
        HISTORY[: 2 + 2 * k] for k in range(5)
    ]


@pytest.mark.parametrize("streamed", [False, True], ids=["call", "stream"])
@pytest.mark.parametrize("store", ["memory", "sqlite"])
async def test_memory_inside_the_loop_keeps_every_round_without_duplicates(
    streamed: bool, store: str, tmp_path: Path
) -> None:
    repository = SqliteChatMemoryRepository(tmp_path / "m.db") if store == "sqlite" else None
    advisor = memory_advisor(inside=True, repository=repository)
    setup = Setup(advisor)
    if streamed:
        await setup.request().stream().collect()
    else:
        await setup.request().acall()

    assert await stored(advisor) == HISTORY[1:]  # everything but the system text
    # Memory supplies the history, the loop sends only new messages: the model sees exactly
    # what it sees without memory.
    assert [list(p.messages) for p in setup.model.prompts] == [
        HISTORY[: 2 + 2 * k] for k in range(5)
    ]
    if repository is not None:
        repository.close()


async def test_the_next_turn_starts_from_memory() -> None:
    advisor = memory_advisor(inside=False)
    setup = Setup(advisor, more=["INC-1 is open."])
    await setup.request().acall()
    answer = await setup.client.prompt("Is the ticket open?").conversation("triage-1").acall()
    assert answer.content() == "INC-1 is open."
    assert list(setup.model.prompts[5].messages) == [
        SystemMessage(text=SYSTEM),
        UserMessage(text=ASK),
        AssistantMessage(text=ANSWER),
        UserMessage(text="Is the ticket open?"),
    ]


# --- return-direct ---------------------------------------------------------------------------


@pytest.mark.parametrize("streamed", [False, True], ids=["call", "stream"])
@pytest.mark.parametrize("inside", [False, True], ids=["memory-outside", "memory-inside"])
async def test_a_return_direct_tool_ends_the_loop_early(streamed: bool, inside: bool) -> None:
    advisor = memory_advisor(inside=inside)
    setup = Setup(advisor, return_direct=True)
    if streamed:
        pieces = [c async for c in setup.request().stream().chat_responses()]
        assert "".join(c.text or "" for c in pieces) == "Owner notified about INC-1."
        response = (
            await Setup(memory_advisor(inside), return_direct=True).request().stream().collect()
        )
    else:
        response = await setup.request().acall()

    direct = "Owner notified about INC-1."
    assert response.content() == direct
    generation = response.chat_response().generations[0]
    assert generation.finish_reason == "returnDirect"
    assert generation.metadata["tool_name"] == "notification.send_to_owner"
    assert response.chat_response().usage == total_usage(4)
    assert response.tool_loop is not None
    assert response.tool_loop.stop is LoopStop.RETURN_DIRECT
    assert list(response.tool_loop.history) == [*START, *ROUNDS, AssistantMessage(text=direct)]
    assert setup.model.call_count == 4
    assert setup.model.remaining == 1  # the final answer was never asked for

    expected = (
        [*HISTORY[1:-1], AssistantMessage(text=direct)]
        if inside
        else [
            UserMessage(text=ASK),
            AssistantMessage(text=direct),
        ]
    )
    assert await stored(advisor) == expected
