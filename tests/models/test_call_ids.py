"""Consistent call ids in the history sent to a provider."""

from __future__ import annotations

import re

from toolrelay.messages import (
    AssistantMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.models._call_ids import consistent_call_ids


def calls(*ids: str) -> AssistantMessage:
    return AssistantMessage(tool_calls=tuple(ToolCall(id=i, name="t") for i in ids))


def answers(*ids: str) -> ToolResponseMessage:
    return ToolResponseMessage(
        responses=tuple(ToolResponse(id=i, name="t", data=f"r{n}") for n, i in enumerate(ids))
    )


def ids_of(messages: list) -> list[list[str]]:
    out = []
    for m in messages:
        if isinstance(m, AssistantMessage):
            out.append([c.id for c in m.tool_calls])
        elif isinstance(m, ToolResponseMessage):
            out.append([r.id for r in m.responses])
    return out


def test_good_ids_are_untouched_and_the_same_objects() -> None:
    history = [UserMessage(text="x"), calls("a", "b"), answers("b", "a")]
    fixed = consistent_call_ids(history)
    assert all(x is y for x, y in zip(fixed, history, strict=True))


def test_empty_and_duplicate_ids_get_fresh_ones_paired_in_order() -> None:
    history = [calls("", "dup", "dup"), answers("", "dup", "dup")]
    call_ids, answer_ids = ids_of(consistent_call_ids(history))
    assert call_ids == answer_ids
    assert len(set(call_ids)) == 3
    assert call_ids[1] == "dup"


def test_ids_reused_in_a_later_round_are_renamed_there() -> None:
    history = [calls("call_0"), answers("call_0"), calls("call_0"), answers("call_0")]
    rounds = ids_of(consistent_call_ids(history))
    assert rounds[0] == rounds[1] == ["call_0"]
    assert rounds[2] == rounds[3]
    assert rounds[2] != ["call_0"]


def test_answers_out_of_order_are_matched_by_id() -> None:
    history = [calls("", "b"), answers("b", "")]
    call_ids, answer_ids = ids_of(consistent_call_ids(history))
    assert answer_ids == [call_ids[1], call_ids[0]]


def test_disallowed_characters_are_replaced() -> None:
    history = [calls("call:1/x"), answers("call:1/x")]
    fixed = consistent_call_ids(history, allowed=re.compile(r"[a-zA-Z0-9_-]"))
    assert ids_of(fixed) == [["call_1_x"], ["call_1_x"]]


def test_extra_answers_keep_an_id() -> None:
    history = [calls("a"), answers("a", "stray")]
    assert ids_of(consistent_call_ids(history)) == [["a"], ["a", "stray"]]
