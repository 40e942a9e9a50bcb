"""The state of one tool loop turn, and the report it leaves in the response context."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from toolrelay.client._advisor import AdvisorChain, HistoryAdvisor
from toolrelay.client._memory_advisor import answer_message
from toolrelay.client._requests import ChatClientRequest, ChatClientResponse
from toolrelay.execution import ResumedRound, ToolExecutionResult
from toolrelay.messages import Message, Usage

__all__ = [
    "APPROVAL_REQUIRED_FINISH_REASON",
    "TOOL_CALL_LIMIT_FINISH_REASON",
    "TOOL_LOOP_KEY",
    "LoopStop",
    "ToolLoopReport",
    "ToolLoopState",
    "tool_loop_report",
    "with_report",
]

TOOL_LOOP_KEY = "toolrelay.tool_loop"
"""Response context key of the :class:`ToolLoopReport` the tool-calling advisor leaves."""

TOOL_CALL_LIMIT_FINISH_REASON = "toolCallLimitExceeded"
"""Finish reason of the answer when a tool-call limit ended the loop."""

APPROVAL_REQUIRED_FINISH_REASON = "approvalRequired"
"""Finish reason of the answer when calls wait for a person's approval."""


class LoopStop(StrEnum):
    """Why the loop ended."""

    ANSWER = "answer"
    """The model answered without (eligible) tool calls."""
    RETURN_DIRECT = "return_direct"
    """A round's tools were all return-direct; their results are the answer."""
    TOOL_CALL_LIMIT = "tool_call_limit"
    """A tool-call limit was breached with ``on_breach="raise"``."""
    APPROVAL_REQUIRED = "approval_required"
    """Calls wait for a person's approval; the turn can be resumed with decisions."""


@dataclass(kw_only=True)
class ToolLoopState:
    """What the loop knows during one turn; every hook receives it.

    The advisor object is shared by concurrent requests, so per-turn data lives here, never
    on the advisor. Subclasses keep their own per-turn data in :attr:`data`.

    Attributes:
        request: The request the loop received (as returned by ``init_loop``).
        chain: The advisors after the loop, then the model.
        streaming: Whether the turn is streamed.
        history: The turn so far: the messages the loop started with, then each round's
            assistant message and tool response message. This is also the prompt given to
            the execution manager, so its per-turn call limits count every round.
        history_advisors: Advisors after the loop that keep the conversation themselves;
            when there are any (and ``conversation_history`` is not forced on), each round
            sends them only new messages.
        delegate_history: Whether rounds send only new messages (see above).
        model_calls: Model calls made so far in this turn.
        usage: Usage summed over the rounds so far.
        rounds: The execution result of every tool round so far.
        stop: Why the loop ended (set when it ends).
        resumed: While the round that stopped for approval runs again, that round (with the
            person's decisions); ``execute_tools`` passes it to the manager. ``None``
            otherwise.
        data: Free space for subclasses.
    """

    request: ChatClientRequest
    chain: AdvisorChain
    streaming: bool
    history: list[Message] = field(default_factory=list)
    history_advisors: tuple[HistoryAdvisor, ...] = ()
    delegate_history: bool = False
    model_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    rounds: list[ToolExecutionResult] = field(default_factory=list)
    stop: LoopStop | None = None
    resumed: ResumedRound | None = None
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ToolLoopReport:
    """What one turn of the tool loop did (in the response context at :data:`TOOL_LOOP_KEY`).

    Attributes:
        history: The whole turn: the messages the loop started with, every round's
            assistant and tool response messages, and the final answer's message.
        model_calls: How many times the model was called.
        usage: Usage summed over all model calls (also the final response's usage).
        rounds: The execution result of every tool round, in order (of a resumed turn: the
            rounds since it resumed).
        stop: Why the loop ended.
    """

    history: tuple[Message, ...]
    model_calls: int
    usage: Usage
    rounds: tuple[ToolExecutionResult, ...]
    stop: LoopStop


def tool_loop_report(response: ChatClientResponse) -> ToolLoopReport | None:
    """The tool loop's report in ``response``'s context, or ``None`` when no loop ran."""
    report = response.context.get(TOOL_LOOP_KEY)
    return report if isinstance(report, ToolLoopReport) else None


def with_report(final: ChatClientResponse, state: ToolLoopState) -> ChatClientResponse:
    """The final response with the turn's summed usage and its report in the context."""
    chat_response = dataclasses.replace(final.chat_response, usage=state.usage)
    message = answer_message(chat_response)
    history = (*state.history, *([message] if message is not None else []))
    report = ToolLoopReport(
        history=history,
        model_calls=state.model_calls,
        usage=state.usage,
        rounds=tuple(state.rounds),
        stop=state.stop or LoopStop.ANSWER,
    )
    return ChatClientResponse(
        chat_response=chat_response, context={**final.context, TOOL_LOOP_KEY: report}
    )
