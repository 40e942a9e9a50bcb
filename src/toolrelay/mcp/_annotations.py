"""MCP tool annotations ↔ :class:`~toolrelay.tools.ToolMetadata`.

Reading a listed tool (:func:`metadata_from_tool`):

- ``readOnlyHint`` → ``read_only``;
- ``destructiveHint`` → ``destructive`` (only when not read-only, as the spec says);
- ``idempotentHint`` → ``extra["idempotent"]``;
- ``openWorldHint`` → ``extra["open_world"]`` (when given);
- the tool's ``_meta["toolrelay/requires_approval"]`` → ``requires_approval``;
- the annotations as the server gave them → ``extra["annotations"]`` (the key the linter
  reads for JSON tools), so a stated ``destructiveHint: false`` is not lost.

A flag is set only when the server states it: an unannotated tool is neither read-only nor
destructive in its metadata. Annotations are the server's own claims (the spec calls them
hints): trust ``read_only`` as far as you trust the server. The approval key can only add a
requirement. ``extra`` also names the server (``"mcp_server"``) and the tool's name there
(``"mcp_name"``).

Publishing a tool (:func:`annotations_from_metadata`) states every hint, leaving none to a
client's reading of the defaults, and never claims more safety than the metadata declares.
In MCP a tool that is not read-only may be destructive unless it says otherwise, so a tool
whose metadata is not ``read_only`` (or says ``destructive`` as well) is published
``destructiveHint: true`` unless it is known to destroy nothing (a stated
``destructiveHint: false`` in ``extra["annotations"]``);
``idempotentHint`` is true only when ``extra["idempotent"]`` says so, and ``openWorldHint``
is true unless ``extra["open_world"]`` is false.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_types import Tool as McpToolInfo
from mcp_types import ToolAnnotations

from toolrelay.tools._base import ToolMetadata

__all__ = [
    "ANNOTATIONS",
    "IDEMPOTENT",
    "MCP_NAME",
    "MCP_SERVER",
    "OPEN_WORLD",
    "REQUIRES_APPROVAL_META",
    "annotations_from_metadata",
    "metadata_from_tool",
    "stated_annotations",
]

IDEMPOTENT = "idempotent"
"""``ToolMetadata.extra`` key: calling twice with the same arguments does no more than once."""

OPEN_WORLD = "open_world"
"""``ToolMetadata.extra`` key: whether the tool reaches beyond a closed domain of its own."""

ANNOTATIONS = "annotations"
"""``ToolMetadata.extra`` key: the MCP annotations as the tool's source stated them, by their
MCP names (``destructiveHint``...). The same key as the linter's ``ANNOTATIONS``, which it
reads; the linter cannot import this module, which needs the MCP SDK."""

MCP_SERVER = "mcp_server"
"""``ToolMetadata.extra`` key: the configured name of the tool's server."""

MCP_NAME = "mcp_name"
"""``ToolMetadata.extra`` key: the tool's name on its server."""

REQUIRES_APPROVAL_META = "toolrelay/requires_approval"
"""Tool ``_meta`` key a server sets to ``true`` for tools that need approval per call."""


def metadata_from_tool(info: McpToolInfo, *, server: str, timeout: float | None) -> ToolMetadata:
    """The metadata of a listed MCP tool (see the module docs).

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
        extra[OPEN_WORLD] = hints.open_world_hint
    stated = hints.model_dump(by_alias=True, exclude_none=True)
    if stated:
        extra[ANNOTATIONS] = stated
    meta: Mapping[str, Any] = info.meta or {}
    return ToolMetadata(
        timeout=timeout,
        read_only=read_only,
        destructive=not read_only and hints.destructive_hint is True,
        requires_approval=meta.get(REQUIRES_APPROVAL_META) is True,
        extra=extra,
    )


def stated_annotations(metadata: ToolMetadata) -> Mapping[str, Any]:
    """The annotations ``metadata.extra`` records as stated (empty when none are)."""
    stated = metadata.extra.get(ANNOTATIONS)
    return stated if isinstance(stated, Mapping) else {}


def annotations_from_metadata(metadata: ToolMetadata) -> ToolAnnotations:
    """The annotations to publish for a tool with this metadata (see the module docs)."""
    stated = stated_annotations(metadata)
    title = stated.get("title")
    open_world = metadata.extra.get(OPEN_WORLD) is not False
    if metadata.read_only and not metadata.destructive:  # declared both: it may destroy
        # destructiveHint and idempotentHint are meaningful only for tools that write.
        return ToolAnnotations(
            title=title if isinstance(title, str) else None,
            read_only_hint=True,
            open_world_hint=open_world,
        )
    return ToolAnnotations(
        title=title if isinstance(title, str) else None,
        read_only_hint=False,
        destructive_hint=metadata.destructive or stated.get("destructiveHint") is not False,
        idempotent_hint=metadata.extra.get(IDEMPOTENT) is True,
        open_world_hint=open_world,
    )
