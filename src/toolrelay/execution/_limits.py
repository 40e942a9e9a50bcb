"""How many tool calls one turn may make.

A turn is everything after the last user message. The limits count the tool responses already
in the prompt's history for this turn plus the calls of the round being executed, so a loop
that keeps calling the same tool is stopped whatever the number of rounds. Every call counts,
including calls that failed, were denied or named an unknown tool; per-tool counts use the
tool's canonical name (the name its responses carry).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from toolrelay._plural import plural
from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import _feedback as feedback
from toolrelay.messages import Message, ToolResponseMessage, UserMessage

__all__ = ["CallLimits", "LimitBreach", "TurnCallCounter"]


@dataclass(frozen=True, kw_only=True)
class CallLimits:
    """Per-turn tool call limits.

    Attributes:
        per_tool: Calls of any one tool per turn; ``None`` means unlimited.
        total: Calls of all tools together per turn; ``None`` means unlimited.
        overrides: Per-tool limits by canonical name, replacing ``per_tool`` (``None`` there
            means unlimited for that tool).
        excluded: Canonical names neither counted nor limited.
        on_breach: ``"feedback"`` (default) answers each breaching call with an error
            response and runs the others; ``"raise"`` does the same, then raises
            :class:`~toolrelay.exceptions.ToolCallLimitError` whose ``partial`` is the
            round's :class:`~toolrelay.execution.ToolExecutionResult`. Feedback is the default
            because the model can usually finish with what it has.
    """

    per_tool: int | None = 40
    total: int | None = 150
    overrides: Mapping[str, int | None] = field(default_factory=dict)
    excluded: frozenset[str] = frozenset()
    on_breach: Literal["raise", "feedback"] = "feedback"

    def __post_init__(self) -> None:
        object.__setattr__(self, "overrides", MappingProxyType(dict(self.overrides)))
        object.__setattr__(self, "excluded", frozenset(self.excluded))
        limits = [self.per_tool, self.total, *self.overrides.values()]
        if any(limit is not None and limit < 0 for limit in limits):
            raise ConfigurationError("tool call limits must be >= 0 or None")
        if self.on_breach not in ("raise", "feedback"):
            raise ConfigurationError(
                f"on_breach must be 'raise' or 'feedback', not {self.on_breach!r}"
            )

    @classmethod
    def unlimited(cls) -> CallLimits:
        """No limits at all."""
        return cls(per_tool=None, total=None)

    def limit_for(self, tool_name: str) -> int | None:
        """The per-turn limit of one tool (``None``: unlimited)."""
        if tool_name in self.overrides:
            return self.overrides[tool_name]
        return self.per_tool


@dataclass(frozen=True, kw_only=True)
class LimitBreach:
    """A call that went over a limit.

    Attributes:
        tool_name: The tool called (canonical name, or the name as written if unresolved).
        scope: Which limit: ``"tool"`` (per tool) or ``"total"``.
        limit: The limit that was exceeded.
    """

    tool_name: str
    scope: Literal["tool", "total"]
    limit: int

    def describe(self) -> str:
        """The breach in words for developers (the text of a raised limit error)."""
        if self.scope == "tool":
            limit = plural(self.limit, "call")
            return f"{self.tool_name!r} went over its limit of {limit} per turn"
        return (
            f"the turn went over its limit of {plural(self.limit, 'tool call')} "
            f"(at {self.tool_name!r})"
        )

    @property
    def message(self) -> str:
        """The error text the model reads."""
        if self.scope == "tool":
            return feedback.per_tool_limit(self.tool_name, self.limit)
        return feedback.total_limit(self.limit)


class TurnCallCounter:
    """Counts the calls of the current turn and tells which new call breaches a limit.

    Args:
        limits: The limits to enforce.
        history: The prompt's messages; tool responses after the last user message count.
    """

    def __init__(self, limits: CallLimits, history: Iterable[Message] = ()) -> None:
        self._limits = limits
        self._per_tool: Counter[str] = Counter()
        self._total = 0
        for name in _turn_response_names(list(history)):
            self._count(name)

    def _count(self, name: str) -> None:
        if name in self._limits.excluded:
            return
        self._per_tool[name] += 1
        self._total += 1

    def admit(self, tool_name: str, *, resolved: bool = True) -> LimitBreach | None:
        """Count one call of ``tool_name``; return the breach if it goes over a limit.

        Unresolved calls count towards the total only, and never breach (they are answered
        as unknown tools anyway).
        """
        if tool_name in self._limits.excluded:
            return None
        self._total += 1
        if not resolved:
            return None
        self._per_tool[tool_name] += 1
        limit = self._limits.limit_for(tool_name)
        if limit is not None and self._per_tool[tool_name] > limit:
            return LimitBreach(tool_name=tool_name, scope="tool", limit=limit)
        total = self._limits.total
        if total is not None and self._total > total:
            return LimitBreach(tool_name=tool_name, scope="total", limit=total)
        return None


def _turn_response_names(history: list[Message]) -> list[str]:
    names: list[str] = []
    for message in reversed(history):
        if isinstance(message, UserMessage):
            break
        if isinstance(message, ToolResponseMessage):
            names.extend(r.name for r in message.responses)
    return names
