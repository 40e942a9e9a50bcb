"""The parameters of ``tool_search`` and ``call_tool`` as clients send them.

The schemas clients read are plain (``call_tool_schema``); what
arrives is looser. Command-line clients decode every ``key=value`` they can (the MCP
Inspector sends ``query=404`` as the number 404), and models send a JSON text where an object
is expected. The types here validate the functions behind the two tools: they accept those
forms, and turn anything else into one problem saying what to send.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import BeforeValidator

from toolrelay.exceptions import InvalidJsonError
from toolrelay.gateway._texts import CALL_TOOL_NAME
from toolrelay.tools._arguments import decode_arguments, require_object
from toolrelay.toolsearch._search_tool import TOOL_SEARCH_NAME, SearchQuery

__all__ = ["CallArguments", "SearchText"]


def _as_text(value: object) -> object:
    """A number or boolean as its JSON text; a list of such words joined by spaces."""
    if isinstance(value, int | float):  # booleans too: true, false
        return json.dumps(value)
    if isinstance(value, list) and all(isinstance(word, str | int | float) for word in value):
        return " ".join(str(_as_text(word)) for word in value)
    return value


def _as_object(value: object) -> object:
    """``arguments`` as an object: given as one, as a JSON text of one, or left out (null)."""
    if value is None:
        return {}
    try:
        if isinstance(value, str):
            return decode_arguments(CALL_TOOL_NAME, value)
        return require_object(CALL_TOOL_NAME, value)
    except InvalidJsonError as exc:
        problem = exc.problems[0].message
    raise ValueError(
        f"{problem} Send arguments as a JSON object of the tool's parameters (its "
        f"input_schema from {TOOL_SEARCH_NAME}), or leave it out for a tool without any."
    )


SearchText = Annotated[SearchQuery, BeforeValidator(_as_text)]
"""A ``tool_search`` text (``query``, ``category``): a string, or words a client decoded into
a number, a boolean or a list; at most :data:`~toolrelay.toolsearch.MAX_QUERY_LENGTH`
characters."""

CallArguments = Annotated[dict[str, Any], BeforeValidator(_as_object)]
"""``call_tool``'s ``arguments``: an object, a JSON text of one (blank: none), or null."""
