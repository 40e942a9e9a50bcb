"""10,000 generated malformed calls: each answered once, nothing unsafe runs, nothing hangs.

The calls (``calls.generate``) go in rounds of 1 to 24 to one manager, as a client's loop
would send them: the tools of a refund desk behind audit, idempotency and an approval policy
written as the docs write it (``amount > 10_000`` is denied), and a resolver that also knows
``admin.wipe``, which no request offers. After every round:

- the round returned (``crashes``), within its bound and without holding the loop (``hangs``);
- every call has exactly one answer, in order, with its id (``lost``), and a status its
  faults allow (``unclear``: ``NaN`` answered ``ok``, a valid call refused);
- every tool that ran got arguments its declaration accepts (``bad_runs``), refunds only
  finite amounts the policy approves (``unapproved``), each refund id at most once whatever
  its spelling (``double_runs``), and ``admin.wipe`` never ran nor was suggested (``leaks``);
- the round's history is stored and read back exactly by the SQLite and in-memory chat
  memories, lone surrogates included, and the audit file holds one valid UTF-8 line per
  successful call (``lost``, ``crashes``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from toolrelay.execution import (
    ApprovalInterceptor,
    Approve,
    Deny,
    InMemoryIdempotencyStore,
    JsonLinesAuditSink,
    StaticToolResolver,
    ToolCallingManager,
    ToolCallStatus,
    ToolExecutionResult,
    ToolInvocation,
)
from toolrelay.memory import InMemoryChatMemoryRepository, SqliteChatMemoryRepository
from toolrelay.messages import ToolCall, UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import tool_call_response
from toolrelay.tools import FunctionTool, Tool, ToolContext, tool

from .bounds import ROUND_BOUND, LoopWatch
from .calls import APPROVAL_LIMIT, GeneratedCall, generate
from .ledger import SEED, Ledger, shorten
from .running import quiet_logs, rounds_of

CALLS = 10_000
LARGEST_ROUND = 24  # below the per-tool call limit of a turn (40), so no call is refused by it
HIDDEN = ("admin.wipe", "admin__wipe")


class Line(BaseModel):
    """One order line."""

    sku: str
    qty: int = Field(ge=1)


@dataclass
class Desk:
    """The tools under test, the manager running them and what they did."""

    manager: ToolCallingManager
    offered: tuple[Tool, ...]
    audit_path: Path
    runs: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


async def refund_policy(request: ToolInvocation, /) -> Approve | Deny:
    """The docs' refund policy, as written there."""
    if request.arguments.get("amount", 0) > APPROVAL_LIMIT:
        return Deny("Refunds over 10,000 need a team lead.")
    return Approve()


def build_desk(folder: Path) -> Desk:
    runs: list[tuple[str, dict[str, Any]]] = []

    @tool(read_only=True)
    def weather(city: str, unit: Literal["c", "f"] = "c") -> str:
        """Current weather for a city."""
        runs.append(("weather", {"city": city, "unit": unit}))
        return f"{city}: 21 {unit}"

    @tool(destructive=True, idempotency_key=["refund_id"])
    def refund(refund_id: int, amount: float, context: ToolContext, reason: str = "") -> str:
        """Refund a payment to the customer's card."""
        runs.append(("refund", {"refund_id": refund_id, "amount": amount, "reason": reason}))
        return f"refunded {amount} on {refund_id} for {context.tenant_id}"

    @tool
    async def score(x: int = Field(..., gt=10, le=100)) -> str:
        """Record a satisfaction score."""
        runs.append(("score", {"x": x}))
        return f"score {x}"

    @tool(name="order.lines")
    def lines(items: list[Line]) -> str:
        """Add lines to the open order."""
        runs.append(("order.lines", {"items": items}))
        return f"{len(items)} lines"

    @tool
    def ping() -> str:
        """Is the desk up."""
        runs.append(("ping", {}))
        return "pong"

    @tool(name="admin.wipe", destructive=True)
    def wipe() -> str:
        """Delete every order. Never offered to a model."""
        runs.append(("admin.wipe", {}))
        return "wiped"

    offered = tuple(FunctionTool.from_function(f) for f in (weather, refund, score, lines, ping))
    audit_path = folder / "audit.jsonl"
    manager = ToolCallingManager(
        resolver=StaticToolResolver([*offered, FunctionTool.from_function(wipe)]),
        audit=JsonLinesAuditSink(audit_path),
        idempotency=InMemoryIdempotencyStore(),
        approval=ApprovalInterceptor(refund_policy, destructive=True),
    )
    return Desk(manager=manager, offered=offered, audit_path=audit_path, runs=runs)


async def run_round(desk: Desk, calls: Sequence[ToolCall]) -> ToolExecutionResult:
    """One round of ``calls`` on ``desk``, as a reproduction runs it."""
    prompt = Prompt(
        messages=(UserMessage(text="Handle the customer's requests."),),
        options=ChatOptions(tools=desk.offered, tool_context={"tenant_id": "acme"}),
    )
    return await desk.manager.execute_tool_calls(prompt, tool_call_response(*calls))


def reproduction(cases: Sequence[GeneratedCall], note: str = "") -> str:
    """The Python that shows a failure: the round's calls (see ``run_round``)."""
    lines = [f"# {case.kind}" for case in cases]
    lines.append("await run_round(build_desk(tmp_path), [")
    lines += [f"    {case.recipe[:400]}," for case in cases]
    lines.append("])  # tests/faults/test_malformed_calls.py")
    if note:
        lines.append(f"# {note}")
    return "\n".join(lines)


# --- what a run may receive --------------------------------------------------------------------


def run_problem(tool_name: str, arguments: dict[str, Any]) -> tuple[str, str] | None:
    """(kind, what) when a tool ran with arguments it must never get."""
    if tool_name == "admin.wipe":
        return "leaks", "admin.wipe ran, though no request offers it"
    if tool_name == "refund":
        amount, refund_id = arguments["amount"], arguments["refund_id"]
        if not isinstance(amount, float | int) or not math.isfinite(amount):
            return "unapproved", f"a refund of {amount!r} ran; the policy never approved it"
        if amount > APPROVAL_LIMIT:
            return "unapproved", f"a refund of {amount} ran; the policy denies over 10,000"
        if type(refund_id) is not int or not isinstance(arguments["reason"], str):
            return "bad_runs", f"refund ran with {arguments!r}"
        return None
    if tool_name == "score":
        x = arguments["x"]
        if type(x) is not int or not 10 < x <= 100:
            return "bad_runs", f"score ran with x={x!r}, outside 10 < x <= 100"
        return None
    if tool_name == "weather":
        if not isinstance(arguments["city"], str) or arguments["unit"] not in ("c", "f"):
            return "bad_runs", f"weather ran with {arguments!r}"
        return None
    if tool_name == "order.lines":
        items = arguments["items"]
        if not all(isinstance(i, Line) and i.qty >= 1 for i in items):
            return "bad_runs", f"order.lines ran with {items!r}"
    return None


# --- the campaign ------------------------------------------------------------------------------


@dataclass
class _Campaign:
    ledger: Ledger
    desk: Desk
    sqlite: SqliteChatMemoryRepository
    memory: InMemoryChatMemoryRepository
    refunded: dict[int, int] = field(default_factory=dict)  # refund id -> round that ran it
    ok_calls: int = 0
    case: int = 0  # number of the round's first case

    async def play(self, number: int, cases: list[GeneratedCall]) -> None:
        ledger = self.ledger
        self.case = case = number
        calls = [c.call for c in cases]
        ran_before = len(self.desk.runs)
        watch = LoopWatch()
        started = time.perf_counter()
        try:
            async with watch.watching():
                result = await asyncio.wait_for(run_round(self.desk, calls), ROUND_BOUND)
        except TimeoutError:
            ledger.fail("hangs", case, f"the round ran past {ROUND_BOUND} s", reproduction(cases))
            return
        except Exception as exc:
            culprit = await self.shrink_crash(cases)
            what = f"the round raised {type(exc).__name__}: {shorten(str(exc))}"
            ledger.fail("crashes", case, what, reproduction(culprit))
            return
        elapsed = time.perf_counter() - started
        if watch.held or elapsed > ROUND_BOUND:
            what = (
                f"the round took {elapsed:.1f} s and held the event loop for {watch.longest:.1f} s"
            )
            ledger.fail("hangs", case, what, reproduction(await self.shrink_slow(cases)))
        self.check_answers(cases, result)
        self.check_runs(cases, result, self.desk.runs[ran_before:])
        await self.check_stored(number, result)

    def check_answers(self, cases: list[GeneratedCall], result: ToolExecutionResult) -> None:
        ledger = self.ledger
        responses = result.responses
        if len(responses) != len(cases) or len(result.outcomes) != len(cases):
            what = f"{len(cases)} calls, {len(responses)} answers"
            ledger.fail("lost", self.case, what, reproduction(cases))
            return
        for offset, (case, outcome) in enumerate(zip(cases, result.outcomes, strict=True)):
            number = self.case + offset
            response = outcome.response
            if response.id != case.call.id:
                what = f"answered with id {response.id!r} instead of {case.call.id!r}"
                ledger.fail("lost", number, what, reproduction([case]))
            if not isinstance(response.data, str):
                ledger.fail("lost", number, f"the answer is {type(response.data).__name__}")
                continue
            if outcome.status not in case.statuses:
                what = (
                    f"answered {outcome.status}, not {'/'.join(sorted(case.statuses))}: "
                    f"{shorten(response.data, 200)}"
                )
                ledger.fail("unclear", number, what, reproduction([case]))
            if outcome.status is ToolCallStatus.OK:
                self.ok_calls += 1
            # Echoing the name the model wrote (in whatever form the answer quotes it) tells
            # it nothing; any other mention of the hidden tool would.
            name: object = case.call.name
            written = name.casefold() if isinstance(name, str) else ""
            if any(name in response.data and name not in written for name in HIDDEN):
                what = f"the answer names a tool no request offers: {shorten(response.data, 200)}"
                ledger.fail("leaks", number, what, reproduction([case]))

    def check_runs(
        self,
        cases: list[GeneratedCall],
        result: ToolExecutionResult,
        runs: list[tuple[str, dict[str, Any]]],
    ) -> None:
        ledger = self.ledger
        for tool_name, arguments in runs:
            problem = run_problem(tool_name, arguments)
            suspects = [c for c in cases if c.kind.startswith(f"{tool_name}:")] or cases
            if problem is not None:
                kind, what = problem
                ledger.fail(kind, self.case, what, reproduction(suspects))
            if tool_name == "refund":
                refund_id = arguments["refund_id"]
                first = self.refunded.setdefault(refund_id, self.case)
                if first != self.case or arguments is not next(
                    a for name, a in runs if name == "refund" and a["refund_id"] == refund_id
                ):
                    what = f"refund {refund_id!r} ran again (first in the round of case {first})"
                    ledger.fail("double_runs", self.case, what, reproduction(suspects))

    async def check_stored(self, number: int, result: ToolExecutionResult) -> None:
        history = list(result.conversation_history)
        key = f"round-{number}"
        for repository in (self.sqlite, self.memory):
            try:
                await repository.save_all(key, history)
                stored = await repository.find_by_conversation_id(key)
                await repository.delete_by_conversation_id(key)
            except Exception as exc:
                what = f"{type(repository).__name__} raised {type(exc).__name__}: {exc}"
                shown = shorten(repr(history), 300)
                replay = f"await {type(repository).__name__}(...).save_all(key, {shown})"
                self.ledger.fail("crashes", number, what, replay)
                continue
            # NaN is unequal to itself: a call holding one (arguments a provider had already
            # decoded) reads back equal in all but identity, which its text shows.
            if stored != history and repr(stored) != repr(history):
                what = f"{type(repository).__name__} gave back another history than it was given"
                self.ledger.fail("lost", number, what)

    async def shrink_crash(self, cases: list[GeneratedCall]) -> list[GeneratedCall]:
        """The single call that makes a fresh desk's round raise, else the whole round."""
        for case in cases:
            with tempfile.TemporaryDirectory() as folder:
                try:
                    await asyncio.wait_for(
                        run_round(build_desk(Path(folder)), [case.call]), ROUND_BOUND
                    )
                except Exception:
                    return [case]
        return cases

    async def shrink_slow(self, cases: list[GeneratedCall]) -> list[GeneratedCall]:
        """The call that is slowest alone on a fresh desk."""
        timed = []
        for case in cases:
            with tempfile.TemporaryDirectory() as folder:
                started = time.perf_counter()
                with contextlib.suppress(Exception):  # only its time matters here
                    await asyncio.wait_for(
                        run_round(build_desk(Path(folder)), [case.call]), ROUND_BOUND
                    )
                timed.append((time.perf_counter() - started, case))
        return [max(timed, key=lambda pair: pair[0])[1]]

    def check_audit(self) -> None:
        """One valid UTF-8 line per successful call, each a JSON object."""
        ok_lines = 0
        with self.desk.audit_path.open("rb") as file:
            for number, raw in enumerate(file):
                try:
                    record = json.loads(raw.decode("utf-8"))
                except (UnicodeDecodeError, ValueError) as exc:
                    what = f"audit line {number} is not valid UTF-8 JSON: {exc}"
                    self.ledger.fail("lost", number, what, shorten(raw.decode("utf-8", "replace")))
                    continue
                ok_lines += record.get("status") == "ok"
        if ok_lines != self.ok_calls:
            what = f"{self.ok_calls} calls answered ok, {ok_lines} audit records say ok"
            self.ledger.fail("lost", 0, what)


async def campaign(seed: int = SEED, calls: int = CALLS) -> Ledger:
    """Generate ``calls`` malformed calls from ``seed``, run them and count what broke."""
    ledger = Ledger(campaign="malformed calls", unit="calls", seed=seed)
    cases = list(generate(seed, calls))
    with tempfile.TemporaryDirectory() as folder, quiet_logs():
        desk = build_desk(Path(folder))
        sqlite = SqliteChatMemoryRepository(Path(folder) / "memory.sqlite3")
        run = _Campaign(
            ledger=ledger, desk=desk, sqlite=sqlite, memory=InMemoryChatMemoryRepository()
        )
        number = 0
        for round_ in rounds_of(cases, seed, LARGEST_ROUND):
            await run.play(number, round_)
            number += len(round_)
            ledger.tried += len(round_)
        run.check_audit()
        sqlite.close()
    ledger.observed["rounds"] = len(rounds_of(cases, seed, LARGEST_ROUND))
    ledger.observed["calls that ran"] = len(desk.runs)
    return ledger


async def test_ten_thousand_malformed_calls() -> None:
    ledger = await campaign()
    ledger.check(at_least=CALLS)
