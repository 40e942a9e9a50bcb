"""The parameters of ``tool_search`` and ``call_tool`` as clients send them.

The schemas clients read are plain (``call_tool_schema``); what
arrives is looser. Command-line clients decode every ``key=value`` they can (the MCP
Inspector sends ``category=404`` as the number 404), and models send a JSON text where an object
is expected. The types here validate the functions behind the two tools: they accept those
forms, and turn anything else into one problem saying what to send. ``call_tool``'s
arguments are read by the manager as every call's are.
"""

from __future__ import annotations

import json
from typing import Annotated

from pydantic import BeforeValidator, Field

from toolrelay.toolsearch._search_tool import MAX_QUERIES, SearchQuery

__all__ = ["SearchQueries", "SearchText"]


def _as_text(value: object) -> object:
    """A number or boolean as its JSON text; a list of such words joined by spaces."""
    if isinstance(value, int | float):  # booleans too: true, false
        return json.dumps(value)
    if isinstance(value, list) and all(isinstance(word, str | int | float) for word in value):
        return " ".join(str(_as_text(word)) for word in value)
    return value


SearchText = Annotated[SearchQuery, BeforeValidator(_as_text)]
"""A ``tool_search`` text (a query, ``category``): a string, or words a client decoded into
a number, a boolean or a list; at most :data:`~toolrelay.toolsearch.MAX_QUERY_LENGTH`
characters."""


def _as_queries(value: object) -> object:
    """A JSON text of a list as that list; a lone text or number as one query."""
    if isinstance(value, str) and value.lstrip().startswith("["):
        try:
            value = json.loads(value)
        except ValueError:
            return [value]
    return value if isinstance(value, list) else [value]


SearchQueries = Annotated[
    list[SearchText],
    BeforeValidator(_as_queries),
    Field(min_length=1, max_length=MAX_QUERIES),
]
"""``tool_search``'s ``queries`` as clients send them: a list of texts, a JSON text of one,
or one text alone (a query); 1 to :data:`~toolrelay.toolsearch.MAX_QUERIES` of them."""
