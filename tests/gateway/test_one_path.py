"""The manager's one path at both of the gateway's doors: ``ToolGateway.call`` in process, and
``call_tool`` served over MCP.

Whatever door a call comes through, it is the same call: keys digest canonical values, any
argument shape is read or answered as feedback, the tool's context is checked before anything
runs, search answers fit the result bound by whole hits, and an edited approval records what
ran.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from tests.mcp.mcp_helpers import SERVERS  # noqa: F401 - puts the test servers on the path
from toolrelay.exceptions import ToolContextError
from toolrelay.execution import (
    Approve,
    ToolCallingManager,
    ToolInvocation,
)
from toolrelay.gateway import GatewayCallResult, ToolGateway, ToolPolicy
from toolrelay.mcp import McpServerConfig, McpToolset
from toolrelay.tools import (
    FunctionTool,
    Tool,
    ToolCatalog,
    ToolContext,
    ToolDefinition,
    ToolMetadata,
    as_tools,
    tool,
)
from toolrelay.toolsearch import ENGLISH, SearchOptions

from ._helpers import served, text_of

CLERK = {"user_id": "clerk"}
"""The caller of keyed calls (their results are kept per caller), as ``_meta``."""


# --- keys of schema tools digest canonical values -------------------------------------------

REFUND_SCHEMA = {
    "type": "object",
    "properties": {
        "refund_id": {"type": "integer", "description": "The refund."},
        "amount": {"type": "number", "description": "How much, in euros."},
    },
    "required": ["refund_id", "amount"],
}


class IssueRefund:
    """A module tool that is no Python function: validated by its JSON Schema alone."""

    definition = ToolDefinition(
        name="payments.issue_refund",
        description="Issue a refund, once per refund id.",
        input_schema=REFUND_SCHEMA,
    )
    metadata = ToolMetadata(destructive=True, idempotency_key=("refund_id",))

    def __init__(self) -> None:
        self.runs: list[dict[str, Any]] = []

    async def call(self, arguments_json: str, context: ToolContext | None = None) -> str:
        arguments = json.loads(arguments_json)
        self.runs.append(arguments)
        return f"refunded {arguments['amount']} on {arguments['refund_id']}"


@dataclass(frozen=True, kw_only=True)
class RefundSource:
    """A schema tool keyed by ``refund_id`` behind a gateway, and the runs it saw."""

    gateway: ToolGateway
    name: str
    runs: list[Any]


mcp_runs: list[tuple[int, float]] = []


def payments_server() -> MCPServer:
    server = MCPServer("payments", log_level="WARNING")

    @server.tool()
    def issue_refund(refund_id: int, amount: float) -> str:
        """Issue a refund, once per refund id."""
        mcp_runs.append((refund_id, amount))
        return f"refunded {amount} on {refund_id}"

    return server


@pytest.fixture(params=["module tool", "mcp tool"])
def refunds(request: pytest.FixtureRequest) -> Iterator[RefundSource]:
    if request.param == "module tool":
        issue = IssueRefund()
        yield RefundSource(
            gateway=ToolGateway(ToolCatalog([issue])), name=issue.definition.name, runs=issue.runs
        )
        return
    from http_thread import serve_app

    mcp_runs.clear()
    with (
        serve_app(payments_server().streamable_http_app()) as url,
        McpToolset(McpServerConfig(name="payments", url=url)) as toolset,
    ):
        # The server cannot say what identifies a refund; the gateway's policy does.
        policy = ToolPolicy(tools="payments.issue_refund", idempotency_key="refund_id")
        gateway = ToolGateway(toolset.catalog, policies=[policy])
        yield RefundSource(gateway=gateway, name="payments.issue_refund", runs=mcp_runs)


async def test_a_key_of_7_and_of_7_0_is_one_key_at_both_doors(refunds: RefundSource) -> None:
    gateway, name = refunds.gateway, refunds.name
    first = await gateway.call(name, {"refund_id": 7, "amount": 10}, context=ToolContext(CLERK))
    # The same refund in the other spelling, the same amount in the other spelling: a replay.
    again = await gateway.call(name, {"refund_id": 7.0, "amount": 10.0}, context=ToolContext(CLERK))
    async with Client(served(gateway)) as client:
        served_again = await client.call_tool(
            "call_tool",
            {"name": name, "arguments": '{"refund_id": 7.0, "amount": 10.0}'},
            meta=CLERK,
        )
        other_amount = await client.call_tool(
            "call_tool", {"name": name, "arguments": {"refund_id": 7, "amount": 11}}, meta=CLERK
        )
    assert (first.status, first.replayed) == ("ok", False)
    assert (again.status, again.replayed) == ("ok", True)
    assert again.text.endswith("\n" + first.text)
    assert not served_again.is_error
    assert text_of(served_again) == again.text
    # Another amount under the same refund id is another operation: refused, not run.
    assert other_amount.is_error
    assert "its idempotency key was already used" in text_of(other_amount)
    assert len(refunds.runs) == 1


# --- any argument shape: a call or feedback, never an exception -----------------------------


@tool(name="notes.keep")
def keep(note: object) -> str:
    """Keep a note of any shape."""
    return "kept"


def nested(depth: int) -> dict[str, Any]:
    """An object ``depth`` levels deep (the object itself is one)."""
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def nested_text(depth: int) -> str:
    """The JSON text of ``nested(depth)``, written without recursing."""
    return '{"a": ' * (depth - 1) + "{}" + "}" * (depth - 1)


SHAPES: dict[str, tuple[object, str | None]] = {
    "text": ('{"note": {"a": 1}}', None),
    "mapping": ({"note": {"a": 1}}, None),
    "text 5000 deep": ('{"note": ' + nested_text(4_999) + "}", "nested too deeply"),
    "mapping 5000 deep": ({"note": nested(4_999)}, "nested too deeply"),
}


@pytest.mark.parametrize(("arguments", "problem"), SHAPES.values(), ids=SHAPES.keys())
async def test_any_argument_shape_in_process_is_a_call_or_feedback(
    arguments: object, problem: str | None
) -> None:
    gateway = ToolGateway(ToolCatalog(as_tools(keep)))
    result = await gateway.call("notes.keep", arguments)  # type: ignore[arg-type]
    if problem is None:
        assert (result.status, result.text) == ("ok", "kept")
    else:
        assert (result.is_error, result.status) == (True, "invalid_arguments")
        assert problem in result.text
        assert result.text.endswith("Fix the arguments and call the tool again.")


# The official client cannot write an object 5,000 levels deep (its serializer stops first),
# and the SDK's server answers such a request with a JSON-RPC parse error before any tool
# sees it: objects arrive at most as deep as the protocol reads them.
SERVED = {**SHAPES, "mapping 150 deep": ({"note": nested(149)}, "nested too deeply")}
del SERVED["mapping 5000 deep"]


@pytest.mark.parametrize(("arguments", "problem"), SERVED.values(), ids=SERVED.keys())
async def test_any_argument_shape_served_is_a_call_or_feedback(
    arguments: object, problem: str | None
) -> None:
    gateway = ToolGateway(ToolCatalog(as_tools(keep)))
    async with Client(served(gateway)) as client:
        result = await client.call_tool("call_tool", {"name": "notes.keep", "arguments": arguments})
        # The server keeps serving after it.
        after = await client.call_tool("call_tool", {"name": "notes.keep", "arguments": {}})
    if problem is None:
        assert (result.is_error, text_of(result)) == (False, "kept")
    else:
        assert result.is_error
        assert problem in text_of(result)
    assert after.is_error  # note is required
    assert "note: Field required" in text_of(after)


def test_an_object_deeper_than_the_protocol_reads_is_a_parse_error_and_serving_goes_on() -> None:
    from http_thread import serve_app

    gateway = ToolGateway(ToolCatalog(as_tools(keep)))
    app = served(gateway).streamable_http_app(stateless_http=True, json_response=True)
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}

    def call_tool(arguments: str) -> httpx.Response:
        # Written by hand: no client writes such a request.
        return httpx.post(
            url,
            headers=headers,
            content='{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": '
            '"call_tool", "arguments": {"name": "notes.keep", "arguments": ' + arguments + "}}}",
        )

    with serve_app(app) as url:
        deep = call_tool('{"note": ' + nested_text(4_999) + "}")
        after = call_tool('{"note": 1}')
    assert deep.json()["error"]["code"] == -32700  # the protocol's parse error
    assert after.json()["result"]["content"][0]["text"] == "kept"


# --- the tool's context is checked before anything runs -------------------------------------

ran_for: list[object] = []


@tool(name="ledger.balance", read_only=True, context_keys=("tenant_id",))
def balance(account: str, context: ToolContext) -> str:
    """The balance of one of the tenant's accounts."""
    ran_for.append(context.tenant_id)
    return f"{context.tenant_id}/{account}: 12.50"


async def test_a_tool_needing_a_tenant_is_refused_without_one_at_both_doors() -> None:
    ran_for.clear()
    gateway = ToolGateway(ToolCatalog(as_tools(balance)))
    with pytest.raises(ToolContextError, match="tenant_id"):
        await gateway.call("ledger.balance", {"account": "A-1"}, context=ToolContext(user_id="u"))
    async with Client(served(gateway)) as client:
        refused = await client.call_tool(
            "call_tool", {"name": "ledger.balance", "arguments": {"account": "A-1"}}
        )
        known = await client.call_tool(
            "call_tool",
            {"name": "ledger.balance", "arguments": {"account": "A-1"}},
            meta={"tenant_id": "acme"},
        )
    assert refused.is_error
    assert "tenant_id" in text_of(refused)
    assert (known.is_error, text_of(known)) == (False, "acme/A-1: 12.50")
    assert ran_for == ["acme"]  # nothing ran for the calls without a tenant


# --- a search answer fits the manager's bound by whole hits ---------------------------------


def sales_report(month: str) -> str:
    return month


def report_tools() -> list[Tool]:
    """Six report tools a search for "sales report" finds alike, each a long definition."""
    return [
        FunctionTool.from_function(
            sales_report,
            name=f"reports.sales_{region}",
            description=f"The monthly sales report of the {region} region. " + "Details. " * 40,
            metadata=ToolMetadata(read_only=True),
        )
        for region in ("north", "south", "east", "west", "central", "overseas")
    ]


async def test_a_search_answer_over_the_bound_is_whole_hits_and_the_rest_named() -> None:
    bound = 1_500
    gateway = ToolGateway(
        ToolCatalog(report_tools()),
        options=SearchOptions(min_relative_score=None),
        tool_calling_manager=ToolCallingManager(max_result_chars=bound),
    )
    found = await gateway.search("monthly sales report region", max_results=6)
    assert len(found) == 6
    async with Client(served(gateway)) as client:
        result = await client.call_tool(
            "tool_search", {"queries": ["monthly sales report region"], "max_results": 6}
        )
    text = text_of(result)
    assert not result.is_error
    assert len(text) <= bound
    hits = json.loads(text)  # valid JSON: nothing is cut inside a definition
    whole = [hit for hit in hits if "input_schema" in hit]
    named = [hit for hit in hits if "input_schema" not in hit]
    assert 1 <= len(whole) < 6
    assert whole == [f.as_json() for f in found[: len(whole)]]
    assert named == [{"name": f.name, "note": ENGLISH.left_out} for f in found[len(whole) :]]


async def test_one_search_answers_every_query_with_each_definition_once() -> None:
    gateway = ToolGateway(ToolCatalog(report_tools()), options=SearchOptions(max_results=2))
    queries = ["monthly sales report region", "sales report", "monthly sales report region"]
    each = [[f.name for f in await gateway.search(q, max_results=2)] for q in queries]
    async with Client(served(gateway)) as client:
        result = await client.call_tool("tool_search", {"queries": queries})
    hits = json.loads(text_of(result))
    names = [hit["name"] for hit in hits]
    # Each query's hits in turn, every one whole, and a tool given twice only once.
    assert names == list(dict.fromkeys(name for found in each for name in found))
    assert all("input_schema" in hit for hit in hits)
    assert len(set(names)) == len(names) < sum(len(found) for found in each)


# --- an approval that edits the arguments records what ran ----------------------------------

refunded: list[tuple[str, int]] = []


@tool(name="refund.issue", destructive=True, requires_approval=True, idempotency_key="refund_id")
def issue(refund_id: str, amount: int) -> str:
    """Issue a refund.

    Args:
        refund_id: The refund.
        amount: How much, in cents.
    """
    refunded.append((refund_id, amount))
    return f"refunded {amount} on {refund_id}"


async def test_an_edited_approval_records_what_ran_at_both_doors() -> None:
    refunded.clear()
    asked: list[dict[str, Any]] = []

    async def halve(request: ToolInvocation, /) -> Approve:
        asked.append(dict(request.arguments))
        return Approve(arguments={**request.arguments, "amount": request.arguments["amount"] // 2})

    gateway = ToolGateway(ToolCatalog(as_tools(issue)), approval=halve)
    clerk = ToolContext(CLERK)
    first = await gateway.call("refund.issue", {"refund_id": "R-1", "amount": 1000}, context=clerk)
    edited = {"refund_id": "R-1", "amount": 500}
    again = await gateway.call("refund.issue", edited, context=clerk)
    async with Client(served(gateway)) as client:
        served_again = await client.call_tool(
            "call_tool", {"name": "refund.issue", "arguments": edited}, meta=CLERK
        )
        original = await client.call_tool(
            "call_tool",
            {"name": "refund.issue", "arguments": {"refund_id": "R-1", "amount": 1000}},
            meta=CLERK,
        )
    assert (first.status, first.approval, first.text) == ("ok", "edited", "refunded 500 on R-1")
    # What ran is recorded: its repeat is a replay, and nobody is asked again.
    assert_replay(again, first)
    assert text_of(served_again) == again.text
    # The call as first made is not what ran: another operation under the same key, refused.
    assert original.is_error
    assert "its idempotency key was already used" in text_of(original)
    assert refunded == [("R-1", 500)]
    assert asked == [{"refund_id": "R-1", "amount": 1000}]


def assert_replay(result: GatewayCallResult, first: GatewayCallResult) -> None:
    assert (result.status, result.replayed, result.approval) == ("ok", True, None)
    assert result.text.startswith("[not run again: this exact call already ran at ")
    assert result.text.endswith("\n" + first.text)
