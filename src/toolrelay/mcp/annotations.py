"""MCP tool annotations ↔ :class:`~toolrelay.tools.ToolMetadata`.

- ``readOnlyHint`` → ``read_only``;
- ``destructiveHint`` → ``destructive`` (only when not read-only, as the spec says);
- ``idempotentHint`` → ``extra["idempotent"]``;
- ``openWorldHint`` → ``extra["open_world"]`` (when given);
- the tool's ``_meta["toolrelay/requires_approval"]`` → ``requires_approval``.

A flag is set only when the server states it: an unannotated tool is neither read-only nor
destructive. Annotations are the server's own claims (the spec calls them hints): trust
``read_only`` as far as you trust the server. The approval key can only add a requirement.
``extra`` also names the server (``"mcp_server"``) and the tool's name there (``"mcp_name"``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_types import Tool as McpToolInfo
from mcp_types import ToolAnnotations

from toolrelay.tools.base import ToolMetadata

__all__ = [
    "IDEMPOTENT",
    "MCP_NAME",
    "MCP_SERVER",
    "REQUIRES_APPROVAL_META",
    "annotations_from_metadata",
    "metadata_from_tool",
]

IDEMPOTENT = "idempotent"
"""``ToolMetadata.extra`` key: calling twice with the same arguments does no more than once."""

MCP_SERVER = "mcp_server"
"""``ToolMetadata.extra`` key: the configured name of the tool's server."""

MCP_NAME = "mcp_name"
"""``ToolMetadata.extra`` key: the tool's name on its server."""

REQUIRES_APPROVAL_META = "toolrelay/requires_approval"
"""Tool ``_meta`` key a server sets to ``true`` for tools that need approval per call."""


def metadata_from_tool(info: McpToolInfo, *, server: str, timeout: float | None) -> ToolMetadata:
    """The metadata of a listed MCP tool (see the module table).

    Args:
        info: The tool as listed.
        server: The server's configured name.
        timeout: The server's call timeout, which becomes the tool's.
    """
    hints = info.annotations or ToolAnnotations()
    read_only = hints.read_only_hint is True
    extra: dict[str, Any] = {
        MCP_SERVER: server,
        MCP_NAME: info.name,
        IDEMPOTENT: hints.idempotent_hint is True,
    }
    if hints.open_world_hint is not None:
        extra["open_world"] = hints.open_world_hint
    meta: Mapping[str, Any] = info.meta or {}
    return ToolMetadata(
        timeout=timeout,
        read_only=read_only,
        destructive=not read_only and hints.destructive_hint is True,
        requires_approval=meta.get(REQUIRES_APPROVAL_META) is True,
        extra=extra,
    )


def annotations_from_metadata(metadata: ToolMetadata) -> ToolAnnotations:
    """The annotations a server publishes for a toolrelay tool with this metadata."""
    idempotent = metadata.extra.get(IDEMPOTENT)
    return ToolAnnotations(
        read_only_hint=metadata.read_only,
        destructive_hint=None if metadata.read_only else metadata.destructive,
        idempotent_hint=idempotent if isinstance(idempotent, bool) else None,
    )
