"""Serving an MCP server over streamable HTTP, letting in only whom it should.

::

    await run_http(server)                                   # http://127.0.0.1:8000/mcp
    await run_http(server, host="0.0.0.0", port=8443, auth=Authenticator(...),
                   tls_cert="cert.pem", tls_key="key.pem", allowed_hosts=["tools.example.com"])

The rules (:func:`check_http`), before anything listens:

- on a loopback address (``127.0.0.1``, ``::1``, ``localhost``) without an authenticator, the
  caller is local and trusted, as over stdio: who it is comes from the requests' ``_meta``;
- anywhere else, an authenticator is required (no anonymous network server), bearer tokens
  never travel in clear (a certificate and key, or a declared TLS-terminating proxy in
  front), and the hosts clients reach the server by are named, so a request for another
  ``Host`` or from another ``Origin`` (DNS rebinding) is refused by the SDK's transport
  security.

With an authenticator, the SDK's bearer middleware answers a request without a valid token
401 with ``WWW-Authenticate`` before the server sees it, and each call's caller is the
token's (:func:`~toolrelay.mcp._auth.verified_context`). JWTs from an authorization server
at an http(s) URL make the server publish its Protected Resource Metadata (RFC 9728, under
``/.well-known/oauth-protected-resource``), which the ``WWW-Authenticate`` header points to.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlparse

import uvicorn
from mcp.server import Server
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware.authentication import AuthenticationMiddleware

from toolrelay.exceptions import ConfigurationError
from toolrelay.mcp._auth import Authenticator, describe, token_verifier

__all__ = ["check_http", "is_loopback", "run_http"]

_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
_GRACE_SECONDS = 5  # for open streams to close at shutdown


async def run_http(
    server: Server[Any],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    auth: Authenticator | None = None,
    tls_cert: str | None = None,
    tls_key: str | None = None,
    behind_proxy: bool = False,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    on_listening: Callable[[str, str], None] | None = None,
) -> None:
    """Serve ``server`` over streamable HTTP until the task is cancelled (see the module docs).

    Args:
        server: The MCP server (:func:`~toolrelay.mcp.tools_server`, or a gateway's).
        host: The address to listen on.
        port: The port (``0``: any free one; ``on_listening`` is told which).
        path: The MCP endpoint's path.
        auth: Who may call (:class:`~toolrelay.mcp.Authenticator`); required off loopback.
        tls_cert: A PEM certificate (chain) file to serve HTTPS with, with ``tls_key``.
        tls_key: Its private key's PEM file.
        behind_proxy: A TLS-terminating proxy is in front: plain HTTP is served to it.
        allowed_hosts: The ``Host`` values clients reach the server by
            (``"tools.example.com"``, ``"tools.example.com:8443"``, or ``"name:*"`` for any
            port); required off loopback. On loopback, the loopback names are allowed too.
        allowed_origins: The ``Origin`` values browsers may send; by default ``https://``
            and each allowed host (on loopback also ``http://``).
        on_listening: Told the endpoint's URL and who may call (for a start-up line) once
            the server accepts connections.

    Raises:
        ConfigurationError: A rule of :func:`check_http` is broken, or the certificate and
            key cannot be loaded.
    """
    check_http(
        host,
        auth=auth,
        tls=(tls_cert, tls_key),
        behind_proxy=behind_proxy,
        allowed_hosts=allowed_hosts,
    )
    app = _app(
        server,
        host=host,
        path=path,
        auth=auth,
        security=_security(host, allowed_hosts, allowed_origins),
    )
    http = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=_GRACE_SECONDS,
        ssl_certfile=tls_cert,
        ssl_keyfile=tls_key,
    )
    scheme = "https" if tls_cert else "http"
    server_ = _Server(
        http, path=path, scheme=scheme, callers=describe(auth), on_listening=on_listening
    )
    serving = asyncio.ensure_future(server_.serve())
    try:
        await asyncio.shield(serving)
    except asyncio.CancelledError:
        # Shut down as on Ctrl+C: connections closed, the app's lifespan ended.
        server_.should_exit = True
        await serving
        raise


def check_http(
    host: str,
    *,
    auth: Authenticator | None,
    tls: tuple[str | None, str | None],
    behind_proxy: bool,
    allowed_hosts: Sequence[str],
) -> None:
    """Refuse to serve where callers could not be trusted (see the module docs).

    Raises:
        ConfigurationError: Naming the fix: an authenticator, TLS or a proxy, the allowed
            hosts off loopback; both of the certificate and key, and ones that load.
    """
    cert, key = tls
    if (cert is None) != (key is None):
        raise ConfigurationError(
            "HTTPS needs both a certificate and its key: give tls_cert and tls_key "
            "(--tls-cert and --tls-key)"
        )
    if cert is not None and key is not None:
        try:
            ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(cert, key)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigurationError(
                f"cannot serve HTTPS with the certificate {cert} and key {key}: {exc}; give a "
                "PEM certificate and the PEM private key it was made for"
            ) from exc
    if is_loopback(host):
        return
    where = f"on {host}, anyone who reaches it"
    if auth is None:
        raise ConfigurationError(
            f"serving {where} could call the tools as anyone: add an authenticator (an [auth] "
            "table with JWT keys or API tokens; auth= in code), or serve on 127.0.0.1"
        )
    if cert is None and not behind_proxy:
        raise ConfigurationError(
            f"serving {where} could read the bearer tokens, sent in clear: give tls_cert and "
            "tls_key (--tls-cert, --tls-key), or declare behind_proxy (--behind-proxy) when a "
            "proxy in front terminates TLS"
        )
    if not allowed_hosts:
        raise ConfigurationError(
            f"serving on {host} needs the names clients reach it by, so a request for any "
            'other host (DNS rebinding) is refused: allowed_hosts = ["tools.example.com"] '
            "(--allowed-host)"
        )


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (only this machine reaches it)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _security(
    host: str, allowed_hosts: Sequence[str], allowed_origins: Sequence[str]
) -> TransportSecuritySettings:
    """The SDK's checks of ``Host`` and ``Origin`` against DNS rebinding."""
    hosts = list(allowed_hosts)
    schemes = ["https"]
    if is_loopback(host):
        hosts += [name for loopback in _LOOPBACK_HOSTS for name in (loopback, f"{loopback}:*")]
        schemes.append("http")
    origins = list(allowed_origins) or [f"{s}://{name}" for name in hosts for s in schemes]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def _app(
    server: Server[Any],
    *,
    host: str,
    path: str,
    auth: Authenticator | None,
    security: TransportSecuritySettings,
) -> Starlette:
    """The server's streamable HTTP app, behind the SDK's bearer middleware with ``auth``."""
    if auth is None:
        return server.streamable_http_app(
            streamable_http_path=path, host=host, transport_security=security
        )
    verifier = token_verifier(auth)
    metadata = _resource_metadata(auth)
    app = server.streamable_http_app(
        streamable_http_path=path,
        host=host,
        transport_security=security,
        auth=metadata,
        token_verifier=verifier,
    )
    if metadata is None:
        # The SDK installs its bearer middleware only with AuthSettings, which name an
        # authorization server; API tokens (or JWTs of an issuer that is no URL) have none.
        app.add_middleware(AuthContextMiddleware)
        app.add_middleware(AuthenticationMiddleware, backend=BearerAuthBackend(verifier))
    return app


def _resource_metadata(auth: Authenticator) -> AuthSettings | None:
    """What the server publishes as a protected resource (RFC 9728), when it can say."""
    if auth.tokens or not (_is_web_url(auth.issuer) and _is_web_url(auth.audience)):
        return None
    return AuthSettings(
        issuer_url=auth.issuer,
        resource_server_url=auth.audience,
        # The verifier checks the audience itself (PyJWT), as the token's aud.
        validate_token_resource=False,
    )


def _is_web_url(text: str | None) -> bool:
    return text is not None and urlparse(text).scheme in ("http", "https")


class _Server(uvicorn.Server):
    """uvicorn's server, telling ``on_listening`` its URL once its sockets listen."""

    def __init__(
        self,
        config: uvicorn.Config,
        *,
        path: str,
        scheme: str,
        callers: str,
        on_listening: Callable[[str, str], None] | None,
    ) -> None:
        super().__init__(config)
        self.path = path
        self.scheme = scheme
        self.callers = callers
        self.on_listening = on_listening

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and self.on_listening is not None:
            self.on_listening(self._endpoint(), self.callers)

    def _endpoint(self) -> str:
        """The URL clients reach the server at, with the port it bound (``port`` may be 0)."""
        port = self.config.port
        for listening in getattr(self, "servers", ()):
            for sock in getattr(listening, "sockets", ()):
                port = int(sock.getsockname()[1])
                break
        host = self.config.host
        shown = f"[{host}]" if ":" in host else host
        return f"{self.scheme}://{shown}:{port}{self.path}"
