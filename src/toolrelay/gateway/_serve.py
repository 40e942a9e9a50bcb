"""Running a gateway: from a config to a live MCP server on stdio or streamable HTTP.

``toolrelay serve gateway.toml`` calls :func:`serve`; in Python::

    serve("gateway.toml")                                  # stdio, until the client leaves
    serve("gateway.toml", "http", host="127.0.0.1", port=8765)

    async with open_gateway(load_gateway_config("gateway.toml")) as gateway:
        hits = await gateway.search("refund a failed order")   # or build an MCP server:
        server = gateway_server(gateway, config)

Upstream MCP servers are started (or reached) first and their tools listed; module tools
are loaded; the catalog is indexed once before the first client arrives.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Literal, Unpack

import anyio
import uvicorn
from mcp.server import Server

from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import GuardOptions, ToolCallingManager
from toolrelay.execution._pipeline import check_guard_options, given_guards
from toolrelay.gateway._config import GatewayConfig, load_gateway_config
from toolrelay.gateway._gateway import ToolGateway, refuse_search_keywords
from toolrelay.gateway._modules import ModuleLoader, load_module_tools
from toolrelay.gateway._side_effects import ApprovalSettings, IdempotencySettings, gateway_guards
from toolrelay.mcp._server import calls_server, run_stdio
from toolrelay.mcp._toolset import McpToolset
from toolrelay.messages import ToolCall
from toolrelay.search._base import ToolIndex
from toolrelay.tools import Tool, ToolCatalog, ToolContext
from toolrelay.toolsearch._access import ToolFilter

__all__ = [
    "Transport",
    "aserve",
    "gateway_server",
    "make_index",
    "open_gateway",
    "serve",
]

Transport = Literal["stdio", "http"]
"""How the gateway talks to its client: standard input/output, or streamable HTTP."""


@contextlib.asynccontextmanager
async def open_gateway(
    config: GatewayConfig,
    *,
    tool_filter: ToolFilter | None = None,
    index: ToolIndex | None = None,
    module_loader: ModuleLoader = load_module_tools,
    tool_calling_manager: ToolCallingManager | None = None,
    **guards: Unpack[GuardOptions],
) -> AsyncIterator[ToolGateway]:
    """A ready gateway over ``config``'s servers and modules; its servers close on exit.

    Args:
        config: What to front.
        tool_filter: Which tools a caller may see and run (the one search option a file
            cannot hold; the others are the file's ``[search]``).
        index: The search index; by default the one ``config.search.index`` names.
        module_loader: Loads a ``[[modules]]`` entry (see ``_modules.py``).
        tool_calling_manager: Runs the calls, with guards of its own; instead of the file's
            and the ones given here. By default one whose ``default_timeout`` is
            ``config.timeout`` and ``max_result_chars`` ``config.max_result_chars``, with the
            guards the file's settings ask for (``_side_effects.py``).
        guards: Guard options (:class:`~toolrelay.execution.GuardOptions`), as every door
            takes them; each replaces what the file says of it (``approval=`` the
            ``[approval] handler``, ``idempotency=`` the ``[idempotency]`` store, ``audit=``
            the ``[audit]`` file).

    Raises:
        McpServerError: An upstream server could not be started, reached or listed.
        LoadError: A module or the approval handler could not be loaded.
        DuplicateToolError: Two sources offer the same tool name.
        ConfigurationError: A tool policy does not fit the tools (see
            :meth:`ToolGateway.check_policies`), or ``tool_calling_manager`` was given
            together with guard settings it would ignore.
    """
    refuse_search_keywords(
        guards,
        owner="open_gateway",
        fix="set it in the file's [search] table (in code: GatewayConfig(search={{'{}': ...}}))",
    )
    check_guard_options(guards, owner="open_gateway", parameters=_PARAMETERS)
    if tool_calling_manager is not None and (given_guards(guards) or _side_effects_set(config)):
        raise ConfigurationError(
            "give either a tool_calling_manager (with its own guards) or the gateway's "
            "approval, idempotency and audit settings, not both"
        )
    modules = ToolCatalog()
    for spec in config.modules:
        for tool in module_loader(spec):
            modules.add(tool, source=f"module {spec!r}")
    async with contextlib.AsyncExitStack() as stack:
        if tool_calling_manager is None:
            tool_calling_manager = ToolCallingManager(
                default_timeout=config.timeout,
                max_result_chars=config.max_result_chars,
                **gateway_guards(
                    approval_settings=config.approval,
                    idempotency_settings=config.idempotency,
                    audit_settings=config.audit,
                    closing=stack.enter_context(contextlib.ExitStack()),
                    **guards,
                ),
            )
        catalogs = [modules]
        if config.servers:
            toolset = await stack.enter_async_context(McpToolset(config.servers))
            catalogs.insert(0, toolset.catalog)
        gateway = ToolGateway(
            catalogs,
            options=config.search.options(tool_filter=tool_filter),
            index=index if index is not None else make_index(config.search.index),
            policies=config.tools,
            tool_calling_manager=tool_calling_manager,
        )
        await gateway.check_policies()
        yield gateway


_PARAMETERS = ("tool_filter", "index", "module_loader", "tool_calling_manager")


def _side_effects_set(config: GatewayConfig) -> bool:
    return (
        config.audit is not None
        or config.approval != ApprovalSettings()
        or config.idempotency != IdempotencySettings()
    )


def gateway_server(gateway: ToolGateway, config: GatewayConfig) -> Server[Any]:
    """The MCP server (the SDK's low-level ``Server``) offering ``gateway``'s two tools.

    Their texts and the default instructions are in the gateway's language, decided now.
    Each call is answered as :meth:`ToolGateway.call` answers one
    (:meth:`ToolGateway.answer`): on the gateway's manager, ``call_tool`` forwarding to the
    tool it names (validated, guarded, timed out and bounded once), with the request's
    ``_meta`` as the tool context and the file's ``[context]`` on top.
    """

    async def run(call: ToolCall, tool: Tool, context: ToolContext) -> tuple[str, bool]:
        result = await gateway.answer(call, tool, context)
        return result.text, result.is_error

    return calls_server(
        ToolCatalog(gateway.tools()),
        run,
        name=config.name,
        instructions=config.instructions or gateway.texts().instructions,
        context=config.context,
    )


async def aserve(
    config: str | Path | GatewayConfig,
    transport: Transport = "stdio",
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    on_listening: Callable[[str], None] | None = None,
    **options: Any,
) -> None:
    """Serve a gateway until the client leaves (stdio) or the task is cancelled (HTTP).

    Args:
        config: A gateway file, or a config.
        transport: ``"stdio"`` or ``"http"`` (streamable HTTP at ``http://host:port/path``).
        host: The HTTP server's address.
        port: Its port (``0``: any free port; ``on_listening`` is told which).
        path: The MCP endpoint's path.
        on_listening: Called with the endpoint's URL once the HTTP server accepts
            connections (not for stdio).
        **options: Passed to :func:`open_gateway` (``tool_filter``, ``index``,
            ``module_loader``, ``tool_calling_manager`` and the guard options).

    Raises:
        ConfigurationError: An unknown transport.
        LoadError: The file cannot be read or is invalid.
    """
    if transport not in ("stdio", "http"):
        raise ConfigurationError(f"unknown transport {transport!r}; use 'stdio' or 'http'")
    settings = config if isinstance(config, GatewayConfig) else load_gateway_config(config)
    async with open_gateway(settings, **options) as gateway:
        server = gateway_server(gateway, settings)
        if transport == "stdio":
            await run_stdio(server)
            return
        app = server.streamable_http_app(streamable_http_path=path, host=host)
        http = uvicorn.Config(app, host=host, port=port, log_level="warning")
        await _Server(http, path=path, on_listening=on_listening).serve()


class _Server(uvicorn.Server):
    """uvicorn's server, telling ``on_listening`` its URL once its sockets listen."""

    def __init__(
        self, config: uvicorn.Config, *, path: str, on_listening: Callable[[str], None] | None
    ) -> None:
        super().__init__(config)
        self.path = path
        self.on_listening = on_listening

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and self.on_listening is not None:
            self.on_listening(_endpoint(self, self.config.host, self.config.port, self.path))


def _endpoint(http: Any, host: str, port: int, path: str) -> str:
    """The URL clients reach the server at, with the port it bound (``port`` may be 0)."""
    for listening in getattr(http, "servers", ()):
        for sock in getattr(listening, "sockets", ()):
            port = int(sock.getsockname()[1])
            break
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{path}"


def serve(
    config: str | Path | GatewayConfig, transport: Transport = "stdio", **options: Any
) -> None:
    """Blocking :func:`aserve`: what ``toolrelay serve CONFIG [--transport T]`` calls."""
    anyio.run(_serve, config, transport, options)


async def _serve(
    config: str | Path | GatewayConfig, transport: Transport, options: dict[str, Any]
) -> None:
    await aserve(config, transport, **options)


def make_index(kind: str) -> ToolIndex:
    """A new, empty index of this kind (``regex``, ``bm25``, ``vector``, ``hybrid``, ``auto``).

    Raises:
        ConfigurationError: An unknown kind, or one whose packages are not installed.
    """
    from toolrelay.search import _factory as factory

    try:
        if kind == "regex":
            from toolrelay.search._regex import RegexToolIndex

            return RegexToolIndex()
        if kind == "bm25":
            return factory.lexical_index()
        if kind == "vector":
            return factory.semantic_index()
        if kind == "hybrid":
            from toolrelay.search._hybrid import HybridToolIndex

            return HybridToolIndex(factory.lexical_index(), factory.semantic_index())
        if kind == "auto":
            return factory.default_index()
    except ImportError as exc:
        raise ConfigurationError(
            f"the {kind} index needs {exc.name or exc}, which is not installed "
            '(pip install "toolrelay[embeddings]")'
        ) from exc
    raise ConfigurationError(f"unknown index {kind!r}")
