"""The one core of tool search: the catalog every front end searches.

:class:`CatalogSearch` is what :class:`~toolrelay.ToolSearchAdvisor`, the MCP gateway
(:class:`~toolrelay.gateway.ToolGateway`) and the bridges
(:class:`~toolrelay.bridges.BridgeSearch`) each search through, under one
:class:`~toolrelay.toolsearch.SearchOptions`: the catalogs (read live:
a changed catalog is snapshotted and indexed again before the next search), the index, the
permitted view of one caller, that caller's searcher, and the texts in the catalog's language,
including the answer to a name the caller cannot use.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from toolrelay.exceptions import ConfigurationError
from toolrelay.search._base import ToolIndex
from toolrelay.tools import Tool, ToolCatalog, ToolContext, as_tools
from toolrelay.toolsearch._access import CatalogSnapshot, CatalogView
from toolrelay.toolsearch._learning import read_history, usage_scope
from toolrelay.toolsearch._options import SearchOptions
from toolrelay.toolsearch._search_tool import SearchRunner, ToolSearcher
from toolrelay.toolsearch._texts import SearchTexts, SearchTextSelector

__all__ = ["CatalogSearch"]


class CatalogSearch:
    """The catalogs tool search searches, their index and the options: one per front end.

    Args:
        catalogs: The searchable tools: a :class:`~toolrelay.tools.ToolCatalog` or several
            (read live; names must be unique across them), or anything
            :func:`~toolrelay.tools.as_tools` accepts.
        index: The search index; ``default_index()`` of the search package (hybrid BM25 +
            embeddings when installed, else BM25) when omitted. An index holds one catalog:
            give each front end its own.
        options: How it searches and answers.
        always_on: Names of catalog tools every request shows (checked against the catalog
            at each snapshot).

    Raises:
        ConfigurationError: The options cannot be honoured with this index (a usage log with
            an index that does not rank with history, such as the PostgreSQL one).
    """

    def __init__(
        self,
        catalogs: ToolCatalog | Sequence[ToolCatalog] | Iterable[object],
        *,
        index: ToolIndex | None = None,
        options: SearchOptions | None = None,
        always_on: Sequence[str] = (),
    ) -> None:
        options = options if options is not None else SearchOptions()
        if not isinstance(options, SearchOptions):
            raise ConfigurationError(f"options= takes a SearchOptions(...), not {options!r}")
        self.catalogs = _catalogs(catalogs)
        if index is None:
            # Imported here: indexes need numpy and more, which plain clients do not.
            from toolrelay.search._factory import default_index

            index = default_index()
        if options.usage_log is not None and not getattr(index, "ranks_history", False):
            raise ConfigurationError(
                f"a usage_log needs an index that ranks with history, and "
                f"{type(index).__name__} does not; use an in-process index (default_index(), "
                "BM25ToolIndex, HybridToolIndex) or no usage_log"
            )
        self.index = index
        self.options = options
        self.always_on = tuple(always_on)
        self.runner = SearchRunner(index)
        self.texts_of = SearchTextSelector(options.language)
        self._snapshot: CatalogSnapshot | None = None

    @property
    def catalog(self) -> ToolCatalog:
        """The one catalog searched (the first, when there are several)."""
        return self.catalogs[0]

    @catalog.setter
    def catalog(self, catalog: ToolCatalog | Iterable[object]) -> None:
        self.catalogs = _catalogs(catalog)

    @property
    def last_snapshot(self) -> CatalogSnapshot | None:
        """The snapshot the last search was made on (``None`` before the first)."""
        return self._snapshot

    async def snapshot(self) -> CatalogSnapshot:
        """The catalogs as indexed now, indexed again first when their tools changed.

        Raises:
            DuplicateToolError: Two catalogs hold tools with the same name.
            ConfigurationError: A tool is named ``tool_search``, or an always-on name is not
                in the catalog.
        """
        snapshot = self._snapshot
        if snapshot is not None and snapshot.current(self.catalogs):
            return snapshot
        if len(self.catalogs) > 1:
            ToolCatalog.merged(*self.catalogs)  # raises, naming both sources, on a clash
        # Two requests may both get here; indexing is idempotent, so both get the same index.
        snapshot = await CatalogSnapshot.indexed(self.catalogs, self.index, self.always_on)
        self._snapshot = snapshot
        return snapshot

    def view(self, snapshot: CatalogSnapshot, context: ToolContext) -> CatalogView:
        """What the caller with ``context`` may see of ``snapshot`` (``tool_filter`` applied)."""
        return CatalogView(snapshot, context, self.options.tool_filter)

    async def searcher(
        self,
        view: CatalogView,
        *,
        hits: Mapping[str, Mapping[str, Any]] | None = None,
        max_chars: int | None = None,
    ) -> ToolSearcher:
        """A searcher within ``view``, ranking with its caller's usage history.

        Args:
            view: The caller's view.
            hits: For answers that carry definitions: each tool's hit by canonical name
                (see :func:`~toolrelay.toolsearch._search_tool.definition_hit`); ``None``:
                answers name the tools.
            max_chars: The bound an answer fits whole (the manager's result bound).
        """
        options = self.options
        scope = usage_scope(view.context, shared=options.shared_usage)
        return ToolSearcher(
            index=self.index,
            allowed=view.allowed(),
            options=options,
            history=await read_history(options.usage_log, scope),
            runner=self.runner,
            hits=hits,
            max_chars=max_chars,
            left_out=self.texts(view.snapshot).left_out,
        )

    def texts(self, snapshot: CatalogSnapshot | None = None) -> SearchTexts:
        """What the model reads besides the catalog, in the language of ``snapshot``.

        Without a snapshot: of the catalogs as they are now (before any search).
        """
        if snapshot is None:
            if self._snapshot is not None and self._snapshot.current(self.catalogs):
                snapshot = self._snapshot
            else:
                return self.texts_of.for_catalog([t.definition for t in self.tools()])
        return self.texts_of.for_catalog(snapshot.definitions)

    def tools(self) -> list[Tool]:
        """The catalogs' tools now, in order."""
        return [tool for catalog in self.catalogs for tool in catalog]


def _catalogs(
    catalogs: ToolCatalog | Sequence[ToolCatalog] | Iterable[object],
) -> tuple[ToolCatalog, ...]:
    if isinstance(catalogs, ToolCatalog):
        return (catalogs,)
    # One object with @tool methods (or one function) is a source of its own, not a list.
    items = list(catalogs) if isinstance(catalogs, Iterable) else [catalogs]
    sources = [item for item in items if isinstance(item, ToolCatalog)]
    if items and len(sources) == len(items):
        return tuple(sources)  # several catalogs, each read live
    return (ToolCatalog(as_tools(items)),)
