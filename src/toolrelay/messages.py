"""Chat messages, model responses and token usage as immutable values.

Every message type round-trips through JSON exactly: ``message_from_dict(message_to_dict(m)) == m``
(and likewise for :class:`ChatResponse`), which is what memory repositories and shared stores
rely on. Dictionaries carry a ``"role"`` discriminator:

- ``system`` → :class:`SystemMessage`
- ``user`` → :class:`UserMessage`
- ``assistant`` → :class:`AssistantMessage` (text and/or tool calls)
- ``tool`` → :class:`ToolResponseMessage` (one :class:`ToolResponse` per call)
- ``tool_changes`` → :class:`ToolChangeMessage` (tools that became available, or were retired,
  at that point of the conversation)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeAlias

__all__ = [
    "AssistantMessage",
    "ChatResponse",
    "Generation",
    "Message",
    "SystemMessage",
    "ToolCall",
    "ToolChangeMessage",
    "ToolResponse",
    "ToolResponseMessage",
    "Usage",
    "UserMessage",
    "chat_response_from_dict",
    "chat_response_to_dict",
    "message_from_dict",
    "message_to_dict",
]


def _frozen_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(value or {}))


@dataclass(frozen=True, kw_only=True)
class SystemMessage:
    """Instructions for the model."""

    text: str


@dataclass(frozen=True, kw_only=True)
class UserMessage:
    """What the user said."""

    text: str


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """One tool call requested by the model.

    Attributes:
        id: The provider's call id; tool responses echo it back.
        name: The tool name as the model wrote it (it may be a near miss).
        arguments: The arguments as JSON text, exactly as the model produced them.
    """

    id: str
    name: str
    arguments: str = ""


@dataclass(frozen=True, kw_only=True)
class AssistantMessage:
    """What the model answered: text, tool calls, or both."""

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "tool_calls", tuple(self.tool_calls))

    @property
    def has_tool_calls(self) -> bool:
        """Whether the model asked for at least one tool call."""
        return bool(self.tool_calls)


@dataclass(frozen=True, kw_only=True)
class ToolResponse:
    """The outcome of one tool call, as the model will read it.

    Attributes:
        id: The id of the :class:`ToolCall` this answers.
        name: The tool's name (the canonical one when the call was resolved).
        data: The result text, or the error text when ``is_error`` is true.
        is_error: Whether the call failed; providers that support it flag the result.
    """

    id: str
    name: str
    data: str
    is_error: bool = False


@dataclass(frozen=True, kw_only=True)
class ToolResponseMessage:
    """All tool responses of one round, in the order of the calls."""

    responses: tuple[ToolResponse, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "responses", tuple(self.responses))


@dataclass(frozen=True, kw_only=True)
class ToolChangeMessage:
    """Tools that became available here, and tools retired here, in the conversation.

    A part of the history like any message: memory stores and replays it, and from this
    point on the model may call the tools ``added`` defines and no longer those ``removed``
    names. It belongs to no tool call: tool search writes one when a search found tools (on
    a channel whose model renders it), and anything else that reveals tools may write one.
    Adapters render it through the provider's own channel (Anthropic: a system message of
    ``tool_addition`` and ``tool_removal`` blocks) and leave it out where the model has none;
    it is never sent as text.

    Attributes:
        added: The definitions of the tools made available, as JSON-ready mappings: ``name``
            (canonical), ``description`` (left out when empty) and ``input_schema``.
        removed: The canonical names of the tools retired.

    Raises:
        ValueError: A definition has no ``name`` text, or the message changes nothing.
    """

    added: tuple[Mapping[str, Any], ...] = ()
    removed: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        added = tuple(_frozen_mapping(d) for d in self.added)
        if any(not isinstance(d.get("name"), str) or not d["name"] for d in added):
            raise ValueError("each added tool needs its definition's name")
        if not added and not self.removed:
            raise ValueError("a tool change message adds or removes at least one tool")
        object.__setattr__(self, "added", added)
        object.__setattr__(self, "removed", tuple(self.removed))

    @property
    def added_names(self) -> tuple[str, ...]:
        """The names of the tools made available, in order."""
        return tuple(d["name"] for d in self.added)


Message: TypeAlias = (
    SystemMessage | UserMessage | AssistantMessage | ToolResponseMessage | ToolChangeMessage
)


@dataclass(frozen=True, kw_only=True)
class Usage:
    """Token usage; ``a + b`` sums every field, so a loop can total its rounds."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
        )


@dataclass(frozen=True, kw_only=True)
class Generation:
    """One candidate answer of a model call."""

    message: AssistantMessage
    finish_reason: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "metadata", _frozen_mapping(self.metadata))


@dataclass(frozen=True, kw_only=True)
class ChatResponse:
    """A model's answer (or one streamed chunk of it)."""

    generations: tuple[Generation, ...] = ()
    usage: Usage = field(default_factory=Usage)
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "generations", tuple(self.generations))
        object.__setattr__(self, "metadata", _frozen_mapping(self.metadata))

    @property
    def result(self) -> Generation | None:
        """The first generation, or ``None`` when there is none."""
        return self.generations[0] if self.generations else None

    @property
    def text(self) -> str | None:
        """The first generation's text, or ``None``."""
        return self.generations[0].message.text if self.generations else None

    @property
    def has_tool_calls(self) -> bool:
        """Whether any generation asks for a tool call."""
        return any(g.message.tool_calls for g in self.generations)


# --- JSON round trip -------------------------------------------------------------------------


def _call_to_dict(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "arguments": call.arguments}


def message_to_dict(message: Message) -> dict[str, Any]:
    """Turn a message into plain JSON-ready data with a ``"role"`` key."""
    match message:
        case SystemMessage(text=text):
            return {"role": "system", "text": text}
        case UserMessage(text=text):
            return {"role": "user", "text": text}
        case AssistantMessage(text=text, tool_calls=calls):
            return {
                "role": "assistant",
                "text": text,
                "tool_calls": [_call_to_dict(c) for c in calls],
            }
        case ToolResponseMessage(responses=responses):
            return {
                "role": "tool",
                "responses": [
                    {"id": r.id, "name": r.name, "data": r.data, "is_error": r.is_error}
                    for r in responses
                ],
            }
        case ToolChangeMessage(added=added, removed=removed):
            return {
                "role": "tool_changes",
                "added": [dict(d) for d in added],
                "removed": list(removed),
            }
    raise TypeError(f"not a message: {message!r}")


def message_from_dict(data: Mapping[str, Any]) -> Message:
    """Rebuild a message from :func:`message_to_dict` output.

    Raises:
        ValueError: The role is missing or unknown.
    """
    role = data.get("role")
    if role == "system":
        return SystemMessage(text=data["text"])
    if role == "user":
        return UserMessage(text=data["text"])
    if role == "assistant":
        return AssistantMessage(
            text=data.get("text"),
            tool_calls=tuple(
                ToolCall(id=c["id"], name=c["name"], arguments=c.get("arguments", ""))
                for c in data.get("tool_calls", ())
            ),
        )
    if role == "tool":
        return ToolResponseMessage(
            responses=tuple(
                ToolResponse(
                    id=r["id"], name=r["name"], data=r["data"], is_error=bool(r.get("is_error"))
                )
                for r in data["responses"]
            )
        )
    if role == "tool_changes":
        return ToolChangeMessage(
            added=tuple(data.get("added", ())), removed=tuple(data.get("removed", ()))
        )
    raise ValueError(f"unknown message role: {role!r}")


def chat_response_to_dict(response: ChatResponse) -> dict[str, Any]:
    """Turn a response into JSON-ready data; metadata must itself be JSON-serialisable."""
    return {
        "generations": [
            {
                "message": message_to_dict(g.message),
                "finish_reason": g.finish_reason,
                "metadata": dict(g.metadata),
            }
            for g in response.generations
        ],
        "usage": {
            "prompt_tokens": response.usage.prompt_tokens,
            "completion_tokens": response.usage.completion_tokens,
            "total_tokens": response.usage.total_tokens,
        },
        "metadata": dict(response.metadata),
    }


def chat_response_from_dict(data: Mapping[str, Any]) -> ChatResponse:
    """Rebuild a response from :func:`chat_response_to_dict` output."""
    generations = []
    for g in data.get("generations", ()):
        message = message_from_dict(g["message"])
        if not isinstance(message, AssistantMessage):
            raise ValueError("a generation must hold an assistant message")
        generations.append(
            Generation(
                message=message,
                finish_reason=g.get("finish_reason"),
                metadata=g.get("metadata") or {},
            )
        )
    return ChatResponse(
        generations=tuple(generations),
        usage=Usage(**data.get("usage", {})),
        metadata=data.get("metadata") or {},
    )
