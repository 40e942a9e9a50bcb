"""Success checks: what a run must have done, read off its trace.

A task succeeds when every one of its checks passes. A check is any callable taking the run's
:class:`RunTrace` and returning a :class:`CheckResult`; the kinds here cover what task
benchmarks score:

- :class:`ExpectedCalls`: the tools called, with predicates over their arguments, in order
  or in any order, optionally nothing else, and tools that must never be attempted;
- :class:`StateCheck`: a function over the tools' back end after the run (as τ-bench scores
  a task by the final database state);
- :class:`AnswerCheck`: a predicate over the final answer's text;
- :class:`~toolrelay.evaluation._bfcl.BfclCalls`: calls scored as BFCL's AST checker scores them.

Only calls that ran count as made: a call refused as invalid, unknown or not yet shown came
back to the model as feedback, and the model may have corrected it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from toolrelay.exceptions import InvalidJsonError
from toolrelay.execution._arguments import parse_arguments
from toolrelay.tools import ToolDefinition

__all__ = [
    "AnswerCheck",
    "CallRecord",
    "CallStatus",
    "Check",
    "CheckResult",
    "ExpectedCall",
    "ExpectedCalls",
    "NamesTools",
    "RunTrace",
    "StateCheck",
    "answer_contains",
]


class CallStatus(StrEnum):
    """How a call of a run ended, as the evaluation counts it."""

    OK = "ok"
    """The tool ran."""
    INVALID_ARGUMENTS = "invalid_arguments"
    """The arguments were not a JSON object or did not fit the schema."""
    UNKNOWN_NAME = "unknown_name"
    """No tool of the catalog has this name."""
    NOT_SHOWN = "not_shown"
    """A catalog tool the model called before a search had shown it (tool search only)."""
    DENIED = "denied"
    """A guard refused the call (a permission, say)."""
    FAILED = "failed"
    """The tool raised or timed out."""
    OTHER = "other"
    """Stopped by a call limit or waiting for approval."""


@dataclass(frozen=True, kw_only=True)
class CallRecord:
    """One tool call a model made during a run (``tool_search`` calls are not recorded).

    Attributes:
        name: The catalog name it resolved to, else the name as the model wrote it.
        arguments: The argument text as the model wrote it.
        status: How it ended.
        model_call: The model request (from 1) whose answer made the call.
        error: The start of the error text the model read, for a call that did not run.
    """

    name: str
    arguments: str
    status: CallStatus
    model_call: int
    error: str | None = None

    @property
    def ran(self) -> bool:
        """Whether the tool ran."""
        return self.status is CallStatus.OK

    def values(self) -> Mapping[str, Any] | None:
        """The arguments as a JSON object (as the tool received them), or ``None``."""
        try:
            return parse_arguments(self.name, self.arguments).values
        except InvalidJsonError:
            return None

    def to_json(self) -> dict[str, Any]:
        """The record as JSON data."""
        data: dict[str, Any] = {
            "name": self.name,
            "arguments": self.arguments,
            "status": self.status.value,
            "model_call": self.model_call,
        }
        if self.error is not None:
            data["error"] = self.error
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CallRecord:
        """The record :meth:`to_json` wrote."""
        return cls(
            name=str(data["name"]),
            arguments=str(data["arguments"]),
            status=CallStatus(data["status"]),
            model_call=int(data["model_call"]),
            error=data.get("error"),
        )


@dataclass(frozen=True, kw_only=True)
class RunTrace:
    """What a check reads about one run.

    Attributes:
        task_id: The task.
        state: The environment's back end after the run (``TaskEnvironment.state``).
        answer: The final answer's text, or ``None`` (no answer, or the run ended in error).
        calls: Every tool call but ``tool_search``, in the order made.
        shown: Names of the catalog tools any request showed the model.
        definitions: The environment's tool definitions, by name.
        error: Why the run ended without an answer (a model error, the request limit).
    """

    task_id: str
    state: object
    answer: str | None
    calls: tuple[CallRecord, ...]
    shown: frozenset[str]
    definitions: Mapping[str, ToolDefinition]
    error: str | None = None

    @property
    def made(self) -> tuple[CallRecord, ...]:
        """The calls that ran."""
        return tuple(c for c in self.calls if c.ran)


@dataclass(frozen=True, kw_only=True)
class CheckResult:
    """The verdict of one check.

    Attributes:
        check: The check's name.
        passed: Whether it passed.
        detail: What was wrong (empty when it passed).
    """

    check: str
    passed: bool
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        """The verdict as JSON data."""
        return {"check": self.check, "passed": self.passed, "detail": self.detail}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CheckResult:
        """The verdict :meth:`to_json` wrote."""
        return cls(
            check=str(data["check"]), passed=bool(data["passed"]), detail=str(data["detail"])
        )


@runtime_checkable
class NamesTools(Protocol):
    """A check that knows the tools a task needs (for retrieval misses)."""

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The tools, in order, each once."""
        ...


class Check(Protocol):
    """Judges one aspect of a run; any function ``(trace) -> CheckResult`` is one."""

    def __call__(self, trace: RunTrace, /) -> CheckResult:
        """The verdict on ``trace``."""
        ...


Verdict = bool | str | None
"""What a state or answer function returns: ``True``/``None`` pass; ``False`` or a text
saying what is wrong fail."""


def _verdict(name: str, value: Verdict) -> CheckResult:
    if value is True or value is None:
        return CheckResult(check=name, passed=True)
    if value is False:
        return CheckResult(check=name, passed=False, detail="failed")
    if isinstance(value, str):
        return CheckResult(check=name, passed=not value, detail=value)
    raise TypeError(f"check {name!r} returned {value!r}; return True, None, False or a text")


@dataclass(frozen=True, kw_only=True)
class StateCheck:
    """A function over the back end after the run.

    Attributes:
        function: Gets ``TaskEnvironment.state``; returns ``None``/``True`` when the state
            is right, else ``False`` or a text saying what is wrong (an empty text passes).
        name: Shown in reports.
    """

    function: Callable[[Any], Verdict]
    name: str = "state"

    def __call__(self, trace: RunTrace, /) -> CheckResult:
        """Run the function over ``trace.state``."""
        return _verdict(self.name, self.function(trace.state))


@dataclass(frozen=True, kw_only=True)
class AnswerCheck:
    """A predicate over the final answer's text (a run without an answer fails it).

    Attributes:
        predicate: Gets the text; returns as :class:`StateCheck`'s function does.
        name: Shown in reports.
    """

    predicate: Callable[[str], Verdict]
    name: str = "answer"

    def __call__(self, trace: RunTrace, /) -> CheckResult:
        """Apply the predicate to ``trace.answer``."""
        if trace.answer is None or not trace.answer.strip():
            return CheckResult(check=self.name, passed=False, detail="no answer")
        return _verdict(self.name, self.predicate(trace.answer))


def answer_contains(*words: str, name: str = "answer") -> AnswerCheck:
    """An :class:`AnswerCheck` passing when the answer holds every word (case-insensitive)."""
    wanted = tuple(words)

    def holds(text: str) -> Verdict:
        lowered = text.casefold()
        missing = [w for w in wanted if w.casefold() not in lowered]
        return f"the answer does not mention {', '.join(map(repr, missing))}" if missing else None

    return AnswerCheck(predicate=holds, name=name)


Predicate = Callable[[Any], bool]
"""An argument predicate: gets the argument's JSON value, returns whether it is right."""


@dataclass(frozen=True, kw_only=True)
class ExpectedCall:
    """One call a run must make.

    Attributes:
        name: The tool's catalog name.
        arguments: By parameter: the value it must have (compared after JSON decoding), or a
            predicate of the value. A parameter named here must be given; others are free.
    """

    name: str
    arguments: Mapping[str, Any | Predicate] = field(default_factory=dict)

    def problem(self, call: CallRecord) -> str | None:
        """Why ``call`` is not this call, or ``None`` when it is."""
        if call.name != self.name:
            return f"called {call.name}"
        values = call.values()
        if values is None:
            return "arguments are not a JSON object"
        for parameter, expected in self.arguments.items():
            if parameter not in values:
                return f"{parameter} not given"
            value = values[parameter]
            ok = expected(value) if callable(expected) else value == expected
            if not ok:
                shown = json.dumps(value, ensure_ascii=False)
                return f"{parameter}={shown}"
        return None


@dataclass(frozen=True, kw_only=True)
class ExpectedCalls:
    """The calls a run must make, and those it must never attempt.

    Attributes:
        calls: Each must be matched by its own call that ran.
        ordered: The matched calls must come in the order given.
        only: No other call may run (``tool_search`` aside).
        forbidden: Tools that must never be called, not even in a call that was refused.
        name: Shown in reports.
    """

    calls: tuple[ExpectedCall, ...] = ()
    ordered: bool = False
    only: bool = False
    forbidden: tuple[str, ...] = ()
    name: str = "calls"

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The tools the expected calls need, in order, each once."""
        return tuple(dict.fromkeys(c.name for c in self.calls))

    def __call__(self, trace: RunTrace, /) -> CheckResult:
        """Match the expected calls against the calls that ran."""
        attempted = [c.name for c in trace.calls if c.name in self.forbidden]
        if attempted:
            return self._fail(f"called forbidden {', '.join(dict.fromkeys(attempted))}")
        made = trace.made
        fits = [[e.problem(c) is None for c in made] for e in self.calls]
        matched = _in_order(fits) if self.ordered else _matching(fits)
        if matched is None:
            return self._fail(self._describe_miss(made, fits))
        if self.only and len(made) > len(self.calls):
            used = set(matched)
            extra = [c.name for i, c in enumerate(made) if i not in used]
            return self._fail(f"also called {', '.join(extra)}")
        return CheckResult(check=self.name, passed=True)

    def _fail(self, detail: str) -> CheckResult:
        return CheckResult(check=self.name, passed=False, detail=detail)

    def _describe_miss(self, made: Sequence[CallRecord], fits: list[list[bool]]) -> str:
        for expected, row in zip(self.calls, fits, strict=True):
            if any(row):
                continue
            same = [c for c in made if c.name == expected.name]
            if not same:
                return f"{expected.name} was not called"
            return f"{expected.name}: {expected.problem(same[-1])}"
        return (
            "the expected calls were not made in the order given"
            if self.ordered
            else ("too few calls to match every expected call")
        )


def _in_order(fits: list[list[bool]]) -> list[int] | None:
    """The earliest increasing choice of one fitting call per expected call, if any."""
    chosen: list[int] = []
    start = 0
    for row in fits:
        index = next((i for i in range(start, len(row)) if row[i]), None)
        if index is None:
            return None
        chosen.append(index)
        start = index + 1
    return chosen


def _matching(fits: list[list[bool]]) -> list[int] | None:
    """A distinct fitting call for every expected call (a maximum bipartite matching)."""
    owner: dict[int, int] = {}  # call index -> expected index

    def place(expected: int, seen: set[int]) -> bool:
        for call, fit in enumerate(fits[expected]):
            if fit and call not in seen:
                seen.add(call)
                if call not in owner or place(owner[call], seen):
                    owner[call] = expected
                    return True
        return False

    for expected in range(len(fits)):
        if not place(expected, set()):
            return None
    by_expected = {e: c for c, e in owner.items()}
    return [by_expected[e] for e in range(len(fits))]
