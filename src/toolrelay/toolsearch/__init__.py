"""Progressive tool disclosure: what a model may see, find and call, one conversation at a time.

The core both front ends share: :class:`~toolrelay.ToolSearchAdvisor` (the chat client's
tool loop with tool search) and :mod:`toolrelay.gateway` (the same search served over MCP)
are thin adapters over it.

- :class:`CatalogSnapshot` and :class:`CatalogView` — the catalog as one turn sees it: the
  tools the visibility filter (:data:`ToolFilter`) lets this context see and find.
- :class:`ToolSearcher` — the ``tool_search`` tool's searches for one turn, within that view,
  with the :class:`ToolSearchRecord` of each for the turn's :class:`ToolSearchReport`.
- :class:`SearchTexts` — what the model reads (the tool's description, the system suffix,
  the answer to a hidden tool's call), in the catalog's language (:data:`SearchLanguage`).
- :class:`SessionStore` — the tools each conversation has discovered and called, as one
  :class:`StoredTools` entry (in memory: :class:`InMemorySessionStore`; in Redis:
  :class:`toolrelay.redis.RedisSessionStore`).
"""

from toolrelay.toolsearch._access import (
    CatalogSnapshot,
    CatalogView,
    ToolFilter,
)
from toolrelay.toolsearch._search_tool import (
    DEFAULT_MIN_RELATIVE_SCORE,
    MAX_QUERY_LENGTH,
    TOOL_SEARCH_NAME,
    ToolSearcher,
    ToolSearchRecord,
    ToolSearchReport,
    ToolSearchRound,
)
from toolrelay.toolsearch._sessions import InMemorySessionStore, SessionStore, StoredTools
from toolrelay.toolsearch._texts import (
    CHINESE,
    ENGLISH,
    FROM_LANGUAGE,
    FromLanguage,
    SearchLanguage,
    SearchTexts,
)

__all__ = [
    "CHINESE",
    "DEFAULT_MIN_RELATIVE_SCORE",
    "ENGLISH",
    "FROM_LANGUAGE",
    "MAX_QUERY_LENGTH",
    "TOOL_SEARCH_NAME",
    "CatalogSnapshot",
    "CatalogView",
    "FromLanguage",
    "InMemorySessionStore",
    "SearchLanguage",
    "SearchTexts",
    "SessionStore",
    "StoredTools",
    "ToolFilter",
    "ToolSearchRecord",
    "ToolSearchReport",
    "ToolSearchRound",
    "ToolSearcher",
]
