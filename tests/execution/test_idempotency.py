"""Idempotency: keys, stores, and the interceptor that answers repeated calls."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolrelay.exceptions import (
    ConfigurationError,
    StorageError,
    StorageUnavailableError,
    ToolDefinitionError,
)
from toolrelay.execution import (
    ApprovalInterceptor,
    ApprovalStatus,
    Approve,
    DefaultToolExceptionProcessor,
    Deny,
    IdempotencyInterceptor,
    IdempotencyStore,
    InMemoryIdempotencyStore,
    Proceed,
    Reservation,
    ReservationStatus,
    SqliteIdempotencyStore,
    ToolCallingManager,
    ToolCallOutcome,
    ToolCallStatus,
    ToolExecutionResult,
    ToolInvocation,
    idempotency_key,
)
from toolrelay.messages import ToolCall, UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import tool_call_response
from toolrelay.tools import FunctionTool, Tool, ToolContext, WorkerPool, as_tools, tool
from toolrelay.tools._base import ToolDefinition, ToolMetadata


class Refunds:
    """A refund desk whose retry must never pay twice."""

    def __init__(self, *, failures: int = 0) -> None:
        self.paid: list[tuple[str, int]] = []
        self.failures = failures

    @tool(
        name="refund.retry",
        destructive=True,
        idempotency_key=lambda args, ctx: f"refund-retry:{args['refund_id']}",
    )
    def retry(self, refund_id: str, amount: int = 100) -> str:
        """Retry a failed refund.

        Args:
            refund_id: The failed refund.
            amount: Cents.
        """
        if self.failures:
            self.failures -= 1
            raise RuntimeError("payment provider unavailable")
        self.paid.append((refund_id, amount))
        return f"refund {refund_id} paid ({amount}), payout #{len(self.paid)}"

    @tool(name="refund.note", idempotency_key=["refund_id"])
    def note(self, refund_id: str, text: str) -> str:
        """Add a note to a refund.

        Args:
            refund_id: The refund.
            text: The note.
        """
        self.paid.append((f"note:{refund_id}", 0))
        return f"noted on {refund_id}"


def tools_of(desk: Refunds) -> tuple[Tool, ...]:
    return (FunctionTool.from_function(desk.retry), FunctionTool.from_function(desk.note))


class CountingApprover:
    def __init__(self, verdict: Any = None) -> None:
        self.verdict = verdict or Approve()
        self.asked: list[ToolInvocation] = []

    async def __call__(self, request: ToolInvocation, /) -> Any:
        self.asked.append(request)
        return self.verdict


async def run_round(
    manager: ToolCallingManager, desk: Refunds, *calls: tuple[str, dict[str, Any]], **ctx: Any
) -> ToolExecutionResult:
    prompt = Prompt(
        messages=(UserMessage(text="retry"),),
        options=ChatOptions(tools=tools_of(desk), tool_context=ctx),
    )
    response = tool_call_response(
        *(ToolCall(id=f"c{i}", name=n, arguments=json.dumps(a)) for i, (n, a) in enumerate(calls))
    )
    return await manager.execute_tool_calls(prompt, response)


RETRY = ("refund.retry", {"refund_id": "r-1"})


# --- keys ---------------------------------------------------------------------------------------


def test_named_arguments_and_the_tenant_make_the_key() -> None:
    note = tools_of(Refunds())[1]
    key = idempotency_key(note, {"refund_id": "r-1", "text": "a"}, ToolContext(tenant_id="t1"))
    assert key is not None
    assert key.startswith("refund.note:")
    assert key == idempotency_key(
        note, {"text": "b", "refund_id": "r-1"}, ToolContext(tenant_id="t1")
    )
    assert key != idempotency_key(note, {"refund_id": "r-2"}, ToolContext(tenant_id="t1"))
    assert key != idempotency_key(note, {"refund_id": "r-1"}, ToolContext(tenant_id="t2"))


def test_a_key_function_decides_the_key_alone() -> None:
    retry = tools_of(Refunds())[0]
    assert idempotency_key(retry, {"refund_id": "r-1"}, ToolContext()) == "refund-retry:r-1"
    with pytest.raises(KeyError):
        idempotency_key(retry, {}, ToolContext())


def test_tools_without_a_declaration_have_no_key() -> None:
    @tool
    def plain(x: int) -> int:
        """Plain."""
        return x

    assert idempotency_key(FunctionTool.from_function(plain), {"x": 1}, ToolContext()) is None


def test_a_key_function_must_return_text() -> None:
    @tool(idempotency_key=lambda args, ctx: None)  # type: ignore[arg-type,return-value]
    def broken(x: int) -> int:
        """Broken."""
        return x

    with pytest.raises(ConfigurationError, match="non-empty string"):
        idempotency_key(FunctionTool.from_function(broken), {"x": 1}, ToolContext())


async def test_a_broken_key_function_aborts_the_round() -> None:
    @tool(idempotency_key=lambda args, ctx: "")
    def broken(x: int) -> int:
        """Broken."""
        return x

    manager = ToolCallingManager(idempotency=IdempotencyInterceptor())
    prompt = Prompt(
        messages=(UserMessage(text="go"),),
        options=ChatOptions(tools=(FunctionTool.from_function(broken),)),
    )
    with pytest.raises(ConfigurationError, match="non-empty string"):
        await manager.execute_tool_calls(prompt, tool_call_response(("broken", {"x": 1})))


def test_the_decorator_checks_named_arguments() -> None:
    with pytest.raises(ToolDefinitionError, match="unknown parameter 'order'"):

        @tool(idempotency_key=["order"])
        def refund(order_id: str) -> str:
            """Refund."""
            return order_id

    with pytest.raises(ToolDefinitionError, match="idempotency_key must be"):

        @tool(idempotency_key=[])
        def other(order_id: str) -> str:
            """Other."""
            return order_id

    @tool(idempotency_key="order_id")
    def single(order_id: str) -> str:
        """A single name is fine."""
        return order_id

    assert FunctionTool.from_function(single).metadata.idempotency_key == "order_id"


# --- the interceptor ----------------------------------------------------------------------------


async def test_two_identical_calls_in_one_round_run_once() -> None:
    desk = Refunds()
    manager = ToolCallingManager(idempotency=IdempotencyInterceptor())
    result = await run_round(manager, desk, RETRY, RETRY)
    assert desk.paid == [("r-1", 100)]
    assert all(o.ok for o in result.outcomes)
    ran, replayed = sorted(result.outcomes, key=lambda o: o.replayed)
    assert replayed.recorded_result == ran.response.data
    assert replayed.response.data.endswith("\n" + ran.response.data)
    assert sorted(o.replayed for o in result.outcomes) == [False, True]
    assert {o.idempotency_key for o in result.outcomes} == {"refund-retry:r-1"}
    assert [r.id for r in result.responses] == ["c0", "c1"]


async def test_a_call_repeated_in_a_later_round_gets_the_recorded_result() -> None:
    desk = Refunds()
    manager = ToolCallingManager(idempotency=IdempotencyInterceptor())
    first = await run_round(manager, desk, RETRY)
    # The default spelled out is the same call: the arguments are compared once validated.
    second = await run_round(manager, desk, ("refund.retry", {"refund_id": "r-1", "amount": 100}))
    assert desk.paid == [("r-1", 100)]
    assert second.outcomes[0].replayed
    assert second.outcomes[0].recorded_result == first.outcomes[0].response.data
    assert second.outcomes[0].status is ToolCallStatus.OK


async def test_different_keys_run_separately() -> None:
    desk = Refunds()
    manager = ToolCallingManager(idempotency=IdempotencyInterceptor())
    await run_round(manager, desk, RETRY, ("refund.retry", {"refund_id": "r-2"}))
    assert sorted(desk.paid) == [("r-1", 100), ("r-2", 100)]


async def test_failed_runs_are_not_recorded_and_may_be_retried() -> None:
    desk, store = Refunds(failures=1), InMemoryIdempotencyStore()
    manager = ToolCallingManager(idempotency=IdempotencyInterceptor(store))
    failed = await run_round(manager, desk, RETRY)
    assert failed.outcomes[0].status is ToolCallStatus.ERROR
    assert len(store) == 0
    retried = await run_round(manager, desk, RETRY)
    assert retried.outcomes[0].ok
    assert not retried.outcomes[0].replayed
    assert desk.paid == [("r-1", 100)]


async def test_a_run_whose_result_cannot_be_recorded_is_never_run_again() -> None:
    class Unrecording(InMemoryIdempotencyStore):
        """Reserves and releases, but its first ``complete`` meets a dropped connection."""

        failures = 1

        async def complete(self, key: str, *, owner: str, result: str, **recorded: Any) -> None:
            if self.failures:
                self.failures -= 1
                raise StorageUnavailableError("the connection dropped while recording")
            await super().complete(key, owner=owner, result=result, **recorded)

    desk, store = Refunds(), Unrecording()
    manager = ToolCallingManager(idempotency=IdempotencyInterceptor(store))
    with pytest.raises(StorageUnavailableError):
        await run_round(manager, desk, RETRY)
    retried = await run_round(manager, desk, RETRY)
    assert retried.outcomes[0].result_unknown  # it ran; a retry must not pay again
    assert desk.paid == [("r-1", 100)]


async def test_a_run_whose_result_cannot_become_text_is_never_run_again() -> None:
    class Unprintable:
        def __str__(self) -> str:
            raise RuntimeError("no text")

    paid: list[str] = []

    @tool(idempotency_key=lambda args, ctx: f"pay:{args['refund_id']}")
    def pay(refund_id: str) -> object:
        """Pay a refund."""
        paid.append(refund_id)
        return Unprintable()

    manager = ToolCallingManager(idempotency=IdempotencyInterceptor(InMemoryIdempotencyStore()))
    prompt = Prompt(messages=(UserMessage(text="pay"),), options=ChatOptions(tools=as_tools(pay)))
    call = tool_call_response(ToolCall(id="c1", name="pay", arguments='{"refund_id": "r-1"}'))
    first = await manager.execute_tool_calls(prompt, call)
    again = await manager.execute_tool_calls(prompt, call)
    assert paid == ["r-1"]  # the work was done once; the retry does not do it again
    assert "will not run it again" in first.responses[0].data
    assert again.outcomes[0].result_unknown


async def test_an_aborted_round_releases_its_reservations() -> None:
    desk, store = Refunds(failures=1), InMemoryIdempotencyStore()
    manager = ToolCallingManager(
        idempotency=IdempotencyInterceptor(store),
        exception_processor=DefaultToolExceptionProcessor(rethrow=[RuntimeError]),
    )
    with pytest.raises(RuntimeError):
        await run_round(manager, desk, RETRY)
    assert len(store) == 0


async def test_a_key_that_cannot_be_derived_answers_without_running() -> None:
    ran: list[str] = []

    @tool(idempotency_key=lambda args, ctx: f"export:{args['month'][5:7]}:{int(args['month'])}")
    def export(month: str) -> str:
        """Export a month."""
        ran.append(month)
        return month

    manager = ToolCallingManager(idempotency=IdempotencyInterceptor())
    prompt = Prompt(
        messages=(UserMessage(text="go"),),
        options=ChatOptions(tools=(FunctionTool.from_function(export),)),
    )
    result = await manager.execute_tool_calls(
        prompt, tool_call_response(("export", {"month": "2024-05"}))
    )
    (outcome,) = result.outcomes
    assert outcome.status is ToolCallStatus.ERROR
    assert "idempotency key could not be derived" in outcome.response.data
    assert isinstance(outcome.exception, ValueError)
    assert ran == []


async def test_invalid_arguments_are_answered_before_any_key_is_taken() -> None:
    desk, store = Refunds(), InMemoryIdempotencyStore()
    manager = ToolCallingManager(idempotency=IdempotencyInterceptor(store))
    result = await run_round(manager, desk, ("refund.retry", {"amount": 5}))
    (outcome,) = result.outcomes
    assert outcome.status is ToolCallStatus.INVALID_ARGUMENTS
    assert "refund_id: Field required" in outcome.response.data
    assert outcome.idempotency_key is None
    assert len(store) == 0
    assert desk.paid == []


async def test_the_retry_is_approved_once_and_paid_once() -> None:
    desk, approver = Refunds(), CountingApprover()
    manager = ToolCallingManager(
        idempotency=IdempotencyInterceptor(),
        approval=ApprovalInterceptor(approver, destructive=True),
    )
    first = await run_round(manager, desk, RETRY, RETRY)  # twice in one round
    later = await run_round(manager, desk, RETRY)  # and again in a later round
    assert desk.paid == [("r-1", 100)]
    assert len(approver.asked) == 1
    outcomes = [*first.outcomes, *later.outcomes]
    assert all(o.ok for o in outcomes)
    assert [o.replayed for o in outcomes].count(True) == 2
    assert [o.approval for o in outcomes].count(ApprovalStatus.APPROVED) == 1


async def test_a_denied_call_leaves_the_key_free() -> None:
    desk, store = Refunds(), InMemoryIdempotencyStore()
    denying = ToolCallingManager(
        idempotency=IdempotencyInterceptor(store),
        approval=ApprovalInterceptor(CountingApprover(Deny()), destructive=True),
    )
    denied = await run_round(denying, desk, RETRY)
    assert denied.outcomes[0].status is ToolCallStatus.DENIED
    assert len(store) == 0
    approving = ToolCallingManager(
        idempotency=IdempotencyInterceptor(store),
        approval=ApprovalInterceptor(CountingApprover(), destructive=True),
    )
    approved = await run_round(approving, desk, RETRY)
    assert approved.outcomes[0].ok
    assert not approved.outcomes[0].replayed
    assert desk.paid == [("r-1", 100)]


async def test_an_edit_that_changes_the_key_is_keyed_again() -> None:
    desk, store = Refunds(), InMemoryIdempotencyStore()
    plain = ToolCallingManager(idempotency=IdempotencyInterceptor(store))
    await run_round(plain, desk, ("refund.retry", {"refund_id": "r-2"}))  # r-2 is paid
    editing = ToolCallingManager(
        idempotency=IdempotencyInterceptor(store),
        approval=ApprovalInterceptor(
            CountingApprover(Approve(arguments={"refund_id": "r-2"})), destructive=True
        ),
    )
    result = await run_round(editing, desk, RETRY)
    (outcome,) = result.outcomes
    assert outcome.replayed  # r-2's recorded result: it is never paid twice
    assert outcome.approval is ApprovalStatus.EDITED
    assert outcome.idempotency_key == "refund-retry:r-2"
    assert desk.paid == [("r-2", 100)]
    again = await run_round(plain, desk, RETRY)  # r-1 itself was never recorded
    assert not again.outcomes[0].replayed
    assert desk.paid == [("r-2", 100), ("r-1", 100)]


async def test_an_edit_to_a_new_key_records_under_that_key() -> None:
    desk, store = Refunds(), InMemoryIdempotencyStore()
    editing = ToolCallingManager(
        idempotency=IdempotencyInterceptor(store),
        approval=ApprovalInterceptor(
            CountingApprover(Approve(arguments={"refund_id": "r-3"})), destructive=True
        ),
    )
    result = await run_round(editing, desk, RETRY)
    assert result.outcomes[0].idempotency_key == "refund-retry:r-3"
    assert desk.paid == [("r-3", 100)]
    reservation = await store.reserve("refund-retry:r-3", owner="x", lease=60)
    assert reservation.status is ReservationStatus.COMPLETED
    assert (await store.reserve("refund-retry:r-1", owner="x", lease=60)).status is (
        ReservationStatus.ACQUIRED
    )


async def test_a_call_running_elsewhere_is_waited_for_then_answered_with_an_error() -> None:
    desk, store = Refunds(), InMemoryIdempotencyStore()
    await store.reserve("refund-retry:r-1", owner="another process", lease=60)
    manager = ToolCallingManager(idempotency=IdempotencyInterceptor(store, wait=0))
    result = await run_round(manager, desk, RETRY)
    (outcome,) = result.outcomes
    assert outcome.status is ToolCallStatus.ERROR
    assert "still running elsewhere" in outcome.response.data
    assert desk.paid == []


async def test_a_reservation_whose_owner_was_lost_is_unknown_never_run_again() -> None:
    now = [0.0]
    desk, store = Refunds(), InMemoryIdempotencyStore(clock=lambda: now[0])
    await store.reserve("refund-retry:r-1", owner="crashed process", lease=60)
    assert await store.confirm("refund-retry:r-1", owner="crashed process")  # it had started
    now[0] = 61.0
    manager = ToolCallingManager(idempotency=IdempotencyInterceptor(store, lease=60, wait=0))
    result = await run_round(manager, desk, RETRY)
    (outcome,) = result.outcomes
    assert outcome.status is ToolCallStatus.ERROR
    assert outcome.result_unknown
    assert "whether it took effect is unknown" in outcome.response.data
    assert desk.paid == []
    await store.delete("refund-retry:r-1")  # someone checked: it did not happen
    assert (await run_round(manager, desk, RETRY)).outcomes[0].ok
    assert desk.paid == [("r-1", 100)]


def test_interceptor_options_are_checked() -> None:
    with pytest.raises(ConfigurationError):
        IdempotencyInterceptor(lease=0)
    with pytest.raises(ConfigurationError):
        InMemoryIdempotencyStore(ttl=0)
    with pytest.raises(ConfigurationError):
        SqliteIdempotencyStore(":memory:", ttl=-1)


# --- stores -------------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["memory", "sqlite"])
def clock_and_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Clock, Any]]:
    clock = Clock()
    if request.param == "memory":
        yield clock, InMemoryIdempotencyStore(ttl=100, clock=clock)
    else:
        with SqliteIdempotencyStore(tmp_path / "keys.sqlite3", ttl=100, clock=clock) as store:
            yield clock, store


async def test_store_reserve_complete_release(clock_and_store: tuple[Clock, Any]) -> None:
    _clock, store = clock_and_store
    assert isinstance(store, IdempotencyStore)
    assert (await store.reserve("k", owner="a", lease=10)).status is ReservationStatus.ACQUIRED
    assert (await store.reserve("k", owner="b", lease=10)).status is ReservationStatus.RUNNING
    await store.release("k", owner="b")  # not b's reservation: nothing happens
    assert (await store.reserve("k", owner="b", lease=10)).status is ReservationStatus.RUNNING
    await store.release("k", owner="a")
    assert (await store.reserve("k", owner="b", lease=10)).status is ReservationStatus.ACQUIRED
    await store.complete("k", owner="b", result="first")
    await store.complete("k", owner="c", result="second")  # the first result stays
    reservation = await store.reserve("k", owner="d", lease=10)
    assert reservation.status is ReservationStatus.COMPLETED
    assert reservation.result == "first"
    await store.release("k", owner="b")  # a recorded result is never released
    assert (await store.reserve("k", owner="d", lease=10)).result == "first"


async def test_store_leases_and_ttl(clock_and_store: tuple[Clock, Any]) -> None:
    clock, store = clock_and_store
    await store.reserve("k", owner="a", lease=10)
    assert await store.confirm("k", owner="a")  # its run started
    clock.now += 11  # its owner is lost: whether it ran is unknown, and it is never taken over
    assert (await store.reserve("k", owner="b", lease=10)).status is ReservationStatus.UNKNOWN
    await store.complete("k", owner="b", result="done")
    clock.now += 99
    assert (await store.reserve("k", owner="c", lease=10)).status is ReservationStatus.COMPLETED
    clock.now += 1  # the result is 100 s old: expired
    assert (await store.reserve("k", owner="c", lease=10)).status is ReservationStatus.ACQUIRED
    await store.delete("k")
    assert (await store.reserve("k", owner="e", lease=10)).status is ReservationStatus.ACQUIRED


async def test_a_reservation_that_never_started_is_taken_over_once_its_lease_ends(
    clock_and_store: tuple[Clock, Any],
) -> None:
    clock, store = clock_and_store
    await store.reserve("k", owner="a", lease=10)  # a lost owner, before its tool started
    assert (await store.reserve("k", owner="b", lease=10)).status is ReservationStatus.RUNNING
    clock.now += 11
    assert (await store.reserve("k", owner="b", lease=10)).status is ReservationStatus.ACQUIRED
    assert not await store.confirm("k", owner="a")  # a's run, if it comes back, never starts
    assert await store.confirm("k", owner="b")
    await store.complete("k", owner="b", result="paid once")
    assert (await store.reserve("k", owner="c", lease=10)).result == "paid once"
    assert not await store.confirm("k", owner="b")  # a recorded result is not a reservation


class LostReply:
    """A store whose first reservation is applied but whose answer never comes back."""

    def __init__(self, store: IdempotencyStore) -> None:
        self.store = store
        self.lost = 1

    async def reserve(self, key: str, **options: Any) -> Reservation:
        reservation = await self.store.reserve(key, **options)
        if self.lost:
            self.lost -= 1
            raise StorageUnavailableError("idempotency store", "the connection was reset")
        return reservation

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


async def test_a_retry_of_a_call_whose_reservation_reply_was_lost_runs_at_once(
    clock_and_store: tuple[Clock, Any],
) -> None:
    _clock, store = clock_and_store
    desk = Refunds()
    interceptor = IdempotencyInterceptor(LostReply(store), wait=30)  # type: ignore[arg-type]
    manager = ToolCallingManager(idempotency=interceptor)
    with pytest.raises(StorageUnavailableError):
        await run_round(manager, desk, RETRY, user_id="clerk")
    assert desk.paid == []
    # The store holds the reservation it never answered for; the next contact releases it,
    # so the retry runs now, not after a wait and never as "may or may not have happened".
    retried = await asyncio.wait_for(run_round(manager, desk, RETRY, user_id="clerk"), 5)
    assert retried.outcomes[0].ok
    assert not retried.outcomes[0].replayed
    assert desk.paid == [("r-1", 100)]


async def test_a_call_whose_reservation_was_taken_over_before_it_started_does_not_run() -> None:
    store = InMemoryIdempotencyStore()
    desk = Refunds()

    async def late_approval(invocation: ToolInvocation, /) -> Approve:
        # While a person decides, the reservation is taken over (its lease ended).
        confirm: Any = invocation.progress.confirm
        key, owner = confirm.args[0], confirm.keywords["owner"]
        await store.release(key, owner=owner)
        await store.reserve(key, owner="elsewhere", lease=60)
        return Approve()

    manager = ToolCallingManager(
        idempotency=store, approval=ApprovalInterceptor(late_approval, destructive=True)
    )
    result = await run_round(manager, desk, RETRY, user_id="clerk")
    assert result.outcomes[0].status is ToolCallStatus.ERROR
    assert "an identical call is running it elsewhere" in result.outcomes[0].response.data
    assert desk.paid == []


async def test_sqlite_results_survive_a_new_store_instance(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "keys.sqlite3"
    desk = Refunds()
    with SqliteIdempotencyStore(path) as first_store:
        manager = ToolCallingManager(idempotency=IdempotencyInterceptor(first_store))
        first = await run_round(manager, desk, RETRY)
    with SqliteIdempotencyStore(path) as second_store:  # as another process would open it
        manager = ToolCallingManager(idempotency=IdempotencyInterceptor(second_store))
        second = await run_round(manager, desk, RETRY)
        reservation = await second_store.reserve("refund-retry:r-1", owner="x", lease=1)
    assert desk.paid == [("r-1", 100)]
    assert second.outcomes[0].replayed
    assert second.outcomes[0].recorded_result == first.outcomes[0].response.data
    assert reservation.result == first.outcomes[0].response.data


async def test_sqlite_reservations_are_shared_between_instances(tmp_path: Path) -> None:
    path = tmp_path / "keys.sqlite3"
    with SqliteIdempotencyStore(path) as one, SqliteIdempotencyStore(path) as other:
        assert (await one.reserve("k", owner="a", lease=60)).status is ReservationStatus.ACQUIRED
        assert (await other.reserve("k", owner="b", lease=60)).status is ReservationStatus.RUNNING
        await other.release("k", owner="a")
        assert (await one.reserve("k", owner="b", lease=60)).status is ReservationStatus.ACQUIRED


async def test_sqlite_failures_are_storage_errors(tmp_path: Path) -> None:
    store = SqliteIdempotencyStore(tmp_path)  # a folder, not a database file
    with pytest.raises(StorageError, match="idempotency database"):
        await store.reserve("k", owner="a", lease=1)
    store.close()


# --- keys of validated values, unknown outcomes, late results -----------------------------------


class Payouts:
    """An integer-keyed refund whose body can be held up."""

    def __init__(self) -> None:
        self.paid: list[int] = []
        self.release = threading.Event()
        self.block = False
        self.fail = False

    @tool(name="refund.pay", destructive=True, idempotency_key=["refund_id"], timeout=0.05)
    def pay(self, refund_id: int) -> str:
        """Pay a refund.

        Args:
            refund_id: The refund.
        """
        if self.block:
            self.release.wait(30)
        if self.fail:
            raise RuntimeError("the payment provider refused")
        self.paid.append(refund_id)
        return f"paid refund {refund_id}"


async def pay(
    manager: ToolCallingManager, payouts: Payouts, *arguments: str
) -> ToolExecutionResult:
    prompt = Prompt(
        messages=(UserMessage(text="pay"),),
        options=ChatOptions(
            tools=(FunctionTool.from_function(payouts.pay),), tool_context={"user_id": "clerk"}
        ),
    )
    response = tool_call_response(
        *(ToolCall(id=f"c{i}", name="refund.pay", arguments=a) for i, a in enumerate(arguments))
    )
    return await manager.execute_tool_calls(prompt, response)


async def test_the_key_is_taken_from_validated_values_so_spellings_of_one_id_run_once() -> None:
    payouts = Payouts()
    manager = ToolCallingManager(idempotency=IdempotencyInterceptor())
    spellings = [
        '{"refund_id": 5}',
        '{"refund_id": "5"}',
        '{"refund_id": 5.0}',
        '{"refund_id": "05"}',
    ]
    result = await pay(manager, payouts, *spellings)
    assert payouts.paid == [5]
    assert all(o.ok for o in result.outcomes)
    assert len({o.idempotency_key for o in result.outcomes}) == 1
    assert sum(o.replayed for o in result.outcomes) == 3


@pytest.fixture
def payouts() -> Iterator[Payouts]:
    held = Payouts()
    yield held
    held.release.set()


async def test_a_timed_out_sync_call_keeps_its_key_and_its_late_result_is_recorded(
    payouts: Payouts,
) -> None:
    store = InMemoryIdempotencyStore()
    manager = ToolCallingManager(idempotency=IdempotencyInterceptor(store))
    payouts.block = True
    first = (await pay(manager, payouts, '{"refund_id": 7}')).outcomes[0]
    assert first.status is ToolCallStatus.TIMEOUT
    assert first.result_unknown
    assert "Whether it took effect is unknown; an identical call will not run it again." in (
        first.response.data
    )
    # The retry while the body still runs: answered, never run a second time.
    retry = (await pay(manager, payouts, '{"refund_id": "7"}')).outcomes[0]
    assert retry.status is ToolCallStatus.ERROR
    assert retry.result_unknown
    assert retry.response.data.startswith("Tool 'refund.pay' did not run: an identical call")
    assert payouts.paid == []
    # The body finishes after all: its real result is recorded and answers the next retry.
    payouts.release.set()
    assert first.late_result is not None
    await asyncio.wrap_future(first.late_result)
    for _ in range(100):
        if (await store.reserve(first.idempotency_key or "", owner="x", lease=1)).result:
            break
        await asyncio.sleep(0.01)
    later = (await pay(manager, payouts, '{"refund_id": 7}')).outcomes[0]
    assert later.ok
    assert later.replayed
    assert later.recorded_result == "paid refund 7"
    assert later.response.data.startswith("[not run again: this exact call already ran at ")
    assert payouts.paid == [7]


async def test_a_timed_out_body_that_fails_later_frees_its_key(payouts: Payouts) -> None:
    store = InMemoryIdempotencyStore()
    manager = ToolCallingManager(idempotency=IdempotencyInterceptor(store))
    payouts.block = True
    first = (await pay(manager, payouts, '{"refund_id": 8}')).outcomes[0]
    payouts.fail = True
    payouts.release.set()
    assert first.late_result is not None
    with pytest.raises(RuntimeError):
        await asyncio.wrap_future(first.late_result)
    for _ in range(100):
        if len(store) == 0:
            break
        await asyncio.sleep(0.01)
    assert len(store) == 0


async def test_a_call_cancelled_while_running_stays_unknown() -> None:
    started = asyncio.Event()

    class Slow:
        definition = ToolDefinition(name="transfer", description="Transfer money.")
        metadata = ToolMetadata(idempotency_key=lambda args, ctx: "transfer:1")

        async def call(self, arguments_json: str, context: Any = None) -> str:
            started.set()
            await asyncio.sleep(30)
            return "sent"

    store = InMemoryIdempotencyStore()
    manager = ToolCallingManager(idempotency=IdempotencyInterceptor(store))
    prompt = Prompt(messages=(UserMessage(text="send"),), options=ChatOptions(tools=(Slow(),)))
    task = asyncio.ensure_future(
        manager.execute_tool_calls(prompt, tool_call_response(("transfer", {})))
    )
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    reservation = await store.reserve("transfer:1", owner="retry", lease=60)
    assert reservation.status is ReservationStatus.UNKNOWN


async def test_a_round_cancelled_while_the_result_is_recorded_never_runs_the_call_again() -> None:
    ran: list[str] = []
    recording = asyncio.Event()

    class Transfer:
        definition = ToolDefinition(name="transfer", description="Transfer money.")
        metadata = ToolMetadata(idempotency_key=lambda args, ctx: "transfer:2")

        async def call(self, arguments_json: str, context: Any = None) -> str:
            ran.append("sent")
            return "sent"

    class SlowToRecord(InMemoryIdempotencyStore):
        async def complete(self, key: str, *, owner: str, result: str, **recorded: Any) -> None:
            if not recording.is_set():
                recording.set()
                await asyncio.sleep(30)  # cancelled here, after the transfer went out
            await super().complete(key, owner=owner, result=result, **recorded)

    store = SlowToRecord()
    manager = ToolCallingManager(idempotency=IdempotencyInterceptor(store))
    prompt = Prompt(messages=(UserMessage(text="send"),), options=ChatOptions(tools=(Transfer(),)))
    response = tool_call_response(("transfer", {}))
    task = asyncio.ensure_future(manager.execute_tool_calls(prompt, response))
    await recording.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    reservation = await store.reserve("transfer:2", owner="retry", lease=60)
    assert reservation.status is ReservationStatus.COMPLETED  # never released to run again
    assert reservation.result == "sent"
    assert ran == ["sent"]


async def test_a_call_whose_outcome_is_lost_after_its_body_returned_stays_unknown() -> None:
    ran: list[str] = []

    class Transfer:
        definition = ToolDefinition(name="transfer", description="Transfer money.")
        metadata = ToolMetadata(
            idempotency_key=lambda args, ctx: "transfer:3", requires_approval=True
        )

        async def call(self, arguments_json: str, context: Any = None) -> str:
            ran.append("sent")
            return "sent"

    class FailingAfter(ApprovalInterceptor):
        """An approval step, the one step between idempotency and the tool, failing late."""

        async def __call__(
            self, invocation: ToolInvocation, proceed: Proceed, /
        ) -> ToolCallOutcome:
            await super().__call__(invocation, proceed)
            raise RuntimeError("the step after the tool failed")

    store = InMemoryIdempotencyStore()
    manager = ToolCallingManager(
        idempotency=IdempotencyInterceptor(store), approval=FailingAfter(CountingApprover())
    )
    prompt = Prompt(messages=(UserMessage(text="send"),), options=ChatOptions(tools=(Transfer(),)))
    with pytest.raises(RuntimeError, match="the step after"):
        await manager.execute_tool_calls(prompt, tool_call_response(("transfer", {})))
    reservation = await store.reserve("transfer:3", owner="retry", lease=60)
    assert reservation.status is ReservationStatus.UNKNOWN  # it went out: never again by itself
    assert ran == ["sent"]


async def test_a_round_cancelled_while_the_store_reserves_leaves_the_key_free() -> None:
    reserving = asyncio.Event()

    class InAThread(InMemoryIdempotencyStore):
        """Takes the key after a moment, even when its caller stopped waiting."""

        async def reserve(
            self, key: str, *, owner: str, lease: float, **recorded: Any
        ) -> Reservation:
            async def later() -> Reservation:
                await asyncio.sleep(0.05)
                return await InMemoryIdempotencyStore.reserve(
                    self, key, owner=owner, lease=lease, **recorded
                )

            reserving.set()
            return await asyncio.shield(asyncio.ensure_future(later()))

    class Transfer:
        definition = ToolDefinition(name="transfer", description="Transfer money.")
        metadata = ToolMetadata(idempotency_key=lambda args, ctx: "transfer:4")

        async def call(self, arguments_json: str, context: Any = None) -> str:
            return "sent"

    store = InAThread()
    manager = ToolCallingManager(idempotency=IdempotencyInterceptor(store))
    prompt = Prompt(messages=(UserMessage(text="send"),), options=ChatOptions(tools=(Transfer(),)))
    task = asyncio.ensure_future(
        manager.execute_tool_calls(prompt, tool_call_response(("transfer", {})))
    )
    await reserving.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.1)  # the store has taken the key by now, if it ever does
    taken = await InMemoryIdempotencyStore.reserve(store, "transfer:4", owner="retry", lease=60)
    assert taken.status is ReservationStatus.ACQUIRED  # not held by a call that never ran


async def test_a_call_that_never_started_releases_its_key(payouts: Payouts) -> None:
    store = InMemoryIdempotencyStore()
    pool = WorkerPool(1)
    manager = ToolCallingManager(idempotency=IdempotencyInterceptor(store), sync_workers=pool)
    payouts.block = True
    first, waiting = (await pay(manager, payouts, '{"refund_id": 1}', '{"refund_id": 2}')).outcomes
    assert first.result_unknown
    # It waited for the one thread and timed out, or was refused once that thread got stuck.
    assert waiting.status in (ToolCallStatus.TIMEOUT, ToolCallStatus.ERROR)
    assert "did not run" in waiting.response.data
    assert not waiting.result_unknown
    reservation = await store.reserve(waiting.idempotency_key or "", owner="next", lease=60)
    assert reservation.status is ReservationStatus.ACQUIRED


async def test_the_in_memory_store_evicts_expired_entries_nobody_touches_again() -> None:
    clock = Clock()
    store = InMemoryIdempotencyStore(ttl=10, clock=clock)
    for i in range(1_000):
        await store.reserve(f"k{i}", owner="a", lease=5)
        await store.complete(f"k{i}", owner="a", result="r")
    assert len(store) == 1_000
    clock.now += 11
    await store.reserve("fresh", owner="a", lease=5)
    assert len(store) == 1  # the 1,000 old results are gone although never asked about again


async def test_the_in_memory_store_is_bounded(caplog: pytest.LogCaptureFixture) -> None:
    store = InMemoryIdempotencyStore(max_entries=3)
    for key in ("a", "b", "c"):
        await store.reserve(key, owner="o", lease=60)
        await store.complete(key, owner="o", result=key)
    with caplog.at_level(logging.WARNING, logger="toolrelay.execution._idempotency"):
        await store.reserve("d", owner="o", lease=60)
    assert len(store) == 3
    assert (await store.reserve("a", owner="p", lease=60)).status is ReservationStatus.ACQUIRED
    assert "forgot the 1 oldest recorded results" in caplog.text
    full = InMemoryIdempotencyStore(max_entries=2)
    await full.reserve("x", owner="o", lease=60)
    await full.mark_unknown("x", owner="o")
    await full.reserve("y", owner="o", lease=60)
    with pytest.raises(StorageError, match="full"):
        await full.reserve("z", owner="o", lease=60)


async def test_stores_keep_unknown_outcomes_until_a_result_or_a_delete(
    clock_and_store: tuple[Clock, Any],
) -> None:
    clock, store = clock_and_store
    await store.reserve("k", owner="a", lease=10)
    await store.mark_unknown("k", owner="b")  # not b's: nothing happens
    assert (await store.reserve("k", owner="c", lease=10)).status is ReservationStatus.RUNNING
    await store.mark_unknown("k", owner="a")
    assert (await store.reserve("k", owner="c", lease=10)).status is ReservationStatus.UNKNOWN
    await store.complete("k", owner="a", result="late")  # the body finished after all
    assert (await store.reserve("k", owner="c", lease=10)).result == "late"
    await store.reserve("u", owner="a", lease=10)
    await store.mark_unknown("u", owner="a")
    await store.release("u", owner="a")  # it failed later: the key is free
    assert (await store.reserve("u", owner="c", lease=10)).status is ReservationStatus.ACQUIRED
    await store.mark_unknown("u", owner="c")
    clock.now += 100  # unknown outcomes expire with the ttl, like results
    assert (await store.reserve("u", owner="d", lease=10)).status is ReservationStatus.ACQUIRED
