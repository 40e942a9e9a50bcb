"""The tool-search gateway: one MCP server fronting many tool sources (``toolrelay serve``).

It fronts upstream MCP servers and Python tool modules, named in a TOML file
(:class:`GatewayConfig`), and offers any MCP client progressive disclosure:
``tool_search`` over all their tools and ``call_tool(name, arguments)``, which forwards to the
tool's owner. It runs on the one tool-search core of every front end (the same
:class:`~toolrelay.toolsearch.SearchOptions`, ``tool_filter`` among them), and its calls on
the manager's one path, with the guard options every door takes (``approval=``,
``idempotency=``, ``audit=``, ``authorize=``, ``interceptors=``), driven by each tool's
metadata and the file's per-tool policies (:class:`ToolPolicy`: ``[tools."NAME"]`` with
``requires_approval``, ``idempotency_key``...). What clients read besides the catalog is in
the catalog's language, English or Chinese (:class:`~toolrelay.toolsearch.SearchTexts`).
Clients are told each tool's side effects as the gateway runs it, and ``call_tool``'s as the
most any of them may do, as MCP annotations; what they may send is checked before a call
runs. Needs the ``mcp`` extra.

Example::

    from toolrelay.gateway import serve
    serve("gateway.toml")                       # stdio
    serve("gateway.toml", "http", port=8765)    # streamable HTTP at http://127.0.0.1:8765/mcp
    serve("gateway.toml", approval=decide)      # async decide(call) -> Approve() | Deny(reason)
"""

try:
    import mcp as _sdk  # noqa: F401 - only checks that the SDK is installed
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError(
        "toolrelay.gateway needs the MCP SDK: pip install -e '.[mcp]'", name=exc.name
    ) from exc

from toolrelay.gateway._config import GatewayConfig, load_gateway_config
from toolrelay.gateway._gateway import FoundTool, GatewayCallResult, ToolGateway
from toolrelay.gateway._policy import ToolPolicy
from toolrelay.gateway._serve import aserve, gateway_server, open_gateway, serve

__all__ = [
    "FoundTool",
    "GatewayCallResult",
    "GatewayConfig",
    "ToolGateway",
    "ToolPolicy",
    "aserve",
    "gateway_server",
    "load_gateway_config",
    "open_gateway",
    "serve",
]
