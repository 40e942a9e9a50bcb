"""Helpers of the tests of authenticated MCP servers: an issuer of real JWTs, a server over
HTTP in the test's event loop, and clients with or without a bearer token.

Needs the mcp extra (PyJWT, cryptography, the SDK); import it after the module's skip.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import jwt
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server
from mcp_types import CallToolResult, TextContent

from toolrelay.execution import AuditRecord
from toolrelay.mcp import Authenticator, run_http

ISSUER = "https://auth.example.com"
AUDIENCE = "https://tools.example.com/mcp"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class Issuer:
    """An authorization server: ES256 keys by ``kid``, published as a JWKS file."""

    def __init__(self, folder: Path, *kids: str) -> None:
        self.jwks = folder / "jwks.json"
        self.keys: dict[str, ec.EllipticCurvePrivateKey] = {}
        self.publish(*(kids or ("k1",)))

    def publish(self, *kids: str) -> None:
        """Write the JWKS with these keys (made on first use), as a key rotation does."""
        keys = []
        for kid in kids:
            key = self.keys.setdefault(kid, ec.generate_private_key(ec.SECP256R1()))
            jwk = ECAlgorithm.to_jwk(key.public_key(), as_dict=True)
            keys.append({**jwk, "kid": kid, "use": "sig", "alg": "ES256"})
        self.jwks.write_text(json.dumps({"keys": keys}), encoding="utf-8")

    def token(self, kid: str = "k1", *, lifetime: float = 300, **claims: Any) -> str:
        """A JWT signed with the key ``kid`` (made on first use, published or not): this
        issuer's, for :data:`AUDIENCE`, valid for ``lifetime`` seconds (negative: expired
        that long ago); ``claims`` add or replace (``None`` leaves a claim out)."""
        now = int(time.time())
        payload = {
            "iss": ISSUER,
            "aud": AUDIENCE,
            "sub": "u-1",
            "iat": now - 5,
            "exp": int(now + lifetime),
            **claims,
        }
        payload = {name: value for name, value in payload.items() if value is not None}
        key = self.keys.setdefault(kid, ec.generate_private_key(ec.SECP256R1()))
        return jwt.encode(payload, key, algorithm="ES256", headers={"kid": kid})

    def authenticator(self, **settings: Any) -> Authenticator:
        """An authenticator trusting this issuer's JWKS file."""
        return Authenticator(issuer=ISSUER, audience=AUDIENCE, jwks=str(self.jwks), **settings)


@contextlib.asynccontextmanager
async def serving(server: Server[Any], **options: Any) -> AsyncIterator[str]:
    """``run_http(server, **options)`` on a free port in this event loop; yields its URL."""
    listening: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(
        run_http(
            server,
            port=0,
            on_listening=lambda url, callers: listening.set_result(url),
            **options,
        )
    )
    try:
        async with asyncio.timeout(30):
            done, _ = await asyncio.wait({task, listening}, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            task.result()  # raises why it stopped
        yield listening.result()
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@contextlib.asynccontextmanager
async def connected(url: str, token: str | None = None, **settings: Any) -> AsyncIterator[Client]:
    """The SDK's client at ``url``, sending ``token`` as its bearer token."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30, **settings) as http,
        Client(streamable_http_client(url, http_client=http), read_timeout_seconds=30) as client,
    ):
        yield client


async def opening(url: str, headers: dict[str, str] | None = None) -> httpx2.Response:
    """The answer to an ``initialize`` request sent with ``headers``."""
    async with httpx2.AsyncClient(timeout=30) as http:
        return await http.post(url, json=INITIALIZE, headers={**HEADERS, **(headers or {})})


def bearer(token: str) -> dict[str, str]:
    """The ``Authorization`` header of ``token``."""
    return {"Authorization": f"Bearer {token}"}


def text_of(result: CallToolResult) -> str:
    """The text of a call's one content block."""
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


class Audit:
    """An audit sink keeping its records."""

    def __init__(self) -> None:
        self.records: list[AuditRecord] = []

    async def write(self, record: AuditRecord) -> None:
        self.records.append(record)


def tool_call(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ``tools/call`` JSON-RPC request."""
    params = {"name": name, "arguments": arguments or {}}
    return {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}


async def post(url: str, message: dict[str, Any], headers: dict[str, str]) -> httpx2.Response:
    """``message`` posted to ``url`` with ``headers`` (a session's, a bearer token)."""
    async with httpx2.AsyncClient(timeout=30) as http:
        return await http.post(
            url, json=message, headers={**HEADERS, "mcp-protocol-version": "2025-06-18", **headers}
        )


def self_signed(folder: Path, name: str = "localhost") -> tuple[Path, Path, Any]:
    """A self-signed certificate for ``name`` (and 127.0.0.1): its file, its key's file, its
    private key."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    names = [x509.DNSName(name), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file, key
