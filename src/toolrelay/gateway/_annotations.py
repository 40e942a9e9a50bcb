"""Side effects as the gateway tells its clients: per tool, and for ``call_tool``.

An MCP client decides what to confirm from the annotations of the tools it lists, and a
gateway's clients list two. :func:`as_run` gives a tool's annotations as the gateway runs it
(its policies applied, see ``apply_policies``), which each
``tool_search`` hit carries; :func:`most_of` gives ``call_tool``'s, the most any tool may do.
Both publish as the MCP server's ``annotations_from_metadata`` does: every hint
stated, none safer than declared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from mcp_types import ToolAnnotations

from toolrelay.execution import ToolCallingManager
from toolrelay.mcp._annotations import (
    ANNOTATIONS,
    IDEMPOTENT,
    OPEN_WORLD,
    annotations_from_metadata,
)
from toolrelay.tools._base import Tool, ToolMetadata

__all__ = ["MAY_DO_ANYTHING", "as_run", "most_of"]

MAY_DO_ANYTHING = ToolMetadata(destructive=True)
"""A tool that may do anything: published as MCP's defaults (destructive, not idempotent,
open-world)."""


def as_run(tool: Tool, run: Tool, manager: ToolCallingManager) -> tuple[ToolAnnotations, bool]:
    """The annotations of ``tool`` run as ``run`` by ``manager``, and whether it is asked about.

    ``idempotentHint`` is true when the gateway records the results (``run`` has an
    idempotency key: every manager records them) or when the tool itself claims it (an MCP
    server's ``idempotentHint``); the second value says whether a call needs an approval
    decision before it runs (asked for, or refused where no approval is configured).

    Args:
        tool: The tool as its source offers it.
        run: The tool as the gateway runs it (policies applied).
        manager: The manager that runs the gateway's calls.
    """
    metadata = run.metadata
    # Every manager records the results of tools with a key (idempotency is always engaged).
    recorded = metadata.idempotency_key is not None
    claimed = tool.metadata.extra.get(IDEMPOTENT) is True
    metadata = replace(metadata, extra={**metadata.extra, IDEMPOTENT: recorded or claimed})
    return annotations_from_metadata(metadata), manager.guards.needs_approval(run)


def most_of(hints: Sequence[ToolAnnotations]) -> ToolMetadata:
    """The metadata of a tool that may do whatever a tool with one of ``hints`` may do.

    Read-only only when every tool is; else destructive when any tool may be, idempotent
    only when every tool that writes is, open-world when any tool is. With no tools nothing
    is known: :data:`MAY_DO_ANYTHING`.
    """
    if not hints:
        return MAY_DO_ANYTHING
    writing = [h for h in hints if not h.read_only_hint]
    if not writing:
        return ToolMetadata(
            read_only=True,
            extra={OPEN_WORLD: any(h.open_world_hint is not False for h in hints)},
        )
    destructive = any(h.destructive_hint is not False for h in writing)
    return ToolMetadata(
        destructive=destructive,
        extra={
            IDEMPOTENT: all(h.idempotent_hint is True for h in writing),
            OPEN_WORLD: any(h.open_world_hint is not False for h in hints),
            ANNOTATIONS: {"destructiveHint": destructive},
        },
    )
