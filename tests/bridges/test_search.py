"""BridgeSearch, the core every bridge adapts: search, sessions, guarded calls."""

from __future__ import annotations

import json

import pytest

from tests.bridges._catalog import RAN, add_gated_tool, bridge, catalog, ungated_catalog
from toolrelay.bridges import BridgeSearch
from toolrelay.bridges._search import conversation_key
from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import (
    ApprovalInterceptor,
    Deny,
    ToolCallingManager,
    ToolCallStatus,
    ToolInvocation,
)
from toolrelay.execution import _feedback as feedback
from toolrelay.tools import ToolContext

USER = ToolContext(user_id="u1")
ADMIN = ToolContext(user_id="u2", role="admin")


async def test_a_search_shows_what_it_found_in_the_conversation() -> None:
    search = bridge()
    assert await search.shown("c1", USER) == []
    answer = await search.search('{"query": "weather in a city"}', key="c1", context=USER)
    assert json.loads(answer.text)[0] == {"name": "weather__current"}
    shown = [t.definition.name for t in await search.shown("c1", USER)]
    assert shown[0] == "weather.current"
    assert await search.shown("c2", USER) == []  # another conversation found nothing


async def test_a_forbidden_tool_is_never_found_nor_run() -> None:
    search = bridge()
    answer = await search.search('{"query": "export payroll month"}', key="c1", context=USER)
    assert "payroll" not in answer.text
    result = await search.call("payroll__export", '{"month": "x"}', key="c1", context=USER)
    assert result.status is ToolCallStatus.DENIED
    assert "not available" in result.text
    assert RAN == []
    admin = await search.search('{"query": "export payroll month"}', key="c9", context=ADMIN)
    assert "payroll__export" in admin.text


async def test_an_undiscovered_tool_does_not_run() -> None:
    search = bridge()
    result = await search.call("weather__current", '{"city": "Rome"}', key="c1", context=USER)
    assert result.status is ToolCallStatus.DENIED
    assert RAN == []


async def test_a_call_runs_with_the_tool_context_and_bad_arguments_are_feedback() -> None:
    search = bridge()
    await search.search('{"query": "weather"}', key="c1", context=USER)
    result = await search.call("weather__current", '{"city": "Rome"}', key="c1", context=USER)
    assert (result.status, result.text, result.tool) == (
        ToolCallStatus.OK,
        "Sunny in Rome",
        "weather.current",
    )
    assert RAN == [("weather.current", {"city": "Rome", "user": "u1"})]
    wrong = await search.call("weather__current", '{"town": 1}', key="c1", context=USER)
    assert wrong.status is ToolCallStatus.INVALID_ARGUMENTS
    assert wrong.is_error


async def test_an_approval_gated_call_waits_until_approved() -> None:
    search = bridge(approval=ApprovalInterceptor())
    await search.search('{"query": "cancel order"}', key="c1", context=USER)
    waiting = await search.call("orders__cancel", '{"order_id": "7"}', key="c1", context=USER)
    assert waiting.pending_approval
    assert RAN == []
    done = await search.call(
        "orders__cancel", '{"order_id": "7"}', key="c1", context=USER, approved=True
    )
    assert done.status is ToolCallStatus.OK
    assert RAN == [("orders.cancel", {"order_id": "7"})]


async def test_an_approval_handler_decides_without_a_person() -> None:
    async def refuse(invocation: ToolInvocation) -> Deny:
        return Deny("not on Sundays")

    search = bridge(approval=refuse)
    await search.search('{"query": "cancel order"}', key="c1", context=USER)
    assert not search.needs_approval(search.catalog.get("orders.cancel"))  # type: ignore[arg-type]
    result = await search.call("orders__cancel", '{"order_id": "7"}', key="c1", context=USER)
    assert result.status is ToolCallStatus.DENIED
    assert "not on Sundays" in result.text
    assert RAN == []


def test_a_catalog_with_a_tool_requiring_approval_needs_approval_at_build() -> None:
    with pytest.raises(ConfigurationError, match=r"'orders.cancel' requires approval"):
        BridgeSearch(catalog())
    with pytest.raises(ConfigurationError, match="tool_calling_manager= gives one already"):
        BridgeSearch(catalog(), tool_calling_manager=ToolCallingManager(), approval=refuse_all)


async def test_a_tool_requiring_approval_added_later_is_refused_and_never_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    live = ungated_catalog()
    search = BridgeSearch(live)  # nothing requires approval yet: no approval= needed
    RAN.clear()
    add_gated_tool(live, monkeypatch)
    await search.search('{"query": "cancel order"}', key="c1", context=USER)
    result = await search.call("orders__cancel", '{"order_id": "7"}', key="c1", context=USER)
    assert (result.status, result.is_error) == (ToolCallStatus.DENIED, True)
    assert result.text == feedback.approval_not_configured("orders.cancel")
    assert RAN == []


async def test_authorize_denies_a_shown_tool() -> None:
    search = bridge(authorize=lambda context, tool, arguments: "not today")
    await search.search('{"query": "weather"}', key="c1", context=USER)
    result = await search.call("weather__current", '{"city": "Rome"}', key="c1", context=USER)
    assert result.status is ToolCallStatus.DENIED
    assert RAN == []


async def refuse_all(invocation: ToolInvocation) -> Deny:
    return Deny("no")


def test_keys_are_scoped_by_tenant() -> None:
    assert conversation_key("c1", ToolContext(tenant_id="acme")) == "tenant:acme:c1"
    assert conversation_key("c1", ToolContext()) == "c1"
    assert conversation_key("tenant:acme:c1", ToolContext()) != "tenant:acme:c1"


def test_the_search_tool_is_the_tool_loops() -> None:
    definition = BridgeSearch([]).search_tool().definition
    assert definition.name == "tool_search"
    assert set(definition.input_schema["properties"]) == {"query", "max_results", "category"}
