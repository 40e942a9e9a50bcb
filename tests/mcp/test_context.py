from __future__ import annotations

import threading

from toolrelay.mcp._context import context_from_meta, context_meta
from toolrelay.tools import ToolContext


def test_context_entries_travel_as_meta() -> None:
    context = ToolContext(tenant_id="t1", user_id="u7", roles=["agent"])
    assert context_meta(context) == {"tenant_id": "t1", "user_id": "u7", "roles": ["agent"]}


def test_values_json_cannot_carry_stay_behind() -> None:
    context = ToolContext(tenant_id="t1", lock=threading.Lock(), **{"a/b": 1})
    assert context_meta(context) == {"tenant_id": "t1"}


def test_no_context_sends_no_meta() -> None:
    assert context_meta(None) is None
    assert context_meta(ToolContext()) is None


def test_reserved_keys_are_never_context() -> None:
    meta = {
        "tenant_id": "t1",
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "progressToken": 3,
    }
    assert context_from_meta(meta) == {"tenant_id": "t1"}


def test_fixed_entries_override_the_request() -> None:
    context = context_from_meta({"tenant_id": "forged", "user_id": "u1"}, fixed={"tenant_id": "t1"})
    assert context.tenant_id == "t1"
    assert context.user_id == "u1"


def test_a_verified_caller_replaces_every_identity_meta_claims() -> None:
    meta = {"tenant_id": "victim", "user_id": "ceo", "session_id": "s", "scopes": ["admin"]}
    meta |= {"org": "victim", "locale": "fr"}
    verified = {"user_id": "u-7", "scopes": ("read",), "org": "acme"}
    context = context_from_meta(meta, verified=verified, fixed={"region": "eu"})
    # No tenant in the token: _meta's is dropped all the same, and so is its session.
    assert dict(context) == {"locale": "fr", "user_id": "u-7", "scopes": ("read",), "org": "acme",
                             "region": "eu"}  # fmt: skip
    trusted = context_from_meta(meta)  # no verified caller (stdio, loopback): _meta says
    assert (trusted.tenant_id, trusted.user_id) == ("victim", "ceo")
