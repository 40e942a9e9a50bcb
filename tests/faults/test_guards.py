"""Generated rounds against misbehaving approval handlers and audit sinks: nothing runs unapproved.

Two desks (``build_guarded_desk``), one whose handler's silence is a denial and one where it
defers to a person, each with ``refund`` (destructive, synchronous), ``transfer`` (needs
approval, ``async``) and ``lookup`` (read-only, never asked about), behind an audit sink and an
approval handler that both misbehave as each call's case says (the case is looked up by call
id). Handlers approve, approve after a while, approve with edited arguments (valid or not:
wrong types, ``NaN``, extra keys, not a mapping, not JSON), deny (with or without a reason),
defer, never answer, raise (``Exception``, their own ``TimeoutError`` or ``CancelledError``,
``SystemExit``, a bare ``BaseException``), answer something that is not a verdict, or are not
``async`` at all. Sinks write, write slowly, never answer, or raise.

After every round:

- it returned within its bound without holding the loop (``hangs``), or raised the
  ``ConfigurationError`` a handler that is not a handler calls for (else ``crashes``);
- every guarded tool that ran was approved, with exactly the arguments approved
  (``unapproved``), and ``lookup`` was never asked about (``unclear``);
- every call has exactly one answer with its id (``lost``), with the status and approval its
  case calls for, and a text that says what happened (``unclear``); a silent or failing sink
  never changes an answer;
- every call whose sink works has exactly one audit record, with its outcome's status and
  approval (``lost``).
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import (
    ApprovalInterceptor,
    ApprovalStatus,
    Approve,
    AuditInterceptor,
    AuditRecord,
    Defer,
    Deny,
    ToolCallingManager,
    ToolCallOutcome,
    ToolCallStatus,
    ToolExecutionResult,
    ToolInvocation,
)
from toolrelay.messages import ToolCall, UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import tool_call_response
from toolrelay.tools import FunctionTool, Tool, tool

from .bounds import ROUND_BOUND, LoopWatch
from .ledger import SEED, Ledger, shorten
from .running import caught, quiet_logs, rounds_of, text_of

CASES = 6_000
LARGEST_ROUND = 24
SILENCE = 0.01  # seconds a handler or a sink may take before its silence counts
SLOW = 0.002  # seconds a slow handler or sink takes: mostly within SILENCE, not always

DENIED, PENDING, OK = ToolCallStatus.DENIED, ToolCallStatus.PENDING_APPROVAL, ToolCallStatus.OK
INVALID = ToolCallStatus.INVALID_ARGUMENTS


class NotAnException(BaseException):
    """A ``BaseException`` that is none of the standard ones."""


@dataclass(frozen=True, kw_only=True)
class Case:
    """One call, how its handler and sink behave, and what its answer must be.

    Attributes:
        call: The call.
        tool: The tool it calls (``refund``, ``transfer`` or ``lookup``).
        handler: How the approval handler answers about it (a key of :data:`HANDLERS`).
        sink: How the audit sink takes its record (a key of :data:`SINKS`).
        arguments: What the tool must run with when it runs (the validated values the
            handler approved).
        statuses: The statuses it may get.
        approval: The approval its outcome must say (``None``: none needed).
        text: A piece of the answer it must contain, if any.
        raises: The exception its round must raise.
    """

    call: ToolCall
    tool: str
    handler: str
    sink: str
    arguments: Mapping[str, Any] | None
    statuses: frozenset[ToolCallStatus]
    approval: ApprovalStatus | frozenset[ApprovalStatus | None] | None
    text: str = ""
    raises: type[BaseException] | None = None

    @property
    def kind(self) -> str:
        return f"{self.tool}: handler {self.handler}, sink {self.sink}"

    @property
    def recipe(self) -> str:
        c = self.call
        return f"ToolCall(id={c.id!r}, name={c.name!r}, arguments={c.arguments!r})"


# --- handlers and sinks, by behaviour ----------------------------------------------------------


async def _never() -> None:
    await asyncio.sleep(3_600)


def _raise(exc: BaseException) -> Callable[[ToolInvocation], Awaitable[Any]]:
    async def handler(request: ToolInvocation) -> Any:
        await asyncio.sleep(0)
        raise exc

    return handler


def _answer(value: Any) -> Callable[[ToolInvocation], Awaitable[Any]]:
    async def handler(request: ToolInvocation) -> Any:
        return value

    return handler


async def _approve(request: ToolInvocation) -> Any:
    return Approve()


async def _slow(request: ToolInvocation) -> Any:
    await asyncio.sleep(SLOW)
    return Approve()


async def _silent(request: ToolInvocation) -> Any:
    await _never()
    return Approve()


def _edit(change: Callable[[dict[str, Any]], Any]) -> Callable[[ToolInvocation], Awaitable[Any]]:
    async def handler(request: ToolInvocation) -> Any:
        return Approve(arguments=change(dict(request.arguments)))

    return handler


def _halve(arguments: dict[str, Any]) -> dict[str, Any]:
    return {**arguments, "amount": arguments["amount"] // 2}


class _Unserialisable:
    pass


HANDLERS: dict[str, Callable[[ToolInvocation], Any]] = {
    "approves": _approve,
    "approves slowly": _slow,
    "edits validly": _edit(_halve),
    "edits to a wrong type": _edit(lambda a: {**a, "amount": "a lot"}),
    "edits to NaN": _edit(lambda a: {**a, "amount": math.nan}),
    "edits in an extra key": _edit(lambda a: {**a, "admin": True}),
    "edits a key away": _edit(lambda a: {k: v for k, v in a.items() if k != "amount"}),
    "edits to a list": _edit(lambda a: [a]),
    "edits to text": _edit(lambda a: json.dumps(a)),
    "edits to an object JSON cannot hold": _edit(lambda a: {**a, "amount": _Unserialisable()}),
    "denies with a reason": _answer(Deny("Refunds need a team lead.")),
    "denies": _answer(Deny()),
    "defers": _answer(Defer()),
    "never answers": _silent,
    "raises": _raise(RuntimeError("approval service down")),
    "raises its own TimeoutError": _raise(TimeoutError("upstream")),
    "raises its own CancelledError": _raise(asyncio.CancelledError()),
    "raises SystemExit": _raise(SystemExit(1)),
    "raises a BaseException": _raise(NotAnException()),
    "answers True": _answer(True),
    "answers None": _answer(None),
    "answers the Approve class": _answer(Approve),
    "answers a dict": _answer({"approved": True}),
    "is not async": lambda request: Approve(),
}
APPROVING = {"approves", "approves slowly", "edits validly"}
INVALID_EDITS = {h for h in HANDLERS if h.startswith("edits") and h != "edits validly"}
FAILING = {h for h in HANDLERS if h.startswith("raises")}
NOT_A_HANDLER = {h for h in HANDLERS if h.startswith("answers") or h == "is not async"}


class Sink:
    """An audit sink that behaves as each call's case says, keeping what it wrote."""

    def __init__(self, behaviour: Mapping[str, str]) -> None:
        self.behaviour = behaviour
        self.records: list[AuditRecord] = []

    async def write(self, record: AuditRecord) -> None:
        how = self.behaviour.get(record.call_id, "writes")
        if how == "never answers":
            await _never()
        elif how == "raises":
            raise OSError("disk full")
        elif how == "raises its own CancelledError":
            raise asyncio.CancelledError()
        elif how == "raises SystemExit":
            raise SystemExit(2)
        elif how == "writes slowly":
            await asyncio.sleep(SLOW)
        self.records.append(record)


SINKS = (
    "writes",
    "writes slowly",
    "never answers",
    "raises",
    "raises its own CancelledError",
    "raises SystemExit",
)
SINK_WEIGHTS = (12, 2, 1, 1, 1, 1)


# --- the desk ----------------------------------------------------------------------------------


@dataclass
class GuardedDesk:
    """The manager, its tools, the misbehaving handler and sink, and what ran."""

    manager: ToolCallingManager
    offered: tuple[Tool, ...]
    sink: Sink
    on_timeout: Literal["deny", "defer"]
    handlers: dict[str, str] = field(default_factory=dict)  # call id -> handler behaviour
    sinks: dict[str, str] = field(default_factory=dict)  # call id -> sink behaviour
    asked: list[str] = field(default_factory=list)  # tools the handler was asked about
    runs: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def build_guarded_desk(on_timeout: Literal["deny", "defer"] = "deny") -> GuardedDesk:
    runs: list[tuple[str, dict[str, Any]]] = []
    sinks: dict[str, str] = {}
    handlers: dict[str, str] = {}
    asked: list[str] = []

    @tool(destructive=True)
    def refund(refund_id: int, amount: int) -> str:
        """Refund a payment."""
        runs.append(("refund", {"refund_id": refund_id, "amount": amount}))
        return f"refunded {amount} on {refund_id}"

    @tool(requires_approval=True)
    async def transfer(refund_id: int, amount: int) -> str:
        """Move money between accounts."""
        runs.append(("transfer", {"refund_id": refund_id, "amount": amount}))
        await asyncio.sleep(0)
        return f"moved {amount} for {refund_id}"

    @tool(read_only=True)
    def lookup(refund_id: int, amount: int) -> str:
        """Look a payment up."""
        runs.append(("lookup", {"refund_id": refund_id, "amount": amount}))
        return f"payment {refund_id}"

    def dispatch(request: ToolInvocation, /) -> Any:
        # The coroutine of the call's handler, or, for one that is not async, its answer.
        asked.append(request.tool.definition.name)
        return HANDLERS[handlers.get(request.call.id, "approves")](request)

    sink = Sink(sinks)
    offered = tuple(FunctionTool.from_function(f) for f in (refund, transfer, lookup))
    manager = ToolCallingManager(
        audit=AuditInterceptor(sink, timeout=SILENCE),
        approval=ApprovalInterceptor(
            dispatch, destructive=True, timeout=SILENCE, on_timeout=on_timeout
        ),
    )
    return GuardedDesk(
        manager=manager,
        offered=offered,
        sink=sink,
        on_timeout=on_timeout,
        handlers=handlers,
        sinks=sinks,
        asked=asked,
        runs=runs,
    )


async def run_round(
    desk: GuardedDesk, calls: Sequence[ToolCall], handlers: dict[str, str], sinks: dict[str, str]
) -> ToolExecutionResult:
    """One round of ``calls`` on ``desk``, with the handler and sink behaviours by call id."""
    desk.handlers.update(handlers)
    desk.sinks.update(sinks)
    prompt = Prompt(
        messages=(UserMessage(text="Settle the customer's payments."),),
        options=ChatOptions(tools=desk.offered),
    )
    return await desk.manager.execute_tool_calls(prompt, tool_call_response(*calls))


# --- generated cases ---------------------------------------------------------------------------


def _case(rng: random.Random, n: int, on_timeout: str) -> Case:
    name = rng.choices(["refund", "transfer", "lookup"], [5, 4, 1])[0]
    handler = rng.choice(sorted(HANDLERS))
    sink = rng.choices(SINKS, SINK_WEIGHTS)[0]
    values = {"refund_id": n, "amount": rng.randrange(1, 100_000)}
    spelled = dict(values)
    if rng.random() < 0.3:  # coercible spellings: the handler sees validated values
        spelled["amount"] = str(values["amount"])
    call = ToolCall(id=f"g{n}", name=name, arguments=json.dumps(spelled))
    common = {"call": call, "tool": name, "handler": handler, "sink": sink}
    if name == "lookup":
        return Case(**common, arguments=values, statuses=frozenset({OK}), approval=None)
    if handler in ("approves", "edits validly"):
        edited = handler == "edits validly"
        return Case(
            **common,
            arguments=_halve(values) if edited else values,
            statuses=frozenset({OK}),
            approval=ApprovalStatus.EDITED if edited else ApprovalStatus.APPROVED,
        )
    silent = PENDING if on_timeout == "defer" else DENIED
    silent_approval = ApprovalStatus.PENDING if on_timeout == "defer" else ApprovalStatus.DENIED
    if handler == "approves slowly":  # on a busy machine it may not answer in time
        return Case(
            **common,
            arguments=values,
            statuses=frozenset({OK, silent}),
            approval=frozenset({ApprovalStatus.APPROVED, silent_approval}),
        )
    if handler in INVALID_EDITS:
        return Case(
            **common,
            arguments=None,
            statuses=frozenset({INVALID}),
            approval=ApprovalStatus.EDITED,
            text="Invalid arguments",
        )
    if handler.startswith("denies"):
        text = "team lead" if "reason" in handler else "was denied"
        return Case(
            **common,
            arguments=None,
            statuses=frozenset({DENIED}),
            approval=ApprovalStatus.DENIED,
            text=text,
        )
    if handler == "defers":
        return Case(
            **common,
            arguments=None,
            statuses=frozenset({PENDING}),
            approval=ApprovalStatus.PENDING,
            text="waiting for approval",
        )
    if handler == "never answers":
        text = "waiting for approval" if on_timeout == "defer" else "not approved within"
        return Case(
            **common,
            arguments=None,
            statuses=frozenset({silent}),
            approval=silent_approval,
            text=text,
        )
    if handler in FAILING:
        return Case(
            **common,
            arguments=None,
            statuses=frozenset({DENIED}),
            approval=ApprovalStatus.DENIED,
            text="could not be approved",
        )
    assert handler in NOT_A_HANDLER
    return Case(
        **common,
        arguments=None,
        statuses=frozenset(),
        approval=None,
        raises=ConfigurationError,
    )


def generate(seed: int, count: int, on_timeout: str) -> list[Case]:
    """``count`` cases from ``seed``; the same seed always gives the same cases."""
    rng = random.Random(f"{seed}-{on_timeout}")
    cases = [_case(rng, n, on_timeout) for n in range(count)]
    # A handler that is not a handler ends its round; keep most rounds answering.
    return [c for c in cases if c.raises is None or rng.random() < 0.03]


def reproduction(cases: Sequence[Case], on_timeout: str) -> str:
    """The Python that shows a failure (see ``run_round``): the round's cases."""
    lines = [f"# {case.kind}" for case in cases]
    lines.append(f"await run_round(build_guarded_desk({on_timeout!r}), [")
    lines += [f"    {case.recipe}," for case in cases]
    lines.append("], handlers={")
    lines += [f"    {case.call.id!r}: {case.handler!r}," for case in cases]
    lines.append("}, sinks={")
    lines += [f"    {case.call.id!r}: {case.sink!r}," for case in cases]
    lines.append("})  # tests/faults/test_guards.py")
    return "\n".join(lines)


# --- the campaign ------------------------------------------------------------------------------


@dataclass
class _Campaign:
    ledger: Ledger
    desk: GuardedDesk
    aborted: int = 0
    slow_in_time: int = 0
    raced: int = 0  # handlers whose answer came after the approval timeout had denied or deferred
    silent: int = 0
    records_dropped: int = 0

    def replay(self, cases: Sequence[Case]) -> str:
        return reproduction(cases, self.desk.on_timeout)

    async def play(self, number: int, cases: list[Case]) -> None:
        desk, ledger = self.desk, self.ledger
        ran_before, asked_before, written_before = (
            len(desk.runs),
            len(desk.asked),
            len(desk.sink.records),
        )
        watch = LoopWatch()
        started = time.perf_counter()
        try:
            async with watch.watching(), asyncio.timeout(ROUND_BOUND):
                answer = await caught(run_round(desk, *_spelled(cases)))
        except TimeoutError:
            ledger.fail("hangs", number, f"the round ran past {ROUND_BOUND} s", self.replay(cases))
            return
        elapsed = time.perf_counter() - started
        if watch.held or elapsed > ROUND_BOUND:
            what = f"the round took {elapsed:.1f} s and held the loop for {watch.longest:.1f} s"
            ledger.fail("hangs", number, what, self.replay(cases))
        self.check_runs(number, cases, desk.runs[ran_before:])
        if "lookup" in desk.asked[asked_before:]:
            ledger.fail("unclear", number, "the handler was asked about a read-only tool")
        expected = {c.raises for c in cases if c.raises is not None}
        if not isinstance(answer, ToolExecutionResult):
            if type(answer) in expected:
                self.aborted += 1
            else:
                what = f"the round raised {type(answer).__name__}: {shorten(text_of(answer))}"
                ledger.fail("crashes", number, what, self.replay(cases))
            return
        if expected:
            what = "a handler that is not a handler was taken as one"
            ledger.fail("unclear", number, what, self.replay(cases))
            return
        if len(answer.outcomes) != len(cases) or len(answer.responses) != len(cases):
            what = f"{len(cases)} calls, {len(answer.responses)} answers"
            ledger.fail("lost", number, what, self.replay(cases))
            return
        ran = Counter(arguments["refund_id"] for _, arguments in desk.runs[ran_before:])
        for offset, (case, outcome) in enumerate(zip(cases, answer.outcomes, strict=True)):
            self.check_outcome(number + offset, case, outcome, ran[int(case.call.id[1:])])
        self.check_records(number, cases, answer.outcomes, desk.sink.records[written_before:])

    def check_runs(
        self, number: int, cases: list[Case], runs: list[tuple[str, dict[str, Any]]]
    ) -> None:
        by_id = {c.arguments["refund_id"]: c for c in cases if c.arguments is not None}
        for tool_name, arguments in runs:
            case = by_id.get(arguments["refund_id"])
            if case is None or case.tool != tool_name:
                what = f"{tool_name} ran with {arguments!r}, which nobody approved"
                self.ledger.fail("unapproved", number, what, self.replay(cases))
            elif dict(case.arguments or {}) != arguments:
                what = (
                    f"{tool_name} ran with {arguments!r}; {case.handler!r} approved "
                    f"{dict(case.arguments or {})!r}"
                )
                self.ledger.fail("unapproved", number, what, self.replay([case]))

    def check_outcome(self, at: int, case: Case, outcome: ToolCallOutcome, runs: int) -> None:
        ledger = self.ledger
        data = outcome.response.data
        if outcome.response.id != case.call.id:
            what = f"answered with id {outcome.response.id!r} instead of {case.call.id!r}"
            ledger.fail("lost", at, what, self.replay([case]))
        approvals = case.approval if isinstance(case.approval, frozenset) else {case.approval}
        timed_out = ("not approved within" in data and outcome.status is DENIED) or (
            "waiting for approval" in data and outcome.status is PENDING
        )
        if (
            timed_out
            and case.tool != "lookup"
            and case.handler not in ("never answers", "approves slowly", "defers")
        ):
            # A busy machine let the approval timeout (SILENCE) answer first: the call did not
            # run and says why, which is the documented outcome of a late handler.
            self.raced += 1
        elif outcome.status not in case.statuses or outcome.approval not in approvals:
            what = (
                f"{case.kind} answered {outcome.status} (approval {outcome.approval}), not "
                f"{'/'.join(sorted(case.statuses))}: {shorten(data)}"
            )
            ledger.fail("unclear", at, what, self.replay([case]))
        elif case.text and case.text not in data:
            what = f"{case.kind} answered {shorten(data)}, without {case.text!r}"
            ledger.fail("unclear", at, what, self.replay([case]))
        if runs != outcome.ok:
            what = f"{case.kind} ran {runs} times and answered {outcome.status}"
            kind = "unapproved" if runs > outcome.ok and case.tool != "lookup" else "lost"
            ledger.fail(kind, at, what, self.replay([case]))
        elif (
            outcome.ok and case.arguments is not None and data != _result(case.tool, case.arguments)
        ):
            what = f"{case.kind} answered {shorten(data)}"
            ledger.fail("lost", at, what, self.replay([case]))
        if case.handler == "approves slowly" and case.tool != "lookup":
            self.slow_in_time += outcome.ok
        if case.handler == "never answers" and case.tool != "lookup":
            self.silent += 1

    def check_records(
        self,
        number: int,
        cases: list[Case],
        outcomes: Sequence[ToolCallOutcome],
        records: list[AuditRecord],
    ) -> None:
        by_call: dict[str, list[AuditRecord]] = {}
        for record in records:
            by_call.setdefault(record.call_id, []).append(record)
        for offset, (case, outcome) in enumerate(zip(cases, outcomes, strict=True)):
            kept = by_call.get(case.call.id, [])
            if case.sink in ("writes", "writes slowly"):
                if case.sink == "writes slowly" and not kept:
                    self.records_dropped += 1  # its timeout may come first on a busy machine
                    continue
                if len(kept) != 1:
                    what = f"{case.kind}: {len(kept)} audit records, not 1"
                    self.ledger.fail("lost", number + offset, what, self.replay([case]))
                elif (kept[0].status, kept[0].approval) != (outcome.status, outcome.approval):
                    what = (
                        f"{case.kind}: the record says {kept[0].status}/{kept[0].approval}, "
                        f"the answer {outcome.status}/{outcome.approval}"
                    )
                    self.ledger.fail("lost", number + offset, what, self.replay([case]))
            else:
                self.records_dropped += 1


def _spelled(cases: Sequence[Case]) -> tuple[list[ToolCall], dict[str, str], dict[str, str]]:
    """``run_round``'s arguments for ``cases``."""
    calls = [c.call for c in cases]
    return calls, {c.call.id: c.handler for c in cases}, {c.call.id: c.sink for c in cases}


def _result(tool_name: str, arguments: Mapping[str, Any]) -> str:
    """What the tool answers when it runs with ``arguments``."""
    refund_id, amount = arguments["refund_id"], arguments["amount"]
    if tool_name == "refund":
        return f"refunded {amount} on {refund_id}"
    if tool_name == "transfer":
        return f"moved {amount} for {refund_id}"
    return f"payment {refund_id}"


async def campaign(seed: int = SEED, cases: int = CASES) -> Ledger:
    """Generate ``cases`` guarded calls from ``seed`` for each desk, run them, count."""
    ledger = Ledger(campaign="misbehaving guards", unit="calls", seed=seed)
    totals = {"aborted": 0, "slow": 0, "silent": 0, "dropped": 0, "rounds": 0, "raced": 0}
    number = 0
    for on_timeout in ("deny", "defer"):
        desk = build_guarded_desk(on_timeout)
        run = _Campaign(ledger=ledger, desk=desk)
        generated = generate(seed, cases // 2, on_timeout)
        rounds = rounds_of(generated, seed, LARGEST_ROUND)
        with quiet_logs():
            for round_ in rounds:
                await run.play(number, round_)
                number += len(round_)
                ledger.tried += len(round_)
        totals["aborted"] += run.aborted
        totals["slow"] += run.slow_in_time
        totals["raced"] += run.raced
        totals["silent"] += run.silent
        totals["dropped"] += run.records_dropped
        totals["rounds"] += len(rounds)
    ledger.observed["rounds"] = totals["rounds"]
    ledger.observed["approvals timed out"] = totals["silent"]
    ledger.observed["slow approvals answered in time"] = totals["slow"]
    ledger.observed["handlers answered after the approval timeout (a busy machine)"] = totals[
        "raced"
    ]
    ledger.observed["rounds ended by a handler that is not one (ConfigurationError)"] = totals[
        "aborted"
    ]
    ledger.observed["audit records a silent or failing sink lost"] = totals["dropped"]
    return ledger


async def test_misbehaving_handlers_and_sinks_never_let_a_call_run_unapproved() -> None:
    ledger = await campaign()
    ledger.check(at_least=CASES * 4 // 5)
