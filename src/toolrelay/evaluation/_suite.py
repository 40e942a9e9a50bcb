"""The task suite format: tasks, the environment each run works in, and their checks.

A :class:`TaskSuite` is a list of :class:`Task` s and the environments they run in. An
environment is a function that makes a fresh :class:`TaskEnvironment` (the tools, bound to a
back end of their own, and that back end) for every run, so no run sees what another did.
A task is the user's request, the tool context, and the checks that decide success::

    def desk() -> TaskEnvironment:
        backend = RefundDeskBackend.seeded()
        return TaskEnvironment(tools=build_catalog(backend), state=backend)

    suite = TaskSuite(
        name="refunds",
        environments={"desk": desk},
        tasks=(
            Task(
                id="retry-one",
                prompt="Retry refund RF-2001.",
                environment="desk",
                tool_context={"tenant_id": "acme", "user_id": "U-ZHANG"},
                checks=(StateCheck(function=lambda b: b.refund("RF-2001").status == "succeeded"),),
            ),
        ),
    )

Suites are Python (``build_suite()`` in a module) or JSONL files, which the command line
reads (``toolrelay eval tasks --tasks FILE``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolrelay.evaluation._checks import Check, NamesTools
from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import (
    ApprovalHandler,
    ApprovalInterceptor,
    Authorizer,
    ToolCallInterceptor,
)
from toolrelay.tools import ToolContext, ToolDefinition, ToolMetadata
from toolrelay.tools._base import ToolBase

__all__ = ["CannedTool", "EnvironmentFactory", "Task", "TaskEnvironment", "TaskSuite"]


@dataclass(frozen=True, kw_only=True)
class TaskEnvironment:
    """What one run works in.

    Attributes:
        tools: The catalog: anything :func:`~toolrelay.tools.as_tools` accepts (a
            ``ToolCatalog``, objects with ``@tool`` methods, tools).
        state: The back end the tools read and change, handed to state checks.
        authorize: Asked before each call, in every mode, whether it may run (a permission
            check, say): ``(context, tool, arguments) -> True | False | reason``.
        approval: Decides about calls of tools that require approval: an async handler
            returning ``Approve()``, ``Deny(reason)`` or ``Defer()``, or an
            :class:`~toolrelay.execution.ApprovalInterceptor`. ``None``: nobody approves
            during a run, so such a call waits for a person and the run stops with
            ``approval_required`` (``ApprovalInterceptor()``).
        interceptors: Steps of your own around each call, in every mode, outermost first
            (the built-in steps have the options above).
    """

    tools: Iterable[object]
    state: object = None
    authorize: Authorizer | None = None
    approval: ApprovalHandler | ApprovalInterceptor | None = None
    interceptors: tuple[ToolCallInterceptor, ...] = ()


EnvironmentFactory = Callable[[], TaskEnvironment]
"""Makes a fresh environment; called once per run (and once to index its tools)."""


@dataclass(frozen=True, kw_only=True)
class Task:
    """One request and what makes it a success.

    Attributes:
        id: Unique in the suite; results are keyed by it.
        prompt: The user's message.
        checks: All must pass for the run to succeed (at least one).
        environment: The name of the suite environment the task runs in.
        tool_context: The tool context of the request (tenant, user...), never shown to the
            model.
        system: The system text; the suite's when ``None``.
        needed_tools: Tools the task cannot be done without; a run whose requests never
            showed one of them had a retrieval miss. Default: the tools of its
            checks that name their tools (:class:`~toolrelay.evaluation.ExpectedCalls`,
            :class:`~toolrelay.evaluation._bfcl.BfclCalls`).
        tags: Free labels (a language, a variant), reported with the task.
    """

    id: str
    prompt: str
    checks: tuple[Check, ...]
    environment: str = "default"
    tool_context: Mapping[str, Any] = field(default_factory=dict)
    system: str | None = None
    needed_tools: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()

    @property
    def needed(self) -> tuple[str, ...]:
        """:attr:`needed_tools`, or the tools its call checks name."""
        if self.needed_tools:
            return self.needed_tools
        names = [n for c in self.checks if isinstance(c, NamesTools) for n in c.tool_names]
        return tuple(dict.fromkeys(names))


@dataclass(frozen=True, kw_only=True)
class TaskSuite:
    """Tasks and the environments they run in.

    Attributes:
        name: Names the suite in results files and reports.
        tasks: In the order they run.
        environments: By name; each task names one.
        system: The system text of tasks that set none.
        description: One line about the suite (shown in reports).

    Raises:
        ConfigurationError: No tasks, two tasks with one id, a task without checks, or a
            task naming an environment the suite lacks.
    """

    name: str
    tasks: tuple[Task, ...]
    environments: Mapping[str, EnvironmentFactory]
    system: str | None = None
    description: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "tasks", tuple(self.tasks))
        if not self.tasks:
            raise ConfigurationError(f"suite {self.name!r} has no tasks")
        seen: set[str] = set()
        for task in self.tasks:
            if task.id in seen:
                raise ConfigurationError(f"suite {self.name!r}: task id {task.id!r} is used twice")
            seen.add(task.id)
            if not task.checks:
                raise ConfigurationError(
                    f"suite {self.name!r}: task {task.id!r} has no checks, so it cannot fail"
                )
            if task.environment not in self.environments:
                known = ", ".join(sorted(self.environments)) or "none"
                raise ConfigurationError(
                    f"suite {self.name!r}: task {task.id!r} runs in environment "
                    f"{task.environment!r}, which the suite does not define (it has: {known})"
                )

    def task(self, task_id: str) -> Task:
        """The task with this id.

        Raises:
            KeyError: No such task.
        """
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)

    def select(self, *, prefixes: Sequence[str] = (), limit: int | None = None) -> TaskSuite:
        """The tasks whose id starts with one of ``prefixes`` (all when none), the first ``limit``.

        Raises:
            ConfigurationError: No task is left.
        """
        tasks = [t for t in self.tasks if not prefixes or t.id.startswith(tuple(prefixes))]
        if limit is not None:
            tasks = tasks[:limit]
        if not tasks:
            wanted = ", ".join(repr(p) for p in prefixes)
            raise ConfigurationError(
                f"suite {self.name!r} has no task whose id starts with {wanted}"
            )
        used = {t.environment for t in tasks}
        environments = {k: v for k, v in self.environments.items() if k in used}
        return TaskSuite(
            name=self.name,
            tasks=tuple(tasks),
            environments=environments,
            system=self.system,
            description=self.description,
        )


class CannedTool(ToolBase):
    """A tool known only by its definition: it accepts any arguments and gives a fixed answer.

    For catalogs given as JSON (a benchmark's function definitions), where what a call
    returns does not matter and only the calls are scored.

    Args:
        definition: What the model is shown.
        answer: The JSON text every call returns (default: ``{"status": "ok", "tool": NAME}``).
    """

    def __init__(self, definition: ToolDefinition, answer: str | None = None) -> None:
        super().__init__(definition, ToolMetadata(read_only=True))  # no side effects
        self._answer = answer or json.dumps({"status": "ok", "tool": definition.name})

    async def call(self, arguments_json: str, context: ToolContext | None = None) -> str:
        """The fixed answer."""
        return self._answer
