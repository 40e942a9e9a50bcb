"""BridgeSearch, the core every bridge adapts: search, sessions, guarded calls."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.bridges._catalog import (
    RAN,
    AuditRecords,
    add_gated_tool,
    bridge,
    catalog,
    refund,
    ungated_catalog,
)
from toolrelay.bridges import BridgeSearch
from toolrelay.bridges._search import conversation_key
from toolrelay.exceptions import ConfigurationError, ToolContextError
from toolrelay.execution import (
    ApprovalInterceptor,
    Deny,
    ToolCallingManager,
    ToolCallStatus,
    ToolInvocation,
)
from toolrelay.execution import _feedback as feedback
from toolrelay.search import BM25ToolIndex, InMemoryUsageLog
from toolrelay.tools import ToolContext, as_tools, tool
from toolrelay.toolsearch import SearchOptions
from toolrelay.toolsearch._reveal import TURN_OPTIONS

USER = ToolContext(user_id="u1")
ADMIN = ToolContext(user_id="u2", role="admin")
CLERK = ToolContext(user_id="clerk", tenant_id="acme")


@tool(name="reports.monthly", context_keys=("tenant_id",))
def monthly_report(month: str, context: ToolContext) -> str:
    """The monthly sales report of the caller's tenant.

    Args:
        month: The month, e.g. '2026-01'.
    """
    RAN.append(("reports.monthly", {"month": month, "tenant": context.tenant_id}))
    return f"report of {context.tenant_id} for {month}"


def desk(**options: Any) -> BridgeSearch:
    """A bridge over the keyed refund and the tenant's report, BM25 for exact searches."""
    RAN.clear()
    return BridgeSearch(as_tools(refund, monthly_report), index=BM25ToolIndex(), **options)


async def discover(search: BridgeSearch, query: str, context: ToolContext = CLERK) -> None:
    answer = await search.search(json.dumps({"queries": [query]}), key="c1", context=context)
    assert answer.found, f"nothing found for {query!r}"


def nested(levels: int) -> dict[str, object]:
    """``{"a": {"a": ...}}``, ``levels`` objects deep, built without recursion."""
    value: dict[str, object] = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


async def test_a_search_shows_what_it_found_in_the_conversation() -> None:
    search = bridge()
    assert await search.shown("c1", USER) == []
    answer = await search.search('{"queries": ["weather in a city"]}', key="c1", context=USER)
    assert json.loads(answer.text)[0] == {"name": "weather__current"}
    shown = [t.definition.name for t in await search.shown("c1", USER)]
    assert shown[0] == "weather.current"
    assert await search.shown("c2", USER) == []  # another conversation found nothing


async def test_a_forbidden_tool_is_never_found_nor_run() -> None:
    search = bridge()
    answer = await search.search('{"queries": ["export payroll month"]}', key="c1", context=USER)
    assert "payroll" not in answer.text
    result = await search.call("payroll__export", '{"month": "x"}', key="c1", context=USER)
    # Answered like a name that exists nowhere: nothing tells the caller the tool exists.
    assert (result.status, result.tool) == (ToolCallStatus.UNKNOWN_TOOL, None)
    assert result.text == search.texts().unavailable_answer("payroll__export", [])
    assert RAN == []
    admin = await search.search('{"queries": ["export payroll month"]}', key="c9", context=ADMIN)
    assert "payroll__export" in admin.text


async def test_an_undiscovered_tool_does_not_run() -> None:
    search = bridge()
    result = await search.call("weather__current", '{"city": "Rome"}', key="c1", context=USER)
    assert (result.status, result.is_error) == (ToolCallStatus.UNKNOWN_TOOL, True)
    assert result.text == search.texts().unavailable_answer("weather__current", [])
    assert RAN == []


async def test_a_call_runs_with_the_tool_context_and_bad_arguments_are_feedback() -> None:
    search = bridge()
    await search.search('{"queries": ["weather"]}', key="c1", context=USER)
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
    await search.search('{"queries": ["cancel order"]}', key="c1", context=USER)
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
    await search.search('{"queries": ["cancel order"]}', key="c1", context=USER)
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


async def test_a_tool_requiring_approval_added_later_is_refused_and_never_runs() -> None:
    live = ungated_catalog()
    search = BridgeSearch(live)  # nothing requires approval yet: no approval= needed
    RAN.clear()
    add_gated_tool(live)
    await search.search('{"queries": ["cancel order"]}', key="c1", context=USER)
    result = await search.call("orders__cancel", '{"order_id": "7"}', key="c1", context=USER)
    assert (result.status, result.is_error) == (ToolCallStatus.DENIED, True)
    assert result.text == feedback.approval_not_configured("orders.cancel")
    assert RAN == []


async def test_authorize_denies_a_shown_tool() -> None:
    search = bridge(authorize=lambda context, tool, arguments: "not today")
    await search.search('{"queries": ["weather"]}', key="c1", context=USER)
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
    assert set(definition.input_schema["properties"]) == {"queries", "max_results", "category"}


async def test_a_tool_needing_a_tenant_is_refused_without_one() -> None:
    search = desk()
    await discover(search, "monthly sales report", USER)
    # Found and shown, yet it never runs without the key it declares.
    with pytest.raises(ToolContextError, match=r"'reports\.monthly' requires 'tenant_id'"):
        await search.call("reports__monthly", '{"month": "2026-01"}', key="c1", context=USER)
    assert RAN == []
    tenant = ToolContext(user_id="u1", tenant_id="acme")
    result = await search.call("reports__monthly", '{"month": "2026-01"}', key="c1", context=tenant)
    assert (result.status, result.text) == (ToolCallStatus.OK, "report of acme for 2026-01")
    assert RAN == [("reports.monthly", {"month": "2026-01", "tenant": "acme"})]


@pytest.mark.parametrize(
    "arguments",
    [{"order_id": 7}, '{"order_id": 7}', json.dumps('{"order_id": 7}')],
    ids=["mapping", "JSON text", "JSON text holding the object"],
)
async def test_every_shape_of_arguments_runs_the_call(arguments: object) -> None:
    search = desk()
    await discover(search, "refund a customer order")
    result = await search.call("billing__refund", arguments, key="c1", context=CLERK)  # type: ignore[arg-type]
    assert (result.status, result.text, result.tool) == (
        ToolCallStatus.OK,
        "refunded order 7",
        "billing.refund",
    )
    assert RAN == [("billing.refund", {"order_id": 7})]


@pytest.mark.parametrize(
    "arguments",
    [
        nested(5_000),
        {"order_id": nested(5_000)},
        json.dumps(nested(150)),
        '{"a": ' * 5_000 + "1" + "}" * 5_000,
        json.dumps('{"a": ' * 5_000 + "1" + "}" * 5_000),
        "[" * 5_000 + "]" * 5_000,
    ],
    ids=[
        "mapping",
        "mapping, deep value",
        "JSON text, 150 levels",
        "JSON text",
        "JSON text holding the object",
        "JSON text of arrays",
    ],
)
async def test_arguments_nested_5000_levels_deep_are_feedback(arguments: object) -> None:
    search = desk()
    await discover(search, "refund a customer order")
    result = await search.call("billing__refund", arguments, key="c1", context=CLERK)  # type: ignore[arg-type]
    assert (result.status, result.is_error) == (ToolCallStatus.INVALID_ARGUMENTS, True)
    assert "billing.refund" in result.text
    assert RAN == []


async def test_a_name_that_is_not_text_is_feedback() -> None:
    search = desk()
    await discover(search, "refund a customer order")
    for name in (None, 7):
        result = await search.call(name, '{"order_id": 7}', key="c1", context=CLERK)  # type: ignore[arg-type]
        assert (result.status, result.tool, result.is_error) == (
            ToolCallStatus.UNKNOWN_TOOL,
            None,
            True,
        )
        assert "no tool name" in result.text
    assert RAN == []


async def test_a_keyed_call_with_7_then_7_0_runs_once() -> None:
    audit = AuditRecords()
    search = desk(audit=audit)
    await discover(search, "refund a customer order")
    done = await search.call("billing__refund", {"order_id": 7}, key="c1", context=CLERK)
    again = await search.call("billing__refund", '{"order_id": 7.0}', key="c1", context=CLERK)
    assert done.text == "refunded order 7"
    assert (again.status, again.text.endswith(done.text)) == (ToolCallStatus.OK, True)
    assert again.text != done.text  # marked as the recorded result, not a second refund
    assert RAN == [("billing.refund", {"order_id": 7})]
    assert [(r.replayed, r.idempotency_key is not None) for r in audit.records] == [
        (False, True),
        (True, True),
    ]
    assert audit.records[0].idempotency_key == audit.records[1].idempotency_key


async def test_a_successful_call_of_a_tool_the_conversation_found_is_recorded() -> None:
    log = InMemoryUsageLog()
    search = desk(options=SearchOptions(usage_log=log))
    await discover(search, "refund a customer order")
    # Conversation c2 has the tool too (kept in the store) but found it in no search here.
    await search.session_store.add("c2", ["billing.refund"])
    other = await search.call("billing__refund", {"order_id": 6}, key="c2", context=CLERK)
    assert other.status is ToolCallStatus.OK
    wrong = await search.call("billing__refund", '{"order_id": "x"}', key="c1", context=CLERK)
    assert wrong.status is ToolCallStatus.INVALID_ARGUMENTS
    assert await log.entries() == ()  # neither teaches anything
    await search.call("billing__refund", {"order_id": 7}, key="c1", context=CLERK)
    await search.call("billing__refund", {"order_id": 8}, key="c1", context=CLERK)
    learned = [(e.scope, e.query, e.tool, e.count) for e in await log.entries()]
    assert learned == [("tenant:acme", "refund a customer order", "billing.refund", 1)]


async def test_a_conversation_a_client_pinned_tools_for_shows_them_through_the_bridge() -> None:
    # A client's first reveal pinned the tool in the shared store; the bridge serves the rest.
    search = desk()
    await search.session_store.pin("c3", ["billing.refund"])
    shown = await search.shown(key="c3", context=CLERK)
    assert [t.definition.name for t in shown] == ["billing.refund"]
    done = await search.call("billing__refund", {"order_id": 9}, key="c3", context=CLERK)
    assert done.status is ToolCallStatus.OK


@pytest.mark.parametrize("option", sorted(TURN_OPTIONS))
def test_the_turn_start_options_are_refused_a_bridge_never_sees_a_request(option: str) -> None:
    with pytest.raises(ConfigurationError, match=f"never sees a request's text.*{option}="):
        BridgeSearch([], index=BM25ToolIndex(), **{option: 1})  # type: ignore[arg-type]
