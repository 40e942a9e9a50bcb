"""Who may see what under tool search: catalog snapshots and each caller's view of them.

- :class:`CatalogSnapshot`: the catalogs as last indexed, by name.
- :class:`CatalogView`: the catalog as one caller may see it (``tool_filter`` applied); its
  :meth:`~CatalogView.allowed` is what searches pass as ``SearchRequest.allowed``, and it
  picks the tools each model call shows (:meth:`~CatalogView.shown_tools`). A call of
  anything else is answered with the texts' unavailable answer by the manager
  (``unavailable=`` of a round), and never runs.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from toolrelay.exceptions import ConfigurationError
from toolrelay.search._base import AllowedTools, ToolIndex
from toolrelay.tools import Tool, ToolCatalog, ToolContext, ToolDefinition
from toolrelay.toolsearch._texts import TOOL_SEARCH_NAME

__all__ = ["CatalogSnapshot", "CatalogView", "ToolFilter"]

ToolFilter = Callable[[ToolContext, ToolDefinition], bool]
"""Whether the request with this tool context may see (and find) this tool at all."""


@dataclass(frozen=True, kw_only=True)
class CatalogSnapshot:
    """The catalogs as last indexed.

    Attributes:
        tools: The tools by canonical name.
        names: Their names (one set per catalog, so the index caches its bitmap).
        members: The tools in catalog order.
        definitions: Their definitions, as indexed.
        fingerprint: The index's fingerprint of this catalog (``None`` until indexed).
        sources: The catalogs and their versions when snapshotted (see :meth:`current`).
        rebuilt: Whether indexing this snapshot rebuilt the index (its tools had changed).

    Raises:
        ConfigurationError: (``of``) a tool is named ``tool_search``, or an always-on name
            is not in the catalog.
    """

    tools: Mapping[str, Tool]
    names: frozenset[str]
    members: tuple[Tool, ...]
    definitions: tuple[ToolDefinition, ...]
    fingerprint: str | None = None
    sources: tuple[tuple[ToolCatalog, int], ...] = ()
    rebuilt: bool = False

    @classmethod
    async def indexed(
        cls, catalogs: Sequence[ToolCatalog], index: ToolIndex, always_on: Sequence[str]
    ) -> CatalogSnapshot:
        """Snapshot ``catalogs`` and index their tools."""
        sources = tuple((catalog, catalog.version) for catalog in catalogs)
        snapshot = cls.of([tool for catalog in catalogs for tool in catalog], always_on)
        # Off the event loop: building an index can take long (embeddings). The index
        # compares fingerprints itself, so an unchanged catalog costs only a hash.
        rebuilt = await asyncio.to_thread(index.index, snapshot.definitions)
        return cls(
            tools=snapshot.tools,
            names=snapshot.names,
            members=snapshot.members,
            definitions=snapshot.definitions,
            fingerprint=index.fingerprint,
            sources=sources,
            rebuilt=bool(rebuilt),
        )

    @classmethod
    def of(cls, tools: Sequence[Tool], always_on: Sequence[str] = ()) -> CatalogSnapshot:
        """Snapshot ``tools``, checking the always-on names."""
        by_name = {t.definition.name: t for t in tools}
        if TOOL_SEARCH_NAME in by_name:
            raise ConfigurationError(
                f"the catalog has a tool named {TOOL_SEARCH_NAME!r}, the name of the search "
                "tool; rename it"
            )
        missing = [name for name in always_on if name not in by_name]
        if missing:
            raise ConfigurationError(f"always_on names tools not in the catalog: {missing}")
        return cls(
            tools=by_name,
            names=frozenset(by_name),
            members=tuple(tools),
            definitions=tuple(t.definition for t in tools),
        )

    def current(self, catalogs: Sequence[ToolCatalog]) -> bool:
        """Whether ``catalogs`` are the very catalogs snapshotted, unchanged since."""
        return len(catalogs) == len(self.sources) and all(
            catalog is known and catalog.version == version
            for catalog, (known, version) in zip(catalogs, self.sources, strict=True)
        )

    @functools.cached_property
    def definitions_by_name(self) -> Mapping[str, ToolDefinition]:
        """The definitions by canonical name (made once)."""
        return {t.definition.name: t.definition for t in self.members}


class CatalogView:
    """The catalog as one request may see it: ``tool_filter`` applied, verdicts cached.

    Searches read it from worker threads; a verdict computed twice is the same verdict.
    """

    def __init__(
        self, snapshot: CatalogSnapshot, context: ToolContext, tool_filter: ToolFilter | None
    ) -> None:
        self.snapshot = snapshot
        self.context = context
        self.tool_filter = tool_filter
        self._verdicts: dict[str, bool] = {}

    def sees(self, definition: ToolDefinition) -> bool:
        """Whether the filter lets the request see a tool."""
        return self.tool_filter is None or bool(self.tool_filter(self.context, definition))

    def permits(self, name: str) -> bool:
        """Whether the catalog tool ``name`` exists and the request may see it."""
        verdict = self._verdicts.get(name)
        if verdict is None:
            tool = self.snapshot.tools.get(name)
            verdict = tool is not None and self.sees(tool.definition)
            self._verdicts[name] = verdict
        return verdict

    def allowed(self) -> AllowedTools:
        """The permitted subset for ``SearchRequest.allowed``."""
        # Without a filter, one frozenset per catalog: the index caches its bitmap.
        return self.snapshot.names if self.tool_filter is None else self.permits

    def fixed_tools(
        self,
        search_tool: Tool,
        request_tools: Sequence[Tool],
        always_on: Sequence[str],
        *,
        owner: str,
    ) -> tuple[Tool, ...]:
        """What every model call of the request shows, in order and without repeats.

        ``search_tool``, the request's tools the filter lets it see, then the permitted
        always-on tools.

        Raises:
            ConfigurationError: A request tool is named ``tool_search`` (``owner``, the
                advisor's name, says whose request it was).
        """
        tools = [search_tool]
        shown = {TOOL_SEARCH_NAME}
        for tool in request_tools:
            name = tool.definition.name
            if name == TOOL_SEARCH_NAME:
                raise ConfigurationError(
                    f"{owner}: a request tool is named {TOOL_SEARCH_NAME!r}, the name of the "
                    "search tool; rename it"
                )
            if name not in shown and self.sees(tool.definition):
                shown.add(name)
                tools.append(tool)
        for name in always_on:
            if name not in shown and self.permits(name):
                shown.add(name)
                tools.append(self.snapshot.tools[name])
        return tuple(tools)

    def shown_tools(self, fixed: Sequence[Tool], discovered: Sequence[str]) -> list[Tool]:
        """``fixed``, then the permitted ``discovered`` tools not among them, in order."""
        tools = list(fixed)
        shown = {t.definition.name for t in tools}
        for name in discovered:
            tool = self.snapshot.tools.get(name)
            if tool is not None and name not in shown and self.permits(name):
                shown.add(name)
                tools.append(tool)
        return tools
