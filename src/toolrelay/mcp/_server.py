"""Serving toolrelay tools over MCP, on the official SDK's low-level ``Server``.

::

    server = tools_server(ToolCatalog(tools_from(PaymentService(backend))), name="payments")
    anyio.run(run_stdio, server)                  # a stdio server
    anyio.run(partial(run_http, server, auth=Authenticator(...)))  # or streamable HTTP

Each tool is listed with its definition exactly as toolrelay has it (canonical name, the
description, the input schema) and annotations from its metadata
(``annotations_from_metadata``; ``idempotentHint`` for a tool with an idempotency key, whose
results the manager records). A call runs through a
:class:`~toolrelay.execution.ToolCallingManager` (``run_call``), with the request's ``_meta``
as the :class:`~toolrelay.tools.ToolContext` (:func:`~toolrelay.mcp._context.context_from_meta`;
``context`` entries override it); over HTTP with an authenticator
(:func:`~toolrelay.mcp.run_http`), who is calling comes from the verified bearer token
instead, never from ``_meta``. So the tools' declared guards hold here as everywhere:
idempotency keys are honoured, a tool that requires approval runs only with the manager's
``approval=`` (without one the server refuses to build), results are bounded, and timeouts,
invalid arguments and failures become results with ``isError`` set whose text tells the model
what happened, and so does a call whose ``_meta`` lacks what the tool needs (a caller for its
idempotency keys, its ``context_keys``): nothing runs; only an unknown tool name is a protocol
error.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any, Unpack

from mcp.server import Server, ServerRequestContext
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
)
from mcp_types import Tool as McpToolInfo

from toolrelay._version import __version__
from toolrelay.exceptions import ConfigurationError, ToolContextError
from toolrelay.execution import GuardOptions, ToolCallingManager
from toolrelay.execution._manager import configured_manager
from toolrelay.mcp._annotations import (
    IDEMPOTENT,
    REQUIRES_APPROVAL_META,
    annotations_from_metadata,
)
from toolrelay.mcp._auth import verified_context
from toolrelay.mcp._context import context_from_meta
from toolrelay.mcp._results import text_result
from toolrelay.messages import ToolCall
from toolrelay.tools._base import Tool, ToolContext
from toolrelay.tools._catalog import ToolCatalog, as_tools

__all__ = ["CallRunner", "calls_server", "run_stdio", "tool_info", "tools_server"]

CallRunner = Callable[[ToolCall, Tool, ToolContext], Awaitable[tuple[str, bool]]]
"""Answers one call of a served tool: the text the client reads and whether it is an error.

It may raise :class:`~toolrelay.exceptions.ToolContextError` when the call's ``_meta`` lacks
what the tool needs; the client is then told so in an error result."""


def tools_server(
    tools: ToolCatalog | Iterable[object],
    *,
    name: str = "toolrelay",
    version: str = __version__,
    instructions: str | None = None,
    context: Mapping[str, Any] | None = None,
    tool_calling_manager: ToolCallingManager | None = None,
    **guards: Unpack[GuardOptions],
) -> Server[Any]:
    """An MCP server offering ``tools``.

    Args:
        tools: A :class:`~toolrelay.tools.ToolCatalog` (read on every request, so a live
            catalog's changes show) or anything :func:`~toolrelay.tools.as_tools` accepts.
        name: The server's name, as clients see it.
        version: The server's version.
        instructions: Text clients may show their model about the server.
        context: Tool context entries every call gets, overriding what a request's
            ``_meta`` says (e.g. the one tenant this server serves; a verified caller of
            another tenant is refused).
        tool_calling_manager: Runs each call; by default one built from the guard options
            (giving both is an error).
        guards: The guard options (:class:`~toolrelay.execution.GuardOptions`), as every door
            takes them (``approval=``, ``idempotency=``, ``audit=``, ``authorize=``,
            ``interceptors=``).

    Raises:
        DuplicateToolError: Two of the tools share a name.
        ConfigurationError: A tool requires approval and no ``approval=`` is configured, a
            manager is given with guard options, or a guard option is unknown.
    """
    catalog = tools if isinstance(tools, ToolCatalog) else ToolCatalog(as_tools(tools))
    manager = configured_manager(tool_calling_manager, owner="tools_server", **guards)
    try:
        manager.check_tools(catalog, owner="tools_server")
    except ConfigurationError as exc:
        raise ConfigurationError(
            f"{exc}. A server whose MCP client asks a person first (it reads each tool's "
            "requires-approval flag) says so with an approval handler that approves"
        ) from None

    async def run(call: ToolCall, tool: Tool, tool_context: ToolContext) -> tuple[str, bool]:
        outcome = await manager.run_call(call, (tool,), tool_context)
        return outcome.response.data, outcome.response.is_error

    return calls_server(
        catalog, run, name=name, version=version, instructions=instructions, context=context
    )


def calls_server(
    catalog: ToolCatalog,
    run: CallRunner,
    *,
    name: str,
    version: str = __version__,
    instructions: str | None = None,
    context: Mapping[str, Any] | None = None,
) -> Server[Any]:
    """An MCP server listing ``catalog``'s tools, each call answered by ``run``.

    What :func:`tools_server` builds with its manager's ``run_call``, and the gateway with
    its own answer (one manager's path, plus what the gateway adds). The request's ``_meta``
    is the call's tool context, ``context`` entries on top. Served over HTTP with an
    authenticator, the verified caller's entries (:func:`~toolrelay.mcp._auth.verified_context`)
    replace ``_meta``'s identity keys, and a caller ``context`` names another identity for
    (another tenant) is refused. A call lacking what its tool needs
    (:class:`~toolrelay.exceptions.ToolContextError`) is an error result, nothing ran; an
    unknown tool name is a protocol error.
    """
    fixed = dict(context or {})
    call_ids = itertools.count(1)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=[tool_info(tool) for tool in catalog])

    async def call_tool(
        ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        tool = catalog.get(params.name)
        if tool is None:
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {params.name}")
        meta: Mapping[str, Any] = params.meta or ctx.meta or {}
        caller = _verified_caller(ctx.request)
        clash = _clash(caller, fixed)
        if clash is not None:
            return text_result(clash, is_error=True)
        tool_context = context_from_meta(meta, verified=caller, fixed=fixed)
        call = ToolCall(
            id=f"mcp_{next(call_ids)}",
            name=tool.definition.name,
            # The manager reads the protocol's object as it reads any call's arguments.
            arguments=params.arguments,  # type: ignore[arg-type]
        )
        try:
            text, is_error = await run(call, tool, tool_context)
        except ToolContextError as exc:
            # What the call lacks comes from the client (its _meta): it is told, nothing ran.
            return text_result(str(exc), is_error=True)
        return text_result(text, is_error=is_error)

    def input_schema(tool_name: str) -> Mapping[str, Any] | None:
        tool = catalog.get(tool_name)
        return None if tool is None else dict(tool.definition.input_schema)

    return Server(
        name,
        version=version,
        instructions=instructions,
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _verified_caller(request: object) -> dict[str, Any] | None:
    """The context entries of the caller the request's bearer token proved, if it has one."""
    scope = getattr(request, "scope", None)  # the HTTP request; None over stdio
    user = scope.get("user") if isinstance(scope, Mapping) else None
    return verified_context(user.access_token) if isinstance(user, AuthenticatedUser) else None


def _clash(caller: Mapping[str, Any] | None, fixed: Mapping[str, Any]) -> str | None:
    """Why a verified caller may not use a server whose context names another identity."""
    for key, value in (caller or {}).items():
        if key in fixed and fixed[key] != value:
            return (
                f"This server serves {key} {fixed[key]!r} only; the caller's token is for "
                f"{value!r}. Nothing ran."
            )
    return None


def tool_info(tool: Tool) -> McpToolInfo:
    """How a toolrelay tool is listed over MCP.

    Its annotations are its metadata's (:func:`~toolrelay.mcp._annotations.
    annotations_from_metadata`), and ``idempotentHint: true`` for a tool with an
    ``idempotency_key``: a served call runs through a manager, and every manager records
    such a tool's results, so a repeated call gets the recorded result.
    """
    definition, metadata = tool.definition, tool.metadata
    if metadata.idempotency_key is not None:
        metadata = replace(metadata, extra={**metadata.extra, IDEMPOTENT: True})
    return McpToolInfo(
        name=definition.name,
        description=definition.description,
        input_schema=dict(definition.input_schema),
        annotations=annotations_from_metadata(metadata),
        _meta={REQUIRES_APPROVAL_META: True} if metadata.requires_approval else None,
    )


async def run_stdio(server: Server[Any]) -> None:
    """Serve ``server`` on this process's standard input and output until the client leaves."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
