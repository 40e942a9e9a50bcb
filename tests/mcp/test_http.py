"""``run_http``: where it refuses to serve, TLS, and the host checks against DNS rebinding."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from tests.extras import needs_extra

pytest.importorskip("mcp_types", reason=needs_extra("mcp"))

from tests.mcp.auth_helpers import (
    bearer,
    connected,
    opening,
    self_signed,
    serving,
    text_of,
)
from toolrelay.exceptions import ConfigurationError
from toolrelay.mcp import Authenticator, run_http, tools_server
from toolrelay.mcp._auth import ApiToken
from toolrelay.mcp._http import is_loopback
from toolrelay.tools import tool

AUTH = Authenticator(tokens=[{"sha256": ApiToken.digest("trl_ops"), "user_id": "ops"}])


@tool(read_only=True)
def ping() -> str:
    """Answers pong."""
    return "pong"


def server() -> object:
    return tools_server([ping])


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        (
            {},
            "serving on 0.0.0.0, anyone who reaches it could call the tools as anyone: add an "
            "authenticator (an [auth] table with JWT keys or API tokens; auth= in code), or "
            "serve on 127.0.0.1",
        ),
        (
            {"auth": AUTH, "allowed_hosts": ["tools.example.com"]},
            "serving on 0.0.0.0, anyone who reaches it could read the bearer tokens, sent in "
            "clear: give tls_cert and tls_key (--tls-cert, --tls-key), or declare behind_proxy "
            "(--behind-proxy) when a proxy in front terminates TLS",
        ),
        (
            {"auth": AUTH, "behind_proxy": True},
            "serving on 0.0.0.0 needs the names clients reach it by, so a request for any other "
            'host (DNS rebinding) is refused: allowed_hosts = ["tools.example.com"] '
            "(--allowed-host)",
        ),
    ],
)
async def test_off_loopback_it_refuses_to_start_without_each_safeguard(
    options: dict[str, object], reason: str
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        await run_http(server(), host="0.0.0.0", port=0, **options)  # type: ignore[arg-type]
    assert str(caught.value) == reason


async def test_a_certificate_needs_its_key_and_both_must_load(tmp_path: Path) -> None:
    cert, key, _ = self_signed(tmp_path)
    with pytest.raises(ConfigurationError, match="give tls_cert and tls_key"):
        await run_http(server(), port=0, tls_cert=str(cert))
    (tmp_path / "other").mkdir()
    other, _, _ = self_signed(tmp_path / "other", name="other")
    with pytest.raises(ConfigurationError) as caught:
        await run_http(server(), port=0, tls_cert=str(other), tls_key=str(key))
    assert str(caught.value).startswith(f"cannot serve HTTPS with the certificate {other} and")
    assert str(caught.value).endswith(
        "give a PEM certificate and the PEM private key it was made for"
    )


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("[::1]", True),
     ("localhost", True), ("0.0.0.0", False), ("::", False), ("10.0.0.5", False),
     ("tools.example.com", False)],
)  # fmt: skip
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


async def test_on_loopback_a_foreign_host_or_origin_is_refused() -> None:
    async with serving(server()) as url:
        local = await opening(url)
        rebound = await opening(url, {"Host": "evil.example"})
        foreign = await opening(url, {"Origin": "https://evil.example"})
    assert (local.status_code, rebound.status_code, foreign.status_code) == (200, 421, 403)


async def test_https_with_a_certificate(tmp_path: Path) -> None:
    cert, key, _ = self_signed(tmp_path)
    trusted = ssl.create_default_context(cafile=str(cert))
    async with serving(server(), tls_cert=str(cert), tls_key=str(key), auth=AUTH) as url:
        assert url.startswith("https://127.0.0.1:")
        async with connected(url, "trl_ops", verify=trusted) as client:
            answer = await client.call_tool("ping", {})
    assert text_of(answer) == "pong"


async def test_off_loopback_behind_a_proxy_only_the_named_host_is_served() -> None:
    options = {"auth": AUTH, "behind_proxy": True, "allowed_hosts": ["tools.example.com"]}
    async with serving(server(), host="0.0.0.0", **options) as url:
        local = url.replace("0.0.0.0", "127.0.0.1")
        named = await opening(local, {"Host": "tools.example.com", **bearer("trl_ops")})
        by_address = await opening(local, bearer("trl_ops"))
        anonymous = await opening(local, {"Host": "tools.example.com"})
    assert (named.status_code, by_address.status_code, anonymous.status_code) == (200, 421, 401)
