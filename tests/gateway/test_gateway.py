"""The gateway's search and calls over in-process catalogs: permissions, errors, changes."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from toolrelay.client.tool_search_access import DEFAULT_UNAVAILABLE_MESSAGE, unavailable_text
from toolrelay.exceptions import ConfigurationError, DuplicateToolError
from toolrelay.gateway import CALL_TOOL_NAME, ToolGateway
from toolrelay.mcp import LiveToolCatalog
from toolrelay.tools import Tool, ToolCatalog, ToolContext, ToolDefinition, as_tools, tool

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
        "input_schema": dict(definition.input_schema),
    }
    assert [f.name for f in await gateway.search("invoice", category="billing")] == [
        "billing.get_invoice"
    ]


async def test_the_filter_hides_tools_from_search_and_calls() -> None:
    gateway = ToolGateway(catalog(), tool_filter=no_admin_for_guests)
    guest = ToolContext(role="guest", tenant_id="t1", user_id="g")
    assert "admin.whoami" not in [f.name for f in await gateway.search("whoami", context=guest)]
    forbidden = await gateway.call("admin.whoami", {}, context=guest)
    unknown = await gateway.call("admin.no_such_tool", {}, context=guest)
    assert (forbidden.is_error, forbidden.status) == (True, "unavailable")
    # The same answer as for a name that exists nowhere: nothing reveals the tool exists.
    assert forbidden.text == unavailable_text(DEFAULT_UNAVAILABLE_MESSAGE, "admin.whoami")
    assert unknown.text == unavailable_text(DEFAULT_UNAVAILABLE_MESSAGE, "admin.no_such_tool")
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


async def test_the_client_facing_tools() -> None:
    gateway = ToolGateway(catalog())
    search_tool, call_tool = gateway.tools()
    assert (search_tool.definition.name, call_tool.definition.name) == (
        "tool_search",
        CALL_TOOL_NAME,
    )
    assert set(call_tool.definition.input_schema["properties"]) == {"name", "arguments"}
    hits = json.loads(await search_tool.call('{"query": "invoice lookup", "max_results": 1}'))
    assert [h["name"] for h in hits] == ["billing.get_invoice"]
    answer = await call_tool.call(
        '{"name": "admin.whoami", "arguments": {}}', ToolContext(tenant_id="t", user_id="u")
    )
    assert answer == "t/u"
    with pytest.raises(Exception, match="the mail server is down"):
        await call_tool.call('{"name": "mail.send_email", "arguments": {"to": "x", "body": "y"}}')


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
    with pytest.raises(ConfigurationError, match="max_results"):
        ToolGateway(catalog(), max_results=11)
