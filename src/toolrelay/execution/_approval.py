"""Approval: a decision before a tool with side effects runs.

:class:`ApprovalInterceptor` asks its :class:`ApprovalHandler` about every call of a tool
whose metadata says ``requires_approval`` (and, with ``destructive=True``, every
``destructive`` one). The handler answers:

- :class:`Approve` — run the call; ``Approve(arguments={...})`` runs it with other arguments,
  validated exactly as the model's are (bad ones become the usual invalid-argument feedback);
- :class:`Deny` — do not run it; the model reads the reason (status ``denied``);
- :class:`Defer` — a person decides later: the call is answered with status
  ``pending_approval`` and the tool loop stops with finish reason ``"approvalRequired"``.
  The person's decisions resume the turn (``client.prompt().resume(state, decisions)``).

It is the manager's ``approval=`` (a handler alone, or this class for its options); without
a handler every such call is deferred::

    manager = ToolCallingManager(approval=ApprovalInterceptor(destructive=True))

The handler sees the validated arguments (a call with invalid arguments is answered before
anyone is asked). It has ``timeout`` seconds to answer (:data:`DEFAULT_APPROVAL_TIMEOUT`,
60 s, by default); a handler that does not answer in time is taken as a denial the model can
act on, or, with ``on_timeout="defer"``, as a deferral to a person. A handler that raises
denies the call it was asked about (logged), never the round's other calls; one that answers
anything but a verdict, or is not ``async``, is a :class:`ConfigurationError`.

When a deferred round resumes, the loop runs it again with
``execute_tool_calls(..., resumed=ResumedRound(...))``: the calls answered the first time keep
their answers (the manager never runs them twice) and each pending call carries the person's
decision (:attr:`ToolInvocation.decision <toolrelay.execution.ToolInvocation.decision>`),
which the interceptor applies instead of asking the handler.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Final, Literal, Protocol, runtime_checkable

from toolrelay.exceptions import ArgumentProblem, ConfigurationError, ToolArgumentError
from toolrelay.execution import _feedback as feedback
from toolrelay.execution._arguments import parse_arguments, validate_call_arguments
from toolrelay.execution._interception import (
    Proceed,
    ToolInvocation,
    answer,
    proceed_with_arguments,
)
from toolrelay.execution._result import (
    ApprovalDecision,
    ApprovalStatus,
    ApprovalVerdict,
    Approve,
    Defer,
    Deny,
    ToolCallOutcome,
    ToolCallStatus,
)
from toolrelay.messages import ToolCall
from toolrelay.tools._base import Tool, ValidatedArguments, check_seconds

_log = logging.getLogger("toolrelay.execution._approval")

DEFAULT_APPROVAL_TIMEOUT: Final = 60.0
"""Seconds an approval handler has to answer before its silence counts (see ``on_timeout``)."""

__all__ = [
    "DEFAULT_APPROVAL_TIMEOUT",
    "ApprovalHandler",
    "ApprovalInterceptor",
    "ResumedRound",
    "pending_text",
]


@runtime_checkable
class ApprovalHandler(Protocol):
    """Decides about a call that needs approval; any ``async def handler(invocation, /)`` fits.

    It sees the call as every step does (:class:`~toolrelay.execution.ToolInvocation`: tool,
    validated arguments, tool context).
    """

    async def __call__(self, invocation: ToolInvocation, /) -> ApprovalVerdict:
        """Approve (maybe with other arguments), deny, or defer the call."""
        ...


def pending_text(tool_name: str) -> str:
    """The response of a call waiting for approval (the loop stops before the model reads it)."""
    return f"The call to tool {tool_name!r} is waiting for approval and has not run."


# --- resuming a deferred round -----------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ResumedRound:
    """What a round that waited for approval brings back when it runs again.

    Attributes:
        calls: The round's calls, in order.
        answered: Per call, the outcome it got the first time, or ``None`` when it waited for
            approval (these run now).
        decisions: People's decisions by call id; a pending call without one is asked about
            again.
        tool_names: By call id, the tool each pending call was shown as; a decision does not
            apply to a call that now resolves to another tool (it is asked about again).
    """

    calls: tuple[ToolCall, ...]
    answered: tuple[ToolCallOutcome | None, ...]
    decisions: Mapping[str, ApprovalDecision] = field(default_factory=dict)
    tool_names: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.answered) != len(self.calls):
            raise ConfigurationError("a resumed round needs one answer slot per call")
        for call_id, decision in self.decisions.items():
            if not isinstance(decision, Approve | Deny):
                raise ConfigurationError(
                    f"the decision for call {call_id!r} must be Approve(...) or Deny(...), "
                    f"not {decision!r}"
                )
        object.__setattr__(self, "decisions", MappingProxyType(dict(self.decisions)))
        object.__setattr__(self, "tool_names", MappingProxyType(dict(self.tool_names)))

    def matches(self, calls: Sequence[ToolCall]) -> bool:
        """Whether ``calls`` are this round's calls, exactly."""
        return tuple(calls) == self.calls

    def answer_of(self, position: int) -> ToolCallOutcome | None:
        """The outcome call ``position`` got the first time; ``None`` if it waited."""
        return self.answered[position]

    def decision_for(self, call: ToolCall, tool_name: str | None = None) -> ApprovalDecision | None:
        """The person's decision about ``call`` (running ``tool_name``), if it is theirs.

        Only for one of the pending calls, exactly as it waited, still resolving to the tool
        it was shown as (when ``tool_name`` is given).
        """
        waiting = any(
            c == call and a is None for c, a in zip(self.calls, self.answered, strict=True)
        )
        if not waiting:
            return None
        if tool_name is not None and self.tool_names.get(call.id, tool_name) != tool_name:
            return None
        return self.decisions.get(call.id)


# --- the interceptor ---------------------------------------------------------------------------


class ApprovalInterceptor:
    """Asks for approval before tools with side effects run (see the module docs).

    Args:
        handler: Decides about each call; ``None`` defers every call to a person. A
            handler that raises denies the call (logged); ``KeyboardInterrupt``,
            ``MemoryError`` and a cancellation of the round propagate.
        destructive: Also ask about tools whose metadata says ``destructive``.
        timeout: Seconds the handler has to answer (finite, above 0); ``None`` waits for
            ever.
        on_timeout: What a handler's silence means: ``"deny"`` (the call does not run and
            the model is told it needs approval) or ``"defer"`` (it waits for a person, as
            without a handler).

    Raises:
        ConfigurationError: ``timeout`` or ``on_timeout`` is out of range. From a call: the
            handler is not ``async`` or answered something other than a verdict.
    """

    def __init__(
        self,
        handler: ApprovalHandler | None = None,
        *,
        destructive: bool = False,
        timeout: float | None = DEFAULT_APPROVAL_TIMEOUT,
        on_timeout: Literal["deny", "defer"] = "deny",
    ) -> None:
        check_seconds("timeout", timeout)
        if on_timeout not in ("deny", "defer"):
            raise ConfigurationError(f"on_timeout must be 'deny' or 'defer', not {on_timeout!r}")
        self.handler = handler
        self.destructive = destructive
        self.timeout = timeout
        self.on_timeout = on_timeout

    def needs_approval(self, tool: Tool) -> bool:
        """Whether calls of ``tool`` are asked about."""
        metadata = tool.metadata
        return metadata.requires_approval or (self.destructive and metadata.destructive)

    async def __call__(self, invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        """Ask about the call, then run, refuse or defer it."""
        if not self.needs_approval(invocation.tool):
            return await proceed(invocation)
        verdict: ApprovalVerdict | None = invocation.decision
        if verdict is None:
            verdict = Defer() if self.handler is None else await self._ask(invocation)
        name = invocation.tool_name
        if isinstance(verdict, Defer):
            status, approval = ToolCallStatus.PENDING_APPROVAL, ApprovalStatus.PENDING
            return answer(invocation, pending_text(name), status, approval)
        if isinstance(verdict, Deny):
            text = verdict.reason or feedback.denied(name)
            return answer(invocation, text, ToolCallStatus.DENIED, ApprovalStatus.DENIED)
        if not isinstance(verdict, Approve):
            raise ConfigurationError(
                f"the approval handler answered {verdict!r}; expected Approve, Deny or Defer"
            )
        if verdict.arguments is None:
            outcome = await proceed(invocation)
            return replace(outcome, approval=ApprovalStatus.APPROVED)
        try:
            arguments = _edited(invocation.tool, verdict.arguments)
        except ToolArgumentError as exc:
            text = feedback.invalid_arguments(name, exc.problems)
            return replace(
                answer(invocation, text, ToolCallStatus.INVALID_ARGUMENTS, ApprovalStatus.EDITED),
                exception=exc,
            )
        outcome = await proceed_with_arguments(invocation, arguments, proceed)
        return replace(outcome, approval=ApprovalStatus.EDITED, edited_arguments=arguments.text)

    async def _ask(self, invocation: ToolInvocation) -> ApprovalVerdict:
        """The handler's verdict; what its silence or its failure means otherwise."""
        assert self.handler is not None
        name = invocation.tool_name
        scope = asyncio.timeout(self.timeout)
        try:
            async with scope:
                verdict = self.handler(invocation)
                if not inspect.isawaitable(verdict):
                    raise ConfigurationError(
                        f"the approval handler returned {verdict!r} instead of an awaitable; "
                        "define it with async def"
                    )
                return await verdict
        except (ConfigurationError, KeyboardInterrupt, MemoryError):
            raise
        except BaseException as exc:
            task = asyncio.current_task()
            if isinstance(exc, asyncio.CancelledError) and task is not None and task.cancelling():
                raise  # the round is being cancelled from outside
            if not (isinstance(exc, TimeoutError) and scope.expired()):
                # Fail closed, and only this call: the round's other results are kept.
                _log.error(
                    "the approval handler failed on call %r of tool %r; the call is denied",
                    invocation.call.id,
                    name,
                    exc_info=exc,
                )
                return Deny(feedback.approval_failed(name))
        assert self.timeout is not None  # only a timeout expires
        _log.warning(
            "the approval handler did not answer about call %r of tool %r within %g s; the "
            "call is %s",
            invocation.call.id,
            name,
            self.timeout,
            "denied" if self.on_timeout == "deny" else "deferred",
        )
        if self.on_timeout == "defer":
            return Defer()
        return Deny(feedback.approval_timed_out(name, self.timeout))


def _edited(tool: Tool, values: Mapping[str, Any]) -> ValidatedArguments:
    """Arguments a person gave, validated against the tool as the model's are."""
    name = tool.definition.name
    try:
        if not isinstance(values, Mapping):
            raise TypeError(f"a JSON object is needed, not {type(values).__name__}")
        text = json.dumps(dict(values), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        problem = ArgumentProblem(location="", message=f"The edited arguments are unusable: {exc}")
        raise ToolArgumentError(name, [problem]) from exc
    return validate_call_arguments(tool, parse_arguments(name, text).values, text)
