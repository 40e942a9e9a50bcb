"""``toolrelay serve``: run the MCP tool-search gateway described by a TOML file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from toolrelay.cli.catalog_modules import load_module_tools


def serve_command(
    config: Annotated[Path, typer.Argument(help="The gateway's TOML file.", show_default=False)],
    transport: Annotated[
        str, typer.Option("--transport", "-t", help="stdio or http (streamable HTTP).")
    ] = "stdio",
    host: Annotated[str, typer.Option(help="Address of the HTTP server.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port of the HTTP server.")] = 8000,
    path: Annotated[str, typer.Option(help="Path of the MCP endpoint.")] = "/mcp",
) -> None:
    """Serve tool_search and call_tool over the upstream servers and modules in CONFIG.

    Any MCP client then discovers tools progressively: it searches the index over every
    upstream tool and calls the ones it found, through the gateway's permission hooks.
    Needs the mcp extra.
    """
    if transport not in ("stdio", "http"):
        raise typer.BadParameter(f"unknown transport {transport!r}; use stdio or http")
    chosen: Literal["stdio", "http"] = "stdio" if transport == "stdio" else "http"
    try:
        from toolrelay.gateway import serve
    except ImportError as exc:  # the SDK is an optional extra
        raise typer.BadParameter(
            f"the gateway needs the mcp extra: pip install 'toolrelay[mcp]' ({exc})"
        ) from exc
    serve(
        config,
        chosen,
        host=host,
        port=port,
        path=path,
        module_loader=lambda spec: [tool for tool, _ in load_module_tools(spec)],
    )
