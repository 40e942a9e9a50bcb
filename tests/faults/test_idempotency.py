"""Generated retries of idempotent payments: each operation runs at most once, replays agree.

Every store is tried: in memory, SQLite, and Redis when ``TOOLRELAY_TEST_REDIS_URL`` names a
server. Each has a desk (``build_ledger_desk``) with two managers whose idempotency steps share the
store, as two processes would, and two payment tools keyed by ``payment_id`` alone: ``pay``
(synchronous) and ``apay`` (``async``). Their ``mode`` argument, not part of the key (but of
the call's arguments, like ``amount``), says how a run goes: it succeeds, fails (the key is
released), takes a moment, hangs until it is cancelled at its timeout (``apay``: the outcome is
unknown for good) or is stuck in its thread (``pay``: unknown until its late result is
recorded). Payment ids come from a small pool, so the same key is called concurrently in one
round, on both managers at once, and retried in later rounds after a success, a failure, a
timeout or a cancellation, mostly with the same arguments, sometimes with others (refused while
the key is held); some rounds are cancelled from outside part-way.

What each body did is recorded as it happens, so the checks follow what really ran, whatever
the machine's speed:

- a key's operation took effect (a body began and did not fail) at most once (``double_runs``);
- a replay is ``ok`` and gives the first run's answer exactly (``lost``);
- a call refused because its key is held by other arguments shows those, not its own
  (``unclear``);
- a call whose key's outcome is unknown is answered ``error`` with ``result_unknown`` and a
  text saying so, a timed-out call says its result is unknown, and every other answer is the
  tool's own failure or a clear wait-and-retry (``unclear``);
- every call has exactly one answer with its id (``lost``), no round hangs (``hangs``) or
  raises (``crashes``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import tempfile
import threading
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tests.extras import server_variable
from toolrelay.execution import (
    IdempotencyInterceptor,
    IdempotencyStore,
    InMemoryIdempotencyStore,
    Reservation,
    SqliteIdempotencyStore,
    ToolCallingManager,
    ToolCallOutcome,
    ToolCallStatus,
    ToolExecutionResult,
)
from toolrelay.messages import ToolCall, UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import tool_call_response
from toolrelay.tools import FunctionTool, Tool, WorkerPool, tool

from .bounds import ROUND_BOUND, LoopWatch
from .ledger import SEED, Ledger, shorten
from .running import caught, quiet_logs, rounds_of, text_of

CALLS_PER_STORE = 800
LARGEST_ROUND = 16
PAYMENTS = 150  # payment ids per tool: keys repeat within rounds and across them
TIMEOUT = 0.01  # seconds a payment may run
SLOW = 0.001
RECORDING = 0.003  # seconds a store takes to record a result
MOST_STUCK = 3  # stuck threads before the campaign lets them return
CANCELLED_EVERY = 8  # rounds per round cancelled from outside, on average

MODES = {"pay": ("ok", "fail", "slow", "stuck"), "apay": ("ok", "fail", "slow", "hang")}
WEIGHTS = (6, 2, 2, 1)
UNKNOWN_TEXT = "whether it took effect is unknown"


@dataclass
class Run:
    """One body that began: its tool, payment, mode, and how it ended (so far)."""

    tool: str
    payment_id: int
    mode: str
    number: int
    ended: bool = False
    result: str | None = None  # its text, once it returned

    @property
    def effective(self) -> bool:
        """Whether it may have taken effect: anything but a failure of its own."""
        return self.mode != "fail"


@dataclass
class LedgerDesk:
    """Two managers sharing one store, the payment tools, and every body that began."""

    store_name: str
    managers: tuple[ToolCallingManager, ToolCallingManager]
    offered: tuple[Tool, ...]
    pool: WorkerPool
    gate: threading.Event = field(default_factory=threading.Event)
    runs: list[Run] = field(default_factory=list)


def build_ledger_desk(store_name: str, store: IdempotencyStore) -> LedgerDesk:
    runs: list[Run] = []
    lock = threading.Lock()

    def begin(tool_name: str, payment_id: int, mode: str) -> Run:
        with lock:
            run = Run(tool=tool_name, payment_id=payment_id, mode=mode, number=len(runs))
            runs.append(run)
        return run

    def finish(run: Run, text: str) -> str:
        run.result, run.ended = text, True
        return text

    @tool(destructive=True, idempotency_key=["payment_id"], timeout=TIMEOUT)
    def pay(payment_id: int, amount: int, mode: str = "ok") -> str:
        """Charge a card, from a thread."""
        run = begin("pay", payment_id, mode)
        if mode == "fail":
            run.ended = True
            raise RuntimeError(f"card declined for payment {payment_id}")
        if mode == "slow":
            time.sleep(SLOW)
        if mode == "stuck":
            desk.gate.wait(60)
        return finish(run, f"paid {amount} for {payment_id} (run {run.number})")

    @tool(destructive=True, idempotency_key=["payment_id"], timeout=TIMEOUT)
    async def apay(payment_id: int, amount: int, mode: str = "ok") -> str:
        """Charge a card, in the loop."""
        run = begin("apay", payment_id, mode)
        await asyncio.sleep(0)
        if mode == "fail":
            run.ended = True
            raise RuntimeError(f"card declined for payment {payment_id}")
        if mode == "slow":
            await asyncio.sleep(SLOW)
        if mode == "hang":
            await asyncio.sleep(3_600)
        return finish(run, f"apaid {amount} for {payment_id} (run {run.number})")

    pool = WorkerPool(16, name="fault-idempotency")  # both managers' rounds at once
    managers = tuple(
        ToolCallingManager(
            idempotency=IdempotencyInterceptor(store, wait=1.0, poll_interval=0.005),
            sync_workers=pool,
        )
        for _ in range(2)
    )
    desk = LedgerDesk(
        store_name=store_name,
        managers=(managers[0], managers[1]),
        offered=tuple(FunctionTool.from_function(f) for f in (pay, apay)),
        pool=pool,
        runs=runs,
    )
    return desk


async def run_round(
    desk: LedgerDesk, first: Sequence[ToolCall], second: Sequence[ToolCall]
) -> tuple[ToolExecutionResult | None, ToolExecutionResult | None]:
    """``first`` on one manager and ``second`` on the other, at the same time."""
    prompt = Prompt(
        messages=(UserMessage(text="Charge the customer's cards."),),
        options=ChatOptions(tools=desk.offered, tool_context={"tenant_id": "acme"}),
    )

    async def on(manager: ToolCallingManager, calls: Sequence[ToolCall]) -> Any:
        if not calls:
            return None
        return await manager.execute_tool_calls(prompt, tool_call_response(*calls))

    a, b = await asyncio.gather(on(desk.managers[0], first), on(desk.managers[1], second))
    return a, b


# --- generated cases ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Case:
    """One call: its tool, payment, mode, and which manager takes it."""

    call: ToolCall
    tool: str
    payment_id: int
    mode: str
    second: bool

    @property
    def key(self) -> tuple[str, int]:
        return self.tool, self.payment_id

    @property
    def recipe(self) -> str:
        c = self.call
        return f"ToolCall(id={c.id!r}, name={c.name!r}, arguments={c.arguments!r})"


def generate(seed: int, count: int) -> list[Case]:
    """``count`` calls from ``seed``; a third repeat an earlier call's payment."""
    rng = random.Random(seed)
    cases: list[Case] = []
    first_calls: dict[tuple[str, int], tuple[str, int]] = {}  # key: its first mode, amount
    for n in range(count):
        if cases and rng.random() < 0.35:
            tool_name, payment_id = rng.choice(cases[-LARGEST_ROUND:]).key
        else:
            tool_name, payment_id = rng.choice(sorted(MODES)), rng.randrange(PAYMENTS)
        mode = rng.choices(MODES[tool_name], WEIGHTS)[0]
        amount = rng.randrange(1, 1_000)
        first = first_calls.setdefault((tool_name, payment_id), (mode, amount))
        if rng.random() < 0.8:  # a key's calls are mostly the same call again
            mode, amount = first
        spelled: object = payment_id if rng.random() < 0.7 else str(payment_id)
        arguments = {"payment_id": spelled, "amount": amount, "mode": mode}
        call = ToolCall(id=f"i{n}", name=tool_name, arguments=json.dumps(arguments))
        cases.append(
            Case(
                call=call,
                tool=tool_name,
                payment_id=payment_id,
                mode=mode,
                second=rng.random() < 0.4,
            )
        )
    return cases


def reproduction(store_name: str, cases: Sequence[Case], note: str = "") -> str:
    """The Python that shows a failure: the round's calls on the two managers."""
    lines = [f"# {store_name} store; {c.tool} {c.payment_id} {c.mode}" for c in cases]
    lines.append(f"desk = build_ledger_desk({store_name!r}, SlowToRecord(<a {store_name} store>))")
    for second in (False, True):
        lines.append("await run_round(desk, [" if not second else "], [")
        lines += [f"    {c.recipe}," for c in cases if c.second is second]
    lines.append("])  # tests/faults/test_idempotency.py")
    if note:
        lines.append(f"# {note}")
    return "\n".join(lines)


# --- what each key has done --------------------------------------------------------------------


@dataclass
class Key:
    """What is known of one key's operation.

    Attributes:
        run: The body that took effect (or may have), if any.
        certain: Its result was answered ``ok`` and recorded: every later call replays it.
        interrupted: A round with a call of it was cancelled: a thread may have taken the call
            up without its body having begun yet, and its outcome is rightly unknown.
    """

    run: Run | None = None
    certain: bool = False
    interrupted: bool = False


@dataclass
class _Campaign:
    ledger: Ledger
    desk: LedgerDesk
    keys: dict[tuple[str, int], Key] = field(default_factory=dict)
    stuck: int = 0
    replays: int = 0
    unknown_answers: int = 0
    cancelled_rounds: int = 0
    busy_answers: int = 0
    waited_for_threads: int = 0
    conflicts: int = 0

    def replay(self, cases: Sequence[Case], note: str = "") -> str:
        return reproduction(self.desk.store_name, cases, note)

    async def let_stuck_return(self) -> None:
        desk = self.desk
        desk.gate.set()
        async with asyncio.timeout(ROUND_BOUND):
            while desk.pool.status().busy:  # noqa: ASYNC110 - a pool has no event
                await asyncio.sleep(0.001)
        desk.gate = threading.Event()
        self.stuck = 0

    async def play(self, number: int, cases: list[Case], cancel_after: float | None) -> None:
        desk, ledger = self.desk, self.ledger
        stuck_now = sum(c.mode == "stuck" for c in cases)
        if self.stuck + stuck_now > MOST_STUCK:
            await self.let_stuck_return()
        self.stuck += stuck_now
        ran_before = len(desk.runs)
        first = [c.call for c in cases if not c.second]
        second = [c.call for c in cases if c.second]
        watch = LoopWatch()
        started = time.perf_counter()
        answer: Any = None
        try:
            async with watch.watching(), asyncio.timeout(ROUND_BOUND):
                if cancel_after is None:
                    answer = await caught(run_round(desk, first, second))
                else:
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(cancel_after):
                            answer = await caught(run_round(desk, first, second))
        except TimeoutError:
            ledger.fail("hangs", number, f"the round ran past {ROUND_BOUND} s", self.replay(cases))
            return
        elapsed = time.perf_counter() - started
        if watch.held or elapsed > ROUND_BOUND:
            what = f"the round took {elapsed:.1f} s and held the loop for {watch.longest:.1f} s"
            ledger.fail("hangs", number, what, self.replay(cases))
        if isinstance(answer, BaseException):
            what = f"the round raised {type(answer).__name__}: {shorten(text_of(answer))}"
            ledger.fail("crashes", number, what, self.replay(cases))
            answer = None
        outcomes: dict[str, ToolCallOutcome] = {}
        if answer is None:
            self.cancelled_rounds += cancel_after is not None
            for case in cases:
                self.keys.setdefault(case.key, Key()).interrupted = True
            await asyncio.sleep(0.005)  # bodies a thread took up just now begin
        else:
            for half, calls in zip(answer, (first, second), strict=True):
                if half is None:
                    continue
                if len(half.outcomes) != len(calls):
                    what = f"{len(calls)} calls, {len(half.outcomes)} answers"
                    ledger.fail("lost", number, what, self.replay(cases))
                    continue
                for call, outcome in zip(calls, half.outcomes, strict=True):
                    if outcome.response.id != call.id:
                        what = f"answered with id {outcome.response.id!r}, not {call.id!r}"
                        ledger.fail("lost", number, what, self.replay(cases))
                    outcomes[call.id] = outcome
        runs = desk.runs[ran_before:]
        by_key: dict[tuple[str, int], list[Case]] = {}
        for case in cases:
            by_key.setdefault(case.key, []).append(case)
        for key, of_key in by_key.items():
            ran = [r for r in runs if (r.tool, r.payment_id) == key]
            self.check_key(number, key, of_key, ran, outcomes)

    def check_key(
        self,
        number: int,
        key: tuple[str, int],
        cases: list[Case],
        ran: list[Run],
        outcomes: dict[str, ToolCallOutcome],
    ) -> None:
        ledger = self.ledger
        state = self.keys.setdefault(key, Key())
        effective = [r for r in ran if r.effective]
        before = state.run
        if effective and (before is not None or len(effective) > 1):
            first = before or effective[0]
            what = (
                f"{key[0]} {key[1]} took effect again (run {effective[-1].number}, first "
                f"run {first.number}, {first.mode})"
            )
            ledger.fail("double_runs", number, what, self.replay(cases))
        if before is None and effective:
            state.run = effective[0]
        for case in cases:
            outcome = outcomes.get(case.call.id)
            if outcome is None:
                continue  # its round was cancelled, or its answer counted as lost
            self.check_answer(number, case, outcome, before, state)
        if (
            state.run is not None
            and not state.certain
            and any(
                o.ok and not o.replayed for c in cases if (o := outcomes.get(c.call.id)) is not None
            )
        ):
            state.certain = True

    def check_answer(
        self, number: int, case: Case, outcome: ToolCallOutcome, before: Run | None, state: Key
    ) -> None:
        ledger, data = self.ledger, outcome.response.data
        at = int(case.call.id[1:].rstrip("r"))
        status = outcome.status

        def unclear(what: str) -> None:
            ledger.fail("unclear", at, f"{case.tool} {case.mode}: {what}", self.replay([case]))

        run = state.run
        if status is ToolCallStatus.IDEMPOTENCY_CONFLICT:
            self.conflicts += 1
            amount = json.loads(case.call.arguments)["amount"]
            own = f'payment_id={case.payment_id}, amount={amount}, mode="{case.mode}"'
            if own in data or "this call did not run" not in data:
                unclear(f"refused as another call's key, showing its own: {shorten(data)}")
            return
        if status is ToolCallStatus.OK:
            if outcome.replayed:
                data = outcome.recorded_result or ""
            if run is None or run.result is None or data != run.result:
                first = None if run is None else run.result
                what = f"{case.tool} {case.payment_id} answered {shorten(data)}, first {first!r}"
                ledger.fail("lost", at, what, self.replay([case]))
            elif outcome.replayed:
                self.replays += 1
            elif before is not None:
                unclear("answered ok, not replayed, though the operation ran before")
            return
        if state.certain and before is not None:
            unclear(f"answered {status} ({shorten(data)}), not the recorded result")
            return
        if status is ToolCallStatus.TIMEOUT:
            if not outcome.result_unknown and "did not start" in data and "did not run" in data:
                self.waited_for_threads += 1  # every thread was busy: it never ran
            elif not outcome.result_unknown or UNKNOWN_TEXT not in data.lower():
                unclear(f"timed out, but the result is not said to be unknown: {shorten(data)}")
            return
        if status is ToolCallStatus.ERROR and outcome.result_unknown:
            self.unknown_answers += 1
            if run is None and not state.interrupted:
                unclear(f"answered that the result is unknown, though it is not: {shorten(data)}")
            elif UNKNOWN_TEXT not in data.lower():
                unclear(f"an unknown result is not said to be unknown: {shorten(data)}")
            return
        if (
            status is ToolCallStatus.ERROR
            and f"card declined for payment {case.payment_id}" in data
        ):
            if case.mode != "fail":
                unclear(f"answered another call's failure: {shorten(data)}")
            return
        if status is ToolCallStatus.ERROR and "still running elsewhere" in data:
            self.busy_answers += 1
            return
        unclear(f"answered {status}: {shorten(data)}")


class SlowToRecord:
    """A store that takes a moment to record a result, as one across a network does.

    It widens the moment in which a round cancelled from outside has run its tool but not yet
    recorded the result: that call must not leave its key free to run again.
    """

    def __init__(self, store: IdempotencyStore) -> None:
        self.store = store

    async def reserve(self, key: str, *, owner: str, lease: float, **call: str) -> Reservation:
        return await self.store.reserve(key, owner=owner, lease=lease, **call)

    async def confirm(self, key: str, *, owner: str) -> bool:
        return await self.store.confirm(key, owner=owner)

    async def complete(self, key: str, *, owner: str, result: str, **call: str) -> None:
        await asyncio.sleep(RECORDING)
        await self.store.complete(key, owner=owner, result=result, **call)

    async def release(self, key: str, *, owner: str) -> None:
        await self.store.release(key, owner=owner)

    async def mark_unknown(self, key: str, *, owner: str, **call: str) -> None:
        await self.store.mark_unknown(key, owner=owner, **call)


@contextlib.asynccontextmanager
async def _stores(folder: Path) -> AsyncIterator[list[tuple[str, IdempotencyStore]]]:
    """Every store this machine has: in memory, SQLite, and Redis if a server is named.

    A server named without the redis extra installed skips the test, naming the extra.
    """
    url = server_variable("TOOLRELAY_TEST_REDIS_URL", module="redis.asyncio", extra="redis")
    stores: list[tuple[str, IdempotencyStore]] = [
        ("in-memory", InMemoryIdempotencyStore()),
        ("SQLite", SqliteIdempotencyStore(folder / "idempotency.sqlite3")),
    ]
    redis_store: Any = None
    if url:
        from toolrelay.redis import RedisIdempotencyStore

        prefix = f"toolrelay-faults-{uuid.uuid4().hex}:"
        redis_store = RedisIdempotencyStore(url, prefix=prefix, require_durable=False)
        stores.append(("Redis", redis_store))
    try:
        yield stores
    finally:
        for _, store in stores:
            close = getattr(store, "aclose", None)
            if close is not None:
                await close()
            elif hasattr(store, "close"):
                store.close()


def _with_cancellations(
    rounds: list[list[Case]], rng: random.Random
) -> list[tuple[list[Case], float | None]]:
    """The rounds, some cancelled from outside part-way, each of those retried right after.

    A client whose turn was cancelled sends the same calls again: the retry must find every
    operation that ran as it ran, never run it a second time.
    """
    schedule: list[tuple[list[Case], float | None]] = []
    for round_ in rounds:
        if rng.random() >= 1 / CANCELLED_EVERY:
            schedule.append((round_, None))
            continue
        schedule.append((round_, rng.uniform(0, TIMEOUT)))
        retry = [replace(case, call=replace(case.call, id=f"{case.call.id}r")) for case in round_]
        schedule.append((retry, None))
    return schedule


async def campaign(seed: int = SEED, calls: int = CALLS_PER_STORE) -> Ledger:
    """Generate ``calls`` payments from ``seed`` and run them against every store."""
    ledger = Ledger(campaign="idempotent retries", unit="calls", seed=seed)
    generated = generate(seed, calls)
    rounds = rounds_of(generated, seed, LARGEST_ROUND)
    schedule = _with_cancellations(rounds, random.Random(seed + 2))
    totals: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as folder, quiet_logs():
        async with _stores(Path(folder)) as stores:
            for store_name, store in stores:
                desk = build_ledger_desk(store_name, SlowToRecord(store))
                run = _Campaign(ledger=ledger, desk=desk)
                number = 0
                try:
                    for round_, cancel_after in schedule:
                        await run.play(number, round_, cancel_after)
                        number += len(round_)
                        ledger.tried += len(round_)
                finally:
                    await run.let_stuck_return()
                ledger.observed[f"{store_name}: calls"] = sum(len(r) for r, _ in schedule)
                for name, value in (
                    ("replays", run.replays),
                    ("answers that the result is unknown", run.unknown_answers),
                    ("rounds cancelled part-way", run.cancelled_rounds),
                    ("answers to wait for a run elsewhere", run.busy_answers),
                    ("calls refused: their key held by other arguments", run.conflicts),
                    ("calls that timed out waiting for a thread", run.waited_for_threads),
                    ("keys that took effect", sum(k.run is not None for k in run.keys.values())),
                ):
                    totals[name] = totals.get(name, 0) + value
            ledger.observed["stores"] = ", ".join(name for name, _ in stores)
    ledger.observed.update(totals)
    return ledger


async def test_an_operation_with_a_key_runs_at_most_once() -> None:
    ledger = await campaign()
    ledger.check(at_least=2 * CALLS_PER_STORE)
