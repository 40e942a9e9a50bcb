"""Running a gateway: from a config to a live MCP server on stdio or streamable HTTP.

``toolrelay serve gateway.toml`` calls :func:`serve`; in Python::

    serve("gateway.toml")                                  # stdio, until the client leaves
    serve("gateway.toml", "http", host="127.0.0.1", port=8765)
    serve("gateway.toml", "http", host="0.0.0.0", auth=Authenticator(...))  # + [http] TLS

    async with open_gateway(load_gateway_config("gateway.toml")) as gateway:
        hits = await gateway.search("refund a failed order")   # or build an MCP server:
        server = gateway_server(gateway, config)

Upstream MCP servers are started (or reached) first and their tools listed; module tools
are loaded; the catalog is indexed once before the first client arrives. Over HTTP the rules
of :func:`~toolrelay.mcp.run_http` hold, checked before anything starts: off loopback, only
with an authenticator (``[auth]``), TLS or a declared proxy and the host names (``[http]``).
Over stdio the client that started the gateway is its user, trusted by construction: who is
calling comes from ``_meta``, and ``[auth]`` or ``[http]`` there is an error.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Literal, Unpack

import anyio
from mcp.server import Server

from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import GuardOptions, ToolCallingManager
from toolrelay.execution._pipeline import check_guard_options, given_guards
from toolrelay.gateway._config import GatewayConfig, HttpSettings, load_gateway_config
from toolrelay.gateway._gateway import ToolGateway, refuse_search_keywords
from toolrelay.gateway._modules import ModuleLoader, load_module_tools
from toolrelay.gateway._scopes import scoped_filter
from toolrelay.gateway._side_effects import ApprovalSettings, IdempotencySettings, gateway_guards
from toolrelay.mcp._auth import Authenticator
from toolrelay.mcp._http import check_http, run_http
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
            cannot hold; the others are the file's ``[search]``); with the file's
            ``[scopes]``, both must allow a tool.
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
            options=config.search.options(tool_filter=scoped_filter(config.scopes, tool_filter)),
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
    ``_meta`` as the tool context (its identity keys replaced by the verified caller's when
    served with an authenticator) and the file's ``[context]`` on top.
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
    auth: Authenticator | None = None,
    on_listening: Callable[[str, str], None] | None = None,
    **options: Any,
) -> None:
    """Serve a gateway until the client leaves (stdio) or the task is cancelled (HTTP).

    Args:
        config: A gateway file, or a config.
        transport: ``"stdio"`` or ``"http"`` (streamable HTTP at ``http://host:port/path``,
            ``https://`` with the file's ``[http]`` certificate).
        host: The HTTP server's address; any but a loopback one needs an authenticator and
            the file's ``[http]`` settings (see :func:`~toolrelay.mcp.run_http`).
        port: Its port (``0``: any free port; ``on_listening`` is told which).
        path: The MCP endpoint's path.
        auth: Who may call over HTTP; replaces the file's ``[auth]``.
        on_listening: Called with the endpoint's URL and who may call (the start-up line's
            words) once the HTTP server accepts connections (not for stdio).
        **options: Passed to :func:`open_gateway` (``tool_filter``, ``index``,
            ``module_loader``, ``tool_calling_manager`` and the guard options).

    Raises:
        ConfigurationError: An unknown transport; HTTP where its rules forbid (no
            authenticator off loopback, no TLS nor proxy, no allowed hosts); ``[auth]`` or
            ``[http]`` over stdio.
        LoadError: The file cannot be read or is invalid.
    """
    if transport not in ("stdio", "http"):
        raise ConfigurationError(f"unknown transport {transport!r}; use 'stdio' or 'http'")
    settings = config if isinstance(config, GatewayConfig) else load_gateway_config(config)
    auth = auth if auth is not None else settings.auth
    http = settings.http
    if transport == "stdio" and (auth is not None or http != HttpSettings()):
        raise ConfigurationError(
            "[auth] and [http] apply to HTTP, and over stdio nothing would enforce them (the "
            "client that starts the gateway is its user, and its _meta says who calls): serve "
            "with transport 'http' (-t http), or leave them out"
        )
    if transport == "http":
        check_http(
            host,
            auth=auth,
            tls=(http.tls_cert, http.tls_key),
            behind_proxy=http.behind_proxy,
            allowed_hosts=http.allowed_hosts,
        )
    async with open_gateway(settings, **options) as gateway:
        server = gateway_server(gateway, settings)
        if transport == "stdio":
            await run_stdio(server)
            return
        await run_http(
            server,
            host=host,
            port=port,
            path=path,
            auth=auth,
            tls_cert=http.tls_cert,
            tls_key=http.tls_key,
            behind_proxy=http.behind_proxy,
            allowed_hosts=http.allowed_hosts,
            allowed_origins=http.allowed_origins,
            on_listening=on_listening,
        )


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
            "(pip install -e '.[embeddings]')"
        ) from exc
    raise ConfigurationError(f"unknown index {kind!r}")
