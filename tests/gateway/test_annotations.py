"""What the gateway tells MCP clients of side effects: per tool, and for ``call_tool``.

A client that asks the user before destructive tools reads ``call_tool``'s annotations; they
must cover the most any reachable tool may do. Each search hit carries the annotations of its
tool as the gateway runs it, for a client (or model) that decides per tool.
"""

from __future__ import annotations

import json
from typing import Any

from mcp import Client
from mcp_types import ToolAnnotations

from toolrelay.execution import Defer, ToolCallingManager, ToolInvocation
from toolrelay.gateway import ToolGateway, ToolPolicy
from toolrelay.gateway._side_effects import ApprovalSettings, gateway_guards
from toolrelay.mcp import LiveToolCatalog
from toolrelay.mcp._server import tool_info
from toolrelay.tools import FunctionTool, Tool, ToolCatalog, ToolMetadata, as_tools, tool
from toolrelay.toolsearch import SearchOptions

from ._helpers import served, text_of


@tool(name="billing.get_invoice", read_only=True)
def get_invoice(number: str) -> str:
    """Read-only lookup of one invoice by its number."""
    return f"invoice {number}: paid"


@tool(name="billing.refund_payment", destructive=True)
def refund_payment(payment_id: str) -> str:
    """Refund a customer's card payment in full."""
    return f"refunded {payment_id}"


@tool(name="tickets.add_comment")
def add_comment(ticket_id: str, text: str) -> str:
    """Add a comment to a ticket; says nothing of its side effects."""
    return f"commented on {ticket_id}"


@tool(name="ops.server_time", read_only=True)
def server_time() -> str:
    """The server's clock."""
    return "2026-11-30T12:00:00Z"


def catalog(*functions: Any) -> ToolCatalog:
    return ToolCatalog(as_tools(*functions))


async def later(call: ToolInvocation, /) -> Defer:
    """Leaves every call that needs approval to a person, who decides later."""
    return Defer()


def hints(gateway: ToolGateway) -> dict[str, Any]:
    """``call_tool``'s annotations, as a served gateway lists them."""
    annotations = tool_info(gateway.tools()[1]).annotations
    assert annotations is not None
    return annotations.model_dump(by_alias=True, exclude_none=True)


def test_over_read_only_tools_call_tool_is_read_only() -> None:
    assert hints(ToolGateway(catalog(get_invoice, server_time))) == {
        "readOnlyHint": True,
        "openWorldHint": True,  # module tools do not say they stay in a closed world
    }


def test_a_destructive_tool_makes_call_tool_destructive() -> None:
    assert hints(ToolGateway(catalog(get_invoice, refund_payment))) == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": True,
    }


def test_a_tool_that_does_not_say_makes_call_tool_destructive() -> None:
    # The case: no tool is declared destructive, yet one may change state.
    gateway = ToolGateway(catalog(get_invoice, add_comment))
    assert hints(gateway)["destructiveHint"] is True
    # The gateway's policy can say otherwise, per tool; then call_tool destroys nothing.
    additive = ToolGateway(
        catalog(get_invoice, add_comment),
        policies=[
            ToolPolicy(tools="tickets.*", destructive=False, idempotency_key=["ticket_id", "text"])
        ],
    )
    assert hints(additive) == {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": True,  # the gateway records the comment's result, keyed
        "openWorldHint": True,
    }


MAY_DO_ANYTHING = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}


def test_with_no_tools_nothing_is_known_and_call_tool_may_do_anything() -> None:
    assert hints(ToolGateway(ToolCatalog())) == MAY_DO_ANYTHING


def test_over_mcp_servers_call_tool_may_do_anything() -> None:
    # Their tools may change after a client listed call_tool (a server announces new ones,
    # or comes back another version): read-only today promises nothing for tomorrow.
    live = LiveToolCatalog()
    live.replace_all([(t, "test") for t in as_tools(get_invoice, server_time)])
    assert hints(ToolGateway(live)) == MAY_DO_ANYTHING
    assert hints(ToolGateway([live, catalog(server_time)])) == MAY_DO_ANYTHING


def test_a_tool_declared_read_only_and_destructive_counts_as_destructive() -> None:
    both = FunctionTool.from_function(
        add_comment, metadata=ToolMetadata(read_only=True, destructive=True)
    )
    assert hints(ToolGateway(ToolCatalog([both])))["destructiveHint"] is True


async def test_a_client_listing_again_sees_what_the_catalog_holds_now() -> None:
    tools = catalog(get_invoice)
    gateway = ToolGateway(tools)
    async with Client(served(gateway)) as client:
        before = {t.name: t.annotations for t in (await client.list_tools()).tools}
        tools.add(as_tools(refund_payment)[0])
        after = {t.name: t.annotations for t in (await client.list_tools()).tools}
    assert before["call_tool"] == ToolAnnotations(read_only_hint=True, open_world_hint=True)
    assert after["call_tool"] is not None
    assert (after["call_tool"].read_only_hint, after["call_tool"].destructive_hint) == (False, True)
    # tool_search reads the gateway's own catalog: read-only, and a closed world.
    assert after["tool_search"] == ToolAnnotations(read_only_hint=True, open_world_hint=False)


async def test_each_hit_carries_its_annotations_as_the_gateway_runs_it() -> None:
    asking = ToolCallingManager(
        **gateway_guards(approval_settings=ApprovalSettings(destructive=True), approval=later)
    )
    gateway = ToolGateway(
        catalog(get_invoice, refund_payment, add_comment),
        tool_calling_manager=asking,
        policies=[ToolPolicy(tools="billing.refund_payment", idempotency_key="payment_id")],
        options=SearchOptions(min_relative_score=None),
    )
    async with Client(served(gateway)) as client:
        searched = await client.call_tool(
            "tool_search", {"queries": ["refund invoice comment"], "max_results": 5}
        )
    answer = json.loads(text_of(searched))
    by_name = {hit["name"]: hit for hit in answer}
    assert by_name["billing.refund_payment"]["annotations"] == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": True,
    }
    # [approval] destructive = true: the gateway asks before each call of both writing tools.
    assert by_name["billing.refund_payment"]["requires_approval"] is True
    assert by_name["tickets.add_comment"]["annotations"]["destructiveHint"] is True
    assert by_name["tickets.add_comment"]["requires_approval"] is True
    assert by_name["billing.get_invoice"]["annotations"] == {
        "readOnlyHint": True,
        "openWorldHint": True,
    }
    assert "requires_approval" not in by_name["billing.get_invoice"]


async def test_with_any_manager_a_tool_with_a_key_is_idempotent() -> None:
    # Every manager records the results of tools with an idempotency key (in memory when
    # given no store), so a bare one's hits are idempotent as well; only the key makes it so.
    policies = [ToolPolicy(tools="billing.refund_payment", idempotency_key="payment_id")]
    bare = ToolGateway(
        catalog(refund_payment), tool_calling_manager=ToolCallingManager(), policies=policies
    )
    (hit,) = await bare.search("refund payment")
    assert hit.annotations["idempotentHint"] is True
    assert hit.requires_approval is False  # nothing asks for approval
    tool: Tool = as_tools(refund_payment)[0]
    assert bare.annotations(tool).idempotent_hint is True
    assert ToolGateway(catalog(refund_payment), policies=policies).annotations(tool).idempotent_hint
    unkeyed = ToolGateway(catalog(refund_payment), tool_calling_manager=ToolCallingManager())
    assert unkeyed.annotations(tool).idempotent_hint is not True
