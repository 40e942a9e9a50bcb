"""A request to a chat model: the messages plus :class:`ChatOptions`.

``ChatOptions`` carries the tools the model may call for this request and the
:class:`~toolrelay.tools.ToolContext` handed to them, besides the usual sampling options.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from toolrelay.messages import Message
from toolrelay.tools._base import Tool

__all__ = ["ChatOptions", "Prompt"]


@dataclass(frozen=True, kw_only=True)
class ChatOptions:
    """Options of one model request.

    Attributes:
        model: The provider's model name; ``None`` uses the model's default.
        temperature: Sampling temperature.
        max_tokens: Upper bound on generated tokens.
        tools: Tools the model may call on this request (their definitions are sent).
        tool_names: Names resolved through the execution manager's resolver chain.
        tool_context: Passed to tools, never to the model.
        extras: Provider-specific options, passed through untouched.
    """

    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    tools: tuple[Tool, ...] = ()
    tool_names: tuple[str, ...] = ()
    tool_context: Mapping[str, Any] = field(default_factory=dict)
    extras: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tools", tuple(self.tools))
        object.__setattr__(self, "tool_names", tuple(self.tool_names))
        object.__setattr__(self, "tool_context", MappingProxyType(dict(self.tool_context)))
        object.__setattr__(self, "extras", MappingProxyType(dict(self.extras)))

    def replace(self, **changes: Any) -> ChatOptions:
        """A copy with ``changes`` applied."""
        return dataclasses.replace(self, **changes)

    def merged_with(self, other: ChatOptions | None) -> ChatOptions:
        """Options where every field set in ``other`` wins; tools and extras are combined."""
        if other is None:
            return self
        return ChatOptions(
            model=other.model if other.model is not None else self.model,
            temperature=other.temperature if other.temperature is not None else self.temperature,
            max_tokens=other.max_tokens if other.max_tokens is not None else self.max_tokens,
            tools=(*self.tools, *other.tools),
            tool_names=(*self.tool_names, *other.tool_names),
            tool_context={**self.tool_context, **other.tool_context},
            extras={**self.extras, **other.extras},
        )


@dataclass(frozen=True, kw_only=True)
class Prompt:
    """The messages of one model request and its options."""

    messages: tuple[Message, ...]
    options: ChatOptions = field(default_factory=ChatOptions)

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", tuple(self.messages))

    def with_messages(self, messages: Sequence[Message]) -> Prompt:
        """The same options over other messages."""
        return Prompt(messages=tuple(messages), options=self.options)
