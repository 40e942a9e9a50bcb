"""``McpToolset``: the tools of several MCP servers as toolrelay tools, kept current.

::

    toolset = McpToolset([
        McpServerConfig(name="payments", command="python", args=("payments_server.py",)),
        McpServerConfig(name="tickets", url="http://127.0.0.1:8000/mcp"),
    ])
    async with toolset:
        advisor = ToolSearchAdvisor(toolset.catalog)     # read live: changes are re-indexed
        client = ChatClient.builder(model).default_advisors(advisor).build()

The connections live on a background event loop of the toolset's own, so an open toolset's
tools can be called from any loop or thread (``call_sync`` included), and ``with toolset:``
works in synchronous code.

Names are prefixed by server (``payments.get_transaction``; see
``_names.py``). Two servers offering the same name without prefixes is an
error naming both servers (:class:`~toolrelay.exceptions.DuplicateToolError`), and a tool
whose input schema is not valid JSON Schema is refused like any other definition
(:class:`~toolrelay.exceptions.ToolDefinitionError`, naming the tool and the problem).

When a server says its tools changed, the toolset re-lists them and replaces
:attr:`McpToolset.catalog`'s contents; unchanged tools keep their objects. A server whose
connection was lost is started (or reached) again on the next call of one of its tools, at
most once per ``reconnect_delay`` seconds; the call that was running when it died is never
repeated.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any

from mcp_types import CallToolResult

from toolrelay._loop import BackgroundLoop
from toolrelay.exceptions import ConfigurationError, ToolDefinitionError
from toolrelay.mcp._config import McpServerConfig
from toolrelay.mcp._connection import McpConnection
from toolrelay.mcp._live_catalog import LiveToolCatalog
from toolrelay.mcp._names import mcp_tool_name
from toolrelay.mcp._tool import McpTool, ToolCaller
from toolrelay.tools._base import Tool

__all__ = ["DEFAULT_RECONNECT_DELAY", "McpToolset"]

_log = logging.getLogger("toolrelay.mcp")

DEFAULT_RECONNECT_DELAY = 5.0
"""Seconds after a failed reconnection before the next call tries again."""


class McpToolset:
    """The tools of one or more MCP servers (see the module docs).

    Args:
        servers: The servers; their names must differ.
        on_change: Called (on the toolset's background thread) after the tools changed
            because a server said so or reconnected; keep it short.
        reconnect_delay: Seconds between attempts to bring back a lost server.

    Attributes:
        catalog: The tools of all servers, in server order; the same object for the toolset's
            whole life, its contents replaced when tools change.

    Raises:
        ConfigurationError: No servers, or two with the same name.
    """

    def __init__(
        self,
        servers: McpServerConfig | Iterable[McpServerConfig],
        *,
        on_change: Callable[[McpToolset], None] | None = None,
        reconnect_delay: float = DEFAULT_RECONNECT_DELAY,
    ) -> None:
        configs = (servers,) if isinstance(servers, McpServerConfig) else tuple(servers)
        if not configs:
            raise ConfigurationError("an MCP toolset needs at least one server")
        names = [c.name for c in configs]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ConfigurationError(f"MCP server names must differ; repeated: {repeated}")
        self.servers: tuple[McpServerConfig, ...] = configs
        self.catalog = LiveToolCatalog()
        self.on_change = on_change
        self.reconnect_delay = reconnect_delay
        self._loop: BackgroundLoop | None = None
        self._connections: dict[str, McpConnection] = {}
        self._tools: dict[str, dict[str, McpTool]] = {}
        self._retry_after: dict[str, float] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._version = 0
        self._version_changed: asyncio.Condition | None = None

    # --- lifecycle ------------------------------------------------------------------------

    def open(self) -> McpToolset:
        """Connect to every server and list their tools (blocking).

        Raises:
            McpServerError: A server could not be started, reached or listed (the others
                are closed again).
            DuplicateToolError: Two servers offer the same tool name.
            ToolDefinitionError: A server lists a tool whose input schema is invalid.
        """
        try:
            self._background().run_blocking(self._open())
        except BaseException:
            self.close()
            raise
        return self

    async def aopen(self) -> McpToolset:
        """Like :meth:`open`, from a coroutine."""
        try:
            await self._background().run(self._open())
        except BaseException:
            await self.aclose()
            raise
        return self

    def close(self) -> None:
        """Close every connection (stopping stdio servers) and the background loop."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        try:
            loop.run_blocking(self._close())
        finally:
            loop.stop()

    async def aclose(self) -> None:
        """Like :meth:`close`, from a coroutine."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        try:
            await loop.run(self._close())
        finally:
            await asyncio.to_thread(loop.stop)

    def __enter__(self) -> McpToolset:
        return self.open()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    async def __aenter__(self) -> McpToolset:
        return await self.aopen()

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    # --- reading --------------------------------------------------------------------------

    @property
    def tools(self) -> list[Tool]:
        """The tools of all servers, in server order."""
        return list(self.catalog)

    @property
    def version(self) -> int:
        """Grows by one each time the tools are (re)built: 1 after opening."""
        return self._version

    def tools_of(self, server: str) -> list[McpTool]:
        """The tools of one server.

        Raises:
            ConfigurationError: No server has that name.
        """
        if server not in {c.name for c in self.servers}:
            raise ConfigurationError(f"no MCP server named {server!r} in this toolset")
        return list(self._tools.get(server, {}).values())

    async def refresh(self) -> None:
        """Re-list every server's tools now (for servers that never announce changes)."""
        await self._require_open().run(self._refresh())

    async def wait_for_version(self, version: int) -> int:
        """Wait until :attr:`version` is at least ``version``; return the version then.

        Bound the wait yourself, e.g. ``async with asyncio.timeout(5):``.
        """
        return await self._require_open().run(self._wait_for_version(version))

    # --- on the background loop -------------------------------------------------------------

    async def _open(self) -> None:
        if self._connections:
            return
        self._version_changed = asyncio.Condition()
        connections = [McpConnection(c, self._server_changed) for c in self.servers]
        outcomes = await asyncio.gather(*(c.open() for c in connections), return_exceptions=True)
        failure = next((o for o in outcomes if isinstance(o, BaseException)), None)
        try:
            if failure is not None:
                raise failure
            self._connections = {c.name: c for c in connections}
            self._locks = {c.name: asyncio.Lock() for c in connections}
            await self._rebuild(announce=False)
        except BaseException:
            self._connections = {}
            await asyncio.gather(*(c.close() for c in connections), return_exceptions=True)
            raise

    async def _close(self) -> None:
        connections = list(self._connections.values())
        self._connections = {}
        await asyncio.gather(*(c.close() for c in connections), return_exceptions=True)

    async def _refresh(self) -> None:
        await asyncio.gather(*(c.relist() for c in self._connections.values()))
        await self._rebuild()

    async def _server_changed(self, connection: McpConnection) -> None:
        try:
            await self._rebuild()
        except ToolDefinitionError as exc:  # a duplicate name or an invalid schema
            _log.error("MCP server %r: new tools rejected, old kept: %s", connection.name, exc)

    async def _rebuild(self, *, announce: bool = True) -> None:
        """Wrap every server's current tools; keep the objects of unchanged tools.

        ``announce`` calls ``on_change`` afterwards (not for the first listing).

        Raises:
            ToolDefinitionError: Two tools would share a name, or a tool's input schema is
                invalid (nothing changes then).
        """
        rebuilt: dict[str, dict[str, McpTool]] = {}
        for config in self.servers:
            connection = self._connections.get(config.name)
            listed = connection.tools if connection is not None else []
            before = self._tools.get(config.name, {})
            tools: dict[str, McpTool] = {}
            for info in listed:
                kept = before.get(info.name)
                tools[info.name] = (
                    kept
                    if kept is not None and kept.same_as(info)
                    else McpTool(
                        info,
                        name=mcp_tool_name(info.name, config.tool_prefix),
                        server=config.name,
                        caller=self._caller(config.name),
                        timeout=config.timeout,
                    )
                )
            rebuilt[config.name] = tools
        self.catalog.replace_all(
            (tool, tool.source) for tools in rebuilt.values() for tool in tools.values()
        )
        self._tools = rebuilt
        self._version += 1
        assert self._version_changed is not None  # set by _open
        async with self._version_changed:
            self._version_changed.notify_all()
        if announce and self.on_change is not None:
            try:
                self.on_change(self)
            except Exception:
                _log.exception("the MCP toolset's on_change callback raised")

    async def _wait_for_version(self, version: int) -> int:
        assert self._version_changed is not None
        async with self._version_changed:
            await self._version_changed.wait_for(lambda: self._version >= version)
        return self._version

    def _caller(self, server: str) -> ToolCaller:
        async def call(
            name: str, arguments: dict[str, Any], meta: dict[str, Any] | None
        ) -> CallToolResult:
            return await self._require_open().run(self._call(server, name, arguments, meta))

        return call

    async def _call(
        self, server: str, name: str, arguments: dict[str, Any], meta: Mapping[str, Any] | None
    ) -> CallToolResult:
        connection = await self._live_connection(server)
        return await connection.call_tool(name, arguments, dict(meta) if meta else None)

    async def _live_connection(self, server: str) -> McpConnection:
        """The server's connection, started again first when it was lost."""
        connection = self._connections[server]
        if connection.connected or time.monotonic() < self._retry_after.get(server, 0.0):
            return connection  # a lost one answers with why it was lost
        async with self._locks[server]:
            connection = self._connections[server]
            if connection.connected:
                return connection
            fresh = McpConnection(connection.config, self._server_changed)
            try:
                await fresh.open()
            except Exception:
                self._retry_after[server] = time.monotonic() + self.reconnect_delay
                raise
            await connection.close()
            self._connections[server] = fresh
            _log.info("MCP server %r: reconnected", server)
            await self._server_changed(fresh)
            return fresh

    # --- helpers --------------------------------------------------------------------------

    def _background(self) -> BackgroundLoop:
        if self._loop is None:
            self._loop = BackgroundLoop("toolrelay-mcp")
        return self._loop

    def _require_open(self) -> BackgroundLoop:
        if self._loop is None:
            raise ConfigurationError("the MCP toolset is not open; use open() or 'with toolset:'")
        return self._loop

    def __repr__(self) -> str:
        names = ", ".join(c.name for c in self.servers)
        return f"McpToolset([{names}], tools={len(self.catalog)})"
