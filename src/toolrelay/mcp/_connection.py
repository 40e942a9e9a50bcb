"""One live connection to one MCP server, on the official SDK's ``Client``.

:class:`McpConnection` starts a stdio server (or reaches an HTTP one), lists its tools, keeps
the list current and calls tools with a deadline. It runs on the toolset's background loop:
one task owns the SDK client from entering to leaving, as anyio requires.

The tool list is kept current both ways the protocol has: on 2026-07-28 connections a
``subscriptions/listen`` stream delivers ``tools`` list-changed events; older connections
get ``notifications/tools/list_changed``. Either re-lists the tools and calls
``on_tools_changed``.

Failures become :class:`~toolrelay.exceptions.McpServerError` naming the server: a server
that cannot be started or reached, one that does not answer in time, and one that dies while
a call waits (the call fails at once; nothing hangs). A dead connection stays closed; later
calls fail fast with the reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any, TextIO, cast

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ToolsListChanged
from mcp_types import (
    CONNECTION_CLOSED,
    CallToolResult,
    Implementation,
    RequestParamsMeta,
    ToolListChangedNotification,
)
from mcp_types import Tool as McpToolInfo
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolrelay._version import __version__
from toolrelay.exceptions import McpServerError
from toolrelay.mcp._config import McpServerConfig

__all__ = ["CLOSE_TIMEOUT", "MAX_LIST_PAGES", "McpConnection"]

_log = logging.getLogger("toolrelay.mcp")

MAX_LIST_PAGES = 100
"""Pages of ``tools/list`` read at most, so a server that never ends its listing cannot hang."""

CLOSE_TIMEOUT = 10.0
"""Seconds a connection may take to close before it is cancelled."""

_CLIENT_INFO = Implementation(name="toolrelay", version=__version__)
_HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)  # the SDK's defaults: streams stay open


class McpConnection:
    """A connection to one MCP server (create, :meth:`open` and use it on one event loop).

    Args:
        config: The server.
        on_tools_changed: Awaited after the tool list was re-read because the server said
            it changed (not after the first listing).

    Attributes:
        tools: The server's tools as last listed.
    """

    def __init__(
        self,
        config: McpServerConfig,
        on_tools_changed: Callable[[McpConnection], Awaitable[None]] | None = None,
    ) -> None:
        self.config = config
        self.tools: list[McpToolInfo] = []
        self._on_tools_changed = on_tools_changed
        self._client: Client | None = None
        self._runner: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()
        self._changed = asyncio.Event()
        self._closed_reason: str | None = None

    @property
    def name(self) -> str:
        """The server's configured name."""
        return self.config.name

    @property
    def connected(self) -> bool:
        """Whether the connection is open and has not failed."""
        return self._client is not None and self._closed_reason is None

    async def open(self) -> None:
        """Start or reach the server and list its tools, within ``connect_timeout``.

        Raises:
            McpServerError: The server could not be started, reached or listed in time.
        """
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._runner = asyncio.create_task(self._run(ready), name=f"mcp-{self.name}")
        try:
            async with asyncio.timeout(self.config.connect_timeout):
                await asyncio.shield(ready)
        except TimeoutError:
            await self.close()
            raise McpServerError(
                self.name,
                f"MCP server {self.name!r} did not start and list its tools within "
                f"{self.config.connect_timeout:g} s",
            ) from None
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        """Leave the connection (stopping a stdio server); idempotent, and never hangs.

        An open connection is left gracefully (the SDK ends a stdio server, killing it if
        it does not exit); one still starting, or one that takes longer than
        :data:`CLOSE_TIMEOUT` to leave, is cancelled.
        """
        self._closing.set()
        runner, self._runner = self._runner, None
        if runner is None or runner is asyncio.current_task():
            return
        if self._client is None:
            runner.cancel()  # still starting: nothing to leave gracefully
        try:
            await asyncio.wait_for(asyncio.shield(runner), CLOSE_TIMEOUT)
        except TimeoutError:
            runner.cancel()
        except (Exception, asyncio.CancelledError):
            pass
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await runner

    async def relist(self) -> None:
        """Read the tool list again now (an unavailable server keeps its last list)."""
        client = self._client
        if client is not None and self._closed_reason is None:
            self.tools = await self._list_tools(client)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None
    ) -> CallToolResult:
        """Call the tool ``name`` (its name on the server) within the server's timeout.

        Raises:
            McpServerError: Not connected, no answer in time, the connection closed during
                the call, or the server answered with a protocol error.
        """
        client = self._client
        if client is None or self._closed_reason is not None:
            reason = self._closed_reason or "the connection is not open"
            raise McpServerError(self.name, f"MCP server {self.name!r} is not available: {reason}")
        timeout = self.config.timeout
        try:
            with anyio.fail_after(timeout) if timeout is not None else contextlib.nullcontext():
                return await client.call_tool(name, arguments, meta=cast(RequestParamsMeta, meta))
        except TimeoutError:
            raise McpServerError(
                self.name,
                f"MCP server {self.name!r} did not answer the call of {name!r} within "
                f"{timeout:g} s",
            ) from None
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self._lost("the server closed the connection")
                raise McpServerError(
                    self.name,
                    f"MCP server {self.name!r} closed the connection during the call of {name!r}",
                ) from exc
            raise McpServerError(
                self.name, f"MCP server {self.name!r} rejected the call of {name!r}: {exc.message}"
            ) from exc
        except Exception as exc:  # transport failures (HTTP errors, broken pipes)
            raise McpServerError(
                self.name,
                f"MCP server {self.name!r}: the call of {name!r} failed: {_describe(exc)}",
            ) from exc

    # --- the task that owns the client ----------------------------------------------------

    async def _run(self, ready: asyncio.Future[None]) -> None:
        try:
            async with self._client_context() as client:
                self.tools = await self._list_tools(client)
                self._client = client  # only now: close() cancels a connection still starting
                ready.set_result(None)
                async with anyio.create_task_group() as group:
                    group.start_soon(self._watch, client)
                    group.start_soon(self._refresh_on_change, client)
                    await self._closing.wait()
                    group.cancel_scope.cancel()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(self._start_error(exc))
            else:
                _log.debug("MCP server %r: connection ended: %r", self.name, exc)
                self._lost(_describe(exc))
        finally:
            self._client = None
            if self._closed_reason is None:
                self._closed_reason = "the connection was closed"
            if not ready.done():
                ready.cancel()

    @contextlib.asynccontextmanager
    async def _client_context(self) -> AsyncIterator[Client]:
        config = self.config
        async with AsyncExitStack() as stack:
            transport: Any
            if config.program is not None:
                errlog: TextIO = sys.stderr
                if config.stderr == "discard":
                    # Opening the null device never blocks.
                    errlog = stack.enter_context(open(os.devnull, "w"))  # noqa: ASYNC230, SIM115
                parameters = StdioServerParameters(
                    command=config.program,
                    args=list(config.args),
                    env=dict(config.env) or None,
                    cwd=config.cwd,
                )
                transport = stdio_client(parameters, errlog=errlog)
            else:
                assert config.url is not None  # the config has a command or a url
                http = await stack.enter_async_context(
                    httpx2.AsyncClient(headers=dict(config.headers), timeout=_HTTP_TIMEOUT)
                )
                transport = streamable_http_client(config.url, http_client=http)
            client = Client(
                transport,
                cache=None,
                client_info=_CLIENT_INFO,
                message_handler=self._on_message,
            )
            yield await stack.enter_async_context(client)

    async def _list_tools(self, client: Client) -> list[McpToolInfo]:
        tools: list[McpToolInfo] = []
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            page = await client.list_tools(cursor=cursor, cache_mode="bypass")
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def _watch(self, client: Client) -> None:
        """Turn ``subscriptions/listen`` events into re-listing (2026-07-28 connections)."""
        capability = client.server_capabilities.tools
        if capability is None or not capability.list_changed:
            return
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return  # older connections get notifications; see _on_message
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                async for event in subscription:
                    if isinstance(event, ToolsListChanged):
                        self._changed.set()
        except Exception as exc:  # the stream is a convenience; calls keep working without it
            _log.debug("MCP server %r: change subscription ended: %r", self.name, exc)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, ToolListChangedNotification):
            self._changed.set()
        elif isinstance(message, Exception):
            _log.debug("MCP server %r: transport error: %r", self.name, message)

    async def _refresh_on_change(self, client: Client) -> None:
        while True:
            await self._changed.wait()
            # Cleared before listing, so a change announced during the listing is not lost.
            self._changed.clear()
            try:
                self.tools = await self._list_tools(client)
            except Exception as exc:
                _log.warning("MCP server %r: re-listing tools failed: %s", self.name, exc)
                continue
            if self._on_tools_changed is not None:
                try:
                    await self._on_tools_changed(self)
                except Exception:
                    _log.exception("MCP server %r: handling the new tool list failed", self.name)

    # --- failures ---------------------------------------------------------------------------

    def _lost(self, reason: str) -> None:
        if self._closed_reason is None:
            self._closed_reason = reason
        self._closing.set()

    def _start_error(self, exc: Exception) -> McpServerError:
        verb = "started" if self.config.command is not None else "reached"
        where = self.config.command if self.config.command is not None else self.config.url
        error = McpServerError(
            self.name, f"MCP server {self.name!r} ({where}) could not be {verb}: {_describe(exc)}"
        )
        error.__cause__ = exc
        return error


def _describe(exc: BaseException) -> str:
    """The innermost meaningful message, unwrapping anyio's exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        return exc.message
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
