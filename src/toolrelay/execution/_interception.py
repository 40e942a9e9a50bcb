"""The pipeline of one tool call: interceptors around each run.

Every decision about a call that passed resolution, limits and argument validation is an
interceptor: may it run (:class:`~toolrelay.execution._authorization.AuthorizationInterceptor`,
the manager's ``authorize=``), does a person approve it
(:class:`~toolrelay.execution.ApprovalInterceptor`), did it run already
(:class:`~toolrelay.execution.IdempotencyInterceptor`), what is recorded of it
(:class:`~toolrelay.execution.AuditInterceptor`). The manager hands the call to them as a
:class:`ToolInvocation`, the one view of a call every step sees. Each interceptor receives
the invocation and ``proceed``, the rest of the chain (the next interceptors, then the tool),
and returns the call's :class:`~toolrelay.execution.ToolCallOutcome`: it may answer without
proceeding (a denial, a recorded result; see :func:`answer`), proceed with changed
arguments, or look at the outcome on the way back. The first interceptor is the outermost::

    async def timing(invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        outcome = await proceed(invocation)
        log.info("%s took %.1f ms", outcome.tool_name, outcome.duration_ms)
        return outcome

    manager = ToolCallingManager(interceptors=[timing])

The built-in ones go in this order: the authorization interceptor (a forbidden call reaches
nothing else), :class:`~toolrelay.execution.AuditInterceptor` (sees
every outcome after it), :class:`~toolrelay.execution.IdempotencyInterceptor` (a recorded
result answers before anyone is asked for approval),
:class:`~toolrelay.execution.ApprovalInterceptor`. A round's own interceptors
(``execute_tool_calls(..., interceptors=...)``: tool search binds each search to its call)
run outside the manager's, so a call the round refuses never reaches them.

The invocation's arguments are validated already (:class:`~toolrelay.tools.ValidatedArguments`:
coerced values, defaults filled in), so every interceptor decides on the values the tool will
run with. An interceptor that changes the arguments validates the new ones with
:func:`~toolrelay.execution.validate_call_arguments` and continues with
:func:`proceed_with_arguments`, not ``proceed``: outer steps whose decisions depend on the
arguments (an idempotency key) then check the changed arguments before the tool runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from toolrelay.execution._result import (
    ApprovalDecision,
    ApprovalStatus,
    ToolCallOutcome,
    ToolCallStatus,
)
from toolrelay.messages import ToolCall, ToolResponse
from toolrelay.tools._base import Tool, ToolContext, ValidatedArguments

__all__ = [
    "ArgumentsCheck",
    "CallProgress",
    "Proceed",
    "ToolCallInterceptor",
    "ToolInvocation",
    "answer",
    "proceed_with_arguments",
    "run_interceptors",
]


class CallProgress:
    """How far one call's tool got; one object per call, shared by every step of it.

    An interceptor that sees the call end in an exception (the round was cancelled, say) can
    tell from it whether the tool may have done part of its work.

    Attributes:
        started: The tool's body began: an ``async`` tool was entered, or a thread took up a
            synchronous one.
        ended: The body ended with a result or an exception of its own (not cancelled, not
            timed out).
        returned: The body returned a result: it did its work, whatever becomes of the
            outcome afterwards (a round cancelled while the result is being recorded).
        confirm: Asked right before the body starts, when set (the idempotency step
            confirming its reservation); ``False`` means the call must not start.
    """

    __slots__ = ("confirm", "ended", "returned", "started")

    def __init__(self) -> None:
        self.started = False
        self.ended = False
        self.returned = False
        self.confirm: Callable[[], Awaitable[bool]] | None = None

    @property
    def interrupted(self) -> bool:
        """The body began but did not end: whether it took effect is unknown."""
        return self.started and not self.ended


@dataclass(frozen=True, kw_only=True)
class ToolInvocation:
    """One call about to run: what every step of its pipeline sees.

    Attributes:
        call: The call as the model wrote it.
        tool: The tool it resolved to (``tool.definition.name`` is the canonical name).
        arguments: The validated arguments the tool will run with (the model's, unless an
            interceptor changed them): coerced where the tool coerces, defaults filled in,
            blank text read as ``{}``. They read like a read-only mapping
            (``arguments["amount"]``); ``arguments.text`` is their JSON text.
        context: The request's tool context (empty when it has none).
        decision: A person's decision about this call, when a round that waited for
            approval resumes (``execute_tool_calls(..., resumed=...)``); the
            :class:`~toolrelay.execution.ApprovalInterceptor` applies it instead of asking.
        arguments_check: Set by an outer interceptor that must see changed arguments before
            the tool runs; see :func:`proceed_with_arguments`.
        progress: How far the call got (see :class:`CallProgress`).
    """

    call: ToolCall
    tool: Tool
    arguments: ValidatedArguments
    context: ToolContext
    decision: ApprovalDecision | None = None
    arguments_check: ArgumentsCheck | None = None
    progress: CallProgress = field(default_factory=CallProgress, compare=False, repr=False)

    @property
    def tool_name(self) -> str:
        """The tool's canonical name."""
        return self.tool.definition.name


def answer(
    invocation: ToolInvocation,
    text: str,
    status: ToolCallStatus = ToolCallStatus.DENIED,
    approval: ApprovalStatus | None = None,
) -> ToolCallOutcome:
    """An outcome answering ``invocation`` with ``text`` without running it (an error response).

    What an interceptor returns instead of ``await proceed(invocation)``: a denial by
    default, or another status (``pending_approval``...).
    """
    call, name = invocation.call, invocation.tool_name
    return ToolCallOutcome(
        call=call,
        tool_name=name,
        response=ToolResponse(id=call.id, name=name, data=text, is_error=True),
        status=status,
        approval=approval,
    )


Proceed = Callable[[ToolInvocation], Awaitable[ToolCallOutcome]]
"""The rest of the chain: the next interceptors, then the tool."""

ArgumentsCheck = Callable[[ToolInvocation, Proceed], Awaitable[ToolCallOutcome]]
"""Checks an invocation whose arguments changed, then continues with the given ``proceed``."""


@runtime_checkable
class ToolCallInterceptor(Protocol):
    """A step around a tool's run; any ``async def step(invocation, proceed, /)`` fits.

    Return ``await proceed(invocation)`` to let the call run, or an outcome of your own to
    answer it without running (:func:`answer`). Deny by answering: an exception aborts the
    round.
    """

    async def __call__(self, invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        """The call's outcome."""
        ...


async def run_interceptors(
    interceptors: Sequence[ToolCallInterceptor], invocation: ToolInvocation, run: Proceed
) -> ToolCallOutcome:
    """Run ``invocation`` through ``interceptors`` (first is outermost), then ``run``."""

    async def step(index: int, current: ToolInvocation) -> ToolCallOutcome:
        if index == len(interceptors):
            return await run(current)
        return await interceptors[index](current, lambda nxt: step(index + 1, nxt))

    return await step(0, invocation)


async def proceed_with_arguments(
    invocation: ToolInvocation, arguments: ValidatedArguments, proceed: Proceed
) -> ToolCallOutcome:
    """Continue with changed arguments, through the outer interceptors' arguments check."""
    changed = dataclasses.replace(invocation, arguments=arguments)
    if invocation.arguments_check is None:
        return await proceed(changed)
    return await invocation.arguments_check(changed, proceed)
