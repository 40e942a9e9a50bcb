"""An MCP server's tool as a toolrelay tool: its definition is checked like every other."""

from __future__ import annotations

import pytest
from mcp_types import CallToolResult
from mcp_types import Tool as McpToolInfo

from toolrelay.exceptions import ToolDefinitionError
from toolrelay.mcp import McpTool


async def never_called(name: str, arguments: object, meta: object) -> CallToolResult:
    raise AssertionError("a refused tool is never called")


def test_a_server_tool_with_an_invalid_input_schema_is_refused_naming_the_tool() -> None:
    info = McpToolInfo(name="lookup", input_schema={"type": "object", "required": "id"})
    with pytest.raises(ToolDefinitionError) as caught:
        McpTool(info, name="files.lookup", server="files", caller=never_called)
    assert str(caught.value) == (
        "invalid tool 'files.lookup': input schema at /required: \"required\" must be an array "
        'of property names, not "id"; write "required": ["id"]'
    )
