from __future__ import annotations

import pytest

from tests.extras import needs_extra

pytest.importorskip("mcp_types", reason=needs_extra("mcp"))

from mcp_types import Tool as McpToolInfo
from mcp_types import ToolAnnotations

from toolrelay.mcp._annotations import (
    ANNOTATIONS,
    IDEMPOTENT,
    MCP_NAME,
    MCP_SERVER,
    REQUIRES_APPROVAL_META,
    annotations_from_metadata,
    metadata_from_tool,
)
from toolrelay.tools import ToolMetadata

SCHEMA = {"type": "object", "properties": {}}


def info(annotations: ToolAnnotations | None = None, **fields: object) -> McpToolInfo:
    return McpToolInfo(name="t", input_schema=SCHEMA, annotations=annotations, **fields)  # type: ignore[arg-type]


def test_hints_map_onto_metadata() -> None:
    read_only = metadata_from_tool(
        info(ToolAnnotations(read_only_hint=True, idempotent_hint=True, destructive_hint=True)),
        server="s",
        timeout=5.0,
    )
    assert read_only.read_only is True
    assert read_only.destructive is False  # meaningful only for tools that are not read-only
    assert read_only.extra[IDEMPOTENT] is True
    assert read_only.timeout == 5.0
    destructive = metadata_from_tool(
        info(ToolAnnotations(destructive_hint=True, open_world_hint=False)),
        server="s",
        timeout=None,
    )
    assert (destructive.read_only, destructive.destructive) == (False, True)
    assert destructive.extra["open_world"] is False


def test_an_unannotated_tool_claims_nothing() -> None:
    metadata = metadata_from_tool(info(), server="files", timeout=None)
    assert (metadata.read_only, metadata.destructive, metadata.requires_approval) == (
        False,
        False,
        False,
    )
    assert metadata.extra == {MCP_SERVER: "files", MCP_NAME: "t", IDEMPOTENT: False}


def test_a_server_can_require_approval() -> None:
    tool = info(meta={REQUIRES_APPROVAL_META: True})
    assert metadata_from_tool(tool, server="s", timeout=None).requires_approval is True


def test_metadata_round_trips_through_annotations() -> None:
    metadata = ToolMetadata(destructive=True, extra={IDEMPOTENT: True})
    annotations = annotations_from_metadata(metadata)
    assert annotations.read_only_hint is False
    assert annotations.destructive_hint is True
    assert annotations.idempotent_hint is True
    back = metadata_from_tool(info(annotations), server="s", timeout=None)
    assert (back.read_only, back.destructive, back.extra[IDEMPOTENT]) == (False, True, True)
    read_only = annotations_from_metadata(ToolMetadata(read_only=True))
    assert (read_only.read_only_hint, read_only.destructive_hint) == (True, None)


def test_every_hint_is_published_and_none_claims_more_than_declared() -> None:
    # A tool that does not say it is read-only may change state, and may destroy: MCP's
    # default, stated rather than left to each client's reading of the defaults.
    unsaid = annotations_from_metadata(ToolMetadata())
    assert unsaid == ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True
    )
    # An idempotency key alone claims nothing here: whoever records the results says so
    # (tool_info for a served tool, the gateway for its hits).
    keyed = annotations_from_metadata(ToolMetadata(idempotency_key=["order_id"]))
    assert keyed.idempotent_hint is False
    reading = annotations_from_metadata(ToolMetadata(read_only=True))
    assert reading == ToolAnnotations(read_only_hint=True, open_world_hint=True)


def test_what_a_server_stated_survives_being_served_again() -> None:
    stated = ToolAnnotations(
        title="Add a comment", destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )
    metadata = metadata_from_tool(info(stated), server="tickets", timeout=None)
    assert metadata.destructive is False
    assert metadata.extra[ANNOTATIONS] == {
        "title": "Add a comment",
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert annotations_from_metadata(metadata) == ToolAnnotations(
        title="Add a comment",
        read_only_hint=False,
        destructive_hint=False,
        idempotent_hint=True,
        open_world_hint=False,
    )


def test_the_stated_annotations_are_kept_where_the_linter_reads_them() -> None:
    from toolrelay.lint._targets import ANNOTATIONS as LINT_ANNOTATIONS

    assert ANNOTATIONS == LINT_ANNOTATIONS
