from __future__ import annotations

from toolrelay.lint import LintTarget
from toolrelay.lint._targets import ANNOTATIONS, as_targets, metadata_from_annotations
from toolrelay.tools import ToolDefinition, ToolMetadata, tool


@tool(read_only=True)
def lookup(city: str) -> str:
    """Look up a city.

    Args:
        city: The city.
    """
    return city


def test_tools_definitions_and_targets_become_targets() -> None:
    from toolrelay.tools import FunctionTool

    definition = ToolDefinition(name="plain", description="A plain tool.")
    given = LintTarget(definition=definition, source="crm")
    targets = as_targets([FunctionTool.from_function(lookup), definition, given])
    assert [t.name for t in targets] == ["lookup", "plain", "plain"]
    assert targets[0].metadata is not None
    assert targets[0].metadata.read_only
    assert targets[1].metadata is None
    assert targets[2] is given


def test_mcp_annotations_map_to_metadata() -> None:
    found = metadata_from_annotations({"name": "x", "annotations": {"readOnlyHint": True}})
    assert found is not None
    assert found.read_only
    assert not found.destructive
    found = metadata_from_annotations({"annotations": {"destructiveHint": True}})
    assert found is not None
    assert found.destructive
    assert found.extra[ANNOTATIONS] == {"destructiveHint": True}
    # Read-only wins over destructive, as the MCP specification says.
    found = metadata_from_annotations(
        {"annotations": {"readOnlyHint": True, "destructiveHint": True}}
    )
    assert found == ToolMetadata(
        read_only=True, extra={ANNOTATIONS: {"readOnlyHint": True, "destructiveHint": True}}
    )


def test_approval_meta_and_openai_wrapper_are_read() -> None:
    row = {
        "type": "function",
        "function": {"name": "x", "annotations": {"destructiveHint": True}},
        "_meta": {"toolrelay/requires_approval": True},
    }
    found = metadata_from_annotations(row)
    assert found is not None
    assert found.destructive
    assert found.requires_approval


def test_no_annotations_mean_no_metadata() -> None:
    assert metadata_from_annotations({"name": "x", "description": "y"}) is None
    assert metadata_from_annotations({"annotations": "nonsense"}) is None
