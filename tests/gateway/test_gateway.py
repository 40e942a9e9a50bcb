"""The gateway's search and calls over in-process catalogs: permissions, errors, changes,
the relative score cut-off."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from toolrelay.exceptions import (
    ConfigurationError,
    DuplicateToolError,
    ToolArgumentError,
    ToolExecutionError,
)
from toolrelay.gateway import ToolGateway, open_gateway
from toolrelay.gateway._config import parse_gateway_config
from toolrelay.mcp import LiveToolCatalog
from toolrelay.tools import Tool, ToolCatalog, ToolContext, ToolDefinition, as_tools, tool
from toolrelay.toolsearch import CALL_TOOL_NAME, SearchOptions
from toolrelay.toolsearch._options import DEFAULT_MIN_RELATIVE_SCORE
from toolrelay.toolsearch._reveal import TURN_OPTIONS
from toolrelay.toolsearch._texts import ENGLISH, unavailable_text

from ._helpers import served, text_of

ran: list[str] = []


@tool(name="billing.refund_payment", destructive=True)
def refund_payment(payment_id: str) -> str:
    """Refund a customer's card payment in full.

    Args:
        payment_id: The payment to refund.
    """
    ran.append("refund")
    return f"refunded {payment_id}"


@tool(name="billing.get_invoice", read_only=True)
def get_invoice(number: str) -> dict[str, str]:
    """Read-only lookup of one invoice by its number.

    Args:
        number: The invoice number.
    """
    return {"number": number, "status": "paid"}


@tool(name="mail.send_email")
def send_email(to: str, body: str) -> str:
    """Send an email message to a customer.

    Args:
        to: The address.
        body: The text.
    """
    raise RuntimeError("the mail server is down")


@tool(name="admin.whoami", read_only=True)
def whoami(context: ToolContext) -> str:
    """Who is calling, from the tool context."""
    return f"{context.tenant_id}/{context.user_id}"


def catalog() -> ToolCatalog:
    return ToolCatalog(as_tools(refund_payment, get_invoice, send_email, whoami))


def no_admin_for_guests(context: ToolContext, definition: ToolDefinition) -> bool:
    return context.get("role") != "guest" or not definition.name.startswith("admin.")


async def test_search_returns_whole_definitions_best_first() -> None:
    gateway = ToolGateway(catalog())
    found = await gateway.search("refund card payment")
    assert found[0].name == "billing.refund_payment"
    definition = as_tools(refund_payment)[0].definition
    assert found[0].as_json() == {
        "name": "billing.refund_payment",
        "description": definition.description,  # whole, not the first sentence
        # As a provider is sent it: without the $schema dialect marker.
        "input_schema": {k: v for k, v in definition.input_schema.items() if k != "$schema"},
        "annotations": {
            "readOnlyHint": False,
            "destructiveHint": True,
            "idempotentHint": False,
            "openWorldHint": True,
        },
    }
    assert [f.name for f in await gateway.search("invoice", category="billing")] == [
        "billing.get_invoice"
    ]


async def test_the_filter_hides_tools_from_search_and_calls() -> None:
    gateway = ToolGateway(catalog(), options=SearchOptions(tool_filter=no_admin_for_guests))
    guest = ToolContext(role="guest", tenant_id="t1", user_id="g")
    assert "admin.whoami" not in [f.name for f in await gateway.search("whoami", context=guest)]
    forbidden = await gateway.call("admin.whoami", {}, context=guest)
    unknown = await gateway.call("admin.no_such_tool", {}, context=guest)
    assert (forbidden.is_error, forbidden.status, forbidden.tool) == (True, "unknown_tool", None)
    assert (unknown.is_error, unknown.status, unknown.tool) == (True, "unknown_tool", None)
    # The same answer as for a name that exists nowhere: nothing reveals the tool exists.
    assert forbidden.text == unavailable_text(ENGLISH.unavailable_message, "admin.whoami")
    assert unknown.text == unavailable_text(ENGLISH.unavailable_message, "admin.no_such_tool")
    staff = ToolContext(role="staff", tenant_id="t1", user_id="s")
    allowed = await gateway.call("admin.whoami", {}, context=staff)
    assert (allowed.is_error, allowed.text) == (False, "t1/s")


async def test_authorize_is_asked_before_each_call() -> None:
    asked: list[tuple[str, Mapping[str, Any]]] = []

    def authorize(context: ToolContext, tool: Tool, arguments: Mapping[str, Any]) -> bool | str:
        asked.append((tool.definition.name, dict(arguments)))
        return not tool.metadata.destructive or "destructive tools need a supervisor"

    ran.clear()
    gateway = ToolGateway(catalog(), authorize=authorize)
    denied = await gateway.call("billing.refund_payment", {"payment_id": "P1"})
    allowed = await gateway.call("billing.get_invoice", {"number": "I-7"})
    assert (denied.is_error, denied.status, denied.text) == (
        True,
        "denied",
        "destructive tools need a supervisor",
    )
    assert ran == []
    assert json.loads(allowed.text) == {"number": "I-7", "status": "paid"}
    assert asked == [
        ("billing.refund_payment", {"payment_id": "P1"}),
        ("billing.get_invoice", {"number": "I-7"}),
    ]


async def test_names_resolve_in_either_form_and_leniently() -> None:
    gateway = ToolGateway(catalog())
    for name in ("billing.get_invoice", "billing__get_invoice", "billing.getInvoice"):
        result = await gateway.call(name, {"number": "1"})
        assert (result.is_error, result.tool) == (False, "billing.get_invoice"), name


async def test_tool_failures_and_bad_arguments_are_error_results() -> None:
    gateway = ToolGateway(catalog())
    failed = await gateway.call("mail.send_email", {"to": "a@b.c", "body": "hi"})
    assert (failed.is_error, failed.status, failed.text) == (
        True,
        "error",
        "the mail server is down",
    )
    invalid = await gateway.call("billing.get_invoice", {"numbr": "1"})
    assert (invalid.is_error, invalid.status) == (True, "invalid_arguments")
    assert "number: Field required" in invalid.text


@tool(name="billing.export_invoices", read_only=True)
def export_invoices() -> str:
    """Every invoice, as CSV."""
    return "number,status\n" + "1,paid\n" * 1_000_000


async def test_a_long_result_reaches_the_client_cut_with_a_note() -> None:
    gateway = ToolGateway(ToolCatalog(as_tools(export_invoices)))
    whole = export_invoices()
    result = await gateway.call("billing.export_invoices")
    assert (result.is_error, result.status) == (False, "ok")
    assert result.text == whole[:20_000] + (
        "\n[Result cut: these are the first 20,000 of 7,000,014 characters. For what was left "
        "out, call the tool again asking for less: a narrower query, one page, or fewer fields.]"
    )
    async with Client(served(gateway)) as client:  # what an MCP client reads
        answer = await client.call_tool("call_tool", {"name": "billing.export_invoices"})
    assert (answer.is_error, text_of(answer)) == (False, result.text)


@pytest.mark.parametrize(
    ("setting", "shown"), [("max_result_chars = 100", 100), ("max_result_chars = 0", None)]
)
async def test_a_served_gateway_uses_the_configured_bound(
    tmp_path: Path, setting: str, shown: int | None
) -> None:
    text = f'[gateway]\n{setting}\n[[modules]]\nmodule = "exports"\n'
    config = parse_gateway_config(tomllib.loads(text), base_dir=tmp_path)
    async with open_gateway(config, module_loader=lambda _: as_tools(export_invoices)) as gateway:
        assert gateway.manager.max_result_chars == shown
        result = await gateway.call("billing.export_invoices")
    whole = export_invoices()
    assert result.text == (whole if shown is None else whole[:shown] + result.text[shown:])
    assert (shown is None) == (result.text == whole)


async def test_runaway_names_and_queries_from_a_client_are_refused_at_once() -> None:
    gateway = ToolGateway(catalog())
    search_tool, _ = gateway.tools()
    with pytest.raises(ToolArgumentError) as caught:
        await search_tool.call(json.dumps({"queries": ["invoice " * 200_000]}))
    assert [p.location for p in caught.value.problems] == ["queries.0"]
    # A name within the bound on arguments is answered as unknown, without a fuzzy match.
    long = await gateway.call("billing.getInvoice" * 20_000, {"number": "1"})
    assert (long.is_error, long.status) == (True, "unknown_tool")
    assert len(long.text) < 500
    # Beyond it the call is not even read.
    huge = await gateway.call("billing.getInvoice" * 100_000, {"number": "1"})
    assert (huge.is_error, huge.status, huge.tool) == (True, "invalid_arguments", CALL_TOOL_NAME)
    assert "characters long" in huge.text
    assert len(huge.text) < 500


async def test_the_client_facing_tools() -> None:
    gateway = ToolGateway(catalog())
    search_tool, call_tool = gateway.tools()
    assert (search_tool.definition.name, call_tool.definition.name) == (
        "tool_search",
        CALL_TOOL_NAME,
    )
    assert set(call_tool.definition.input_schema["properties"]) == {"name", "arguments"}
    async with Client(served(gateway)) as client:
        listed = await client.list_tools()
        search = await client.call_tool(
            "tool_search", {"queries": ["invoice lookup"], "max_results": 1}
        )
        answer = await client.call_tool(
            "call_tool",
            {"name": "admin.whoami", "arguments": {}},
            meta={"tenant_id": "t", "user_id": "u"},
        )
        failed = await client.call_tool(
            "call_tool", {"name": "mail.send_email", "arguments": {"to": "x", "body": "y"}}
        )
    assert [t.name for t in listed.tools] == ["tool_search", CALL_TOOL_NAME]
    assert [h["name"] for h in json.loads(text_of(search))] == ["billing.get_invoice"]
    assert (answer.is_error, text_of(answer)) == (False, "t/u")
    assert (failed.is_error, text_of(failed)) == (True, "the mail server is down")
    # call_tool runs only on a manager's path, never by itself.
    with pytest.raises(ToolExecutionError, match="only through a ToolCallingManager"):
        await call_tool.call('{"name": "admin.whoami", "arguments": {}}')


async def test_a_changed_catalog_is_reindexed_on_the_next_request() -> None:
    live = LiveToolCatalog()
    live.replace_all([(t, "test") for t in as_tools(get_invoice)])
    gateway = ToolGateway(live)
    first = await gateway.snapshot()
    assert [f.name for f in await gateway.search("refund")] == []
    live.replace_all([(t, "test") for t in as_tools(get_invoice, refund_payment)])
    second = await gateway.snapshot()
    assert second.fingerprint != first.fingerprint
    assert [f.name for f in await gateway.search("refund")] == ["billing.refund_payment"]
    assert await gateway.snapshot() is second  # unchanged: no new snapshot


async def test_duplicate_names_across_sources_are_an_error() -> None:
    gateway = ToolGateway([catalog(), ToolCatalog(as_tools(get_invoice), source="module 'x'")])
    with pytest.raises(DuplicateToolError, match=r"billing\.get_invoice"):
        await gateway.snapshot()


def test_max_results_is_checked() -> None:
    with pytest.raises(ConfigurationError, match="max_results must be between 1 and 10"):
        ToolGateway(catalog(), options=SearchOptions(max_results=11))


@pytest.mark.parametrize("fraction", [-0.1, 1.5, float("nan")])
def test_min_relative_score_is_checked(fraction: float) -> None:
    with pytest.raises(ConfigurationError, match="min_relative_score"):
        ToolGateway(catalog(), options=SearchOptions(min_relative_score=fraction))


@pytest.mark.parametrize("option", ["max_results", "tool_filter", "language", "usage_log"])
def test_a_search_option_given_as_a_keyword_names_where_it_goes(option: str) -> None:
    with pytest.raises(ConfigurationError, match=rf"options=SearchOptions\({option}="):
        ToolGateway(catalog(), **{option: None})  # type: ignore[arg-type]


# Scores clearly apart for QUERY (BM25): cancel shares all its words, refund "refund card
# payment" (about 0.7 of cancel's score), status and history only "order", in their text or
# their parameter's name (under 0.05 of it).
@tool(name="orders.cancel")
def cancel_order(order_id: str) -> str:
    """Cancel an unshipped order and refund its card payment."""
    return order_id


@tool(name="orders.refund")
def refund_order(order_id: str) -> str:
    """Refund a card payment."""
    return order_id


@tool(name="orders.status", read_only=True)
def order_status(order_id: str) -> str:
    """Where an order is: packed, shipped or delivered."""
    return order_id


@tool(name="customers.history", read_only=True)
def purchase_history(customer_id: str) -> str:
    """List a customer's past purchases and their orders, newest first."""
    return customer_id


QUERY = "cancel the order and refund the card payment"
RANKED = ["orders.cancel", "orders.refund", "orders.status", "customers.history"]


def ranked_tools(spec: str = "orders") -> Sequence[Tool]:
    return as_tools(cancel_order, refund_order, order_status, purchase_history)


@pytest.mark.parametrize(
    ("fraction", "expected"),
    [(None, RANKED), (0.0, RANKED), (0.3, RANKED[:2]), (0.9, RANKED[:1])],
)
async def test_search_drops_hits_under_a_fraction_of_the_best_score(
    fraction: float | None, expected: list[str]
) -> None:
    gateway = ToolGateway(
        ToolCatalog(ranked_tools()), options=SearchOptions(min_relative_score=fraction)
    )
    assert [f.name for f in await gateway.search(QUERY, max_results=10)] == expected


async def test_by_default_the_cut_off_is_the_advisors() -> None:
    gateway = ToolGateway(ToolCatalog(ranked_tools()))
    assert gateway.options.min_relative_score == DEFAULT_MIN_RELATIVE_SCORE
    assert [f.name for f in await gateway.search(QUERY, max_results=10)] == RANKED[:1]
    # What the client reads is cut as well: one definition instead of four.
    search_tool, _ = gateway.tools()
    answer = json.loads(await search_tool.call(json.dumps({"queries": [QUERY], "max_results": 10})))
    assert [hit["name"] for hit in answer] == RANKED[:1]


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ("", RANKED[:1]),
        ("min_relative_score = 0.3", RANKED[:2]),
        ("min_relative_score = 0", RANKED),
        ("min_relative_score = 0.9", RANKED[:1]),
    ],
)
async def test_a_served_gateway_uses_the_configured_cut_off(
    tmp_path: Path, setting: str, expected: list[str]
) -> None:
    text = f'[search]\nindex = "bm25"\n{setting}\n[[modules]]\nmodule = "orders"\n'
    config = parse_gateway_config(tomllib.loads(text), base_dir=tmp_path)
    async with open_gateway(config, module_loader=ranked_tools) as gateway:
        assert gateway.options.min_relative_score == config.search.min_relative_score
        assert [f.name for f in await gateway.search(QUERY, max_results=10)] == expected


@pytest.mark.parametrize("option", sorted(TURN_OPTIONS))
def test_the_turn_start_options_are_refused_the_gateway_never_sees_a_request(option: str) -> None:
    from toolrelay.search import BM25ToolIndex

    with pytest.raises(ConfigurationError, match=f"never sees a request's text.*{option}="):
        ToolGateway(ToolCatalog(), index=BM25ToolIndex(), **{option: 1})  # type: ignore[arg-type]
