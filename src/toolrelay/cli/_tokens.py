"""The search tool's own definition, whose tokens the command line counts.

The counting itself is :mod:`toolrelay.tools`' (:func:`~toolrelay.tools._tokens.tool_tokens`:
cl100k_base on the OpenAI wire shape of a definition). The ``tool_search`` tool is known
only to the chat client; this module makes its definition in the language the advisor
would show it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from toolrelay.tools._base import ToolDefinition

if TYPE_CHECKING:
    from toolrelay.toolsearch._texts import SearchLanguage

__all__ = ["call_tool_definition", "search_tool_definition"]


def search_tool_definition(
    definitions: Sequence[ToolDefinition] = (),
    *,
    language: SearchLanguage = "auto",
    proxy: bool = False,
) -> ToolDefinition:
    """The ``tool_search`` tool exactly as the tool search advisor shows it to the model.

    Args:
        definitions: The catalog it searches: with ``language="auto"`` its language picks
            the texts, as the advisor's option does (English for an empty catalog).
        language: The advisor's ``language`` option: ``"auto"``, ``"en"`` or ``"zh"``.
        proxy: As the proxy channel shows it (its answers carry the definitions).

    Raises:
        ConfigurationError: ``language`` is none of those.
    """
    # Imported here: listing and searching catalogs need none of the chat client.
    from toolrelay.cli._indexes import IndexType, make_index
    from toolrelay.toolsearch._search_tool import ToolSearcher
    from toolrelay.toolsearch._texts import SearchTextSelector

    texts = SearchTextSelector(language).for_catalog(definitions)
    # The index is never searched here; the searcher is only asked for its tool.
    searcher = ToolSearcher(index=make_index(IndexType.REGEX), allowed=None)
    description = texts.proxy_description if proxy else texts.description
    return searcher.as_tool(description, parameters=texts.parameters).definition


def call_tool_definition(
    definitions: Sequence[ToolDefinition] = (), *, language: SearchLanguage = "auto"
) -> ToolDefinition:
    """The proxy channel's ``call_tool`` as the tool search advisor shows it (see above)."""
    from toolrelay.toolsearch._proxy import call_tool
    from toolrelay.toolsearch._texts import SearchTextSelector

    async def never(name: str, context: object) -> str:  # only its definition is read
        return ""

    texts = SearchTextSelector(language).for_catalog(definitions)
    return call_tool(texts, never).definition
