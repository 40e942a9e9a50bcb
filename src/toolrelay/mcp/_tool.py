"""``McpTool``: one tool of an MCP server as a toolrelay :class:`~toolrelay.tools.Tool`.

A call:

1. decodes the model's argument text (blank means ``{}``);
2. validates it against the server's input schema, listing every problem
   (:class:`~toolrelay.exceptions.ToolArgumentError`), so a bad call never reaches the server;
3. sends it under the tool's original name, with the
   :class:`~toolrelay.tools.ToolContext` as the request's ``_meta`` (never as arguments);
4. returns the result as text (see ``_results.py``), or raises
   :class:`~toolrelay.exceptions.ToolExecutionError` with the server's text when the result
   has ``isError`` set. The execution layer answers that with an error tool response
   (``is_error=True``) the model can act on, as it does a server that fails or dies
   (:class:`~toolrelay.exceptions.McpServerError`).

The tool is a :class:`~toolrelay.tools.ValidatingTool`: the execution layer validates a call
once (step 2, :meth:`McpTool.validate_arguments`) and sends it with
:meth:`McpTool.call_validated`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcp_types import CallToolResult
from mcp_types import Tool as McpToolInfo

from toolrelay.exceptions import ToolExecutionError
from toolrelay.mcp._annotations import metadata_from_tool
from toolrelay.mcp._context import context_meta
from toolrelay.mcp._results import result_text
from toolrelay.tools._arguments import SchemaValidator, decode_arguments
from toolrelay.tools._base import ToolBase, ToolContext, ToolDefinition, ValidatedArguments
from toolrelay.tools._workers import SyncRunner

__all__ = ["McpTool", "ToolCaller"]

ToolCaller = Callable[[str, dict[str, Any], dict[str, Any] | None], Awaitable[CallToolResult]]
"""Sends one call: ``(original name, arguments, _meta) -> result``."""


class McpTool(ToolBase):
    """A tool of an MCP server (built by :class:`~toolrelay.mcp.McpToolset`).

    Its definition is the server's description and input schema as given, under toolrelay's
    name; its metadata, the flags of the server's annotations (see ``_annotations.py``).

    Args:
        info: The tool as the server listed it.
        name: Its toolrelay name (prefixed, provider-safe; see
            ``mcp_tool_name``).
        server: The server's configured name.
        caller: Sends a call to the server.
        timeout: The server's call timeout (becomes ``metadata.timeout``).

    Attributes:
        info: The tool as listed.
        server: The server's configured name.
        original_name: The tool's name on its server (what calls are sent with).
        source: ``"MCP server '<name>'"``, for duplicate-name errors.
    """

    def __init__(
        self,
        info: McpToolInfo,
        *,
        name: str,
        server: str,
        caller: ToolCaller,
        timeout: float | None = None,
    ) -> None:
        self.info = info
        self.server = server
        self.original_name = info.name
        self.source = f"MCP server {server!r}"
        self._caller = caller
        super().__init__(
            ToolDefinition(
                name=name,
                description=(info.description or info.title or "").strip() or _words(info.name),
                input_schema=info.input_schema,
            ),
            metadata_from_tool(info, server=server, timeout=timeout),
        )
        self._validator = SchemaValidator(name, info.input_schema)

    async def call(self, arguments_json: str, context: ToolContext | None = None) -> str:
        """Validate the arguments, call the server, and return the result as text.

        Raises:
            InvalidJsonError: The text is not a JSON object.
            ToolArgumentError: The arguments break the input schema (every problem listed).
            ToolExecutionError: The server answered with ``isError`` (its text is the message).
            McpServerError: The server is unavailable, too slow, or closed the connection.
        """
        arguments = self.validate_arguments(decode_arguments(self.name, arguments_json))
        return await self.call_validated(arguments, context)

    def validate_arguments(self, arguments: Mapping[str, Any]) -> ValidatedArguments:
        """Check decoded arguments against the server's input schema.

        Raises:
            ToolArgumentError: The arguments break the input schema (every problem listed).
        """
        self._validator.validate(arguments)
        return ValidatedArguments(
            values=arguments, text=json.dumps(dict(arguments), ensure_ascii=False)
        )

    async def call_validated(
        self,
        arguments: ValidatedArguments,
        context: ToolContext | None = None,
        *,
        workers: SyncRunner | None = None,
    ) -> str:
        """Send validated arguments to the server and return the result as text.

        Raises:
            ToolExecutionError: The server answered with ``isError`` (its text is the message).
            McpServerError: The server is unavailable, too slow, or closed the connection.
        """
        name = self.name
        values = dict(arguments.values)
        result = await self._caller(self.original_name, values, context_meta(context))
        text = result_text(result)
        if result.is_error:
            raise ToolExecutionError(
                name, text.strip() or f"MCP tool {name!r} reported an error without a message"
            )
        return text

    def same_as(self, info: McpToolInfo) -> bool:
        """Whether ``info`` lists this very tool unchanged (so a refresh can keep the object)."""
        return info == self.info

    def __repr__(self) -> str:
        return f"McpTool({self.name!r}, server={self.server!r})"


def _words(name: str) -> str:
    return name.replace("_", " ").replace("-", " ").strip() or name
