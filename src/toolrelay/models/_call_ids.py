"""Consistent tool-call ids in a history about to be sent to a provider.

Providers pair each tool result with its call by id and reject a history where an id is
empty, repeated, or answered by nothing. Histories can hold such ids: a local model or a
lenient server may return none, or the same one for every call, and the execution layer
answers every call with the id it was given. :func:`consistent_call_ids` rewrites only the
ids that would be rejected, the same way on every request of a conversation, and pairs each
tool response with its call: by id when that is unambiguous, else by position.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from toolrelay.messages import AssistantMessage, Message, ToolCall, ToolResponseMessage

__all__ = ["consistent_call_ids"]


@dataclass(kw_only=True)
class _Issued:
    original: str
    sent: str
    answered: bool = False


def consistent_call_ids(
    messages: Sequence[Message], *, allowed: re.Pattern[str] | None = None
) -> list[Message]:
    """``messages`` with every call id non-empty, unique and answered consistently.

    Args:
        messages: The history, in order.
        allowed: Characters the provider accepts in an id (one character per match, e.g.
            ``re.compile(r"[a-zA-Z0-9_-]")``); others are replaced with ``_``.

    Returns:
        A new list; messages that needed no change are the same objects.
    """
    used: set[str] = set()
    issued: list[_Issued] = []
    counter = 0
    result: list[Message] = []

    def clean(call_id: str) -> str:
        if allowed is None:
            return call_id
        return "".join(ch if allowed.fullmatch(ch) else "_" for ch in call_id)

    def fresh() -> str:
        nonlocal counter
        while True:
            counter += 1
            candidate = f"call_{counter}"
            if candidate not in used:
                return candidate

    for message in messages:
        if isinstance(message, AssistantMessage) and message.tool_calls:
            issued = []
            calls: list[ToolCall] = []
            for call in message.tool_calls:
                sent = clean(call.id)
                if not sent or sent in used:
                    sent = fresh()
                used.add(sent)
                issued.append(_Issued(original=call.id, sent=sent))
                calls.append(call if sent == call.id else replace(call, id=sent))
            changed = any(a is not b for a, b in zip(calls, message.tool_calls, strict=True))
            result.append(replace(message, tool_calls=tuple(calls)) if changed else message)
        elif isinstance(message, ToolResponseMessage):
            responses = []
            for response in message.responses:
                entry = next(
                    (e for e in issued if not e.answered and e.original == response.id), None
                )
                entry = entry or next((e for e in issued if not e.answered), None)
                if entry is None:
                    # More answers than calls: keep the answer, under an id of its own.
                    sent = clean(response.id) or fresh()
                else:
                    entry.answered = True
                    sent = entry.sent
                responses.append(response if sent == response.id else replace(response, id=sent))
            changed = any(a is not b for a, b in zip(responses, message.responses, strict=True))
            result.append(replace(message, responses=tuple(responses)) if changed else message)
        else:
            result.append(message)
    return result
