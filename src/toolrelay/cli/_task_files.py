"""Loading the task suite ``toolrelay eval tasks --tasks SPEC`` names.

``SPEC`` may be:

- **a Python module** (a ``.py`` file, a package folder or a dotted name), optionally with
  ``:attribute``: the attribute, else the module's ``build_suite()``, else its one module-level
  :class:`~toolrelay.evaluation.TaskSuite`. An attribute may be a suite or a function without
  parameters returning one;
- **a NAME** of ``benchmarks/tasks/NAME.py`` shipped with the package (the checkout's, or the
  wheel's copy; see :mod:`toolrelay.cli._bundled`), whatever the working directory:
  ``refund_triage``, ``bfcl``; ``bfcl:small`` too;
- **a JSONL file**, one task per line (see :func:`load_jsonl_suite`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from toolrelay.cli._bundled import bundled_root
from toolrelay.cli._catalog_modules import load_module_tools
from toolrelay.cli._catalogs import load_catalog, read_jsonl
from toolrelay.evaluation import (
    ExpectedCall,
    ExpectedCalls,
    Task,
    TaskEnvironment,
    TaskSuite,
    answer_contains,
)
from toolrelay.evaluation._bfcl import BfclCall, BfclCalls
from toolrelay.evaluation._checks import Check
from toolrelay.evaluation._suite import CannedTool
from toolrelay.exceptions import LoadError
from toolrelay.tools._modules import attribute_of, call_factory, import_target, split_attribute

__all__ = ["SUITES_FOLDER", "load_jsonl_suite", "load_task_suite"]

SUITES_FOLDER = Path("benchmarks") / "tasks"
"""Where ``--tasks NAME`` looks, under the package's :func:`bundled_root`."""

_Fail = Callable[[str], LoadError]  # makes the error of one line of a JSONL suite
_FACTORY = "build_suite"
_NOT_FOUND = "no such file or module"  # import_target's reason
_JSONL = {".jsonl", ".ndjson"}
_TASK_KEYS = {"id", "prompt", "catalog", "tool_context", "system", "tags", "expect", "needed_tools"}
_EXPECT_KEYS = {"calls", "ordered", "only", "forbidden", "bfcl", "answer_contains"}


def load_task_suite(spec: str) -> TaskSuite:
    """The suite ``spec`` names (see the module documentation for the forms).

    Raises:
        LoadError: Nothing by that name, a malformed file, or a module without a suite.
        ConfigurationError: The suite itself is inconsistent (duplicate ids, ...).
    """
    target, attribute = split_attribute(spec)
    path = Path(target)
    if path.suffix in _JSONL:
        if attribute is not None:
            raise LoadError(spec, "an :attribute can only follow a Python module")
        return load_jsonl_suite(path)
    if path.exists() or "/" in target or "\\" in target or path.suffix != "":
        return _module_suite(target, attribute, spec)
    named = _named_suite(target)
    if named is not None:
        return _module_suite(str(named), attribute, spec)
    try:
        return _module_suite(target, attribute, spec)
    except LoadError as exc:
        if exc.source != target or exc.reason != _NOT_FOUND:
            raise
        shipped = ", ".join(_shipped_suites()) or "none in this installation"
        raise LoadError(
            spec, f"no such file, module or shipped suite (the shipped suites: {shipped})"
        ) from exc


def _shipped_suites() -> list[str]:
    root = bundled_root()
    folder = root / SUITES_FOLDER if root is not None else None
    if folder is None or not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.py") if not p.name.startswith("_"))


def _named_suite(name: str) -> Path | None:
    root = bundled_root()
    if root is None:
        return None
    candidate = root / SUITES_FOLDER / f"{name.replace('-', '_')}.py"
    return candidate if candidate.is_file() else None


def _module_suite(target: str, attribute: str | None, spec: str) -> TaskSuite:
    module = import_target(target)
    if attribute is not None:
        value = attribute_of(module, attribute, spec)
    elif callable(getattr(module, _FACTORY, None)):
        value = getattr(module, _FACTORY)
    else:
        suites = [v for v in vars(module).values() if isinstance(v, TaskSuite)]
        if len(suites) != 1:
            raise LoadError(
                spec,
                f"define {_FACTORY}() or one module-level TaskSuite "
                f"(found {len(suites)}), or name one with :attribute",
            )
        value = suites[0]
    if inspect.isfunction(value):
        value = call_factory(value, spec, builds="a suite")
    if not isinstance(value, TaskSuite):
        raise LoadError(spec, f"expected a TaskSuite, got {type(value).__name__}")
    return value


def load_jsonl_suite(path: Path) -> TaskSuite:
    """A suite from a JSONL file: one task per line.

    A task is ``{"id", "prompt", "catalog", "expect"}`` plus optional ``tool_context``,
    ``system``, ``tags`` and ``needed_tools``. ``catalog`` is any catalog the command line
    accepts (a path is taken relative to the file's folder when it exists there); a module's
    tools are built afresh for every run, and tools from JSON answer every call with
    ``{"status": "ok"}``. ``expect`` holds at least one of:

    - ``calls``: ``[{"name", "arguments": {param: value}}]``, each matched by a call that
      ran with those values (other parameters free); with ``ordered``, in that order; with
      ``only``, no other call; ``forbidden``: names never to call;
    - ``bfcl``: ``[{"name", "arguments": {param: [acceptable values]}}]``, scored by BFCL's
      AST checker rules;
    - ``answer_contains``: words the answer must hold (case-insensitive).

    The suite is named after the file.

    Raises:
        LoadError: A line is malformed (its number is given).
    """
    tasks: list[Task] = []
    environments: dict[str, Any] = {}
    for number, row in read_jsonl(path):
        task = _task(row, path, number, environments)
        tasks.append(task)
    if not tasks:
        raise LoadError(str(path), "no tasks found")
    return TaskSuite(name=path.stem, tasks=tuple(tasks), environments=environments)


def _task(row: Any, path: Path, number: int, environments: dict[str, Any]) -> Task:
    def fail(reason: str) -> LoadError:
        return LoadError(str(path), reason, line=number)

    if not isinstance(row, dict):
        raise fail("expected a JSON object")
    unknown = sorted(set(row) - _TASK_KEYS)
    if unknown:
        raise fail(f"unknown keys {unknown}; a task has {sorted(_TASK_KEYS)}")
    for key in ("id", "prompt", "catalog"):
        if not isinstance(row.get(key), str) or not row[key].strip():
            raise fail(f'a task needs a non-empty "{key}" string')
    catalog = _catalog_spec(row["catalog"], path)
    if catalog not in environments:
        environments[catalog] = _environment(catalog, fail)
    context = row.get("tool_context", {})
    if not isinstance(context, dict):
        raise fail('"tool_context" must be an object')
    return Task(
        id=row["id"],
        prompt=row["prompt"],
        checks=_checks(row.get("expect"), fail),
        environment=catalog,
        tool_context=context,
        system=row.get("system"),
        needed_tools=tuple(_strings(row.get("needed_tools", []), "needed_tools", fail)),
        tags=tuple(_strings(row.get("tags", []), "tags", fail)),
    )


def _catalog_spec(spec: str, path: Path) -> str:
    target, attribute = split_attribute(spec)
    beside = path.parent / target
    if not Path(target).is_absolute() and beside.exists():
        return str(beside) + (f":{attribute}" if attribute else "")
    return spec


def _environment(spec: str, fail: _Fail) -> Any:
    try:
        loaded = load_catalog(spec)
    except LoadError as exc:
        raise fail(f"catalog {spec!r}: {exc}") from exc
    if loaded.kind == "file":
        tools = tuple(CannedTool(d) for d in loaded.unique_definitions())
        return lambda: TaskEnvironment(tools=tools)
    # A module's tools are built again for every run, on a fresh back end.
    return lambda: TaskEnvironment(tools=[t for t, _ in load_module_tools(spec)])


def _checks(expect: Any, fail: _Fail) -> tuple[Check, ...]:
    if not isinstance(expect, dict) or not expect:
        raise fail('a task needs an "expect" object with calls, bfcl or answer_contains')
    unknown = sorted(set(expect) - _EXPECT_KEYS)
    if unknown:
        raise fail(f'unknown "expect" keys {unknown}; it has {sorted(_EXPECT_KEYS)}')
    checks: list[Check] = []
    if "calls" in expect or "forbidden" in expect:
        calls = tuple(
            ExpectedCall(name=name, arguments=arguments)
            for name, arguments in _calls(expect.get("calls", []), "calls", fail)
        )
        checks.append(
            ExpectedCalls(
                calls=calls,
                ordered=bool(expect.get("ordered", False)),
                only=bool(expect.get("only", False)),
                forbidden=tuple(_strings(expect.get("forbidden", []), "forbidden", fail)),
            )
        )
    if "bfcl" in expect:
        expected = []
        for name, arguments in _calls(expect["bfcl"], "bfcl", fail):
            if not all(isinstance(v, list) for v in arguments.values()):
                raise fail('"bfcl" arguments map each parameter to a list of acceptable values')
            expected.append(BfclCall(name=name, arguments=arguments))
        checks.append(BfclCalls(calls=tuple(expected)))
    if "answer_contains" in expect:
        words = _strings(expect["answer_contains"], "answer_contains", fail)
        checks.append(answer_contains(*words))
    if not checks:
        raise fail('"expect" needs calls, forbidden, bfcl or answer_contains')
    return tuple(checks)


def _calls(value: Any, key: str, fail: _Fail) -> list[tuple[str, Mapping[str, Any]]]:
    if not isinstance(value, list):
        raise fail(f'"{key}" must be a list of {{"name", "arguments"}} objects')
    calls: list[tuple[str, Mapping[str, Any]]] = []
    for item in value:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise fail(f'each of "{key}" needs a "name" string')
        arguments = item.get("arguments", {})
        if not isinstance(arguments, dict):
            raise fail(f'the "arguments" of {item["name"]!r} must be an object')
        calls.append((item["name"], arguments))
    return calls


def _strings(value: Any, key: str, fail: _Fail) -> Sequence[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise fail(f'"{key}" must be a list of strings')
    return value
