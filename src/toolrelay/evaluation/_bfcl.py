"""Calls scored as BFCL's AST checker scores them, and the BFCL-derived task suite.

The Berkeley Function Calling Leaderboard gives, for each expected call, the function and for
each parameter the list of acceptable values (``""`` in the list: the parameter may be left
out). A model's calls pass when (the rules of BFCL's ``ast_checker``, Python language):

- they are as many as the expected calls, and each expected call, taken in order, is matched
  by the first not yet matched produced call that passes it (so parallel calls match in any
  order);
- a produced call passes an expected one when it names the same function, gives every
  parameter the schema requires, gives no parameter that is absent from the schema or from
  the expected call, gives every expected parameter whose acceptable values lack ``""``, and
  each given value passes:

  - its type, by the schema's type (``string``, ``integer``, ``number``, ``boolean``,
    ``array``, ``object``; no type counts as a string). An integer is accepted for a number
    and converted. A value of the type of the acceptable values instead (BFCL's "variable")
    passes the type check and is then only compared for membership. Array items are checked
    against the schema's item type (one level deep);
  - its value: a string is compared after removing spaces and ``,./-_*^``, lower-casing and
    turning ``'`` into ``"``; an array (its strings so normalised) must equal one acceptable
    array; an object must have only keys of one acceptable object, each with an acceptable
    (normalised) value, and every key of it that is not optional; an array of objects, one
    acceptable array of the same length, object by object; anything else must be one of the
    acceptable values (Python equality: ``1 == 1.0``).

Only calls that ran are produced calls (toolrelay answers unknown names and calls of tools
not shown with feedback, and the model may correct them); ``tool_search`` is not a call.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolrelay.evaluation._checks import CheckResult, RunTrace
from toolrelay.evaluation._suite import CannedTool, Task, TaskEnvironment, TaskSuite
from toolrelay.exceptions import InvalidToolNameError, LoadError
from toolrelay.tools import ToolDefinition, provider_safe_name
from toolrelay.tools._names import validate_tool_name

__all__ = ["BfclCall", "BfclCalls", "bfcl_problem", "bfcl_suite"]

_PYTHON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
}
_NORMALISED_AWAY = re.compile(r"[ ,./\-_*^]")
_SEARCH_TOOL = "tool_search"  # the search tool's name, which a searchable catalog cannot hold
_CATEGORY = re.compile(r"^(?P<category>[a-z_]+?)_\d")


@dataclass(frozen=True, kw_only=True)
class BfclCall:
    """One expected call in BFCL's form.

    Attributes:
        name: The function's catalog name.
        arguments: By parameter, the acceptable values (``""`` among them: may be omitted).
    """

    name: str
    arguments: Mapping[str, Sequence[Any]]


@dataclass(frozen=True, kw_only=True)
class BfclCalls:
    """The expected calls of a task, scored by BFCL's AST rules (see the module docs).

    Attributes:
        calls: The expected calls.
        name: Shown in reports.
    """

    calls: tuple[BfclCall, ...]
    name: str = "bfcl"

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The functions the expected calls name, each once."""
        return tuple(dict.fromkeys(c.name for c in self.calls))

    def __call__(self, trace: RunTrace, /) -> CheckResult:
        """Score the calls that ran against the expected calls."""
        produced: list[tuple[str, Mapping[str, Any] | None]] = [
            (c.name, c.values()) for c in trace.made
        ]
        problem = bfcl_problem(self.calls, produced, trace.definitions)
        return CheckResult(check=self.name, passed=problem is None, detail=problem or "")


def bfcl_problem(
    expected: Sequence[BfclCall],
    produced: Sequence[tuple[str, Mapping[str, Any] | None]],
    definitions: Mapping[str, ToolDefinition],
) -> str | None:
    """Why ``produced`` (name, arguments) calls fail ``expected``, or ``None`` when they pass.

    Raises:
        LoadError: An expected function is not among ``definitions``.
    """
    if len(produced) != len(expected):
        return f"wrong number of calls: {len(produced)} made, {len(expected)} expected"
    matched: set[int] = set()
    for call in expected:
        definition = definitions.get(call.name)
        if definition is None:
            raise LoadError(call.name, "an expected BFCL function is not in the catalog")
        problems = []
        for index, (name, values) in enumerate(produced):
            if index in matched:
                continue
            problem = _call_problem(definition, call, name, values)
            if problem is None:
                matched.add(index)
                break
            problems.append(problem)
        else:
            return f"no call matches {call.name}: " + "; ".join(problems)
    return None


def _call_problem(
    definition: ToolDefinition,
    expected: BfclCall,
    name: str,
    values: Mapping[str, Any] | None,
) -> str | None:
    if name != expected.name:
        return f"called {name}"
    if values is None:
        return "the arguments are not a JSON object"
    schema = definition.input_schema
    properties: Mapping[str, Any] = schema.get("properties") or {}
    for required in schema.get("required") or ():
        if required not in values:
            return f"missing required parameter {required!r}"
    for parameter, value in values.items():
        if parameter not in properties or parameter not in expected.arguments:
            return f"unexpected parameter {parameter!r}"
        problem = _value_problem(parameter, value, properties[parameter], expected.arguments)
        if problem is not None:
            return problem
    for parameter, acceptable in expected.arguments.items():
        if parameter not in values and "" not in acceptable:
            return f"parameter {parameter!r} not given and not optional"
    return None


def _value_problem(
    parameter: str, value: Any, details: Mapping[str, Any], answers: Mapping[str, Sequence[Any]]
) -> str | None:
    acceptable = list(answers[parameter])
    kind = _schema_type(details)
    expected_type = _PYTHON_TYPES.get(kind, str)
    nested: type | None = None
    if kind == "array":
        items = details.get("items")
        if isinstance(items, Mapping) and "type" in items:
            nested = _PYTHON_TYPES.get(_schema_type(items), str)
    if kind == "number" and type(value) is int:
        value = float(value)
    valid, variable = _type_fits(value, acceptable, expected_type, nested)
    shown = json.dumps(value, ensure_ascii=False)
    if not valid:
        return f"{parameter}={shown} has the wrong type (expected {kind})"
    if not variable:
        fits: bool | None = None
        if expected_type is dict:
            fits = _dict_fits(value, acceptable)
        elif expected_type is list and nested is dict:
            fits = _dicts_fit(value, acceptable)
        elif expected_type is str:
            fits = _normalised(value) in [_normalised(a) for a in acceptable if type(a) is str]
        elif expected_type is list:
            fits = _list_fits(value, acceptable)
        if fits is not None:
            return None if fits else f"{parameter}={shown} is not an acceptable value"
    if value not in acceptable:
        return f"{parameter}={shown} is not an acceptable value"
    return None


def _schema_type(details: Mapping[str, Any]) -> str:
    kind = details.get("type")
    if isinstance(kind, list):  # a union such as ["string", "null"]: its first real type
        kind = next((k for k in kind if k != "null"), None)
    return kind if isinstance(kind, str) else "any"


def _answer_type(acceptable: Sequence[Any]) -> type | None:
    return next((type(a) for a in acceptable if a != ""), None)


def _type_fits(
    value: Any, acceptable: Sequence[Any], expected: type, nested: type | None
) -> tuple[bool, bool]:
    """Whether ``value`` passes BFCL's type check, and whether it counts as a "variable"."""
    answer_type = _answer_type(acceptable)
    variable = answer_type is not None and answer_type is not expected
    if type(value) is expected:
        if nested is None or not isinstance(value, list):
            return True, variable
        for answer in acceptable:
            items_fit = type(answer) is not list or all(
                _type_fits(item, answer, nested, None)[0] for item in value
            )
            if items_fit:
                return True, variable
        return False, variable
    if answer_type is not None and type(value) is answer_type:
        return True, True
    return False, variable


def _normalised(text: str) -> str:
    return _NORMALISED_AWAY.sub("", text).lower().replace("'", '"')


def _normalise_items(values: Any) -> list[Any]:
    return [_normalised(v) if type(v) is str else v for v in values]


def _list_fits(value: list[Any], acceptable: Sequence[Any]) -> bool:
    given = _normalise_items(value)
    options = [_normalise_items(a) for a in acceptable if isinstance(a, list | str)]
    return given in options


def _dict_fits(value: Mapping[str, Any], acceptable: Sequence[Any]) -> bool:
    for answer in acceptable:
        if answer == "" or not isinstance(answer, Mapping):
            continue
        keys_fit = all(
            key in answer
            and (_normalised(item) if type(item) is str else item) in _normalise_items(answer[key])
            for key, item in value.items()
        )
        if keys_fit and all(key in value or "" in item for key, item in answer.items()):
            return True
    return False


def _dicts_fit(value: list[Any], acceptable: Sequence[Any]) -> bool:
    for answer in acceptable:
        if not isinstance(answer, list | str) or len(value) != len(answer):
            continue
        if all(
            isinstance(item, Mapping) and _dict_fits(item, [answer[i]])
            for i, item in enumerate(value)
        ):
            return True
    return False


# --- the suite ------------------------------------------------------------------------------


def bfcl_suite(
    folder: str | Path,
    *,
    limit: int | None = None,
    catalog_size: int | None = None,
    name: str = "bfcl",
) -> TaskSuite:
    """The BFCL-derived suite: each dev query of ``calls.dev.jsonl``, scored by :class:`BfclCalls`.

    The catalog is ``tools.jsonl`` of the same folder (every tool a provider accepts: names
    over 64 characters, names whose provider-safe form an earlier tool took, and a tool
    called ``tool_search`` are left out, with the queries that need them). Queries no call
    could pass are left out too: their expected call gives a parameter the catalog's schema
    of that function lacks, or omits one it requires (the catalog kept another variant's
    schema), or has a parameter without any acceptable value. Every tool answers any call
    with ``{"status": "ok", "tool": NAME}``. Tasks come in a fixed shuffled order (by a hash
    of their id), so the first ``limit`` are a sample across BFCL's categories.

    Args:
        folder: Holds ``tools.jsonl`` and ``calls.dev.jsonl`` (``benchmarks/data/bfcl``).
        limit: Keep the first ``limit`` tasks.
        catalog_size: Make the catalog this many tools: the kept tasks' functions, then
            other tools in a fixed shuffled order (the whole catalog when ``None``).
        name: The suite's name.

    Raises:
        LoadError: A file is missing or malformed, or ``catalog_size`` is smaller than the
            number of functions the kept tasks call.
    """
    root = Path(folder)
    definitions, left_out = _catalog(root / "tools.jsonl")
    by_name = {d.name: d for d in definitions}
    tasks: list[Task] = []
    dropped = 0
    for row in _rows(root / "calls.dev.jsonl"):
        calls = tuple(
            BfclCall(name=str(c["name"]), arguments={k: list(v) for k, v in c["arguments"].items()})
            for c in row["calls"]
        )
        if not all(c.name in by_name and _satisfiable(c, by_name[c.name]) for c in calls):
            dropped += 1
            continue
        found = _CATEGORY.match(str(row["id"]))
        tasks.append(
            Task(
                id=str(row["id"]),
                prompt=str(row["query"]),
                checks=(BfclCalls(calls=calls),),
                environment="bfcl",
                tags=(found["category"],) if found else (),
            )
        )
    tasks.sort(key=lambda t: _digest(t.id))
    if limit is not None:
        tasks = tasks[:limit]
    catalog = definitions
    if catalog_size is not None:
        needed = list(dict.fromkeys(n for t in tasks for n in t.needed))
        if catalog_size < len(needed):
            raise LoadError(
                str(root),
                f"catalog_size {catalog_size} is smaller than the {len(needed)} functions "
                "the tasks call",
            )
        others = sorted((d for d in definitions if d.name not in set(needed)), key=_name_digest)
        chosen = {*needed, *(d.name for d in others[: catalog_size - len(needed)])}
        catalog = [d for d in definitions if d.name in chosen]
    environment = TaskEnvironment(tools=tuple(CannedTool(d) for d in catalog))
    note = f"{len(tasks):,} BFCL dev queries over {len(catalog):,} tools"
    if dropped or left_out:
        note += f" ({left_out} tools and {dropped} queries left out)"
    return TaskSuite(
        name=name,
        tasks=tuple(tasks),
        environments={"bfcl": lambda: environment},
        description=note,
    )


def _satisfiable(call: BfclCall, definition: ToolDefinition) -> bool:
    """Whether a call can pass under the catalog's schema of its function.

    A name offered with several schemas keeps the first (see the data's SOURCE.md), so a
    query's expected call may use a parameter that schema lacks, or leave out one it requires;
    and a parameter with no acceptable value at all can be neither given nor left out. No call
    could pass such a query.
    """
    schema = definition.input_schema
    properties = schema.get("properties") or {}
    required = schema.get("required") or ()
    return all(p in properties and values for p, values in call.arguments.items()) and all(
        r in call.arguments for r in required
    )


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _name_digest(definition: ToolDefinition) -> str:
    return _digest(definition.name)


def _rows(path: Path) -> list[dict[str, Any]]:
    rows = _jsonl(path)
    for number, row in rows:
        if not {"id", "query", "calls"} <= row.keys():
            raise LoadError(str(path), 'a row needs "id", "query" and "calls"', line=number)
    return [row for _, row in rows]


def _catalog(path: Path) -> tuple[list[ToolDefinition], int]:
    definitions: list[ToolDefinition] = []
    safe_names: set[str] = set()
    left_out = 0
    for _, row in _jsonl(path):
        try:
            validate_tool_name(row["name"])
        except InvalidToolNameError:
            left_out += 1
            continue
        safe = provider_safe_name(row["name"])
        if safe in safe_names or safe == _SEARCH_TOOL:
            left_out += 1
            continue
        safe_names.add(safe)
        definitions.append(
            ToolDefinition(
                name=row["name"],
                description=row.get("description") or "",
                input_schema=row.get("parameters") or {"type": "object", "properties": {}},
            )
        )
    return definitions, left_out


def _jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The objects of a JSONL file, with their line numbers."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise LoadError(str(path), f"cannot be read: {exc}") from exc
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LoadError(str(path), f"not valid JSON: {exc.msg}", line=number) from exc
        if not isinstance(row, dict):
            raise LoadError(str(path), "expected a JSON object", line=number)
        rows.append((number, row))
    return rows
