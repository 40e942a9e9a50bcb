"""Progressive tool disclosure: what a model may see, find and call, one conversation at a time.

The one core every front end shares: :class:`~toolrelay.ToolSearchAdvisor` (the chat client's
tool loop with tool search), :mod:`toolrelay.gateway` (the same search served over MCP) and
:mod:`toolrelay.bridges` (inside other agent frameworks) are thin adapters over it.

- :class:`SearchOptions` — how tool search searches and answers (hits per search, cut-offs,
  who may see what: :data:`ToolFilter`, the texts' language, usage history), one value taken
  alike by every front end.
- :class:`ToolSearcher` — the ``tool_search`` tool's searches for one turn (one per query of
  a call), within what the caller may see, with the :class:`ToolSearchRecord` of each for the
  turn's :class:`ToolSearchReport`.
- :class:`SearchTexts` — what the model reads (the tools' descriptions, the system suffix,
  the answer to a hidden tool's call), in the catalog's language (:data:`SearchLanguage`):
  :data:`ENGLISH`, :data:`CHINESE`.
- :class:`SessionStore` — the tools each conversation has discovered and called, as one
  :class:`StoredTools` entry (in memory: :class:`InMemorySessionStore`; in Redis:
  :class:`toolrelay.redis.RedisSessionStore`).
"""

from toolrelay.toolsearch._access import ToolFilter
from toolrelay.toolsearch._options import SearchOptions
from toolrelay.toolsearch._search_tool import (
    ToolSearcher,
    ToolSearchRecord,
    ToolSearchReport,
    ToolSearchRound,
)
from toolrelay.toolsearch._sessions import InMemorySessionStore, SessionStore, StoredTools
from toolrelay.toolsearch._texts import (
    CALL_TOOL_NAME,
    CHINESE,
    ENGLISH,
    TOOL_SEARCH_NAME,
    SearchLanguage,
    SearchTexts,
)

__all__ = [
    "CALL_TOOL_NAME",
    "CHINESE",
    "ENGLISH",
    "TOOL_SEARCH_NAME",
    "InMemorySessionStore",
    "SearchLanguage",
    "SearchOptions",
    "SearchTexts",
    "SessionStore",
    "StoredTools",
    "ToolFilter",
    "ToolSearchRecord",
    "ToolSearchReport",
    "ToolSearchRound",
    "ToolSearcher",
]
