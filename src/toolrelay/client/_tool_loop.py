"""What one tool loop turn reports: why it stopped and what it did (``response.tool_loop``)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from toolrelay.execution import ToolExecutionResult
from toolrelay.messages import Message, Usage

__all__ = [
    "APPROVAL_REQUIRED_FINISH_REASON",
    "TOOL_CALL_LIMIT_FINISH_REASON",
    "LoopStop",
    "ToolLoopReport",
]

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


@dataclass(frozen=True, kw_only=True)
class ToolLoopReport:
    """What one turn of the tool loop did (``response.tool_loop``).

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
