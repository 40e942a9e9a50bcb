"""``LiveToolCatalog``: a :class:`~toolrelay.tools.ToolCatalog` whose tools are replaced as a whole.

Whoever holds the catalog (a :class:`~toolrelay.client.ToolSearchAdvisor` reads its catalog
every turn) sees the new tools on its next read: the advisor's index fingerprints the new
definitions and re-indexes when they changed. A replacement is checked completely before
anything changes, so a duplicate name leaves the catalog as it was.
"""

from __future__ import annotations

from collections.abc import Iterable

from toolrelay.tools._base import Tool
from toolrelay.tools._catalog import ToolCatalog

__all__ = ["LiveToolCatalog"]


class LiveToolCatalog(ToolCatalog):
    """A catalog that :meth:`replace_all` swaps to a new set of tools in one step."""

    def replace_all(self, tools: Iterable[tuple[Tool, str]]) -> None:
        """Make the catalog hold exactly ``tools`` (each with its source), in order.

        Raises:
            DuplicateToolError: Two of the tools share a name or provider-safe name; the
                catalog is unchanged.
        """
        fresh = ToolCatalog()
        for tool, source in tools:
            fresh.add(tool, source=source)
        # New dictionaries replace the old ones rather than being mutated, so a reader
        # iterating the catalog in another thread finishes on the old contents.
        self._entries, self._by_safe_name = fresh._entries, fresh._by_safe_name
        self._version += 1
