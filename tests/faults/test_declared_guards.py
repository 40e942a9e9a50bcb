"""Declared guards hold wherever a tool runs: generated cases over every door and setting.

The tools declare their guards and nothing else: ``refund.issue`` (``requires_approval``,
``idempotency_key=["refund_id"]``), ``note.add`` (``idempotency_key=["note_id"]`` only),
``payments.refund`` (a tool validated by its JSON Schema alone, keyed by an integer
``refund_id``) and ``payments.chargeback`` (the same, requiring approval), ``notes.keep``
(takes a note of any shape), the monthly reports (long definitions) and ``payout.send``
(``requires_approval``; it joins a live catalog after the build). Each case calls them through
one door (``doors.py``: ``run_call``, the client's loop, tool search in both channels, the
bridges' core, ``ToolGateway.call``, the served gateway, ``tools_server``, and each tool
converted twice for LangChain, pydantic-ai and the Agents SDK), in one of these ways:

- *guards*: approval configured to approve, deny or defer, or not at all; the same call
  again; the same key with another amount; the first call for another user of the tenant,
  and for a user of another tenant; where a catalog is live, a guarded tool that arrives
  after the build;
- *spellings*: one operation of the schema tool in every spelling (``7`` and ``7.0``, keys
  reordered, ``10`` and ``10.0`` and ``10e0``, an object or its JSON text): one run, the rest
  replays;
- *anonymous*: calls with no tenant and no user: with no caller at all (an empty context, or
  one with other entries) refused, ``ToolContextError`` or an error result at a server door;
  with a session only, run, replayed within the session, never to another one;
- *edited*: an approver that halves the amount (``1000`` to ``500.0``): what ran is
  recorded, a repeat of the edited call (``500`` or ``500.0``) is a replay, the original
  amount is refused as a conflict;
- *shapes* (doors with ``call_tool``): ``call_tool`` with its arguments as an object, its
  JSON text, a JSON text holding the whole call, a mapping, ``null``, left out, not an
  object, holding the whole call again, nested 50, 100, 101 and 5,000 levels, a ``null``
  name;
- *null names* (tool search, both channels): calls whose name is ``null``, alone or beside
  other calls; the turn goes on to a search and a call;
- *cut answers* (doors whose search answers carry definitions): a small ``max_result_chars``
  on the manager, a search finding more definitions than fit; then every tool it found is
  called.

Counted as failures:

- ``unapproved``: a ``requires_approval`` tool that ran without an approval of that very
  call, or with arguments nobody approved; a door that, unconfigured, neither refused to
  build nor refused the call;
- ``double_runs``: an operation (tenant, user, session, key, canonical arguments) that ran
  twice;
- ``cross_user_replays``: another user's, tenant's or session's call answered with a
  recorded result;
- ``stale_answers``: a key reused with other arguments answered with the earlier result, or
  run;
- ``refused_repeats``: a repeat of an operation (another spelling of the same values, the
  arguments an approver made) refused instead of answered with its recorded result;
- ``callerless_runs``: a keyed tool that ran, or a result replayed, for a call naming no
  caller;
- ``bad_runs``: a call of ``call_tool`` whose arguments the named tool cannot take (nested too
  deeply, another call's shape) that ran;
- ``cut_answers``: a search answer that is not valid JSON of whole definitions and names, or
  longer than the bound but as its best hit alone, whole (a tool must stay reachable); a tool
  it only named counted as found (run through ``call_tool``, recorded as found) or one it gave
  whole not;
- ``unclear``: a call the contract answers refused, or a failure answered without a clear
  error (a call without a caller answered as feedback in process, a ``null`` name answered
  as a success);
- ``lost``: a turn that did not go on after a ``null`` name;
- ``hangs``: a case that did not end within its bound;
- ``crashes``: an exception that the contract does not raise.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from toolrelay import ToolContext, tool
from toolrelay.exceptions import ConfigurationError, ToolContextError
from toolrelay.execution import ApprovalInterceptor, Approve, Defer, Deny, ToolInvocation
from toolrelay.messages import ToolCall
from toolrelay.search import InMemoryUsageLog
from toolrelay.testing import isolated_idempotency, tool_call_response
from toolrelay.tools import (
    FunctionTool,
    Tool,
    ToolCatalog,
    ToolDefinition,
    ToolMetadata,
    as_tools,
)
from toolrelay.toolsearch import CALL_TOOL_NAME, ENGLISH, TOOL_SEARCH_NAME
from toolrelay.toolsearch._search_tool import definition_hit

from .bounds import ROUND_BOUND
from .doors import (
    CALL_TOOL_DOORS,
    CONVERTED_DOORS,
    DEFINITION_DOORS,
    PLACES,
    SERVER_DOORS,
    Answer,
    Door,
    open_door,
)
from .ledger import SEED, Ledger
from .running import quiet_logs

APPROVALS = ("none", "approve", "deny", "defer")
SEARCH_DOORS = tuple(p for p in ("search", "search_proxy") if p in PLACES)

REFUND_SCHEMA = {
    "type": "object",
    "properties": {
        "refund_id": {"type": "integer", "description": "The refund."},
        "amount": {"type": "number", "description": "How much, in euros."},
    },
    "required": ["refund_id", "amount"],
}

Operation = tuple[Any, ...]  # (tool, tenant, user, session, key, amount)


def _canonical(value: Any) -> Any:
    """A number as its value (``7.0`` is ``7``), so two spellings of one operation are one."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


class Bank:
    """The tools of one case, counting what really ran and what was approved.

    The function tools are declared once (building a schema costs more than a case) and
    count into the bank of the case that runs now.
    """

    current: ClassVar[Bank]

    def __init__(self) -> None:
        Bank.current = self
        self.runs: Counter[Operation] = Counter()
        self.approved: Counter[tuple[Any, ...]] = Counter()  # (tool, key, amount) as approved
        self.kept = 0  # runs of notes.keep
        self.reports: Counter[str] = Counter()  # runs of the report tools
        self.issue, self.note, self.payout, self.keep = TOOLS
        self.schema: Tool = SchemaRefund(self)
        self.chargeback: Tool = SchemaRefund(self, guarded=True)

    def ran(self, name: str, context: ToolContext | None, key: Any, amount: Any) -> None:
        context = context or ToolContext()
        caller = (context.tenant_id, context.user_id, context.session_id)
        self.runs[(name, *caller, _canonical(key), _canonical(amount))] += 1

    def ran_of(self, name: str) -> int:
        return sum(count for op, count in self.runs.items() if op[0] == name)


@tool(name="refund.issue", requires_approval=True, idempotency_key=["refund_id"])
def issue(refund_id: str, amount_cents: int, context: ToolContext) -> str:
    """Issue a refund to the customer."""
    Bank.current.ran("refund.issue", context, refund_id, amount_cents)
    return f"refunded {amount_cents} ({refund_id})"


@tool(name="note.add", idempotency_key=["note_id"])
def note(note_id: str, amount_cents: int, context: ToolContext) -> str:
    """Add a note to a customer's file."""
    Bank.current.ran("note.add", context, note_id, amount_cents)
    return f"noted {amount_cents} ({note_id})"


@tool(name="payout.send", requires_approval=True)
def payout(payout_id: str, amount_cents: int, context: ToolContext) -> str:
    """Send a payout; arrives in the catalog after the build."""
    Bank.current.ran("payout.send", context, payout_id, amount_cents)
    return f"paid {amount_cents} ({payout_id})"


@tool(name="notes.keep")
def keep(note: object = None) -> str:
    """Keep a note of any shape in the customer's file."""
    Bank.current.kept += 1
    return "kept"


TOOLS = tuple(as_tools(issue, note, payout, keep))


class SchemaRefund:
    """A tool that is no Python function: validated by its JSON Schema alone, as MCP tools are.

    ``payments.refund``, or ``payments.chargeback`` when ``guarded`` (it requires approval).
    """

    def __init__(self, bank: Bank, *, guarded: bool = False) -> None:
        self.bank = bank
        self.definition = ToolDefinition(
            name="payments.chargeback" if guarded else "payments.refund",
            description="Reverse a card payment; a person approves each."
            if guarded
            else "Refund a customer's payment, once per refund id.",
            input_schema=REFUND_SCHEMA,
        )
        self.metadata = ToolMetadata(idempotency_key=("refund_id",), requires_approval=guarded)

    async def call(self, arguments_json: str, context: ToolContext | None = None) -> str:
        values = json.loads(arguments_json)
        name = self.definition.name
        self.bank.ran(name, context, values["refund_id"], values["amount"])
        return f"{name}: {values['amount']} on {values['refund_id']}"


def _approval(kind: str, bank: Bank) -> Any:
    """``approval=`` of a door: nothing, a person later, or a handler (approve, deny, edit)."""
    if kind == "none":
        return None
    if kind == "defer":
        return ApprovalInterceptor()

    async def handler(call: ToolInvocation, /) -> Approve | Deny | Defer:
        if kind == "deny":
            return Deny("Not today.")
        arguments = dict(call.arguments)
        amount = "amount_cents" if "amount_cents" in arguments else "amount"
        if kind == "edit":
            arguments[amount] /= 2  # a float, as approvers written in JavaScript send it
        key = next(arguments[k] for k in ("refund_id", "note_id", "payout_id") if k in arguments)
        bank.approved[call.tool_name, _canonical(key), _canonical(arguments[amount])] += 1
        return Approve(arguments=arguments) if kind == "edit" else Approve()

    return handler


GUARDED = ("refund.issue", "payout.send", "payments.chargeback")  # they require approval
ALICE = {"tenant_id": "acme", "user_id": "alice"}
BOB = {"tenant_id": "acme", "user_id": "bob"}
ALICE_ELSEWHERE = {"tenant_id": "globex", "user_id": "alice"}
AUDITOR = {"tenant_id": "acme", "user_id": "auditor"}


def _replay_of(answer: Answer, first: str) -> bool:
    """Whether ``answer`` is the recorded result ``first``, marked as a replay."""
    text, error = answer
    return error is not True and text != first and text.endswith("\n" + first)


def _refused(exc: BaseException) -> bool:
    """Whether ``exc`` is (or a framework's wrapper of) the ToolContextError a door raises."""
    chain: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and seen not in chain:
        if isinstance(seen, ToolContextError):
            return True
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    return False


class Case:
    """One generated case: its number, door, and the ledger it writes to."""

    def __init__(self, number: int, place: str, rng: random.Random, ledger: Ledger) -> None:
        self.number, self.place, self.rng, self.ledger = number, place, rng, ledger
        self.where = place

    def fail(self, kind: str, what: str) -> None:
        self.ledger.fail(kind, self.number, f"{self.where}: {what}")

    def note(self, what: str) -> None:
        self.ledger.observed[what] = self.ledger.observed.get(what, 0) + 1

    async def tried(self, work: Awaitable[Answer]) -> Answer | BaseException:
        """One call: its answer, or what it raised."""
        self.ledger.tried += 1
        try:
            return await work
        except (KeyboardInterrupt, MemoryError, asyncio.CancelledError):
            raise
        except BaseException as exc:
            return exc

    async def answered(self, work: Awaitable[Answer], what: str) -> Answer | None:
        """One call that must not raise: its answer, or ``None`` after counting a crash."""
        answer = await self.tried(work)
        if isinstance(answer, BaseException):
            self.fail("crashes", f"{what}: {type(answer).__name__}: {answer}")
            return None
        return answer


# --- guards: approval configured or not, repeats, other users, a late tool --------------------


async def _guards(case: Case, kind: str, stack: contextlib.AsyncExitStack) -> None:
    rng, bank = case.rng, Bank()
    guarded = rng.random() < 0.6
    subject = bank.issue if guarded else bank.note
    catalog = ToolCatalog([subject])
    case.where = f"{subject.definition.name} at {case.place}, approval {kind}"
    try:
        door = await open_door(case.place, _approval(kind, bank), catalog, stack)
    except ConfigurationError as exc:
        case.ledger.tried += 1
        if not (guarded and kind == "none" and "approval" in str(exc)):
            case.fail("crashes", f"refused to build: {exc}")
        else:
            case.note("refused at build")
        return
    if guarded and kind == "none" and case.place != "run_call":
        case.fail("unapproved", "built without an approval")
    key = f"R-{case.number}"
    amount = rng.randint(1, 9_999)
    first = {"refund_id" if guarded else "note_id": key, "amount_cents": amount}
    other = {**first, "amount_cents": amount + 1}
    steps = [(first, ALICE), (first, ALICE), (other, ALICE), (first, BOB), (first, ALICE_ELSEWHERE)]
    answers: list[Answer] = []
    for arguments, context in steps:
        answer = await case.answered(door.call(subject, arguments, context), "a call")
        if answer is None:
            return
        answers.append(answer)
    if case.place not in ("run_call", *CONVERTED_DOORS):  # a guarded tool after the build
        catalog.add(bank.payout)
        late = {"payout_id": key, "amount_cents": amount}
        await case.answered(door.call(bank.payout, late, ALICE), "the late tool")
    _judge_approvals(case, bank, kind)
    if guarded and kind != "approve":
        return  # nothing of it may run; checked above
    name = subject.definition.name
    first_text = answers[0][0]
    stale = answers[2]
    if stale[1] is False or stale[0] == first_text or _replay_of(stale, first_text):
        case.fail("stale_answers", f"the reused key answered {stale[0]!r}")
    alice = [op for op in bank.runs if op[0] == name and op[1:3] == ("acme", "alice")]
    if len(alice) != 1:
        case.fail("stale_answers", f"alice's operations that ran: {alice}")
    for user, tenant in (("bob", "acme"), ("alice", "globex")):
        if not any(op[1:3] == (tenant, user) for op in bank.runs):
            case.fail("cross_user_replays", f"{user} of {tenant} got another's record")


def _judge_approvals(case: Case, bank: Bank, kind: str) -> None:
    """No operation twice, and no guarded run without an approval of what ran."""
    for operation, count in bank.runs.items():
        if count > 1:
            case.fail("double_runs", f"{operation} ran {count} times")
    ran: Counter[tuple[Any, ...]] = Counter()
    for (name, _, _, _, key, amount), count in bank.runs.items():
        if name in GUARDED:
            ran[name, key, amount] += count
    for what, count in ran.items():
        if kind not in ("approve", "edit"):
            case.fail("unapproved", f"{what} ran {count} times, approval {kind}")
        elif count > bank.approved[what]:
            case.fail("unapproved", f"{what} ran {count} times for {bank.approved[what]} approvals")


# --- spellings: one operation of a schema tool, spelt every way -------------------------------


def _spellings(key: int, amount: int) -> list[dict[str, Any] | str]:
    return [
        {"refund_id": key, "amount": amount},
        {"refund_id": float(key), "amount": float(amount)},
        {"amount": amount, "refund_id": key},
        {"amount": float(amount), "refund_id": float(key)},
        json.dumps({"amount": float(amount), "refund_id": key}),
        f'{{"refund_id": {key}e0, "amount": {amount}.00}}',
    ]


async def _spelt(case: Case, stack: contextlib.AsyncExitStack) -> None:
    bank = Bank()
    door = await open_door(case.place, None, ToolCatalog([bank.schema]), stack)
    spellings = _spellings(1_000 + case.number, case.rng.randint(1, 999))
    case.rng.shuffle(spellings)
    case.where = f"payments.refund at {case.place}, spellings {spellings}"
    first = ""
    for arguments in spellings:
        before = bank.ran_of("payments.refund")
        answer = await case.answered(door.call(bank.schema, arguments, ALICE), f"{arguments!r}")
        if answer is None:
            return
        if not first:
            if answer[1] or bank.ran_of("payments.refund") == before:
                case.fail("unclear", f"the first spelling did not run: {answer[0]!r}")
                return
            first = answer[0]
        elif _replay_of(answer, first):
            case.note("other spellings answered as replays")
        elif bank.ran_of("payments.refund") == before:  # a second run is a double run
            case.fail("refused_repeats", f"{arguments!r} answered {answer[0]!r}")
    _judge_approvals(case, bank, "none")


# --- anonymous callers: no caller refused; sessions kept apart --------------------------------


async def _anonymous(case: Case, stack: contextlib.AsyncExitStack) -> None:
    rng, bank = case.rng, Bank()
    subject = rng.choice([bank.note, bank.schema])
    door = await open_door(case.place, None, ToolCatalog([subject]), stack)
    name = subject.definition.name
    key = 5_000 + case.number
    arguments: dict[str, Any] = (
        {"note_id": f"N-{key}", "amount_cents": 7}
        if subject is bank.note
        else {"refund_id": key, "amount": 7}
    )
    nobody = [{}, {"locale": "fr"}]
    first, second = {"session_id": f"s-{key}-a"}, {"session_id": f"s-{key}-b"}
    steps = [rng.choice(nobody), first, first, second, rng.choice(nobody)]
    case.where = f"{name} at {case.place}, contexts {steps}"
    recorded = ""
    for step, context in enumerate(steps):
        before = bank.ran_of(name)
        answer = await case.tried(door.call(subject, arguments, context))
        ran = bank.ran_of(name) - before
        if context in nobody:
            _judge_nobody(case, answer, ran, recorded)
        elif isinstance(answer, BaseException):
            case.fail("crashes", f"{context}: {type(answer).__name__}: {answer}")
        elif step in (1, 3):  # a session's first call: its own run
            if _replay_of(answer, recorded):
                case.fail("cross_user_replays", f"{context} got another session's record")
            elif ran != 1 or answer[1]:
                case.fail("unclear", f"{context} did not run: {answer[0]!r}")
            recorded = recorded or answer[0]
        elif not _replay_of(answer, recorded) and answer[1] is not False:
            case.fail("refused_repeats", f"{context}, again: {answer[0]!r}")
    _judge_approvals(case, bank, "none")


def _judge_nobody(case: Case, answer: Answer | BaseException, ran: int, recorded: str) -> None:
    """A call naming no caller: refused as the door refuses it, and nothing ran."""
    if ran:
        case.fail("callerless_runs", f"ran {ran} times for no caller")
        return
    if isinstance(answer, BaseException):
        if not _refused(answer):
            case.fail("crashes", f"no caller: {type(answer).__name__}: {answer}")
        elif case.place in SERVER_DOORS:
            case.fail("unclear", f"no caller: raised at a server door: {answer}")
        else:
            case.note("calls refused: no caller")
        return
    text, error = answer
    if recorded and _replay_of(answer, recorded):
        case.fail("callerless_runs", f"no caller answered with a session's record: {text!r}")
    elif case.place not in SERVER_DOORS or error is not True:
        case.fail("unclear", f"no caller answered {text!r} (error {error})")
    else:
        case.note("calls refused: no caller")


# --- edited approvals: what ran is recorded ---------------------------------------------------


async def _edited(case: Case, stack: contextlib.AsyncExitStack) -> None:
    rng, bank = case.rng, Bank()
    subject = rng.choice([bank.issue, bank.chargeback])
    door = await open_door(case.place, _approval("edit", bank), ToolCatalog([subject]), stack)
    name = subject.definition.name
    if subject is bank.issue:
        key: Any = f"R-{case.number}"
        field = "amount_cents"
    else:
        key, field = 9_000 + case.number, "amount"
    amount = 2 * rng.randint(50, 5_000)
    half = amount // 2
    original = {"refund_id": key, field: amount}
    # The edited call, and the original one, again in either spelling of the amount.
    edited = [{field: half, "refund_id": key}, {"refund_id": key, field: float(half)}]
    later = [rng.choice(edited), {"refund_id": key, field: float(amount)}, rng.choice(edited)]
    rng.shuffle(later)
    case.where = f"{name} at {case.place}, {original} edited to {half}, then {later}"
    first = await case.answered(door.call(subject, original, ALICE), "the original call")
    if first is None:
        return
    for arguments in later:
        before = bank.ran_of(name)
        answer = await case.answered(door.call(subject, arguments, ALICE), f"{arguments}")
        if answer is None:
            return
        replay, ran = _replay_of(answer, first[0]), bank.ran_of(name) > before
        if arguments[field] == half and not replay and not ran:  # a second run: double_runs
            case.fail("refused_repeats", f"the edited call again answered {answer[0]!r}")
        if arguments[field] == amount and (replay or ran or answer[1] is False):
            case.fail("stale_answers", f"the original amount again answered {answer[0]!r}")
    _judge_approvals(case, bank, "edit")
    if [op[5] for op in bank.runs] != [half]:
        case.fail("unapproved", f"what ran: {dict(bank.runs)}, approved {half}")


# --- call_tool in every shape -----------------------------------------------------------------


def _nested(depth: int) -> dict[str, Any]:
    """An object ``depth`` levels deep (the object itself is one)."""
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def _nested_text(depth: int) -> str:
    """The JSON text of ``_nested(depth)``, written without recursing."""
    return '{"a": ' * (depth - 1) + "{}" + "}" * (depth - 1)


Shape = tuple[str, object, bool, bool]  # (what, call_tool's arguments, runs, served too)


def _shapes(name: str) -> list[Shape]:
    note = {"note": {"text": "call back", "priority": 2}}
    call = {"name": name, "arguments": note}
    deep = '{"note": ' + _nested_text(4_999) + "}"
    return [
        ("an object", call, True, True),
        ("its JSON text", json.dumps(call), True, False),
        ("a JSON text holding the whole call", json.dumps(json.dumps(call)), True, False),
        ("arguments as JSON text", {"name": name, "arguments": json.dumps(note)}, True, True),
        ("null arguments", {"name": name, "arguments": None}, True, True),
        ("arguments left out", {"name": name}, True, True),
        (
            "arguments nested 50 levels",
            {"name": name, "arguments": {"note": _nested(49)}},
            True,
            True,
        ),
        # The bound on nesting, the same at every door: 100 levels are read, 101 are not.
        (
            "arguments nested 100 levels",
            {"name": name, "arguments": {"note": _nested(99)}},
            True,
            True,
        ),
        (
            "arguments nested 101 levels",
            {"name": name, "arguments": {"note": _nested(100)}},
            False,
            True,
        ),
        (
            "arguments nested 101 levels, as text",
            {"name": name, "arguments": json.dumps({"note": _nested(100)})},
            False,
            True,
        ),
        ("null call arguments", None, False, False),
        ("a null name", {"name": None, "arguments": note}, False, True),
        ("arguments holding the whole call", {"name": name, "arguments": call}, False, True),
        ("arguments not an object", {"name": name, "arguments": [1, 2]}, False, True),
        (
            "arguments nested 5,000 levels",
            {"name": name, "arguments": {"note": _nested(4_999)}},
            False,
            False,
        ),
        ("arguments nested 5,000 levels, as text", {"name": name, "arguments": deep}, False, True),
        (
            "the whole call nested 5,000 levels, as text",
            '{"name": "' + name + '", "arguments": ' + deep + "}",
            False,
            False,
        ),
    ]


async def _shaped(case: Case, stack: contextlib.AsyncExitStack) -> None:
    bank = Bank()
    door = await open_door(case.place, None, ToolCatalog([bank.keep]), stack)
    shapes = [s for s in _shapes("notes.keep") if s[3] or case.place not in SERVER_DOORS]
    case.rng.shuffle(shapes)
    for what, arguments, runs, _ in shapes:
        case.where = f"call_tool at {case.place}, {what}"
        before = bank.kept
        answer = await case.answered(door.call_tool(arguments, ALICE, found=bank.keep), what)
        if answer is None:
            continue
        ran = bank.kept - before
        if runs and (ran != 1 or answer[1]):
            case.fail("unclear", f"ran {ran} times, answered {answer[0][:200]!r}")
        if not runs and ran:
            case.fail("bad_runs", f"ran {ran} times")
        if not runs and not answer[1]:
            case.fail("unclear", f"answered {answer[0][:200]!r} as a success")


# --- null names under tool search -------------------------------------------------------------


async def _null_names(case: Case, stack: contextlib.AsyncExitStack) -> None:
    rng, bank = case.rng, Bank()
    door = await open_door(case.place, None, ToolCatalog([bank.keep]), stack)
    nulls = [ToolCall(id="", name=None, arguments="{}"), ToolCall(id="", name=None, arguments=None)]  # type: ignore[arg-type]
    if case.place == "search_proxy":
        nulls += [
            ToolCall(id="", name=CALL_TOOL_NAME, arguments='{"name": null, "arguments": {}}'),
            ToolCall(id="", name=CALL_TOOL_NAME, arguments={"name": None}),  # type: ignore[arg-type]
        ]
    chosen = rng.sample(nulls, rng.randint(1, len(nulls)))
    search = ToolCall(
        id="", name=TOOL_SEARCH_NAME, arguments=json.dumps({"queries": ["keep a note"]})
    )
    note = {"note": "call back"}
    call = (
        ToolCall(
            id="",
            name=CALL_TOOL_NAME,
            arguments=json.dumps({"name": "notes.keep", "arguments": note}),
        )
        if case.place == "search_proxy"
        else ToolCall(id="", name="notes__keep", arguments=json.dumps(note))
    )
    rounds: list[list[ToolCall]] = [[search], [call]]
    for null in chosen:
        rounds[rng.randrange(2)].insert(rng.randrange(2), null)
    case.where = f"tool search at {case.place}, rounds {rounds}"
    script = [*(tool_call_response(*calls) for calls in rounds), "done"]
    case.ledger.tried += 1
    try:
        response = await door.turn(script, ALICE)
    except Exception as exc:
        case.fail("crashes", f"{type(exc).__name__}: {exc}")
        return
    loop = response.tool_loop
    if response.content() != "done" or loop is None or bank.kept != 1:
        case.fail("lost", f"the turn ended {response.content()!r}, notes kept {bank.kept}")
        return
    for calls, done in zip(rounds, loop.rounds, strict=True):
        if len(done.outcomes) != len(calls):
            case.fail("lost", f"{len(calls)} calls, {len(done.outcomes)} answers")
        for written, outcome in zip(calls, done.outcomes, strict=False):
            if any(written is null for null in chosen) and outcome.ok:
                case.fail("unclear", f"{written} answered as a success: {outcome.response.data!r}")


# --- definition answers over the bound --------------------------------------------------------

REGIONS = ("north", "south", "east", "west", "central", "overseas", "islands", "capital")


def _report(region: str) -> Callable[[str], str]:
    def sales_report(month: str) -> str:
        Bank.current.reports[region] += 1
        return f"{region}: sales of {month}"

    return sales_report


REPORTS = {region: _report(region) for region in REGIONS}  # each schema built once


def _monthly(region: str, details: int) -> Tool:
    return FunctionTool.from_function(
        REPORTS[region],
        name=f"reports.sales_{region}",
        description=f"The monthly sales report of the {region} region. " + "Details. " * details,
        metadata=ToolMetadata(read_only=True),
    )


async def _cut(case: Case, stack: contextlib.AsyncExitStack) -> None:
    rng, bank = case.rng, Bank()
    tools = [_monthly(r, rng.randint(5, 60)) for r in REGIONS[: rng.randint(4, 8)]]
    bound = rng.randint(300, 3_000)
    log = InMemoryUsageLog()
    door = await open_door(case.place, None, ToolCatalog(tools), stack, bound=bound, usage_log=log)
    query = rng.choice(["monthly sales report region", "sales report", "region report"])
    case.where = f"tool_search at {case.place}, {len(tools)} tools, bound {bound}, {query!r}"
    case.ledger.tried += 1 + len(tools)
    try:
        if case.place == "search_proxy":
            expected = {t.definition.name: definition_hit(t.definition) for t in tools}
            text, found = await _proxy_cut(door, query, tools)
        else:
            # Each hit as the gateway gives it whole, searched by another caller before any
            # call (so with no history of use, and its searches found by another recorder).
            hits = await door.gateway.search(
                query, max_results=len(tools), context=ToolContext(AUDITOR)
            )
            expected = {f.name: f.as_json() for f in hits}
            text = await door.search(query, len(tools), ALICE)
            for t in tools:
                await door.call(t, {"month": "May"}, ALICE)
            found = {e.tool for e in await log.entries() if e.query == query}
    except Exception as exc:
        case.fail("crashes", f"{type(exc).__name__}: {exc}")
        return
    _judge_cut(case, text, bound, expected, found, bank)


async def _proxy_cut(door: Door, query: str, tools: list[Tool]) -> tuple[str, set[str]]:
    """The proxy channel's answer, and what it counted as found; then every tool is called."""
    search = (TOOL_SEARCH_NAME, {"queries": [query], "max_results": len(tools)})
    calls = [
        (CALL_TOOL_NAME, {"name": t.definition.name, "arguments": {"month": "May"}}) for t in tools
    ]
    script = [tool_call_response(search), tool_call_response(*calls), "done"]
    response = await door.turn(script, ALICE)
    loop, report = response.tool_loop, response.tool_search
    assert loop is not None
    assert report is not None
    [searched] = [s for r in report.rounds for s in r.searches]
    return loop.rounds[0].outcomes[0].response.data, set(searched.names)


def _judge_cut(
    case: Case,
    text: str,
    bound: int,
    expected: dict[str, Any],
    found: set[str],
    bank: Bank,
) -> None:
    try:
        hits = json.loads(text)
    except ValueError:
        case.fail("cut_answers", f"not JSON: {text[-200:]!r}")
        return
    if not isinstance(hits, list):
        case.fail("cut_answers", f"not a list: {text[:200]!r}")
        return
    whole, named = set(), set()
    for hit in hits:
        if isinstance(hit, dict) and hit == expected.get(hit.get("name")):
            whole.add(hit["name"])
        elif isinstance(hit, dict) and hit == {"name": hit.get("name"), "note": ENGLISH.left_out}:
            named.add(hit["name"])
        else:
            case.fail("cut_answers", f"neither a whole definition nor a name: {hit!r}")
    # Over the bound only as the best hit alone, whole: a tool must stay reachable.
    if len(text) > bound and not (len(hits) == 1 and whole):
        case.fail("cut_answers", f"{len(text)} characters over {bound}")
    if named:
        case.note("search answers with definitions left out")
    if found & named or whole - found:
        case.fail(
            "cut_answers", f"whole {sorted(whole)}, named {sorted(named)}, found {sorted(found)}"
        )
    if case.place == "search_proxy":
        ran = {f"reports.sales_{r}" for r in bank.reports}
        if ran != whole:
            case.fail("cut_answers", f"ran {sorted(ran)} of whole {sorted(whole)}")


# --- the schedule -----------------------------------------------------------------------------

Way = Callable[[Case, contextlib.AsyncExitStack], Awaitable[None]]
WAYS: dict[str, tuple[Way, tuple[str, ...], int]] = {  # the way, its doors, its cases per door
    "spellings": (_spelt, PLACES, 1),
    "anonymous": (_anonymous, PLACES, 1),
    "edited": (_edited, PLACES, 1),
    # The ways with few doors get more cases of each: their draws vary more.
    "shapes": (_shaped, CALL_TOOL_DOORS, 2),
    "null names": (_null_names, SEARCH_DOORS, 2),
    "cut answers": (_cut, DEFINITION_DOORS, 3),
}


def _schedule() -> list[tuple[str, str, str]]:
    """Every (way, door, approval) of a round of cases."""
    guards = [("guards", place, kind) for place in PLACES for kind in APPROVALS]
    others = [
        (way, place, "")
        for way, (_, places, times) in WAYS.items()
        for place in places
        for _ in range(times)
    ]
    return guards + others


ROUNDS = 4
CASES = ROUNDS * len(_schedule())
"""Every case of the schedule, four times (in another order each time)."""


async def _case(
    number: int, way: str, place: str, kind: str, ledger: Ledger, rng: random.Random
) -> None:
    case = Case(number, place, rng, ledger)
    try:
        async with asyncio.timeout(ROUND_BOUND), contextlib.AsyncExitStack() as stack:
            if way == "guards":
                await _guards(case, kind, stack)
            else:
                await WAYS[way][0](case, stack)
    except TimeoutError:
        case.fail("hangs", f"{way} did not end within {ROUND_BOUND} s")
    except Exception as exc:
        case.fail("crashes", f"{way}: {type(exc).__name__}: {exc}")


async def campaign(seed: int = SEED, cases: int = CASES) -> Ledger:
    """Run ``cases`` generated cases; the ledger of what broke.

    The cases go through every (way, door, approval) of the schedule in turn, each round of
    it in an order drawn from ``seed``.
    """
    ledger = Ledger(campaign="declared guards, every place", unit="calls", seed=seed)
    rng = random.Random(seed)
    schedule = _schedule()
    with isolated_idempotency(), quiet_logs():
        order: list[tuple[str, str, str]] = []
        for number in range(cases):
            if not order:
                order = rng.sample(schedule, len(schedule))
            way, place, kind = order.pop()
            await _case(number, way, place, kind, ledger, rng)
    return ledger


async def test_declared_guards_hold_everywhere() -> None:
    ledger = await campaign()
    ledger.check(at_least=CASES)
