"""The gateway learns from use: a caller's search, then its successful call, is recorded."""

from __future__ import annotations

import pytest
from mcp import Client

from tests.gateway.test_gateway import catalog
from toolrelay.exceptions import ConfigurationError
from toolrelay.gateway import ToolGateway
from toolrelay.search import BM25ToolIndex, InMemoryUsageLog, UsageEntry
from toolrelay.tools import ToolContext
from toolrelay.toolsearch import SearchOptions

from ._helpers import served

ACME = ToolContext(tenant_id="acme", user_id="u1", session_id="s1")
WORDS = "kettle arrived broken"  # in no description


def gateway(log: InMemoryUsageLog, *, shared_usage: bool = False) -> ToolGateway:
    options = SearchOptions(usage_log=log, shared_usage=shared_usage)
    return ToolGateway(catalog(), index=BM25ToolIndex(), options=options)


async def test_a_searched_tool_called_successfully_is_recorded_once() -> None:
    log = InMemoryUsageLog()
    gw = gateway(log)
    found = await gw.search("refund card payment", max_results=1, context=ACME)
    assert [f.name for f in found] == ["billing.refund_payment"]
    for _ in range(2):
        result = await gw.call("billing.refund_payment", {"payment_id": "p1"}, context=ACME)
        assert not result.is_error
    entries = await log.entries()
    assert [(e.scope, e.query, e.tool, e.count) for e in entries] == [
        ("tenant:acme", "refund card payment", "billing.refund_payment", 1)
    ]


async def test_failing_unsearched_and_other_callers_calls_are_not_recorded() -> None:
    log = InMemoryUsageLog()
    gw = gateway(log)
    await gw.search("send email", max_results=1, context=ACME)
    failed = await gw.call("mail.send_email", {"to": "a", "body": "b"}, context=ACME)
    assert failed.is_error
    await gw.call("billing.get_invoice", {"number": "7"}, context=ACME)  # never searched
    other = ToolContext(tenant_id="acme", user_id="u2", session_id="s9")
    await gw.search("refund card payment", max_results=1, context=other)
    await gw.call(
        "billing.refund_payment", {"payment_id": "p1"}, context=ACME
    )  # ACME never found it
    assert await log.entries() == ()


async def test_searches_rank_with_the_callers_tenants_history_only() -> None:
    log = InMemoryUsageLog()
    await log.record([UsageEntry(query=WORDS, tool="billing.refund_payment", scope="tenant:acme")])
    gw = gateway(log)
    assert [f.name for f in await gw.search(WORDS, context=ACME)] == ["billing.refund_payment"]
    assert await gw.search(WORDS, context=ToolContext(tenant_id="globex")) == []
    shared = gateway(log, shared_usage=True)
    await log.record([UsageEntry(query=WORDS, tool="billing.get_invoice")])
    names = [f.name for f in await shared.search(WORDS, context=ToolContext(tenant_id="globex"))]
    assert names == ["billing.get_invoice"]


async def test_a_served_call_is_recorded_like_one_in_process() -> None:
    log = InMemoryUsageLog()
    gw = gateway(log)
    meta = {"tenant_id": "acme", "user_id": "u1", "session_id": "s1"}
    async with Client(served(gw)) as client:
        await client.call_tool("tool_search", {"queries": ["refund card payment"]}, meta=meta)
        called = await client.call_tool(
            "call_tool",
            {"name": "billing.refund_payment", "arguments": {"payment_id": "p1"}},
            meta=meta,
        )
    assert not called.is_error
    entries = await log.entries()
    assert [(e.scope, e.query, e.tool) for e in entries] == [
        ("tenant:acme", "refund card payment", "billing.refund_payment")
    ]


def test_shared_usage_without_a_log_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="needs a usage_log"):
        ToolGateway(catalog(), index=BM25ToolIndex(), options=SearchOptions(shared_usage=True))


def test_a_usage_log_with_an_index_that_ignores_history_is_refused() -> None:
    from tests.client.test_tool_search_usage import KeywordsOnly

    with pytest.raises(ConfigurationError, match="ranks with history"):
        ToolGateway(
            catalog(),
            index=KeywordsOnly(),  # type: ignore[arg-type]
            options=SearchOptions(usage_log=InMemoryUsageLog()),
        )
