"""What the tool changes of a history leave available, as definitions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolrelay.messages import Message, ToolChangeMessage
from toolrelay.tools._base import ToolDefinition

__all__ = ["available_definitions", "change_definition"]


def available_definitions(messages: Sequence[Message]) -> list[ToolDefinition]:
    """The definitions the tool changes among ``messages`` leave available, in order added."""
    available: dict[str, Mapping[str, Any]] = {}
    for message in messages:
        if isinstance(message, ToolChangeMessage):
            for name in message.removed:
                available.pop(name, None)
            available.update((d["name"], d) for d in message.added)
    return [change_definition(d) for d in available.values()]


def change_definition(added: Mapping[str, Any]) -> ToolDefinition:
    """The definition of one tool a :class:`~toolrelay.messages.ToolChangeMessage` adds."""
    schema = added.get("input_schema") or {"type": "object", "properties": {}}
    return ToolDefinition(
        name=added["name"], description=added.get("description") or "", input_schema=schema
    )
