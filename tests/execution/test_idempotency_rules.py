"""Idempotency keys follow Stripe's rules: another call under a used key is refused, a replay
says it is one, and keys made of argument names are scoped by tenant and user.

The scenarios take a store, so tests/redis/test_redis_idempotency.py runs them on Redis too.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from toolrelay.exceptions import ConfigurationError, ToolContextError
from toolrelay.execution import (
    ApprovalInterceptor,
    Approve,
    IdempotencyInterceptor,
    IdempotencyStore,
    InMemoryIdempotencyStore,
    ReservationStatus,
    SqliteIdempotencyStore,
    ToolCallingManager,
    ToolCallOutcome,
    ToolCallStatus,
    ToolInvocation,
    idempotency_key,
)
from toolrelay.execution._idempotency import call_fingerprint
from toolrelay.messages import ToolCall, UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import tool_call_response
from toolrelay.tools import FunctionTool, Tool, ToolContext, tool
from toolrelay.tools._base import IdempotencyScope, ToolDefinition, ToolMetadata

REPLAY_LINE = re.compile(
    r"\[not run again: this exact call already ran at \d{4}-\d\d-\d\d \d\d:\d\d UTC; "
    r"its recorded result follows\]\n"
)
DEC_6_12_03 = 1796558580.0  # 2026-12-06 12:03 UTC


CLERK = {"user_id": "clerk"}


class Desk:
    """Refunds keyed by order alone (the mistake Stripe's rule catches), counting real runs."""

    def __init__(self, scope: IdempotencyScope = "user") -> None:
        self.runs: list[tuple[str, int]] = []
        self.gate: asyncio.Event | None = None
        self.started = asyncio.Event()

        async def issue(order_id: str, amount_cents: int) -> str:
            """Refund an order.

            Args:
                order_id: The order.
                amount_cents: How much, in cents.
            """
            self.runs.append((order_id, amount_cents))
            self.started.set()
            if self.gate is not None:
                await self.gate.wait()
            return f"refunded {amount_cents} on {order_id}"

        self.tool: Tool = FunctionTool.from_function(
            tool(
                name="refund.issue",
                destructive=True,
                idempotency_key=["order_id"],
                idempotency_scope=scope,
                timeout=5,
            )(issue)
        )

    async def call(
        self,
        manager: ToolCallingManager,
        amount: int,
        order: str = "E-5",
        **context: Any,
    ) -> ToolCallOutcome:
        prompt = Prompt(
            messages=(UserMessage(text="refund"),),
            # Keys are kept per caller: one clerk unless a test names others.
            options=ChatOptions(tools=(self.tool,), tool_context=context or CLERK),
        )
        arguments = json.dumps({"order_id": order, "amount_cents": amount})
        response = tool_call_response(ToolCall(id="c1", name="refund.issue", arguments=arguments))
        (outcome,) = (await manager.execute_tool_calls(prompt, response)).outcomes
        return outcome

    def key(self, amount: int, order: str = "E-5", **context: Any) -> str:
        arguments = {"order_id": order, "amount_cents": amount}
        key = idempotency_key(self.tool, arguments, ToolContext(context or CLERK))
        assert key is not None
        return key


def managers(store: IdempotencyStore, **options: Any) -> ToolCallingManager:
    return ToolCallingManager(idempotency=IdempotencyInterceptor(store, **options))


# --- scenarios, run on every store --------------------------------------------------------------


async def key_reuse_with_other_arguments_is_refused(store: IdempotencyStore) -> None:
    desk, manager = Desk(), managers(store)
    first = await desk.call(manager, 1000, tenant_id="acme")
    assert first.ok
    assert not first.replayed
    recorded = await store.reserve(desk.key(1000, tenant_id="acme"), owner="look", lease=60)

    other = await desk.call(manager, 300, tenant_id="acme")
    assert desk.runs == [("E-5", 1000)]  # refused: the tool did not run
    assert other.status is ToolCallStatus.IDEMPOTENCY_CONFLICT
    assert other.response.is_error
    assert not other.replayed
    assert other.recorded_result is None
    assert other.recorded_at == recorded.ran_at
    text = other.response.data
    assert text.startswith("Tool 'refund.issue' did not run: its idempotency key was already used")
    assert 'for other arguments (order_id="E-5", amount_cents=1000).' in text
    assert "A different operation needs a different key (this tool's key is made of order_id)" in (
        text
    )
    assert text.endswith("this call did not run.")
    assert "refunded 1000" not in text  # never answered with the earlier result

    # The record is the first call's, untouched: its repeat still replays it.
    after = await store.reserve(desk.key(1000, tenant_id="acme"), owner="look", lease=60)
    assert after == recorded
    again = await desk.call(manager, 1000, tenant_id="acme")
    assert again.replayed
    assert again.recorded_result == "refunded 1000 on E-5"
    assert desk.runs == [("E-5", 1000)]


async def a_replay_says_it_was_not_run_again_and_when(store: IdempotencyStore) -> None:
    desk, manager = Desk(), managers(store)
    before = time.time()
    first = await desk.call(manager, 1000, tenant_id="acme")
    replay = await desk.call(manager, 1000, tenant_id="acme")
    assert desk.runs == [("E-5", 1000)]
    assert replay.status is ToolCallStatus.OK
    assert replay.replayed
    line = REPLAY_LINE.match(replay.response.data)
    assert line is not None, replay.response.data
    assert replay.response.data[line.end() :] == first.response.data == "refunded 1000 on E-5"
    assert replay.recorded_result == first.response.data
    assert replay.recorded_at is not None
    assert before - 2 <= replay.recorded_at <= time.time() + 2  # the store's clock (Redis's)


async def a_conflict_never_waits_for_nor_touches_a_run_in_flight(store: IdempotencyStore) -> None:
    desk = Desk()
    desk.gate = asyncio.Event()
    # Two interceptors on one store, as two processes would have.
    one, other = managers(store, wait=5), managers(store, wait=5)
    running = asyncio.ensure_future(desk.call(one, 1000, tenant_id="acme"))
    await desk.started.wait()
    started = time.monotonic()
    refused = await desk.call(other, 300, tenant_id="acme")
    assert time.monotonic() - started < 2  # not the 5 s an identical call would wait
    assert refused.status is ToolCallStatus.IDEMPOTENCY_CONFLICT
    assert "amount_cents=1000), by a call that is still running." in refused.response.data
    desk.gate.set()
    first = await running
    assert first.ok
    assert not first.replayed
    assert desk.runs == [("E-5", 1000)]
    reservation = await store.reserve(desk.key(1000, tenant_id="acme"), owner="look", lease=60)
    assert reservation.status is ReservationStatus.COMPLETED
    assert reservation.result == "refunded 1000 on E-5"
    assert reservation.summary == 'order_id="E-5", amount_cents=1000'


async def a_conflict_with_an_unknown_outcome_is_refused(store: IdempotencyStore) -> None:
    desk, manager = Desk(), managers(store, wait=0)
    key = desk.key(1000, tenant_id="acme")
    fingerprint = call_fingerprint(desk.tool, {"order_id": "E-5", "amount_cents": 1000})
    await store.reserve(key, owner="lost", lease=60, fingerprint=fingerprint, summary="earlier")
    await store.mark_unknown(key, owner="lost")
    unknown = await store.reserve(key, owner="look", lease=60)
    refused = await desk.call(manager, 300, tenant_id="acme")
    assert refused.status is ToolCallStatus.IDEMPOTENCY_CONFLICT
    assert "(earlier), by a call whose outcome is unknown." in refused.response.data
    identical = await desk.call(manager, 1000, tenant_id="acme")
    assert identical.status is ToolCallStatus.ERROR
    assert identical.result_unknown
    assert desk.runs == []
    assert await store.reserve(key, owner="look", lease=60) == unknown  # untouched


async def users_without_a_tenant_do_not_share_keys(store: IdempotencyStore) -> None:
    desk, manager = Desk(), managers(store)
    alice = await desk.call(manager, 1000, user_id="alice")
    bob = await desk.call(manager, 1000, user_id="bob")
    assert alice.ok
    assert bob.ok
    assert not bob.replayed
    assert desk.runs == [("E-5", 1000), ("E-5", 1000)]
    assert desk.key(1000, user_id="alice") != desk.key(1000, user_id="bob")
    bob_again = await desk.call(manager, 300, user_id="bob")  # bob's key, other arguments
    assert bob_again.status is ToolCallStatus.IDEMPOTENCY_CONFLICT
    assert (await desk.call(manager, 1000, user_id="alice")).replayed
    assert len(desk.runs) == 2


async def the_tenant_scope_shares_keys_among_a_tenants_users(store: IdempotencyStore) -> None:
    desk, manager = Desk(scope="tenant"), managers(store)
    alice = await desk.call(manager, 1000, tenant_id="acme", user_id="alice")
    bob = await desk.call(manager, 1000, tenant_id="acme", user_id="bob")
    assert alice.ok
    assert not alice.replayed
    assert bob.replayed
    assert bob.recorded_result == "refunded 1000 on E-5"
    refused = await desk.call(manager, 300, tenant_id="acme", user_id="carol")
    assert refused.status is ToolCallStatus.IDEMPOTENCY_CONFLICT
    other_tenant = await desk.call(manager, 1000, tenant_id="globex", user_id="alice")
    assert other_tenant.ok
    assert not other_tenant.replayed
    assert desk.runs == [("E-5", 1000), ("E-5", 1000)]


async def a_conflict_in_one_process_is_refused_at_once(store: IdempotencyStore) -> None:
    desk = Desk()
    desk.gate = asyncio.Event()
    manager = managers(store, wait=5)  # one interceptor: the same process's identical calls queue
    running = asyncio.ensure_future(desk.call(manager, 1000))
    await desk.started.wait()
    started = time.monotonic()
    refused = await desk.call(manager, 300)
    assert time.monotonic() - started < 2  # refused, not queued behind the running call
    assert refused.status is ToolCallStatus.IDEMPOTENCY_CONFLICT
    assert "by a call that is still running" in refused.response.data
    desk.gate.set()
    assert (await running).ok
    assert desk.runs == [("E-5", 1000)]


async def an_edited_approval_records_what_ran(store: IdempotencyStore) -> None:
    async def halve(invocation: ToolInvocation, /) -> Approve:
        return Approve(arguments={**invocation.arguments, "amount_cents": 500})

    desk = Desk()
    manager = ToolCallingManager(
        idempotency=IdempotencyInterceptor(store),
        approval=ApprovalInterceptor(halve, destructive=True),
    )
    edited = await desk.call(manager, 1000)
    assert edited.ok
    assert desk.runs == [("E-5", 500)]
    plain = managers(store)  # a repeat of what ran, without the approver, replays it
    repeat = await desk.call(plain, 500)
    assert repeat.replayed
    assert repeat.recorded_result == "refunded 500 on E-5"
    original = await desk.call(plain, 1000)  # the model's first amount never ran
    assert original.status is ToolCallStatus.IDEMPOTENCY_CONFLICT
    assert "amount_cents=500" in original.response.data
    assert desk.runs == [("E-5", 500)]


async def anonymous_sessions_do_not_share_keys(store: IdempotencyStore) -> None:
    desk, manager = Desk(), managers(store)
    one = await desk.call(manager, 1000, session_id="s1")
    two = await desk.call(manager, 1000, session_id="s2")
    assert not two.replayed  # another caller: its own refund, never the first one's record
    assert (await desk.call(manager, 1000, session_id="s1")).replayed
    assert one.ok
    assert desk.runs == [("E-5", 1000), ("E-5", 1000)]


SCENARIOS = (
    a_conflict_in_one_process_is_refused_at_once,
    an_edited_approval_records_what_ran,
    anonymous_sessions_do_not_share_keys,
    key_reuse_with_other_arguments_is_refused,
    a_replay_says_it_was_not_run_again_and_when,
    a_conflict_never_waits_for_nor_touches_a_run_in_flight,
    a_conflict_with_an_unknown_outcome_is_refused,
    users_without_a_tenant_do_not_share_keys,
    the_tenant_scope_shares_keys_among_a_tenants_users,
)


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[IdempotencyStore]:
    if request.param == "memory":
        yield InMemoryIdempotencyStore()
    else:
        with SqliteIdempotencyStore(tmp_path / "keys.sqlite3") as sqlite:
            yield sqlite


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__)
async def test_scenario(scenario: Any, store: IdempotencyStore) -> None:
    await scenario(store)


# --- the interceptor alone ----------------------------------------------------------------------


async def test_a_call_naming_no_caller_is_refused_before_it_runs() -> None:
    desk = Desk()
    prompt = Prompt(
        messages=(UserMessage(text="refund"),),
        options=ChatOptions(tools=(desk.tool,)),
    )
    call = ToolCall(
        id="c1", name="refund.issue", arguments='{"order_id": "E-5", "amount_cents": 1}'
    )
    with pytest.raises(ToolContextError, match="keeps its idempotency keys per caller"):
        await ToolCallingManager().execute_tool_calls(prompt, tool_call_response(call))
    with pytest.raises(ToolContextError, match="requires 'tenant_id'"):
        await ToolCallingManager().run_call(call, (Desk("tenant").tool,), ToolContext(user_id="u"))
    everyone = await ToolCallingManager().run_call(call, (Desk("global").tool,))
    assert everyone.ok  # a global key needs no caller
    assert desk.runs == []


class SchemaRefund:
    """A tool validated by its JSON Schema only, as MCP and gateway tools are."""

    def __init__(self) -> None:
        self.runs: list[str] = []
        self.definition = ToolDefinition(
            name="refund.pay",
            description="Pay a refund.",
            input_schema={
                "type": "object",
                "properties": {"refund_id": {"type": "integer"}, "amount": {"type": "number"}},
                "required": ["refund_id", "amount"],
            },
        )
        self.metadata = ToolMetadata(idempotency_key=("refund_id",))

    async def call(self, arguments_json: str, context: ToolContext | None = None) -> str:
        self.runs.append(arguments_json)
        return "paid"


@pytest.mark.parametrize(
    "spellings",
    [
        ('{"refund_id": 7, "amount": 10}', '{"refund_id": 7.0, "amount": 10.0}'),
        ('{"refund_id": 7, "amount": 10}', '{"amount": 10.0, "refund_id": 7}'),
        ('{"refund_id": 7.0, "amount": 10.5}', '{"refund_id": 7, "amount": 10.50}'),
    ],
)
async def test_every_spelling_of_one_schema_call_is_one_key_and_one_run(
    spellings: tuple[str, str],
) -> None:
    refund = SchemaRefund()
    manager, clerk = ToolCallingManager(), ToolContext(user_id="clerk")
    outcomes = [
        await manager.run_call(
            ToolCall(id=f"c{i}", name="refund.pay", arguments=text), (refund,), clerk
        )
        for i, text in enumerate(spellings)
    ]
    assert [o.status for o in outcomes] == [ToolCallStatus.OK, ToolCallStatus.OK]
    assert [o.replayed for o in outcomes] == [False, True]
    assert len(refund.runs) == 1


async def test_a_default_left_out_is_the_same_call_as_the_default_given() -> None:
    runs: list[int] = []

    @tool(name="refund.issue", idempotency_key=["order_id"])
    def issue(order_id: str, amount_cents: int = 100) -> str:
        """Refund an order."""
        runs.append(amount_cents)
        return "ok"

    tools, clerk = (FunctionTool.from_function(issue),), ToolContext(user_id="clerk")
    manager = ToolCallingManager()
    first = await manager.run_call(
        ToolCall(id="a", name="refund.issue", arguments='{"order_id": "E-5"}'), tools, clerk
    )
    again = await manager.run_call(
        ToolCall(id="b", name="refund.issue", arguments='{"amount_cents": 100, "order_id": "E-5"}'),
        tools,
        clerk,
    )
    assert first.ok
    assert again.replayed
    assert runs == [100]


async def test_the_replay_line_gives_the_time_of_the_original_run() -> None:
    now = [DEC_6_12_03]
    desk = Desk()
    manager = managers(InMemoryIdempotencyStore(clock=lambda: now[0]))
    await desk.call(manager, 1000)
    now[0] += 3600
    replay = await desk.call(manager, 1000)
    assert replay.response.data == (
        "[not run again: this exact call already ran at 2026-12-06 12:03 UTC; its recorded "
        "result follows]\nrefunded 1000 on E-5"
    )
    assert replay.recorded_at == DEC_6_12_03
    refused = await desk.call(manager, 300)
    assert refused.response.data == (
        "Tool 'refund.issue' did not run: its idempotency key was already used at 2026-12-06 "
        '12:03 UTC for other arguments (order_id="E-5", amount_cents=1000). A different '
        "operation needs a different key (this tool's key is made of order_id); this call did "
        "not run."
    )


async def test_a_key_function_keeps_its_key_but_other_arguments_are_still_refused() -> None:
    paid: list[tuple[str, int]] = []

    @tool(idempotency_key=lambda args, ctx: f"refund-retry:{args['refund_id']}")
    def retry(refund_id: str, amount: int) -> str:
        """Retry a refund."""
        paid.append((refund_id, amount))
        return f"paid {amount}"

    retry_tool = FunctionTool.from_function(retry)
    manager = managers(InMemoryIdempotencyStore())
    prompt = Prompt(messages=(UserMessage(text="go"),), options=ChatOptions(tools=(retry_tool,)))
    result = await manager.execute_tool_calls(
        prompt,
        tool_call_response(
            ("retry", {"refund_id": "r-1", "amount": 100}),
            ("retry", {"refund_id": "r-1", "amount": 9}),
            ("retry", {"refund_id": "r-1", "amount": "100"}),  # the same call, once validated
        ),
    )
    assert paid == [("r-1", 100)]
    assert [o.status for o in result.outcomes] == [
        ToolCallStatus.OK,
        ToolCallStatus.IDEMPOTENCY_CONFLICT,
        ToolCallStatus.OK,
    ]
    assert {o.idempotency_key for o in result.outcomes} == {"refund-retry:r-1"}
    assert "made of" not in result.outcomes[1].response.data  # a function's key has no names
    # A key function decides the key alone: the user is not added to it.
    assert idempotency_key(retry_tool, {"refund_id": "r-1"}, ToolContext(user_id="a")) == (
        "refund-retry:r-1"
    )


async def test_another_tool_under_the_same_key_is_refused() -> None:
    ran: list[str] = []

    def make(name: str) -> Tool:
        def body(order_id: str) -> str:
            """Act on an order."""
            ran.append(name)
            return name

        decorated = tool(name=name, idempotency_key=lambda args, ctx: f"o:{args['order_id']}")
        return FunctionTool.from_function(decorated(body))

    manager = managers(InMemoryIdempotencyStore())
    prompt = Prompt(
        messages=(UserMessage(text="go"),),
        options=ChatOptions(tools=(make("refund"), make("cancel"))),
    )
    result = await manager.execute_tool_calls(
        prompt, tool_call_response(("refund", {"order_id": "1"}), ("cancel", {"order_id": "1"}))
    )
    assert ran == ["refund"]
    assert result.outcomes[1].status is ToolCallStatus.IDEMPOTENCY_CONFLICT


async def test_a_conflicting_call_is_never_sent_for_approval() -> None:
    asked: list[Mapping[str, Any]] = []

    async def approver(call: ToolInvocation, /) -> Approve:
        asked.append(dict(call.arguments))
        return Approve()

    desk = Desk()
    manager = ToolCallingManager(approval=ApprovalInterceptor(approver, destructive=True))
    await desk.call(manager, 1000)
    refused = await desk.call(manager, 300)
    assert refused.status is ToolCallStatus.IDEMPOTENCY_CONFLICT
    assert refused.approval is None
    assert asked == [{"order_id": "E-5", "amount_cents": 1000}]
    assert desk.runs == [("E-5", 1000)]


def test_keys_are_scoped_by_tenant_and_user_unless_the_tool_widens_the_scope() -> None:
    args = {"order_id": "E-5", "amount_cents": 1}
    user, tenant, everyone = Desk("user").tool, Desk("tenant").tool, Desk("global").tool

    def keys(t: Tool, *contexts: dict[str, Any]) -> set[str | None]:
        return {idempotency_key(t, args, ToolContext(c)) for c in contexts}

    alice, bob = {"tenant_id": "acme", "user_id": "alice"}, {"tenant_id": "acme", "user_id": "bob"}
    globex = {"tenant_id": "globex", "user_id": "alice"}
    assert len(keys(user, alice, bob, globex, {"user_id": "alice"}, {})) == 5
    assert len(keys(tenant, alice, bob)) == 1
    assert len(keys(tenant, alice, globex)) == 2
    assert len(keys(everyone, alice, bob, globex, {})) == 1


def unknown(scope: str) -> Any:
    """A scope the type checker would refuse, as a caller without one could pass it."""
    return scope


def test_the_scope_option_is_checked() -> None:
    with pytest.raises(ConfigurationError, match="one of 'user', 'tenant', 'global', not 'team'"):
        ToolMetadata(idempotency_key=["order_id"], idempotency_scope=unknown("team"))
    with pytest.raises(ConfigurationError, match="one of 'user', 'tenant', 'global'"):

        @tool(idempotency_key=["order_id"], idempotency_scope=unknown("org"))
        def refund(order_id: str) -> str:
            """Refund."""
            return order_id

    with pytest.raises(ConfigurationError, match="decides its key alone"):

        @tool(idempotency_key=lambda args, ctx: args["order_id"], idempotency_scope="tenant")
        def cancel(order_id: str) -> str:
            """Cancel."""
            return order_id

    @tool(idempotency_key="order_id", idempotency_scope="global")
    def shared(order_id: str) -> str:
        """Shared by everyone."""
        return order_id

    assert FunctionTool.from_function(shared).metadata.idempotency_scope == "global"


# --- what the stores record ---------------------------------------------------------------------


@pytest.fixture(params=["memory", "sqlite"])
def clocked_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    now = [DEC_6_12_03]
    if request.param == "memory":
        yield now, InMemoryIdempotencyStore(ttl=1000, clock=lambda: now[0])
    else:
        path = tmp_path / "keys.sqlite3"
        with SqliteIdempotencyStore(path, ttl=1000, clock=lambda: now[0]) as sqlite:
            yield now, sqlite


async def test_stores_keep_what_the_call_holding_a_key_was(
    clocked_store: tuple[list[float], Any],
) -> None:
    now, store = clocked_store
    held = {"fingerprint": "f1", "summary": 'a="\ud83d"'}  # a model's lone surrogate too
    assert (await store.reserve("k", owner="a", lease=60, **held)).status is (
        ReservationStatus.ACQUIRED
    )
    now[0] += 5
    running = await store.reserve("k", owner="b", lease=60, fingerprint="f2", summary="other")
    assert (running.status, running.fingerprint, running.summary, running.ran_at) == (
        ReservationStatus.RUNNING,
        "f1",
        'a="\ud83d"',
        DEC_6_12_03,
    )
    await store.mark_unknown("k", owner="a")
    now[0] += 5
    await store.complete("k", owner="a", result="done")  # the late result
    done = await store.reserve("k", owner="c", lease=60, fingerprint="f3", summary="third")
    assert (done.status, done.result, done.fingerprint, done.summary, done.ran_at) == (
        ReservationStatus.COMPLETED,
        "done",
        "f1",
        'a="\ud83d"',
        DEC_6_12_03,  # when it took the key, not when its result came
    )
    # Neither look changed the record.
    assert await store.reserve("k", owner="d", lease=60) == done
    # A result recorded without a reservation (it expired, or was deleted) is dated now.
    await store.complete("fresh", owner="x", result="r", fingerprint="f", summary="s")
    fresh = await store.reserve("fresh", owner="y", lease=60)
    assert (fresh.fingerprint, fresh.summary, fresh.ran_at) == ("f", "s", now[0])
