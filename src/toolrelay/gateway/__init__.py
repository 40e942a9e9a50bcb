"""The tool-search gateway: one MCP server fronting many tool sources (``toolrelay serve``).

It fronts upstream MCP servers and Python tool modules, named in a TOML file
(:mod:`toolrelay.gateway.config`), and offers any MCP client progressive disclosure:
``tool_search`` over all their tools and ``call_tool(name, arguments)``, which forwards to the
tool's owner. The permission hooks are the in-process tool search's (``tool_filter``,
``authorize``); calls run through a :class:`~toolrelay.execution.ToolCallingManager` with
approval, idempotency and audit interceptors (:mod:`toolrelay.gateway.side_effects`), driven
by each tool's metadata and the file's per-tool policies (:mod:`toolrelay.gateway.policy`:
``[tools."NAME"]`` with ``requires_approval``, ``idempotency_key``...). What clients read
besides the catalog is in the catalog's language, English or Chinese
(:mod:`toolrelay.gateway.texts`). Clients are told each tool's side effects as the gateway
runs it, and ``call_tool``'s as the most any of them may do
(:mod:`toolrelay.gateway.annotations`); what they may send is in
:mod:`toolrelay.gateway.parameters`. Needs the ``mcp`` extra.

Example::

    from toolrelay.gateway import serve

    serve("gateway.toml")                       # stdio
    serve("gateway.toml", "http", port=8765)    # streamable HTTP at http://127.0.0.1:8765/mcp
    serve("gateway.toml", approval=decide)      # decide(request) -> Approve() | Deny(reason)
"""

try:
    import mcp as _sdk  # noqa: F401 - only checks that the SDK is installed
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError(
        'toolrelay.gateway needs the MCP SDK: pip install "toolrelay[mcp]"', name=exc.name
    ) from exc

from toolrelay.gateway.config import (
    INDEX_KINDS,
    LANGUAGES,
    GatewayConfig,
    SearchSettings,
    load_gateway_config,
    parse_gateway_config,
)
from toolrelay.gateway.gateway import CALL_TOOL_NAME, FoundTool, GatewayCallResult, ToolGateway
from toolrelay.gateway.modules import ModuleLoader, load_attribute, load_module_tools
from toolrelay.gateway.policy import PolicyTool, ToolPolicy, apply_policies
from toolrelay.gateway.serve import (
    DEFAULT_INSTRUCTIONS,
    Transport,
    aserve,
    gateway_server,
    make_index,
    open_gateway,
    serve,
)
from toolrelay.gateway.side_effects import (
    PENDING_APPROVAL_TEXT,
    ApprovalSettings,
    Approver,
    AuditSettings,
    IdempotencySettings,
    gateway_interceptors,
)
from toolrelay.gateway.texts import GatewayTexts

__all__ = [
    "CALL_TOOL_NAME",
    "DEFAULT_INSTRUCTIONS",
    "INDEX_KINDS",
    "LANGUAGES",
    "PENDING_APPROVAL_TEXT",
    "ApprovalSettings",
    "Approver",
    "AuditSettings",
    "FoundTool",
    "GatewayCallResult",
    "GatewayConfig",
    "GatewayTexts",
    "IdempotencySettings",
    "ModuleLoader",
    "PolicyTool",
    "SearchSettings",
    "ToolGateway",
    "ToolPolicy",
    "Transport",
    "apply_policies",
    "aserve",
    "gateway_interceptors",
    "gateway_server",
    "load_attribute",
    "load_gateway_config",
    "load_module_tools",
    "make_index",
    "open_gateway",
    "parse_gateway_config",
    "serve",
]
