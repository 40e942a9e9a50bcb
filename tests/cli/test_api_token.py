"""``toolrelay api-token``: a token shown once, and the entry that lets it in."""

from __future__ import annotations

import hashlib
import json
import tomllib

import pytest

from tests.extras import needs_extra

pytest.importorskip("mcp_types", reason=needs_extra("mcp"))

from typer.testing import CliRunner

from toolrelay.cli import app
from toolrelay.mcp import Authenticator
from toolrelay.mcp._auth import token_verifier, verified_context


async def test_the_entry_lets_in_the_printed_token_and_no_other() -> None:
    done = CliRunner().invoke(
        app, ["api-token", "--user", "ops-bot", "--tenant", "acme", "--scope", "refunds:read"]
    )
    assert done.exit_code == 0, done.output
    first, entry = done.stdout.split("\n\nadd to the gateway file:\n")
    token = first.removeprefix("token (shown only now; give it to the caller): ")
    assert token.startswith("trl_")
    assert len(token) == 4 + 43  # 32 random bytes, URL-safe base64
    (table,) = tomllib.loads(entry)["auth"]["tokens"]
    assert token not in entry  # only its digest is kept
    verifier = token_verifier(Authenticator(tokens=[table]))
    caller = await verifier.verify_token(token)
    assert caller is not None
    assert verified_context(caller) == {
        "user_id": "ops-bot",
        "tenant_id": "acme",
        "scopes": ("refunds:read",),
    }
    assert await verifier.verify_token(token[:-1] + ("A" if token[-1] != "A" else "B")) is None


def test_json_output_and_a_new_token_each_time() -> None:
    runs = [CliRunner().invoke(app, ["api-token", "--user", "u", "--json"]) for _ in range(2)]
    made = [json.loads(run.stdout) for run in runs]
    digest = hashlib.sha256(made[0]["token"].encode()).hexdigest()
    assert made[0]["entry"] == {"sha256": digest, "user_id": "u", "scopes": []}
    assert made[0]["token"] != made[1]["token"]
    assert made[0]["entry"]["sha256"] != made[1]["entry"]["sha256"]
