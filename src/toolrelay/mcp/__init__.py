"""MCP: servers as sources of toolrelay tools, and toolrelay tools served over MCP.

Needs the ``mcp`` extra (``pip install -e '.[mcp]'``, the official MCP SDK).

- :class:`McpToolset`: the tools of MCP servers (stdio or streamable HTTP) as toolrelay tools,
  with names prefixed by server and kept provider-safe (:func:`mcp_tool_name`), arguments
  validated against the server's schema, the tool context sent as ``_meta``, and a live
  :attr:`~McpToolset.catalog` that follows the servers' list-changed notifications.
- :class:`McpServerConfig`: how to reach one server.
- :func:`tools_server`: an MCP server offering toolrelay tools (:func:`run_stdio` runs one
  for a local client, :func:`run_http` over streamable HTTP).
- :class:`Authenticator`: who may call a server over HTTP (JWTs checked against a key or a
  JWKS, or API tokens); the caller's identity is then the verified token's, never ``_meta``'s.

Example::

    from toolrelay.mcp import McpServerConfig, McpToolset

    async with McpToolset(McpServerConfig(name="files", command="mcp-files")) as toolset:
        answer = await client.prompt(task).tools(*toolset.tools).acall()
"""

from typing import TYPE_CHECKING, Any

from toolrelay.mcp._config import McpServerConfig

if TYPE_CHECKING:
    from toolrelay.mcp._auth import Authenticator
    from toolrelay.mcp._http import run_http
    from toolrelay.mcp._live_catalog import LiveToolCatalog
    from toolrelay.mcp._server import run_stdio, tools_server
    from toolrelay.mcp._tool import McpTool
    from toolrelay.mcp._toolset import McpToolset

__all__ = [
    "Authenticator",
    "LiveToolCatalog",
    "McpServerConfig",
    "McpTool",
    "McpToolset",
    "run_http",
    "run_stdio",
    "tools_server",
]

# These need the MCP SDK; they load on first access, so a missing SDK only matters to the
# code that uses them, and then as a ConfigurationError saying what to install.
_NEEDS_SDK = {
    "Authenticator": "toolrelay.mcp._auth",
    "LiveToolCatalog": "toolrelay.mcp._live_catalog",
    "McpTool": "toolrelay.mcp._tool",
    "McpToolset": "toolrelay.mcp._toolset",
    "run_http": "toolrelay.mcp._http",
    "run_stdio": "toolrelay.mcp._server",
    "tools_server": "toolrelay.mcp._server",
}
_SDK_PACKAGES = (
    "mcp",
    "mcp_types",
    "jsonschema",
    "referencing",
    "httpx2",
    "anyio",
    "jwt",
    "cryptography",
    "starlette",
    "uvicorn",
)


def __getattr__(name: str) -> Any:
    module = _NEEDS_SDK.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    try:
        value = getattr(import_module(module), name)
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in _SDK_PACKAGES:
            raise
        from toolrelay.exceptions import ConfigurationError

        raise ConfigurationError(
            f"{name} needs the MCP SDK ({exc.name} is missing); pip install -e '.[mcp]'"
        ) from exc
    globals()[name] = value
    return value
