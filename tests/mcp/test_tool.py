"""An MCP server's tool as a toolrelay tool: its definition is checked like every other."""

from __future__ import annotations

import asyncio
import logging

import pytest

from tests.extras import needs_extra

pytest.importorskip("mcp_types", reason=needs_extra("mcp"))

from mcp_types import CallToolResult
from mcp_types import Tool as McpToolInfo

from toolrelay.exceptions import ToolDefinitionError
from toolrelay.mcp import McpServerConfig, McpTool, McpToolset


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


class ListedTools:
    """Stands in for a server connection: its name and the tools it lists now."""

    def __init__(self, name: str, tools: list[McpToolInfo]) -> None:
        self.name = name
        self.tools = tools


async def test_a_changed_list_with_an_invalid_schema_is_rejected_and_the_old_tools_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    toolset = McpToolset(McpServerConfig(name="files", command="unused"))
    listed = ListedTools("files", [McpToolInfo(name="read", input_schema={"type": "object"})])
    toolset._connections = {"files": listed}  # type: ignore[dict-item]
    toolset._version_changed = asyncio.Condition()
    await toolset._server_changed(listed)  # type: ignore[arg-type]
    assert toolset.catalog.names() == ["files.read"]
    listed.tools = [McpToolInfo(name="write", input_schema={"type": "object", "required": "p"})]
    with caplog.at_level(logging.ERROR, logger="toolrelay.mcp"):
        await toolset._server_changed(listed)  # type: ignore[arg-type]
    assert toolset.catalog.names() == ["files.read"]
    assert "MCP server 'files': new tools rejected, old kept: invalid tool 'files.write': " in (
        caplog.text
    )
    assert '/required: "required" must be an array of property names' in caplog.text
