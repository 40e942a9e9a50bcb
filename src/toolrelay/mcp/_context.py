"""The :class:`~toolrelay.tools.ToolContext` on the wire: a request's ``_meta``, never arguments.

A call to an MCP tool sends the context's entries as ``_meta`` (``{"tenant_id": "t1",
"user_id": "u7"}``), so the server sees who is calling while the model, which writes only the
arguments, cannot forge it. Only JSON values travel; in-process handles (a database
connection, a client object) stay behind.

A server built with :func:`~toolrelay.mcp.tools_server` reads them back into a context. Keys
the protocol reserves (those containing ``/``, such as
``io.modelcontextprotocol/protocolVersion``, and ``progressToken``) are never context. Who
is calling (:data:`IDENTITY_KEYS`) is read from ``_meta`` only where the client is trusted
(stdio, loopback without an authenticator); a server that verifies bearer tokens takes it
from the token, and ``_meta`` can neither set nor override it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from toolrelay.tools._base import ToolContext

__all__ = ["IDENTITY_KEYS", "context_from_meta", "context_meta", "is_reserved_meta_key"]

_log = logging.getLogger("toolrelay.mcp")
_PROGRESS_TOKEN = "progressToken"

IDENTITY_KEYS = frozenset({"tenant_id", "user_id", "session_id", "scopes"})
"""Context keys that say who is calling: a verified caller's alone, never ``_meta``'s."""


def is_reserved_meta_key(key: str) -> bool:
    """Whether a ``_meta`` key belongs to the protocol rather than to the tool context."""
    return "/" in key or key == _PROGRESS_TOKEN


def context_meta(context: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The ``_meta`` of a call made with ``context``: its JSON entries (``None`` when none).

    Entries with reserved keys or values JSON cannot represent are left out.
    """
    if not context:
        return None
    meta: dict[str, Any] = {}
    for key, value in context.items():
        if not isinstance(key, str) or is_reserved_meta_key(key):
            continue
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            _log.debug("context entry %r is not JSON; it is not sent to the MCP server", key)
            continue
        meta[key] = value
    return meta or None


def context_from_meta(
    meta: Mapping[str, Any] | None,
    *,
    verified: Mapping[str, Any] | None = None,
    fixed: Mapping[str, Any] | None = None,
) -> ToolContext:
    """The tool context of a request: its ``_meta``, the verified caller's, the server's.

    Args:
        meta: The request's ``_meta`` (reserved keys are dropped).
        verified: The caller a bearer token proved (see :mod:`toolrelay.mcp._auth`), or
            ``None`` where the client is trusted. When given, ``_meta``'s identity keys
            (:data:`IDENTITY_KEYS` and every key the caller has) are dropped, and the
            caller's entries take their place.
        fixed: Entries that override the request's, e.g. a tenant the server is configured
            for, so a client cannot claim another.
    """
    values = {k: v for k, v in (meta or {}).items() if not is_reserved_meta_key(k)}
    if verified is not None:
        values = {k: v for k, v in values.items() if k not in IDENTITY_KEYS}
        values.update(verified)
    values.update(fixed or {})
    return ToolContext(values)
