"""Generated rounds of hostile tools among well-behaved calls: each call answered once, clearly.

The cases (``generate``) go in rounds of 1 to 24 to one manager with a pool of its own of
:data:`POOL` threads for synchronous tools. About half are well-behaved calls whose answers
are known exactly (``echo`` in a thread, ``aecho`` in the loop, ``tool_search``); the rest are
tools that, synchronous or ``async``:

- raise every kind of exception: ordinary ones, ones whose ``__str__`` and ``__repr__``
  raise, ``SystemExit``, ``GeneratorExit``, ``StopIteration``, a ``CancelledError`` or a
  ``TimeoutError`` of their own, exception groups, a bare ``BaseException`` subclass, and the
  two the docs say always propagate (``KeyboardInterrupt``, ``MemoryError``: the round raises
  them, which is the expected answer, not a crash);
- hang (``async``, cancelled at its timeout) or get stuck in their thread (synchronous; it
  returns only when the campaign lets it, so up to :data:`MOST_STUCK` threads stay stuck across
  rounds);
- return huge results (up to 5 MB) or values that are hard to print: bytes, lone surrogates,
  objects whose ``str`` raises or is not a string, sets, ``NaN``, cycles, deep nesting.

After every round:

- it returned within its bound without holding the loop (``hangs``), or raised exactly the
  documented ``KeyboardInterrupt``/``MemoryError`` of one of its calls (else ``crashes``);
- every call has exactly one answer, in order, with its id, and each well-behaved call its
  exact result (``lost``); a huge result reaches the model cut to the manager's bound, and
  the outcome keeps it whole (``lost``);
- each status is the one its behaviour calls for, an error says something, and a timed-out
  call's outcome says its result is unknown (``unclear``).

At the end the stuck tool's share of threads (:data:`SHARE`) is filled on purpose: a further
call of it is refused at once saying it is busy, while other synchronous tools, ``async`` tools
and ``tool_search`` still answer; once the stuck tools return, the pool is empty again and
synchronous calls run.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolrelay.execution import (
    DEFAULT_MAX_RESULT_CHARS,
    ToolCallingManager,
    ToolCallOutcome,
    ToolCallStatus,
    ToolExecutionResult,
)
from toolrelay.messages import ToolCall, UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.search import BM25ToolIndex
from toolrelay.testing import tool_call_response
from toolrelay.tools import FunctionTool, Tool, WorkerPool, tool
from toolrelay.toolsearch import SearchOptions, ToolSearcher

from .bounds import ROUND_BOUND, LoopWatch
from .ledger import SEED, Ledger, shorten
from .running import caught, quiet_logs, text_of

CASES = 4_000
LARGEST_ROUND = 24
POOL = 8  # threads for synchronous tools
SHARE = 4  # threads one tool may take
MOST_STUCK = 3  # stuck threads at once during the rounds: a share never fills by chance
HANG = 0.01  # seconds a hanging or stuck tool may run
QUICK = 2.0  # seconds any other tool may run: far above what it needs
WAITING = 0.3  # seconds ``lookup`` may run


# --- hostile behaviours ------------------------------------------------------------------------


class BrokenText(Exception):
    """An exception that cannot be printed."""

    def __str__(self) -> str:
        raise RuntimeError("no text")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class NotAnException(BaseException):
    """A ``BaseException`` that is none of the standard ones."""


class Unprintable:
    """A value whose ``str`` raises."""

    def __str__(self) -> str:
        raise RuntimeError("cannot print me")

    __repr__ = __str__


class NotText:
    """A value whose ``__str__`` returns something that is not a string."""

    def __str__(self) -> str:
        return 5  # type: ignore[return-value]


def _cycle() -> list[Any]:
    cycle: list[Any] = []
    cycle.append(cycle)
    return cycle


def _nested(depth: int) -> list[Any]:
    top: list[Any] = []
    current = top
    for _ in range(depth):
        inner: list[Any] = []
        current.append(inner)
        current = inner
    return top


DEEP = _nested(50_000)  # built once: building it costs more than printing it fails


RAISES: dict[str, Callable[[int], BaseException]] = {
    "ValueError": lambda n: ValueError(f"bad input {n}"),
    "broken __str__": lambda n: BrokenText(),
    "empty message": lambda n: RuntimeError(),
    "SystemExit": lambda n: SystemExit(n),
    "GeneratorExit": lambda n: GeneratorExit(),
    "StopIteration": lambda n: StopIteration(n),
    "own CancelledError": lambda n: asyncio.CancelledError(),
    "own TimeoutError": lambda n: TimeoutError(f"upstream timed out {n}"),
    "ExceptionGroup": lambda n: ExceptionGroup("several", [ValueError(n), KeyError(n)]),
    "BaseException subclass": lambda n: NotAnException(n),
    "RecursionError": lambda n: RecursionError(f"deep {n}"),
    "KeyboardInterrupt": lambda n: KeyboardInterrupt(),
    "MemoryError": lambda n: MemoryError(),
}
PROPAGATE = frozenset({"KeyboardInterrupt", "MemoryError"})  # docs/execution.md: always

ODD: dict[str, Callable[[], object]] = {
    "bytes": lambda: b"\xff\x00\xfe binary",
    "lone surrogates": lambda: "a\ud800b\udfff",
    "str raises": Unprintable,
    "str is not text": NotText,
    "set": lambda: {3, 1, 2},
    "NaN": lambda: math.nan,
    "cycle": _cycle,
    "deep nesting": lambda: DEEP,
    "huge integer": lambda: 10**5_000,
    "None": lambda: None,
    "tuple keys": lambda: {(1, 2): "pair"},
}
ODD_FAILS = frozenset({"str raises", "str is not text", "deep nesting", "huge integer"})

HUGE = (100_000, 1_000_000, 5_000_000)
MOST_NOTE = 250  # characters of the note after a cut result, at most
HUGE_EVERY = 40  # calls per huge result on average


@dataclass
class Gate:
    """Where stuck tools wait: they return when the campaign opens the gate."""

    event: threading.Event = field(default_factory=threading.Event)
    waiting: int = 0  # stuck calls since the gate last opened


@dataclass
class HostileDesk:
    """The manager, its pool, the tools it offers and the gate of the stuck ones."""

    manager: ToolCallingManager
    pool: WorkerPool
    offered: tuple[Tool, ...]
    gate: Gate


def build_hostile_desk() -> HostileDesk:
    gate = Gate()

    @tool
    def echo(n: int) -> str:
        """Echo a number, from a thread."""
        return f"echo {n}"

    @tool
    async def aecho(n: int) -> str:
        """Echo a number, in the loop."""
        await asyncio.sleep(0)
        return f"aecho {n}"

    @tool
    def explode(n: int, how: str) -> str:
        """Raise, from a thread."""
        raise RAISES[how](n)

    @tool
    async def aexplode(n: int, how: str) -> str:
        """Raise, in the loop."""
        await asyncio.sleep(0)
        raise RAISES[how](n)

    @tool(timeout=HANG)
    async def hang(n: int) -> str:
        """Never answers."""
        await asyncio.sleep(3_600)
        return "never"

    @tool(timeout=HANG)
    def stuck(n: int) -> str:
        """Blocks its thread until the gate opens."""
        gate.event.wait(60)
        return f"late {n}"

    @tool(timeout=WAITING)
    def lookup(n: int) -> str:
        """Echo a number, from a thread, quickly or not at all."""
        return f"lookup {n}"

    @tool
    def huge(n: int, size: int) -> str:
        """A result of ``size`` characters, from a thread."""
        return "x" * size

    @tool
    async def ahuge(n: int, size: int) -> dict[str, Any]:
        """A result of about ``size`` characters, as JSON."""
        return {"n": n, "blob": "é" * size}

    @tool
    def odd(n: int, what: str) -> object:
        """A value that is hard to print, from a thread."""
        return ODD[what]()

    @tool
    async def aodd(n: int, what: str) -> object:
        """A value that is hard to print, in the loop."""
        return ODD[what]()

    functions = (echo, aecho, explode, aexplode, hang, stuck, lookup, huge, ahuge, odd, aodd)
    tools = [FunctionTool.from_function(f) for f in functions]
    index = BM25ToolIndex()
    index.index([t.definition for t in tools])
    searcher = ToolSearcher(index=index, allowed=None, options=SearchOptions(max_results=3))
    pool = WorkerPool(POOL, name="fault-tools", tool_share=SHARE)
    manager = ToolCallingManager(default_timeout=QUICK, sync_workers=pool, max_concurrency=8)
    offered = (*tools, searcher.as_tool())
    return HostileDesk(manager=manager, pool=pool, offered=offered, gate=gate)


async def run_round(desk: HostileDesk, calls: Sequence[ToolCall]) -> ToolExecutionResult:
    """One round of ``calls`` on ``desk``, as a reproduction runs it."""
    prompt = Prompt(
        messages=(UserMessage(text="Do what the tools do."),),
        options=ChatOptions(tools=desk.offered),
    )
    return await desk.manager.execute_tool_calls(prompt, tool_call_response(*calls))


# --- generated cases ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Case:
    """One call and what its answer must be.

    Attributes:
        call: The call.
        kind: What it does, e.g. ``"explode: SystemExit"``.
        status: The status it must get.
        exact: The exact answer, for a well-behaved call.
        check: A test of the answer text, for the others (``None``: any non-empty text).
        propagates: The exception type the round must raise because of it.
    """

    call: ToolCall
    kind: str
    status: ToolCallStatus
    exact: str | None = None
    check: Callable[[str], bool] | None = None
    propagates: type[BaseException] | None = None

    @property
    def recipe(self) -> str:
        c = self.call
        return f"ToolCall(id={c.id!r}, name={c.name!r}, arguments={c.arguments!r})"

    @property
    def stuck(self) -> bool:
        return self.call.name == "stuck"


def _call(n: int, name: str, **arguments: object) -> ToolCall:
    return ToolCall(id=f"h{n}", name=name, arguments=json.dumps({"n": n, **arguments}))


QUERIES = ["echo a number", "raise", "huge result", "value hard to print", "日本語", ""]


def _case(rng: random.Random, n: int) -> Case:
    roll = rng.random()
    ok, error = ToolCallStatus.OK, ToolCallStatus.ERROR
    if roll < 0.22:
        return Case(call=_call(n, "echo"), kind="echo", status=ok, exact=f"echo {n}")
    if roll < 0.44:
        return Case(call=_call(n, "aecho"), kind="aecho", status=ok, exact=f"aecho {n}")
    if roll < 0.50:
        query = rng.choice(QUERIES)
        call = ToolCall(id=f"h{n}", name="tool_search", arguments=json.dumps({"queries": [query]}))
        return Case(call=call, kind=f"tool_search {query!r}", status=ok)
    if roll < 0.72:
        name = rng.choice(["explode", "aexplode"])
        how = rng.choice([h for h in RAISES if h not in PROPAGATE])
        if rng.random() < 0.02:  # rare: the round ends with it
            how = rng.choice(sorted(PROPAGATE))
        propagates = {"KeyboardInterrupt": KeyboardInterrupt, "MemoryError": MemoryError}.get(how)
        check = (lambda text: f"bad input {n}" in text) if how == "ValueError" else None
        return Case(
            call=_call(n, name, how=how),
            kind=f"{name}: {how}",
            status=error,
            check=check,
            propagates=propagates,
        )
    if roll < 0.78:
        return Case(call=_call(n, "hang"), kind="hang", status=ToolCallStatus.TIMEOUT)
    if roll < 0.81:
        return Case(call=_call(n, "stuck"), kind="stuck", status=ToolCallStatus.TIMEOUT)
    if roll < 0.81 + 1 / HUGE_EVERY:
        name, size = rng.choice(["huge", "ahuge"]), rng.choice(HUGE)
        if name == "huge":
            check = lambda text: len(text) == size  # noqa: E731 - one expression
        else:
            check = lambda text: json.loads(text) == {"n": n, "blob": "é" * size}  # noqa: E731
        return Case(
            call=_call(n, name, size=size), kind=f"{name}: {size:,}", status=ok, check=check
        )
    name, what = rng.choice(["odd", "aodd"]), rng.choice(sorted(ODD))
    status = error if what in ODD_FAILS else ok
    return Case(call=_call(n, name, what=what), kind=f"{name}: {what}", status=status)


def generate(seed: int, count: int) -> list[Case]:
    """``count`` cases from ``seed``; the same seed always gives the same cases."""
    rng = random.Random(seed)
    return [_case(rng, n) for n in range(count)]


def rounds_of(cases: list[Case], seed: int) -> list[list[Case]]:
    """Rounds of 1 to :data:`LARGEST_ROUND` cases, at most :data:`MOST_STUCK` stuck in one."""
    rng = random.Random(seed + 1)
    rounds: list[list[Case]] = []
    start = 0
    while start < len(cases):
        size = rng.randint(1, LARGEST_ROUND)
        round_: list[Case] = []
        while start < len(cases) and len(round_) < size:
            if cases[start].stuck and sum(c.stuck for c in round_) == MOST_STUCK:
                break
            round_.append(cases[start])
            start += 1
        rounds.append(round_)
    return rounds


def reproduction(cases: Sequence[Case], note: str = "") -> str:
    """The Python that shows a failure: the round's calls (see ``run_round``)."""
    lines = [f"# {case.kind}" for case in cases]
    lines.append("await run_round(build_hostile_desk(), [")
    lines += [f"    {case.recipe}," for case in cases]
    lines.append("])  # tests/faults/test_hostile_tools.py")
    if note:
        lines.append(f"# {note}")
    return "\n".join(lines)


# --- the campaign ------------------------------------------------------------------------------


@dataclass
class _Campaign:
    ledger: Ledger
    desk: HostileDesk
    late: list[Any] = field(default_factory=list)  # futures of stuck tools' real results
    propagated: int = 0
    most_stuck_seen: int = 0
    never_started: int = 0  # timed out waiting for a thread on a busy machine

    async def open_gate(self) -> None:
        """Let every stuck tool return, and wait until its thread is free."""
        gate = self.desk.gate
        gate.event.set()
        async with asyncio.timeout(ROUND_BOUND):
            for future in self.late:
                await asyncio.wrap_future(future)
            while self.desk.pool.status().stuck:  # noqa: ASYNC110 - a pool has no event
                await asyncio.sleep(0.001)
        self.late.clear()
        gate.event = threading.Event()
        gate.waiting = 0

    async def play(self, number: int, cases: list[Case]) -> None:
        stuck_now = sum(c.stuck for c in cases)
        if self.desk.gate.waiting + stuck_now > MOST_STUCK:
            await self.open_gate()
        self.desk.gate.waiting += stuck_now
        expected = {c.propagates for c in cases if c.propagates is not None}
        watch = LoopWatch()
        started = time.perf_counter()
        result: ToolExecutionResult | None = None
        try:
            async with watch.watching(), asyncio.timeout(ROUND_BOUND):
                answer = await caught(run_round(self.desk, [c.call for c in cases]))
        except TimeoutError:
            self.ledger.fail(
                "hangs", number, f"the round ran past {ROUND_BOUND} s", reproduction(cases)
            )
            return
        if isinstance(answer, ToolExecutionResult):
            result = answer
        elif type(answer) in expected:
            self.propagated += 1
        else:
            what = f"the round raised {type(answer).__name__}: {shorten(text_of(answer))}"
            self.ledger.fail("crashes", number, what, reproduction(cases))
            return
        self.most_stuck_seen = max(self.most_stuck_seen, self.desk.pool.status().stuck)
        elapsed = time.perf_counter() - started
        if watch.held or elapsed > ROUND_BOUND:
            what = f"the round took {elapsed:.1f} s and held the loop for {watch.longest:.1f} s"
            self.ledger.fail("hangs", number, what, reproduction(cases))
        if result is None:
            return
        if expected:
            what = f"the round answered though a tool raised {sorted(e.__name__ for e in expected)}"
            self.ledger.fail("unclear", number, what, reproduction(cases))
        if len(result.outcomes) != len(cases) or len(result.responses) != len(cases):
            what = f"{len(cases)} calls, {len(result.responses)} answers"
            self.ledger.fail("lost", number, what, reproduction(cases))
            return
        self.check_outcomes(number, cases, result.outcomes)

    def check_outcomes(
        self, number: int, cases: Sequence[Case], outcomes: Sequence[ToolCallOutcome]
    ) -> None:
        ledger = self.ledger
        for offset, (case, outcome) in enumerate(zip(cases, outcomes, strict=True)):
            at = number + offset
            data = outcome.response.data
            if outcome.response.id != case.call.id:
                what = f"answered with id {outcome.response.id!r} instead of {case.call.id!r}"
                ledger.fail("lost", at, what, reproduction(cases))
            if not isinstance(data, str):
                ledger.fail(
                    "lost", at, f"the answer is {type(data).__name__}", reproduction([case])
                )
                continue
            if outcome.status is not case.status:
                what = f"{case.kind} answered {outcome.status}, not {case.status}: {shorten(data)}"
                ledger.fail("unclear", at, what, reproduction([case]))
                continue
            if case.exact is not None and data != case.exact:
                what = f"{case.kind} answered {shorten(data)}, not {case.exact!r}"
                ledger.fail("lost", at, what, reproduction(cases))
            elif case.check is not None and not case.check(outcome.result_text):
                what = f"{case.kind} answered {shorten(outcome.result_text)}"
                ledger.fail("lost", at, what, reproduction([case]))
            elif len(data) > DEFAULT_MAX_RESULT_CHARS + MOST_NOTE or (
                outcome.truncated and not outcome.result_text.startswith(data[:-MOST_NOTE])
            ):
                what = f"{case.kind} answered {len(data):,} characters, over the bound"
                ledger.fail("lost", at, what, reproduction([case]))
            elif outcome.status is not ToolCallStatus.OK and not data.strip():
                ledger.fail("unclear", at, f"{case.kind} failed with an empty text")
            if case.status is ToolCallStatus.TIMEOUT:
                if not outcome.result_unknown and "did not start" in data:
                    # A busy machine gave it no thread before its timeout: it never ran, and
                    # the answer says so (the documented outcome, not a failure).
                    self.never_started += 1
                    continue
                if not outcome.result_unknown:
                    what = f"{case.kind} timed out while running, but its result is not unknown"
                    ledger.fail("unclear", at, what, reproduction([case]))
                if case.stuck:
                    if outcome.late_result is None:
                        what = "a stuck synchronous tool's outcome has no late result"
                        ledger.fail("unclear", at, what, reproduction([case]))
                    else:
                        self.late.append(outcome.late_result)

    async def fill_the_pool(self, number: int) -> None:
        """A tool's share all stuck: its calls are refused at once; the rest still answer."""
        await self.open_gate()
        ledger, pool = self.ledger, self.desk.pool
        fill = [
            Case(call=_call(number + i, "stuck"), kind="stuck", status=ToolCallStatus.TIMEOUT)
            for i in range(SHARE)
        ]
        await self.play(number, fill)
        if pool.status().stuck != SHARE:
            what = f"{SHARE} tools stuck in their threads, the pool counts {pool.status().stuck}"
            ledger.fail("unclear", number, what, reproduction(fill))
        ledger.observed["stuck sync tools with their share full"] = pool.status().stuck
        number += SHARE
        refused = Case(
            call=_call(number, "stuck"),
            kind="stuck with its share full",
            status=ToolCallStatus.ERROR,
        )
        others = [
            Case(
                call=_call(number + 1, "lookup"),
                kind="lookup beside a stuck tool",
                status=ToolCallStatus.OK,
                exact=f"lookup {number + 1}",
            ),
            Case(
                call=_call(number + 2, "aecho"),
                kind="aecho",
                status=ToolCallStatus.OK,
                exact=f"aecho {number + 2}",
            ),
            Case(
                call=ToolCall(id="search", name="tool_search", arguments='{"queries": ["echo"]}'),
                kind="tool_search beside a stuck tool",
                status=ToolCallStatus.OK,
                check=lambda text: "echo" in text,
            ),
        ]
        started = time.perf_counter()
        result = await run_round(self.desk, [refused.call] + [c.call for c in others])
        elapsed = time.perf_counter() - started
        if elapsed > WAITING + 1.0:
            what = f"with a tool's share stuck, a round took {elapsed:.1f} s"
            ledger.fail("hangs", number, what)
        self.check_outcomes(number + 1, others, result.outcomes[1:])
        outcome = result.outcomes[0]
        if outcome.status is not ToolCallStatus.ERROR or outcome.result_unknown:
            what = f"a call of a tool with its share stuck answered {outcome.status}"
            ledger.fail("unclear", number, what, reproduction([refused, *others]))
        elif "busy" not in outcome.response.data or f"{SHARE} earlier" not in outcome.response.data:
            what = f"a call refused a thread is told {shorten(outcome.response.data)}"
            ledger.fail("unclear", number, what)
        await self.open_gate()
        after = await run_round(self.desk, [_call(number + 3, "echo")])
        if after.outcomes[0].response.data != f"echo {number + 3}":
            what = f"once the stuck tools returned, echo answered {after.outcomes[0].response.data}"
            ledger.fail("lost", number + 3, what)
        ledger.observed["stuck sync tools at the end"] = self.desk.pool.status().stuck
        ledger.tried += SHARE + 5


async def campaign(seed: int = SEED, cases: int = CASES) -> Ledger:
    """Generate ``cases`` hostile and well-behaved calls from ``seed``, run them, count."""
    ledger = Ledger(campaign="hostile tools", unit="calls", seed=seed)
    desk = build_hostile_desk()
    run = _Campaign(ledger=ledger, desk=desk)
    generated = generate(seed, cases)
    rounds = rounds_of(generated, seed)
    number = 0
    try:
        with quiet_logs():
            for round_ in rounds:
                await run.play(number, round_)
                number += len(round_)
                ledger.tried += len(round_)
            ledger.observed["most stuck sync tools at once"] = run.most_stuck_seen
            await run.fill_the_pool(number)
    finally:
        desk.gate.event.set()  # no thread stays stuck after the campaign
    ledger.observed["rounds"] = len(rounds)
    ledger.observed["rounds ended by KeyboardInterrupt or MemoryError, as documented"] = (
        run.propagated
    )
    ledger.observed["calls that timed out"] = sum(
        c.status is ToolCallStatus.TIMEOUT for c in generated
    )
    ledger.observed["calls that timed out before a thread was free"] = run.never_started
    return ledger


async def test_hostile_tools_never_cost_an_answer() -> None:
    ledger = await campaign()
    ledger.check(at_least=CASES)
