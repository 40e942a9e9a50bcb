"""The two names of a tool on the wire: the provider-safe one sent, the canonical one kept.

Adapters send every tool under :func:`~toolrelay.tools.provider_safe_name` of its
canonical name (``refund.find_orders`` goes out as ``refund__find_orders``) and translate the
names in a reply back through the request's own tools, so the tool loop sees canonical names
whichever form the model echoes. A name that matches no tool of the request is kept as the
model wrote it; the execution layer answers it with "unknown tool" feedback.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from toolrelay.tools._base import Tool, ToolDefinition
from toolrelay.tools._names import MAX_NAME_LENGTH, is_provider_safe, provider_safe_name

__all__ = ["ToolNameMap"]

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
# Longer than any tool name can be; a made-up name (megabytes, from a runaway model) is cut to
# it before it is mapped, which would otherwise cost seconds on every request of the turn.
_LONGEST_MAPPED = 4 * MAX_NAME_LENGTH


class ToolNameMap:
    """Canonical ↔ provider-safe names of one request's tools.

    Args:
        definitions: The definitions of the tools offered in the request.
    """

    def __init__(self, definitions: Iterable[ToolDefinition]) -> None:
        self._definitions = tuple(definitions)
        self._canonical: dict[str, str] = {}
        for definition in self._definitions:
            self._canonical[definition.name] = definition.name
        # Provider-safe forms are added second, so a tool literally named like another tool's
        # provider-safe form keeps its own name (catalogs reject that collision anyway).
        for definition in self._definitions:
            self._canonical.setdefault(provider_safe_name(definition.name), definition.name)

    @classmethod
    def of_tools(cls, tools: Iterable[Tool]) -> ToolNameMap:
        """The map of the given tools' definitions."""
        return cls(tool.definition for tool in tools)

    @property
    def definitions(self) -> tuple[ToolDefinition, ...]:
        """The definitions, in request order."""
        return self._definitions

    def definition(self, name: str) -> ToolDefinition | None:
        """The definition answering to ``name`` in either form, or ``None``."""
        canonical = self._canonical.get(name)
        if canonical is None:
            return None
        return next(d for d in self._definitions if d.name == canonical)

    @staticmethod
    def to_provider(name: str) -> str:
        """The name sent to the provider.

        Names of the request's tools are valid already; a name a model made up (sent back in
        the history) could break the provider's name pattern and fail the whole request, so
        characters outside it become ``_`` and the name is cut at 64 characters.
        """
        if len(name) > _LONGEST_MAPPED:
            name = name[:_LONGEST_MAPPED]
        safe = provider_safe_name(name)
        if is_provider_safe(safe):
            return safe
        return _UNSAFE.sub("_", safe)[:MAX_NAME_LENGTH] or "unnamed_tool"

    def to_canonical(self, name: str) -> str:
        """The canonical name of the request's tool called ``name``, else ``name`` itself."""
        return self._canonical.get(name, name)

    def provider_names(self) -> list[str]:
        """The provider-safe names of the request's tools, in request order."""
        return [self.to_provider(d.name) for d in self._definitions]
