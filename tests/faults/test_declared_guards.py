"""Declared guards hold wherever a tool runs: generated cases over every place and setting.

Two tools declare their guards and nothing else: ``refund.issue`` (``requires_approval``,
``idempotency_key=["refund_id"]``) and ``note.add`` (``idempotency_key=["note_id"]`` only).
Each case picks a place a tool runs (``run_call`` on a manager, the plain client loop, the
client with tool search, the MCP gateway, the bridges' core), whether approval is configured
and what it answers (approve, deny, defer, or nothing configured at all), and a tool. Then it
calls the tool as a model would: once; the same call again; the same key with another
amount; the first call for another user of the tenant, and for a user of another tenant; and,
where a catalog is live, a guarded tool that arrives after the build.

Counted as failures:

- ``unapproved``: a ``requires_approval`` tool that ran without an approval of that very call;
  a place that, unconfigured, neither refused to build nor refused the call;
- ``double_runs``: an operation (tenant, user, key, arguments) that ran twice;
- ``cross_user_replays``: another user's or tenant's call answered with a recorded result;
- ``stale_answers``: a key reused with other arguments answered with the earlier result, or
  run;
- ``crashes``: an exception that the contract does not raise.
"""

from __future__ import annotations

import importlib.util
import json
import random
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from toolrelay import ChatClient, ToolContext, ToolSearchAdvisor, tool
from toolrelay.bridges import BridgeSearch
from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import (
    ApprovalInterceptor,
    Approve,
    Defer,
    Deny,
    ToolCallingManager,
    ToolInvocation,
)
from toolrelay.messages import ToolCall
from toolrelay.search import BM25ToolIndex
from toolrelay.testing import FunctionModel, tool_call_response
from toolrelay.tools import Tool, ToolCatalog, as_tools

from .ledger import SEED, Ledger
from .running import quiet_logs

# The gateway needs the mcp extra; without it (README's plain install) the other places run.
PLACES = ("run_call", "loop", "search", "bridge") + (
    ("gateway",) if importlib.util.find_spec("mcp") is not None else ()
)
APPROVALS = ("none", "approve", "deny", "defer")
CASES = 150

Answer = tuple[str, bool]  # the text the model reads, whether it is an error


class Bank:
    """The tools of one case, counting what really ran."""

    def __init__(self) -> None:
        self.runs: Counter[tuple[Any, ...]] = Counter()
        self.approved: list[tuple[str, str]] = []  # (tool, arguments JSON) a handler approved

        @tool(name="refund.issue", requires_approval=True, idempotency_key=["refund_id"])
        def issue(refund_id: str, amount_cents: int, context: ToolContext) -> str:
            """Issue a refund to the customer."""
            self.runs[
                "refund.issue", context.tenant_id, context.user_id, refund_id, amount_cents
            ] += 1
            return f"refunded {amount_cents} ({refund_id})"

        @tool(name="note.add", idempotency_key=["note_id"])
        def note(note_id: str, amount_cents: int, context: ToolContext) -> str:
            """Add a note to a customer's file."""
            self.ran("note.add", context, note_id, amount_cents)
            return f"noted {amount_cents} ({note_id})"

        @tool(name="payout.send", requires_approval=True)
        def payout(payout_id: str, amount_cents: int, context: ToolContext) -> str:
            """Send a payout; arrives in the catalog after the build."""
            self.runs[
                "payout.send", context.tenant_id, context.user_id, payout_id, amount_cents
            ] += 1
            return f"paid {amount_cents} ({payout_id})"

        self.issue, self.note, self.payout = as_tools(issue, note, payout)

    def ran(self, name: str, context: ToolContext, key: str, amount: int) -> None:
        self.runs[name, context.tenant_id, context.user_id, key, amount] += 1


def _approval(kind: str, bank: Bank) -> Any:
    if kind == "none":
        return None
    if kind == "defer":
        return ApprovalInterceptor()

    async def handler(call: ToolInvocation, /) -> Approve | Deny | Defer:
        if kind == "approve":
            bank.approved.append((call.tool_name, call.arguments.text))
            return Approve()
        return Deny("Not today.")

    return handler


Caller = Callable[[Tool, dict[str, Any], dict[str, str]], Awaitable[Answer]]


async def _place(place: str, approval: Any, bank: Bank, catalog: ToolCatalog) -> Caller:
    """Calls a tool at ``place``; raises ConfigurationError when the place refuses to build."""
    if place == "run_call":
        manager = ToolCallingManager(approval=approval)
        manager.check_tools(catalog, owner="ToolCallingManager")
        ids = iter(range(1, 10**6))

        async def run_call(t: Tool, args: dict[str, Any], ctx: dict[str, str]) -> Answer:
            call = ToolCall(id=f"c{next(ids)}", name=t.definition.name, arguments=json.dumps(args))
            outcome = await manager.run_call(call, tuple(catalog), ToolContext(ctx))
            return outcome.response.data, outcome.response.is_error

        return run_call
    if place in ("loop", "search"):
        queue: list[Any] = []
        model = FunctionModel(lambda prompt: queue.pop(0))
        if place == "loop":
            client = ChatClient(model, tools=catalog, approval=approval)
        else:
            search = ToolSearchAdvisor(catalog, index=BM25ToolIndex(), retention="all")
            client = ChatClient(model, advisors=[search], approval=approval)
        turns = iter(range(1, 10**6))

        async def in_client(t: Tool, args: dict[str, Any], ctx: dict[str, str]) -> Answer:
            safe = t.definition.name.replace(".", "__")
            script: list[Any] = [tool_call_response((safe, args)), "done"]
            if place == "search":
                query = t.definition.description
                script.insert(0, tool_call_response(("tool_search", {"query": query})))
            queue[:] = script
            conversation = f"{ctx['tenant_id']}-{ctx['user_id']}-{next(turns)}"
            response = (
                await client.prompt("go").conversation(conversation).tool_context(ctx).acall()
            )
            loop = response.tool_loop
            assert loop is not None
            if not loop.rounds:  # the turn stopped before its round: it waits for a person
                assert response.pending_approvals, response
                return "waiting for approval", True
            outcome = loop.rounds[-1].outcomes[-1]
            return outcome.response.data, outcome.response.is_error

        return in_client
    if place == "gateway":
        from toolrelay.gateway import ToolGateway

        manager = ToolCallingManager(approval=approval)
        gateway = ToolGateway(catalog, index=BM25ToolIndex(), tool_calling_manager=manager)

        async def via_gateway(t: Tool, args: dict[str, Any], ctx: dict[str, str]) -> Answer:
            result = await gateway.call(t.definition.name, args, context=ToolContext(ctx))
            return result.text, result.is_error

        return via_gateway
    bridge = BridgeSearch(catalog, index=BM25ToolIndex(), approval=approval)

    async def via_bridge(t: Tool, args: dict[str, Any], ctx: dict[str, str]) -> Answer:
        name = t.definition.name
        result = await bridge.call(
            name, json.dumps(args), key=None, context=ToolContext(ctx), discovered=[name]
        )
        return result.text, result.is_error

    return via_bridge


async def _case(number: int, rng: random.Random, ledger: Ledger) -> None:
    place, kind = rng.choice(PLACES), rng.choice(APPROVALS)
    bank = Bank()
    guarded = rng.random() < 0.6
    subject = bank.issue if guarded else bank.note
    catalog = ToolCatalog([subject])
    where = f"{subject.definition.name} at {place}, approval {kind}"
    try:
        call = await _place(place, _approval(kind, bank), bank, catalog)
    except ConfigurationError as exc:
        ledger.tried += 1
        if not (guarded and kind == "none" and "approval" in str(exc)):
            ledger.fail("crashes", number, f"{where}: refused to build: {exc}")
        else:
            ledger.observed["refused at build"] = ledger.observed.get("refused at build", 0) + 1
        return
    if guarded and kind == "none" and place != "run_call":
        ledger.fail("unapproved", number, f"{where}: built without an approval")
    key = f"R-{number}"
    amount = rng.randint(1, 9_999)
    first = {"refund_id" if guarded else "note_id": key, "amount_cents": amount}
    other = {**first, "amount_cents": amount + 1}
    alice = {"tenant_id": "acme", "user_id": "alice"}
    bob = {"tenant_id": "acme", "user_id": "bob"}
    alice_elsewhere = {"tenant_id": "globex", "user_id": "alice"}
    steps = [(first, alice), (first, alice), (other, alice), (first, bob), (first, alice_elsewhere)]
    answers: list[Answer] = []
    with quiet_logs():
        for args, ctx in steps:
            ledger.tried += 1
            try:
                answers.append(await call(subject, args, ctx))
            except Exception as exc:
                ledger.fail("crashes", number, f"{where}: {type(exc).__name__}: {exc}")
                return
        if place != "run_call":  # a guarded tool that arrives after the build
            catalog.add(bank.payout)
            ledger.tried += 1
            try:
                await call(bank.payout, {"payout_id": key, "amount_cents": amount}, alice)
            except Exception as exc:
                ledger.fail("crashes", number, f"{where}, late tool: {type(exc).__name__}: {exc}")
    _judge(number, where, bank, subject, kind, guarded, answers, ledger)


def _judge(
    number: int,
    where: str,
    bank: Bank,
    subject: Tool,
    kind: str,
    guarded: bool,
    answers: list[Answer],
    ledger: Ledger,
) -> None:
    name = subject.definition.name
    for operation, count in bank.runs.items():
        if count > 1:
            ledger.fail("double_runs", number, f"{where}: {operation} ran {count} times")
    for operation in bank.runs:
        if operation[0] == "payout.send" and kind != "approve":
            ledger.fail("unapproved", number, f"{where}: the late payout ran without approval")
    if guarded:
        ran = sum(c for op, c in bank.runs.items() if op[0] == name)
        if kind != "approve" and ran:
            ledger.fail("unapproved", number, f"{where}: ran {ran} times unapproved")
        approved = Counter(t for t, _ in bank.approved)
        if ran > approved[name]:
            ledger.fail("unapproved", number, f"{where}: {ran} runs for {approved[name]} approvals")
    if guarded and kind != "approve":
        return  # nothing of it may run; checked above
    first_text = answers[0][0]
    stale_text, stale_error = answers[2]
    if not stale_error or stale_text == first_text:
        ledger.fail("stale_answers", number, f"{where}: the reused key answered {stale_text!r}")
    alice = [op for op in bank.runs if op[0] == name and op[1:3] == ("acme", "alice")]
    if len(alice) != 1:
        ledger.fail("stale_answers", number, f"{where}: alice's operations that ran: {alice}")
    for user, tenant in (("bob", "acme"), ("alice", "globex")):
        if not any(op[1:3] == (tenant, user) for op in bank.runs):
            ledger.fail(
                "cross_user_replays", number, f"{where}: {user} of {tenant} got another's record"
            )


async def campaign(seed: int = SEED, cases: int = CASES) -> Ledger:
    """Run ``cases`` generated cases; the ledger of what broke."""
    ledger = Ledger(campaign="declared guards, every place", unit="calls", seed=seed)
    rng = random.Random(seed)
    for number in range(cases):
        await _case(number, rng, ledger)
    return ledger


async def test_declared_guards_hold_everywhere() -> None:
    ledger = await campaign()
    ledger.check(at_least=CASES)
