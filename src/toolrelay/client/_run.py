"""``RunResult``: what one turn of ``ChatClient.run`` gave back, as typed attributes.

Everything here is read from the response that left the advisor chain: its answer and
summed usage, and the reports the tool loop, tool search and deferred approval left in its
context. A result holds that response too (``.response``), so nothing is lost to a caller
who needs the context entries of their own advisors.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolrelay.client._deferred_approval import ApprovalState
from toolrelay.client._memory_advisor import answer_message
from toolrelay.client._requests import ChatClientResponse
from toolrelay.client._tool_loop import ToolLoopReport
from toolrelay.messages import Message, SystemMessage, Usage, UserMessage
from toolrelay.toolsearch import ToolSearchReport

__all__ = ["RunResult", "run_result"]


@dataclass(frozen=True, kw_only=True)
class RunResult:
    """One turn's outcome: the answer, the turn's messages, and what each part of the loop did.

    Attributes:
        text: The answer's text; ``""`` when the model gave none. A turn stopped for
            approval answers ``"Waiting for approval: ..."`` (see :attr:`approval`).
        messages: The turn, from the user's message to the answer: each round's assistant
            message with its tool calls and the tool response message, then the answer's
            message. Earlier turns of the conversation and system text are not in it.
            Without a tool loop (``tool_calling=False``), the answer's message alone.
        usage: Token usage summed over every model call of the turn.
        finish_reason: The answer's finish reason: the model's, or the loop's own
            (``"returnDirect"``, ``"toolCallLimitExceeded"``, ``"approvalRequired"``).
        tool_loop: What the tool loop did (rounds, model calls, why it stopped), or ``None``
            when no loop ran.
        tool_search: What tool search did (searches, tools shown per model call,
            discovered tools), or ``None`` without a ``ToolSearchAdvisor``.
        approval: When the turn stopped for a person's approval, what resuming it needs
            (``client.resume(result.approval, decisions, ...)``); else ``None``.
        response: The response as it left the advisor chain, with its full context.
    """

    text: str
    messages: tuple[Message, ...]
    usage: Usage
    finish_reason: str | None
    tool_loop: ToolLoopReport | None
    tool_search: ToolSearchReport | None
    approval: ApprovalState | None
    response: ChatClientResponse


def run_result(response: ChatClientResponse) -> RunResult:
    """The typed result of the turn that gave ``response``."""
    chat_response = response.chat_response
    loop = response.tool_loop
    if loop is not None:
        messages = _this_turn(loop.history)
    else:
        answer = answer_message(chat_response)
        messages = (answer,) if answer is not None else ()
    generation = chat_response.result
    return RunResult(
        text=chat_response.text or "",
        messages=messages,
        usage=chat_response.usage,
        finish_reason=generation.finish_reason if generation is not None else None,
        tool_loop=loop,
        tool_search=response.tool_search,
        approval=response.approval,
        response=response,
    )


def _this_turn(history: tuple[Message, ...]) -> tuple[Message, ...]:
    # The loop's history starts with what it was given: system text and, with memory outside
    # the loop, the earlier turns. Tool rounds add no user message, so the turn starts at the
    # last one.
    for start in range(len(history) - 1, -1, -1):
        if isinstance(history[start], UserMessage):
            return history[start:]
    return tuple(m for m in history if not isinstance(m, SystemMessage))
