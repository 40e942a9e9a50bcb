"""Scopes decide what a caller sees and runs: the gateway file's ``[scopes]`` table.

.. code-block:: toml

    [scopes]
    "refunds:read" = ["refund.find_*", "refund.list_*"]
    "refunds:write" = ["refund.*"]
    "desk" = ["ticket.*", "refund.find_*"]

A caller's scopes are its tool context's ``scopes`` entry: the verified bearer token's
(``scope``/``scp`` claims, an API token's ``scopes``) or, where the caller is trusted (stdio,
loopback without an authenticator), ``_meta``'s. It sees and runs the tools whose names match
a pattern (``fnmatch``, as the ``[tools."NAME"]`` tables) of one of its scopes, and no other:
a tool no scope reaches is hidden from everyone. The rule is a
:data:`~toolrelay.toolsearch.ToolFilter`, applied where every filter is (search answers only
from what it permits, and ``call_tool`` of anything else is "not available", as an unknown
name), together with a ``tool_filter`` given in code: both must allow a tool.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping

from toolrelay.tools import ToolContext
from toolrelay.tools._base import ToolDefinition
from toolrelay.toolsearch import ToolFilter

__all__ = ["scoped_filter"]


def scoped_filter(
    scopes: Mapping[str, tuple[str, ...]], tool_filter: ToolFilter | None
) -> ToolFilter | None:
    """``tool_filter`` narrowed by ``scopes`` (``None`` when neither says anything)."""
    if not scopes:
        return tool_filter

    def permits(context: ToolContext, definition: ToolDefinition) -> bool:
        name = definition.name
        reached = any(
            fnmatch.fnmatchcase(name, pattern)
            for scope in _held(context.get("scopes"))
            for pattern in scopes.get(scope, ())
        )
        return reached and (tool_filter is None or bool(tool_filter(context, definition)))

    return permits


def _held(scopes: object) -> tuple[str, ...]:
    """The scopes a context entry names: a list of texts, or one space-separated text."""
    if isinstance(scopes, str):
        return tuple(scopes.split())
    if isinstance(scopes, list | tuple):
        return tuple(s for s in scopes if isinstance(s, str))
    return ()
