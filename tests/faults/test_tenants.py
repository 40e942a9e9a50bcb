"""1,000 concurrent conversations of several tenants on every index: nothing crosses a tenant.

Four tenants share one catalog (each its own tools, some shared ones, and ``root.wipe_all``,
which no request may see); a ``viewer`` sees none of its tenant's destructive tools. Per index
(regex, BM25, vector and hybrid with a hashing embedder, PostgreSQL keywords), one
``ChatClient`` + ``MessageChatMemoryAdvisor`` + ``ToolSearchAdvisor`` (that permission filter,
in-memory sessions and memory) serves 1,000 conversations of two turns each, concurrently, in
three waves: the first 500 conversations start, then they go on while 500 more start under
the *same conversation ids* in other tenants, then those go on. Some viewers start as agents
(the role changes between turns). A ``FunctionModel`` plays each conversation's plan:

- turn 1: ``tool_search`` with a generated query (plain words, another tenant's tool names,
  regex lookaheads probing forbidden names, patterns matching everything, Unicode, blank),
  then a call of each tool found plus forbidden tools called directly;
- turn 2: a call of the tools it now sees plus forbidden ones, then an answer.

Every model call checks (``leaks``): each tool shown is permitted to the turn's tenant and
role; each search answer names permitted tools only; no answer names a forbidden tool the
model did not write itself; a conversation's first model call of a turn sees only its own
history and the tools its own searches found. Every run is of a permitted tool. For one
search in eight, the index's answer among all tools equals that of an index built on the
permitted tools alone (a forbidden tool changes no answer). A turn that raises is a crash,
one past its bound or a wave that holds the loop a hang.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.extras import needs_extra
from tests.search._permissions import answer
from tests.search_only import SEARCH_ONLY
from toolrelay.client import ChatClient, MessageChatMemoryAdvisor, ToolSearchAdvisor
from toolrelay.memory import InMemoryChatMemoryRepository, MessageWindowChatMemory
from toolrelay.messages import (
    ChatResponse,
    Message,
    SystemMessage,
    ToolCall,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.prompt import Prompt
from toolrelay.search import (
    BM25ToolIndex,
    HybridToolIndex,
    RegexToolIndex,
    SearchRequest,
    ToolIndex,
    VectorToolIndex,
)
from toolrelay.testing import FunctionModel, HashingEmbedder, tool_call_response
from toolrelay.tools import (
    FunctionTool,
    Tool,
    ToolContext,
    ToolDefinition,
    provider_safe_name,
    tool,
)
from toolrelay.toolsearch import SearchOptions
from toolrelay.toolsearch._sessions import InMemorySessionStore

from .bounds import ROUND_BOUND, LoopWatch
from .ledger import SEED, Ledger, shorten

psycopg = pytest.importorskip("psycopg", reason=needs_extra("postgres"))

CONVERSATIONS = 1000  # per index
STEP = 50  # turns started per pass of the event loop (all of a wave run at once)
SAMPLE_EVERY = 8  # one search in this many is compared with an index of the permitted tools
TENANTS = ("acme", "globex", "initech", "umbrella")
ROLES = ("agent", "viewer")
ACTIONS = {
    "refund_order": "Refund a customer's order to their card",
    "lookup_invoice": "Look up an invoice by its number",
    "cancel_subscription": "Cancel a customer's subscription at the end of the period",
    "update_address": "Change the shipping address of an order",
    "issue_credit": "Issue store credit to a customer after a failed refund",
    "export_customers": "Export the customer list with emails and addresses",
}
DESTRUCTIVE = frozenset({"refund_order", "cancel_subscription", "issue_credit"})
SHARED = {
    "weather": "Current weather for a city",
    "currency_rates": "Convert an amount between currencies at today's rate",
}
ROOT = (
    "root.wipe_all",
    "Refund, cancel and export every order, invoice, subscription and customer of all tenants",
)
INDEXES = ("regex", "bm25", "vector", "hybrid", "postgres")


def permitted(context: ToolContext, definition: ToolDefinition) -> bool:
    """A tenant sees its own tools and the shared ones; a viewer no destructive one."""
    owner, _, action = definition.name.partition(".")
    if owner not in (context.tenant_id, "shared"):
        return False
    return not (context.get("role") == "viewer" and action in DESTRUCTIVE)


@dataclass
class Runs:
    """Every run of a catalog tool: (tool, tenant, role, case)."""

    seen: list[tuple[str, str, str, int]] = field(default_factory=list)


def catalog(runs: Runs) -> list[Tool]:
    def make(name: str, description: str) -> Tool:
        async def run(order_id: str, context: ToolContext) -> str:
            """Act on an order.

            Args:
                order_id: The order.
            """
            runs.seen.append(
                (name, str(context.tenant_id), str(context.get("role")), int(context.get("case")))
            )
            return json.dumps({"done": order_id})

        return FunctionTool.from_function(tool(name=name, description=description)(run))

    tools = [
        make(f"{tenant}.{action}", f"{text} ({tenant}).")
        for tenant in TENANTS
        for action, text in ACTIONS.items()
    ]
    tools += [make(f"shared.{name}", f"{text}.") for name, text in SHARED.items()]
    tools.append(make(*ROOT))
    return tools


# --- the plans ---------------------------------------------------------------------------------


@dataclass
class Plan:
    """One conversation: who, what it searches and which forbidden tools it calls."""

    case: int
    conversation: str
    tenant: str
    roles: tuple[str, str]  # per turn
    query: str
    forbidden: tuple[tuple[str, ...], tuple[str, ...]]  # names it calls directly, per turn
    found: list[str] = field(default_factory=list)  # what its own search answered
    turn: int = 0

    def context(self) -> dict[str, Any]:
        return {"tenant_id": self.tenant, "role": self.roles[self.turn], "case": self.case}

    def text(self) -> str:
        return f"case {self.case} turn {self.turn + 1}: handle order o-{self.case}"


def queries(rng: random.Random, tenant: str) -> str:
    other = rng.choice([t for t in TENANTS if t != tenant])
    action = rng.choice(list(ACTIONS))
    words = ACTIONS[action].lower()
    return rng.choice(
        [
            words,
            " ".join(rng.sample(words.split(), 3)),
            "refund order",
            "weather in Paris",
            f"{other}.{action}",
            f"{other}__{action}",
            f"{other} {words}",
            "root wipe all tenants",
            "wipe_all",
            rf"^(?={other})",
            rf"(?=[\s\S]*{other})[\s\S]*refund",
            rf"{other}\.\w+",
            rf"^(?!{tenant})\w+\.\w+",
            r"^root\.",
            r"(?s)wipe.*",
            r"[\s\S]*",
            r"^(?=[\s\S]*\nroot\.w)",
            r"(a+)+$",
            "退款 订单",
            "\u202erefund",
            "",
            "   ",
        ]
    )


def forbidden_names(rng: random.Random, tenant: str, role: str) -> tuple[str, ...]:
    other = rng.choice([t for t in TENANTS if t != tenant])
    pool = [f"{other}.{rng.choice(list(ACTIONS))}", ROOT[0]]
    if role == "viewer":
        pool.append(f"{tenant}.{rng.choice(sorted(DESTRUCTIVE))}")
    chosen = rng.sample(pool, rng.randint(0, 2))
    return tuple(provider_safe_name(n) if rng.random() < 0.7 else n for n in chosen)


def plans(seed: int, count: int = CONVERSATIONS) -> list[Plan]:
    """``count`` conversations; the second half reuses the first half's ids in other tenants."""
    rng = random.Random(seed)
    half = count // 2
    made = []
    for case in range(count):
        first = case < half
        tenant = TENANTS[case % len(TENANTS)] if first else TENANTS[(case + 1) % len(TENANTS)]
        conversation = f"c{case if first else case - half}"
        role = rng.choice(ROLES)
        roles = ("agent", "viewer") if role == "viewer" and rng.random() < 0.3 else (role, role)
        forbidden = (
            forbidden_names(rng, tenant, roles[0]),
            forbidden_names(rng, tenant, roles[1]),
        )
        made.append(
            Plan(
                case=case,
                conversation=conversation,
                tenant=tenant,
                roles=roles,
                query=queries(rng, tenant),
                forbidden=forbidden,
            )
        )
    return made


# --- the desk: one index's client, and what its model sees ------------------------------------


def make_index(kind: str, dsn: str, schema: str) -> ToolIndex:
    if kind == "regex":
        return RegexToolIndex()
    if kind == "bm25":
        return BM25ToolIndex()
    if kind == "vector":
        return VectorToolIndex(HashingEmbedder(), cache=False)
    if kind == "hybrid":
        return HybridToolIndex(BM25ToolIndex(), VectorToolIndex(HashingEmbedder(), cache=False))
    from toolrelay.search._postgres import PostgresToolIndex

    return PostgresToolIndex(dsn, schema=schema, max_connections=8)


def close_index(index: ToolIndex) -> None:
    close = getattr(index, "close", None)
    if close is not None:
        close()


@dataclass
class Desk:
    kind: str
    ledger: Ledger
    plans: dict[int, Plan]
    definitions: dict[str, ToolDefinition]  # provider-safe name -> definition
    searches: list[tuple[int, str]] = field(default_factory=list)  # (case, query)
    refused: int = 0

    def case_of(self, prompt: Prompt) -> Plan:
        question = next(m for m in reversed(prompt.messages) if isinstance(m, UserMessage))
        return self.plans[int(question.text.split()[1])]

    def leak(self, plan: Plan, what: str) -> None:
        replay = (
            f"# {self.kind} index, tenant {plan.tenant}, roles {plan.roles}, "
            f"conversation {plan.conversation!r}, query {plan.query!r}, "
            f"forbidden calls {plan.forbidden}"
        )
        self.ledger.fail("leaks", plan.case, f"{self.kind}: {what}", replay)

    def allowed(self, plan: Plan, name: str) -> bool:
        definition = self.definitions.get(provider_safe_name(name))
        return definition is not None and permitted(ToolContext(plan.context()), definition)

    def decide(self, prompt: Prompt) -> ChatResponse | str:
        plan = self.case_of(prompt)
        self.check_prompt(plan, prompt)
        since = _since_question(prompt.messages)
        order = json.dumps({"order_id": f"o-{plan.case}"})
        forbidden = [ToolCall(id="", name=n, arguments=order) for n in plan.forbidden[plan.turn]]
        shown = [
            t.definition.name for t in prompt.options.tools if t.definition.name != "tool_search"
        ]
        if plan.turn == 0 and not since:
            self.searches.append((plan.case, plan.query))
            return tool_call_response(("tool_search", {"queries": [plan.query]}))
        if plan.turn == 0 and len(since) == 1:
            (response,) = since[0].responses
            plan.found = [hit["name"] for hit in _hits(response.data)]
            calls = [ToolCall(id="", name=n, arguments=order) for n in plan.found[:2]] + forbidden
            if calls:
                return tool_call_response(*calls)
        if plan.turn == 1 and not since:
            calls = [
                ToolCall(id="", name=provider_safe_name(n), arguments=order) for n in shown[:2]
            ] + forbidden
            if calls:
                return tool_call_response(*calls)
        return f"case {plan.case} done"

    def check_prompt(self, plan: Plan, prompt: Prompt) -> None:
        context = ToolContext(prompt.options.tool_context)
        if context.get("case") != plan.case:
            self.leak(plan, f"the model of case {plan.case} got the context {dict(context)}")
        for shown in prompt.options.tools:
            definition = shown.definition
            if definition.name != "tool_search" and not permitted(context, definition):
                self.leak(plan, f"{plan.tenant}/{context.get('role')} was shown {definition.name}")
        since = _since_question(prompt.messages)
        if not since:
            self.check_history(plan, prompt)
        for message in since:
            for response in message.responses:
                if response.name == "tool_search":
                    for hit in _hits(response.data):
                        if not self.allowed(plan, hit["name"]):
                            self.leak(plan, f"a search answered {hit['name']} to {plan.tenant}")
                elif not self.allowed(plan, response.name):
                    self.refused += 1
                self.check_text(plan, response.name, response.data)

    def check_history(self, plan: Plan, prompt: Prompt) -> None:
        """A turn's first model call: its own history and its own discoveries alone."""
        for message in prompt.messages:
            if isinstance(message, SystemMessage):
                continue
            text = message.text if isinstance(message, UserMessage) else ""
            if isinstance(message, UserMessage) and not text.startswith(f"case {plan.case} "):
                self.leak(plan, f"conversation {plan.conversation!r} read {text[:60]!r}")
        if plan.turn == 0 and len(prompt.messages) > 2:
            kinds = [type(m).__name__ for m in prompt.messages]
            self.leak(plan, f"a new conversation read a history: {kinds}")
        own = {"tool_search", *plan.found} if plan.turn == 1 else {"tool_search"}
        for shown in prompt.options.tools:
            name = provider_safe_name(shown.definition.name)
            if name not in own:
                self.leak(plan, f"turn {plan.turn + 1} was shown {name}, which it never found")

    def check_text(self, plan: Plan, called: str, text: str) -> None:
        """No answer names a forbidden tool, unless it echoes the name the model wrote."""
        context = ToolContext(plan.context())
        for safe, definition in self.definitions.items():
            if permitted(context, definition):
                continue
            for name in (safe, definition.name):
                if name in text and name not in called and name not in plan.query:
                    self.leak(plan, f"an answer to {called} names {name}: {shorten(text)}")
                    return


def _since_question(messages: tuple[Message, ...]) -> list[ToolResponseMessage]:
    at = max(i for i, m in enumerate(messages) if isinstance(m, UserMessage))
    return [m for m in messages[at + 1 :] if isinstance(m, ToolResponseMessage)]


def _hits(data: str) -> list[dict[str, str]]:
    try:
        hits = json.loads(data)
    except ValueError:
        return []
    return [h for h in hits if isinstance(h, dict)] if isinstance(hits, list) else []


# --- the campaign ------------------------------------------------------------------------------


def postgres_dsn() -> str:
    dsn = os.environ.get("TOOLRELAY_TEST_POSTGRES_DSN")
    if not dsn:
        raise RuntimeError(
            "the tenants campaign searches a PostgreSQL index: set TOOLRELAY_TEST_POSTGRES_DSN "
            "to a server with pgvector (.ci/services.sh starts one)"
        )
    return dsn


def waves(all_plans: list[Plan]) -> Iterator[list[tuple[Plan, int]]]:
    """(plan, turn) per wave: the first half starts; it goes on as the second starts; on."""
    half = len(all_plans) // 2
    first, second = all_plans[:half], all_plans[half:]
    yield [(p, 0) for p in first]
    yield [(p, 1) for p in first] + [(p, 0) for p in second]
    yield [(p, 1) for p in second]


async def started_in_steps(
    wave: list[tuple[Plan, int]], turn: Callable[[Plan, int], Awaitable[None]]
) -> AsyncIterator[asyncio.Task[None]]:
    """The wave's turns as tasks, started STEP at a time so no loop pass starts them all."""
    for number, (plan, which) in enumerate(wave):
        yield asyncio.create_task(turn(plan, which))
        if number % STEP == STEP - 1:
            await asyncio.sleep(0)


async def run_index(kind: str, seed: int, ledger: Ledger, dsn: str, schema: str) -> None:
    runs = Runs()
    tools = catalog(runs)
    all_plans = plans(seed)
    desk = Desk(
        kind=kind,
        ledger=ledger,
        plans={p.case: p for p in all_plans},
        definitions={provider_safe_name(t.definition.name): t.definition for t in tools},
    )
    index = make_index(kind, dsn, schema)
    advisor = ToolSearchAdvisor(
        tools,
        index=index,
        session_store=InMemorySessionStore(),
        options=SearchOptions(tool_filter=permitted),
        channel="rewrite",  # the model reads the tools it was shown from the tool list
        **SEARCH_ONLY,  # what a turn shows comes from the model's own searches
    )
    memory = MessageChatMemoryAdvisor(
        MessageWindowChatMemory(InMemoryChatMemoryRepository(), max_messages=200)
    )
    client = (
        ChatClient.builder(FunctionModel(desk.decide)).default_advisors(memory, advisor).build()
    )

    async def turn(plan: Plan, number: int) -> None:
        plan.turn = number
        request = client.prompt(plan.text()).conversation(plan.conversation)
        try:
            await asyncio.wait_for(request.tool_context(plan.context()).acall(), ROUND_BOUND)
        except TimeoutError:
            desk.ledger.fail("hangs", plan.case, f"{kind}: turn {number + 1} ran past the bound")
        except Exception as exc:
            what = f"{kind}: turn {number + 1} raised {type(exc).__name__}: {shorten(str(exc))}"
            desk.ledger.fail("crashes", plan.case, what)
        ledger.tried += 1

    try:
        for number, wave in enumerate(waves(all_plans)):
            watch = LoopWatch()
            async with watch.watching():
                await asyncio.gather(*[task async for task in started_in_steps(wave, turn)])
            if watch.held:
                what = f"{kind}: wave {number + 1} held the event loop {watch.longest:.1f} s"
                ledger.fail("hangs", 0, what)
        for tool_name, tenant, role, case in runs.seen:
            definition = next(t.definition for t in tools if t.definition.name == tool_name)
            if not permitted(ToolContext(tenant_id=tenant, role=role), definition):
                desk.leak(desk.plans[case], f"{tool_name} ran for {tenant}/{role}")
        await asyncio.to_thread(compare_with_subsets, desk, index, kind, dsn, schema)
    finally:
        close_index(index)
    ledger.observed[f"searches, {kind}"] = len(desk.searches)
    ledger.observed[f"tool runs, {kind}"] = len(runs.seen)
    ledger.observed[f"forbidden calls refused, {kind}"] = desk.refused


def compare_with_subsets(desk: Desk, index: ToolIndex, kind: str, dsn: str, schema: str) -> None:
    """A sample of searches: the shared index answers as one of the permitted tools alone."""
    definitions = list(desk.definitions.values())
    alone: dict[tuple[str, str], ToolIndex] = {}
    compared = 0
    try:
        for case, query in desk.searches[::SAMPLE_EVERY]:
            plan = desk.plans[case]
            role = plan.roles[0]
            context = ToolContext(tenant_id=plan.tenant, role=role)
            subset = [d for d in definitions if permitted(context, d)]
            if (plan.tenant, role) not in alone:
                reference = make_index(kind, dsn, schema)
                reference.index(subset)
                alone[plan.tenant, role] = reference
            names = frozenset(d.name for d in subset)
            expected = answer(alone[plan.tenant, role].search(SearchRequest(query=query)))
            got = answer(index.search(SearchRequest(query=query, allowed=names)))
            compared += 1
            if got != expected:
                desk.leak(plan, f"{query!r} answered {got} among all tools, {expected} alone")
    finally:
        for reference in alone.values():
            close_index(reference)
    desk.ledger.observed[f"searches compared with an index of the permitted tools, {kind}"] = (
        compared
    )


async def campaign(seed: int = SEED, kinds: tuple[str, ...] = INDEXES) -> Ledger:
    """Play the conversations of ``seed`` on every index and count what crossed a tenant."""
    ledger = Ledger(campaign="tenants", unit="turns", seed=seed)
    dsn = postgres_dsn() if "postgres" in kinds else ""
    schema = f"faults_{uuid.uuid4().hex[:12]}"
    try:
        for kind in kinds:
            await run_index(kind, seed, ledger, dsn, schema)
    finally:
        if dsn:
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    ledger.observed["conversations per index"] = CONVERSATIONS
    return ledger


async def test_tenants_see_nothing_of_each_other() -> None:
    ledger = await campaign()
    ledger.check(at_least=2 * CONVERSATIONS * len(INDEXES))
