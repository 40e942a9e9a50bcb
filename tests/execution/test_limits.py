from __future__ import annotations

import pytest

from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import CallLimits
from toolrelay.execution._limits import LimitBreach, TurnCallCounter
from toolrelay.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)


def responses(*names: str) -> ToolResponseMessage:
    return ToolResponseMessage(
        responses=tuple(ToolResponse(id=str(i), name=n, data="") for i, n in enumerate(names))
    )


def test_defaults() -> None:
    limits = CallLimits()
    assert (limits.per_tool, limits.total, limits.on_breach) == (40, 150, "feedback")
    assert limits.limit_for("anything") == 40


def test_overrides_replace_the_per_tool_limit() -> None:
    limits = CallLimits(per_tool=3, overrides={"search": 10, "free": None})
    assert limits.limit_for("search") == 10
    assert limits.limit_for("free") is None
    assert limits.limit_for("other") == 3


@pytest.mark.parametrize(
    "kwargs",
    [{"per_tool": -1}, {"total": -5}, {"overrides": {"x": -1}}, {"on_breach": "ignore"}],
)
def test_invalid_configuration(kwargs: dict[str, object]) -> None:
    with pytest.raises(ConfigurationError):
        CallLimits(**kwargs)  # type: ignore[arg-type]


def test_per_tool_breach_on_the_call_after_the_limit() -> None:
    counter = TurnCallCounter(CallLimits(per_tool=2, total=None))
    assert counter.admit("a") is None
    assert counter.admit("a") is None
    assert counter.admit("b") is None
    assert counter.admit("a") == LimitBreach(tool_name="a", scope="tool", limit=2)


def test_total_breach() -> None:
    counter = TurnCallCounter(CallLimits(per_tool=None, total=2))
    assert counter.admit("a") is None
    assert counter.admit("b") is None
    assert counter.admit("c") == LimitBreach(tool_name="c", scope="total", limit=2)


def test_only_the_current_turn_counts() -> None:
    history: list[Message] = [
        UserMessage(text="first question"),
        AssistantMessage(tool_calls=(ToolCall(id="0", name="a"),)),
        responses("a", "a", "a"),
        UserMessage(text="second question"),
        AssistantMessage(tool_calls=(ToolCall(id="1", name="a"),)),
        responses("a"),
    ]
    counter = TurnCallCounter(CallLimits(per_tool=2, total=None), history)
    assert counter.admit("a") is None
    assert counter.admit("a") == LimitBreach(tool_name="a", scope="tool", limit=2)


def test_excluded_tools_are_neither_counted_nor_limited() -> None:
    limits = CallLimits(per_tool=1, total=1, excluded=frozenset({"think"}))
    counter = TurnCallCounter(limits, [UserMessage(text="q"), responses("think", "think")])
    assert counter.admit("think") is None
    assert counter.admit("think") is None
    assert counter.admit("a") is None
    assert counter.admit("b") == LimitBreach(tool_name="b", scope="total", limit=1)


def test_unresolved_calls_count_towards_the_total_but_never_breach() -> None:
    counter = TurnCallCounter(CallLimits(per_tool=None, total=1))
    assert counter.admit("typo", resolved=False) is None
    assert counter.admit("typo", resolved=False) is None
    assert counter.admit("a") == LimitBreach(tool_name="a", scope="total", limit=1)


def test_zero_disables_a_tool() -> None:
    counter = TurnCallCounter(CallLimits(overrides={"delete_all": 0}))
    assert counter.admit("delete_all") == LimitBreach(tool_name="delete_all", scope="tool", limit=0)


def test_unlimited() -> None:
    counter = TurnCallCounter(CallLimits.unlimited())
    assert all(counter.admit("a") is None for _ in range(1000))


def test_breach_messages() -> None:
    assert LimitBreach(tool_name="search", scope="tool", limit=40).message == (
        "Tool call limit reached: 'search' may be called at most 40 times per turn. "
        "Do not call it again; answer with the information you have."
    )
    assert LimitBreach(tool_name="search", scope="total", limit=150).message == (
        "Tool call limit reached: at most 150 tool calls are allowed per turn. "
        "Do not call more tools; answer with the information you have."
    )
    assert LimitBreach(tool_name="search", scope="tool", limit=40).describe() == (
        "'search' went over its limit of 40 calls per turn"
    )
    assert LimitBreach(tool_name="ping", scope="total", limit=150).describe() == (
        "the turn went over its limit of 150 tool calls (at 'ping')"
    )


def test_a_limit_of_one_is_counted_in_the_singular() -> None:
    once = LimitBreach(tool_name="refund", scope="tool", limit=1)
    assert "'refund' may be called at most 1 time per turn." in once.message
    assert once.describe() == "'refund' went over its limit of 1 call per turn"
    single = LimitBreach(tool_name="ping", scope="total", limit=1)
    assert "at most 1 tool call is allowed per turn." in single.message
    assert single.describe() == "the turn went over its limit of 1 tool call (at 'ping')"
