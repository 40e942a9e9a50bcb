"""``ToolCatalog``: tools by name, without duplicates; ``as_tools``: anything → tools.

A catalog refuses a second tool with the same name, and also a tool whose provider-safe name
(``refund.find`` → ``refund__find``) equals another's, so a name coming back from a provider
maps to exactly one tool. Lookups accept either form.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from toolrelay.exceptions import DuplicateToolError, ToolDefinitionError
from toolrelay.tools._base import Tool, ToolDefinition
from toolrelay.tools._discovery import has_tools, tools_from
from toolrelay.tools._function import FunctionTool
from toolrelay.tools._names import provider_safe_name

__all__ = ["ToolCatalog", "as_tools"]


@dataclass(frozen=True)
class _Entry:
    tool: Tool
    source: str


class ToolCatalog:
    """Tools by canonical name, rejecting duplicates.

    Iteration yields the tools in the order they were added; ``name in catalog`` and
    :meth:`get` accept canonical and provider-safe names.

    Example::

        catalog = ToolCatalog([get_weather, *tools_from(orders)])
        catalog.get("orders__refund")  # the tool named "orders.refund"
    """

    def __init__(self, tools: Iterable[Tool] = (), *, source: str | None = None) -> None:
        """Create a catalog holding ``tools``.

        Args:
            tools: Tools to add, in order.
            source: A label naming where these tools come from, for duplicate errors.

        Raises:
            DuplicateToolError: Two of the tools share a name or a provider-safe name.
        """
        self._entries: dict[str, _Entry] = {}
        self._by_safe_name: dict[str, str] = {}
        self._version = 0
        for item in tools:
            self.add(item, source=source)

    def add(self, tool: Tool, *, source: str | None = None) -> None:
        """Add one tool.

        Args:
            tool: The tool.
            source: Where it comes from; defaults to the tool's ``source`` attribute (function
                tools: ``"module.qualname"``), else its type name.

        Raises:
            DuplicateToolError: The name, or the provider-safe name, is taken; the error names
                the sources of both tools.
            ToolDefinitionError: ``tool`` is not a :class:`Tool` (a plain or decorated function,
                an object with tool methods: turn those into tools with ``as_tools``).
        """
        definition = getattr(tool, "definition", None)
        if not isinstance(definition, ToolDefinition) or not callable(getattr(tool, "call", None)):
            raise ToolDefinitionError(
                getattr(tool, "__qualname__", type(tool).__name__),
                ["not a Tool; wrap functions and objects with tool methods with as_tools(...)"],
            )
        name = definition.name
        origin = source or _source_of(tool)
        if name in self._entries:
            raise DuplicateToolError(name, self._entries[name].source, origin)
        safe = provider_safe_name(name)
        other = self._by_safe_name.get(safe)
        if other is not None:
            raise DuplicateToolError(safe, self._entries[other].source, origin, names=(other, name))
        self._entries[name] = _Entry(tool=tool, source=origin)
        self._by_safe_name[safe] = name
        self._version += 1

    @property
    def version(self) -> int:
        """A number that changes whenever the catalog's tools do (a snapshot's cheap check)."""
        return self._version

    def get(self, name: str) -> Tool | None:
        """The tool with this canonical or provider-safe name, or ``None``."""
        entry = self._entries.get(name) or self._entries.get(self._by_safe_name.get(name, ""))
        return entry.tool if entry else None

    def source(self, name: str) -> str | None:
        """Where the tool with this name came from, or ``None`` when there is no such tool."""
        tool = self.get(name)
        return self._entries[tool.definition.name].source if tool else None

    def names(self) -> list[str]:
        """The canonical names, in insertion order."""
        return list(self._entries)

    def definitions(self) -> list[ToolDefinition]:
        """The definitions of all tools, in insertion order."""
        return [e.tool.definition for e in self._entries.values()]

    def merge(self, other: ToolCatalog) -> ToolCatalog:
        """A new catalog with this catalog's tools followed by ``other``'s.

        Raises:
            DuplicateToolError: A name is in both.
        """
        return ToolCatalog.merged(self, other)

    @classmethod
    def merged(cls, *catalogs: ToolCatalog) -> ToolCatalog:
        """A new catalog holding the tools of all ``catalogs``, in order.

        Raises:
            DuplicateToolError: A name appears twice.
        """
        result = cls()
        for catalog in catalogs:
            for entry in catalog._entries.values():
                result.add(entry.tool, source=entry.source)
        return result

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[Tool]:
        return (e.tool for e in self._entries.values())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __repr__(self) -> str:
        return f"ToolCatalog({self.names()!r})"


def as_tools(*things: object) -> list[Tool]:
    """Flatten tools, functions, objects with ``@tool`` methods and catalogs into tools.

    Accepted, also nested in lists, tuples and other iterables:

    - a :class:`~toolrelay.tools.Tool` (kept as is);
    - a :class:`ToolCatalog` (its tools);
    - a function or bound method, decorated with ``@tool`` or not;
    - an instance, class or module with ``@tool`` methods (see :func:`tools_from`).

    Raises:
        DuplicateToolError: Two of the tools share a name (both sources named).
        ToolDefinitionError: Something cannot be made into tools.
    """
    catalog = ToolCatalog()
    for thing in things:
        for item, source in _flatten(thing):
            catalog.add(item, source=source)
    return list(catalog)


def _flatten(thing: object) -> Iterator[tuple[Tool, str | None]]:
    if isinstance(thing, ToolCatalog):
        for entry in thing._entries.values():
            yield entry.tool, entry.source
    elif inspect.isclass(thing):
        # Checked before Tool: a tool class has the protocol's attributes, not an instance.
        yield from ((t, None) for t in tools_from(thing))
    elif isinstance(thing, Tool):
        yield thing, None
    elif inspect.isfunction(thing) or inspect.ismethod(thing):
        yield FunctionTool.from_function(thing), None
    elif has_tools(thing):
        yield from ((t, None) for t in tools_from(thing))
    elif isinstance(thing, Iterable) and not isinstance(thing, str | bytes):
        for item in thing:
            yield from _flatten(item)
    else:
        raise ToolDefinitionError(
            repr(thing),
            [
                f"cannot make tools of a value of type {type(thing).__name__}; pass a Tool, "
                "a function, an object or class with @tool methods, a ToolCatalog, "
                "or a list of these"
            ],
        )


def _source_of(tool: Tool) -> str:
    source = getattr(tool, "source", None)
    if isinstance(source, str) and source:
        return source
    return f"{type(tool).__module__}.{type(tool).__qualname__}"
