"""Bearer tokens at a ``tools_server`` over HTTP: verified JWTs and API tokens, the caller
taken from them and never from ``_meta``, everything else answered 401 with nothing run."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.extras import needs_extra

pytest.importorskip("mcp_types", reason=needs_extra("mcp"))

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from mcp.server.auth.provider import AccessToken

from tests.mcp.auth_helpers import (
    AUDIENCE,
    ISSUER,
    Audit,
    Issuer,
    bearer,
    connected,
    opening,
    post,
    self_signed,
    serving,
    text_of,
    tool_call,
)
from toolrelay._settings import read_table
from toolrelay.exceptions import ConfigurationError
from toolrelay.mcp import Authenticator, tools_server
from toolrelay.mcp._auth import ApiToken, verified_context
from toolrelay.tools import ToolContext, tool

IDENTITY = {"tenant_id": "org"}  # the tenant is the token's org claim


class Desk:
    """Served tools that say who called them and count what ran."""

    def __init__(self) -> None:
        self.paid: list[tuple[str, Any]] = []
        self.audit = Audit()

    def server(self, **options: Any) -> Any:
        @tool(read_only=True)
        def whoami(context: ToolContext) -> dict[str, Any]:
            """The caller's tool context."""
            return dict(context)

        @tool(idempotency_key="refund_id")
        def pay(refund_id: str, context: ToolContext) -> str:
            """Pay a refund once."""
            self.paid.append((refund_id, context.tenant_id))
            return f"paid {refund_id}"

        return tools_server([whoami, pay], audit=self.audit, **options)


@pytest.fixture
def issuer(tmp_path: Path) -> Issuer:
    return Issuer(tmp_path)


async def test_the_caller_is_the_verified_tokens_and_meta_cannot_forge_it(issuer: Issuer) -> None:
    desk = Desk()
    token = issuer.token(sub="u-7", org="acme", scope="refunds:read refunds:write")
    forged = {
        "tenant_id": "victim-corp",
        "user_id": "ceo",
        "session_id": "s-ceo",
        "scopes": ["admin"],
        "locale": "fr",  # not an identity: it still reaches the tools
    }
    async with (
        serving(desk.server(), auth=issuer.authenticator(claims=IDENTITY)) as url,
        connected(url, token) as client,
    ):
        seen = await client.call_tool("whoami", {}, meta=forged)
        paid = await client.call_tool("pay", {"refund_id": "R-1"}, meta=forged)
    assert json.loads(text_of(seen)) == {
        "user_id": "u-7",
        "tenant_id": "acme",
        "scopes": ["refunds:read", "refunds:write"],
        "locale": "fr",
    }
    assert (paid.is_error, desk.paid) == (False, [("R-1", "acme")])
    # The audit trail names the verified caller.
    assert [(r.tool, r.tenant_id, r.user_id) for r in desk.audit.records] == [
        ("whoami", "acme", "u-7"),
        ("pay", "acme", "u-7"),
    ]


def _bad_tokens(issuer: Issuer, tmp_path: Path) -> dict[str, dict[str, str]]:
    stranger = Issuer(tmp_path / "stranger")  # the same kid, another key
    payload = {"iss": ISSUER, "aud": AUDIENCE, "sub": "u-1", "org": "acme", "exp": 2**31}
    return {
        "no token": {},
        "another scheme": {"Authorization": "Basic dTpw"},
        "malformed": bearer("not-a-jwt"),
        "expired": bearer(issuer.token(org="acme", lifetime=-120)),
        "wrongly signed": bearer(stranger.token(org="acme")),
        "another audience": bearer(issuer.token(org="acme", aud="https://elsewhere.example/mcp")),
        "another issuer": bearer(issuer.token(org="acme", iss="https://evil.example")),
        "no expiry": bearer(issuer.token(org="acme", exp=None)),
        "no tenant claim": bearer(issuer.token()),
        "alg none": bearer(jwt.encode(payload, None, algorithm="none", headers={"kid": "k1"})),
        "HS256": bearer(
            jwt.encode(payload, "a shared secret of 32 bytes or more", algorithm="HS256")
        ),
    }


async def test_a_request_without_a_valid_token_is_401_and_nothing_runs(
    issuer: Issuer, tmp_path: Path
) -> None:
    (tmp_path / "stranger").mkdir()
    desk = Desk()
    bad = _bad_tokens(issuer, tmp_path)
    good = bearer(issuer.token(org="acme"))
    async with serving(desk.server(), auth=issuer.authenticator(claims=IDENTITY)) as url:
        opened = await opening(url, good)
        assert opened.status_code == 200
        session = {"mcp-session-id": opened.headers["mcp-session-id"]}
        paying = tool_call("pay", {"refund_id": "R-9"})
        for case, headers in bad.items():
            # Into a live session too: the token is checked on every request.
            for request in (opening(url, headers), post(url, paying, {**session, **headers})):
                answer = await request
                assert answer.status_code == 401, case
                assert answer.headers["www-authenticate"].startswith(
                    'Bearer error="invalid_token", '
                ), case
                assert (
                    'resource_metadata="https://tools.example.com/.well-known/'
                    in (answer.headers["www-authenticate"])
                )
        assert (desk.paid, desk.audit.records) == ([], [])
        # The same request with the good token runs: only the token was wrong.
        ran = await post(url, paying, {**session, **good})
    assert ran.status_code == 200
    assert desk.paid == [("R-9", "acme")]


async def test_clock_skew_is_allowed_up_to_the_leeway(issuer: Issuer) -> None:
    auth = issuer.authenticator(leeway=30)
    async with serving(Desk().server(), auth=auth) as url:
        late = await opening(url, bearer(issuer.token(lifetime=-10)))
        early = await opening(url, bearer(issuer.token(nbf=int(time.time()) + 10)))
        too_late = await opening(url, bearer(issuer.token(lifetime=-45)))
    assert (late.status_code, early.status_code, too_late.status_code) == (200, 200, 401)


async def test_keys_rotate_without_a_restart(issuer: Issuer) -> None:
    async with serving(Desk().server(), auth=issuer.authenticator()) as url:
        assert (await opening(url, bearer(issuer.token("k1")))).status_code == 200
        # k2 not published yet
        assert (await opening(url, bearer(issuer.token("k2")))).status_code == 401
        issuer.publish("k1", "k2")  # published: trusted from the next request
        assert (await opening(url, bearer(issuer.token("k2")))).status_code == 200
        issuer.publish("k2")  # k1 retired
        assert (await opening(url, bearer(issuer.token("k1")))).status_code == 401
        assert (await opening(url, bearer(issuer.token("k2")))).status_code == 200


async def test_a_token_naming_an_unknown_key_reads_the_jwks_again_at_once(
    issuer: Issuer,
) -> None:
    before = os.stat(issuer.jwks)
    async with serving(Desk().server(), auth=issuer.authenticator()) as url:
        assert (await opening(url, bearer(issuer.token("k1")))).status_code == 200
        # A new key set the file's size and times do not tell apart: only the unknown kid
        # makes the server read it again.
        issuer.keys["k2"] = issuer.keys.pop("k1")
        issuer.publish("k2")
        os.utime(issuer.jwks, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = os.stat(issuer.jwks)
        assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
            before.st_size,
            before.st_mtime_ns,
            before.st_ino,
        )
        assert (await opening(url, bearer(issuer.token("k2")))).status_code == 200


async def test_a_pem_key_or_certificate_checks_the_tokens(tmp_path: Path) -> None:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = tmp_path / "public.pem"
    pem.write_bytes(
        private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    certificate, _, signer = self_signed(tmp_path)
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "u-1", "exp": 2**31}
    rs256 = jwt.encode(claims, private, algorithm="RS256")
    es256 = jwt.encode(claims, signer, algorithm="ES256")
    by_key = Authenticator(issuer=ISSUER, audience=AUDIENCE, key=str(pem), algorithms=["RS256"])
    by_certificate = Authenticator(issuer=ISSUER, audience=AUDIENCE, key=str(certificate))
    async with serving(Desk().server(), auth=by_key) as url:
        assert (await opening(url, bearer(rs256))).status_code == 200
        assert (await opening(url, bearer(es256))).status_code == 401
    async with serving(Desk().server(), auth=by_certificate) as url:
        assert (await opening(url, bearer(es256))).status_code == 200
        assert (await opening(url, bearer(rs256))).status_code == 401  # RS256 not accepted


async def test_the_server_publishes_its_protected_resource_metadata(issuer: Issuer) -> None:
    import httpx2

    async with serving(Desk().server(), auth=issuer.authenticator()) as url:
        refused = await opening(url)
        root = url.removesuffix("/mcp")
        async with httpx2.AsyncClient() as http:
            metadata = await http.get(f"{root}/.well-known/oauth-protected-resource/mcp")
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].endswith(
        'resource_metadata="https://tools.example.com/.well-known/oauth-protected-resource/mcp"'
    )
    published = metadata.json()
    assert (published["resource"], published["authorization_servers"]) == (AUDIENCE, [ISSUER])


async def test_api_tokens_name_their_caller_and_no_other_token_gets_in() -> None:
    desk = Desk()
    auth = Authenticator(
        tokens=[
            {"sha256": ApiToken.digest("trl_acme"), "user_id": "bot", "tenant_id": "acme"},
            {"sha256": ApiToken.digest("trl_beta"), "user_id": "bot", "scopes": ["a", "b"]},
        ]
    )
    async with serving(desk.server(), auth=auth) as url:
        async with connected(url, "trl_acme") as client:
            acme = await client.call_tool("whoami", {}, meta={"tenant_id": "beta"})
        async with connected(url, "trl_beta") as client:
            beta = await client.call_tool("whoami", {})
        unknown = await opening(url, bearer("trl_guess"))
    assert json.loads(text_of(acme)) == {"user_id": "bot", "tenant_id": "acme", "scopes": []}
    assert json.loads(text_of(beta)) == {"user_id": "bot", "scopes": ["a", "b"]}
    assert unknown.status_code == 401
    assert "resource_metadata" not in unknown.headers["www-authenticate"]  # no issuer to name


async def test_a_server_for_one_tenant_refuses_another_tenants_caller(issuer: Issuer) -> None:
    desk = Desk()
    server = desk.server(context={"tenant_id": "acme"})
    async with serving(server, auth=issuer.authenticator(claims=IDENTITY)) as url:
        async with connected(url, issuer.token(org="beta")) as client:
            refused = await client.call_tool("pay", {"refund_id": "R-1"})
        async with connected(url, issuer.token(org="acme")) as client:
            paid = await client.call_tool("pay", {"refund_id": "R-1"})
    assert refused.is_error
    assert text_of(refused) == (
        "This server serves tenant_id 'acme' only; the caller's token is for 'beta'. Nothing ran."
    )
    assert (paid.is_error, desk.paid) == (False, [("R-1", "acme")])


def test_another_verifiers_token_names_its_subject_and_scopes() -> None:
    token = AccessToken(token="t", client_id="app", scopes=["read"], subject="u-3")
    assert verified_context(token) == {"user_id": "u-3", "scopes": ("read",)}
    anonymous = AccessToken(token="t", client_id="app", scopes=[])
    assert verified_context(anonymous) == {"user_id": "app", "scopes": ()}


@pytest.mark.parametrize(
    ("table", "reason"),
    [
        ({}, "[auth]: needs the JWTs' key (key = PEM file, or jwks = JWKS file, one of them) or "
         "API tokens ([[auth.tokens]] entries)"),
        ({"issuer": ISSUER, "audience": AUDIENCE, "jwks": "jwks.json", "algorithms": ["HS256"]},
         "[auth] algorithms: 'HS256' is not accepted: tokens must be signed with a private "
         "key (one of ES256, ES384, ES512, EdDSA, PS256, PS384, PS512, RS256, RS384, RS512) "
         '(got ["HS256"])'),
        ({"issuer": ISSUER, "jwks": "jwks.json"},
         "[auth]: JWTs are checked against an issuer and an audience: add ['audience']"),
        ({"issuer": ISSUER, "audience": AUDIENCE, "key": "missing.pem"},
         "[auth] key: cannot read {folder}/missing.pem: No such file or directory "
         '(got "missing.pem")'),
        ({"tokens": [{"sha256": "0" * 64, "user_id": "u"}], "issuer": ISSUER},
         "[auth]: issuer apply to JWTs; API tokens ([[auth.tokens]]) take none of them"),
        ({"tokens": [{"sha256": "secret", "user_id": "u"}]},
         "[[auth.tokens]] #1 sha256: must be the token's SHA-256 digest, 64 lowercase hex "
         "digits (toolrelay api-token prints a new token's entry); never the token itself "
         '(got "secret")'),
    ],
)  # fmt: skip
def test_a_bad_auth_table_names_the_key_and_the_fix(
    tmp_path: Path, issuer: Issuer, table: dict[str, Any], reason: str
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        read_table(Authenticator, table, table=("auth",), folder=tmp_path)
    assert str(caught.value) == reason.format(folder=tmp_path)


def test_paths_are_relative_to_the_file(tmp_path: Path, issuer: Issuer) -> None:
    table = {"issuer": ISSUER, "audience": AUDIENCE, "jwks": "jwks.json"}
    auth = read_table(Authenticator, table, table=("auth",), folder=tmp_path)
    assert auth.jwks == str(tmp_path / "jwks.json")
