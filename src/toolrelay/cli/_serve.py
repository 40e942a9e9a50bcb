"""``toolrelay serve``: run the MCP tool-search gateway described by a TOML file."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from toolrelay.cli._catalog_modules import load_module_tools
from toolrelay.cli._indexes import IndexWrapper, index_catalog, make_index, parse_index_type
from toolrelay.cli._output import missing_extra
from toolrelay.tools._base import ToolDefinition

__all__ = ["Transport", "serve_command"]


class Transport(StrEnum):
    """How the gateway talks to its client, as named by ``--transport``."""

    STDIO = "stdio"
    HTTP = "http"


def serve_command(
    config: Annotated[
        Path, typer.Argument(metavar="CONFIG", help="The gateway's TOML file.", show_default=False)
    ],
    transport: Annotated[
        Transport,
        typer.Option(
            "--transport",
            "-t",
            case_sensitive=False,
            help="stdio, or http (streamable HTTP at http://HOST:PORT/PATH).",
        ),
    ] = Transport.STDIO,
    host: Annotated[str, typer.Option(help="Address of the HTTP server.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port of the HTTP server (0: any free one).")] = 8000,
    path: Annotated[str, typer.Option(help="Path of the MCP endpoint.")] = "/mcp",
    tls_cert: Annotated[
        Path | None,
        typer.Option(help="PEM certificate to serve HTTPS with (the file's [http] tls_cert)."),
    ] = None,
    tls_key: Annotated[
        Path | None, typer.Option(help="Its private key's PEM file ([http] tls_key).")
    ] = None,
    behind_proxy: Annotated[
        bool | None,
        typer.Option(
            "--behind-proxy/--no-behind-proxy",
            help="A proxy in front terminates TLS ([http] behind_proxy).",
            show_default=False,
        ),
    ] = None,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            help="A Host name clients reach the server by; repeat for more ([http] allowed_hosts)."
        ),
    ] = None,
    allowed_origin: Annotated[
        list[str] | None,
        typer.Option(help="An Origin browsers may send; repeat for more ([http] allowed_origins)."),
    ] = None,
) -> None:
    """Serve tool_search and call_tool over the upstream servers and modules in CONFIG.

    Any MCP client then discovers tools progressively: it searches the index over every
    upstream tool and calls the ones it found, through the gateway's permission hooks.
    Over HTTP the URL it listens on, and who may call, are printed on stderr: on a loopback
    address without an [auth] table, callers are trusted to say who they are (_meta); on any
    other address the gateway needs [auth], TLS (or --behind-proxy) and --allowed-host.
    The options given replace the file's [http] settings. Needs the mcp extra.
    """
    try:
        from toolrelay.gateway import load_gateway_config, serve
        from toolrelay.gateway._config import HttpSettings
    except ImportError as exc:  # the SDK is an optional extra
        raise missing_extra("toolrelay serve", "mcp") from exc
    settings = load_gateway_config(config)
    given = {
        "tls_cert": None if tls_cert is None else str(tls_cert),
        "tls_key": None if tls_key is None else str(tls_key),
        "behind_proxy": behind_proxy,
        "allowed_hosts": None if allowed_host is None else tuple(allowed_host),
        "allowed_origins": None if allowed_origin is None else tuple(allowed_origin),
    }
    flags = {name: value for name, value in given.items() if value is not None}
    if flags:
        http = HttpSettings(**{**settings.http.model_dump(), **flags})
        settings = settings.model_copy(update={"http": http})
    kind = parse_index_type(settings.search.index)
    index = _ShownIndex(make_index(kind, named_as=f"index = {kind.value!r} in {config}"))
    serve(
        settings,
        transport.value,
        host=host,
        port=port,
        path=path,
        index=index,
        module_loader=lambda spec: [tool for tool, _ in load_module_tools(spec)],
        on_listening=_announce,
    )


def _announce(url: str, callers: str) -> None:
    typer.echo(
        f"toolrelay serve: the MCP gateway listens at {url} ({callers}); Ctrl+C stops it",
        err=True,
    )


class _ShownIndex(IndexWrapper):
    """The gateway's index, built under the command line's progress bars."""

    def index(self, definitions: Sequence[ToolDefinition]) -> bool:
        if self.inner.fingerprint is not None:
            return self.inner.index(definitions)  # upstream tools changed while serving
        index_catalog(self.inner, definitions)  # before the first client: with progress
        return True
