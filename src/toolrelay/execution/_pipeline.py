"""The manager's pipeline: the guards a tool declares, always enforced, in one fixed order.

A tool's declarations (``requires_approval``, ``idempotency_key``) hold wherever it runs,
because every run goes through a manager and the manager assembles the guard steps itself:
``authorize``, ``audit``, the user's ``interceptors``, idempotency (engaged by default with
an in-process store), approval. A tool that requires approval where no approval is
configured is refused: at build time when the tool is known then (:meth:`Guards.check_tools`),
else as feedback to the model, logged as an error. Each call gets only the steps that concern
its tool, so a tool with no key and no approval pays for none of them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from toolrelay.exceptions import ConfigurationError, ToolContextError
from toolrelay.execution import _feedback as feedback
from toolrelay.execution._approval import ApprovalHandler, ApprovalInterceptor
from toolrelay.execution._audit import AuditInterceptor, AuditSink
from toolrelay.execution._authorization import AuthorizationInterceptor, Authorizer
from toolrelay.execution._idempotency import (
    IdempotencyInterceptor,
    IdempotencyStore,
    InMemoryIdempotencyStore,
)
from toolrelay.execution._interception import (
    Proceed,
    ToolCallInterceptor,
    ToolInvocation,
    answer,
)
from toolrelay.execution._result import ToolCallOutcome
from toolrelay.tools._base import Tool

__all__ = ["META_TOOL", "ContextNeeds", "Guards", "check_context"]

_log = logging.getLogger("toolrelay.execution")

META_TOOL = "toolrelay.meta_tool"
"""``ToolMetadata.extra`` key of the library's own tools (``tool_search``), never authorized."""

_GUARD_TYPES = {
    AuthorizationInterceptor: "authorize=",
    AuditInterceptor: "audit=",
    IdempotencyInterceptor: "idempotency=",
    ApprovalInterceptor: "approval=",
}


async def _unapproved(invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
    """Refuses a call that needs approval where no approval is configured."""
    name = invocation.tool_name
    _log.error(
        "tool %r requires approval and no approval is configured; the call did not run "
        "(pass approval=... to the client, gateway, bridge or manager)",
        name,
    )
    return answer(invocation, feedback.approval_not_configured(name))


class Guards:
    """The built-in steps of one manager, and which of them a tool's calls go through.

    Args:
        approval: Decides about calls of tools that need approval: a handler, or an
            :class:`~toolrelay.execution.ApprovalInterceptor` for its options (no handler:
            a person decides later). ``None``: such calls are refused.
        idempotency: Where results of tools with an idempotency key are recorded: a store,
            or an :class:`~toolrelay.execution.IdempotencyInterceptor` for its options.
            ``None``: an :class:`~toolrelay.execution.InMemoryIdempotencyStore` of this
            manager (per process).
        audit: Where a record of every call goes: a sink, or an
            :class:`~toolrelay.execution.AuditInterceptor` for its options.
        authorize: Asked before every call but those of the library's own tools.
        interceptors: The user's steps, between audit and idempotency.

    Raises:
        ConfigurationError: An option of the wrong kind, or a built-in step given among
            ``interceptors`` (it has its own option).
    """

    __slots__ = ("approval", "audit", "authorization", "head", "idempotency", "interceptors")

    def __init__(
        self,
        *,
        approval: ApprovalHandler | ApprovalInterceptor | None = None,
        idempotency: IdempotencyStore | IdempotencyInterceptor | None = None,
        audit: AuditSink | AuditInterceptor | None = None,
        authorize: Authorizer | None = None,
        interceptors: Sequence[ToolCallInterceptor] = (),
    ) -> None:
        for step in interceptors:
            option = next((o for t, o in _GUARD_TYPES.items() if isinstance(step, t)), None)
            if option is not None:
                raise ConfigurationError(
                    f"{type(step).__name__} is a built-in step with its own option: pass "
                    f"{option}... instead of putting it among interceptors=, so it runs in "
                    "its place in the pipeline"
                )
        if approval is not None and not isinstance(approval, ApprovalInterceptor):
            if not callable(approval):
                raise ConfigurationError(
                    f"approval= takes an async handler (invocation) -> Approve | Deny | Defer "
                    f"or an ApprovalInterceptor, not {approval!r}"
                )
            approval = ApprovalInterceptor(approval)
        self.approval: ApprovalInterceptor | None = approval
        if not isinstance(idempotency, IdempotencyInterceptor):
            if idempotency is not None and not isinstance(idempotency, IdempotencyStore):
                raise ConfigurationError(
                    "idempotency= takes an IdempotencyStore (InMemoryIdempotencyStore, "
                    f"SqliteIdempotencyStore, RedisIdempotencyStore) or an "
                    f"IdempotencyInterceptor, not {idempotency!r}"
                )
            store = idempotency if idempotency is not None else InMemoryIdempotencyStore()
            idempotency = IdempotencyInterceptor(store)
        self.idempotency: IdempotencyInterceptor = idempotency
        if audit is not None and not isinstance(audit, AuditInterceptor):
            if not callable(getattr(audit, "write", None)):
                raise ConfigurationError(
                    "audit= takes an AuditSink (an object with async write(record)) or an "
                    f"AuditInterceptor, not {audit!r}"
                )
            audit = AuditInterceptor(audit)
        if authorize is not None and not callable(authorize):
            raise ConfigurationError(
                "authorize= takes a function (context, tool, arguments) -> True | False | "
                f"reason, not {authorize!r}"
            )
        self.audit: AuditInterceptor | None = audit
        self.authorization = None if authorize is None else AuthorizationInterceptor(authorize)
        self.interceptors = tuple(interceptors)
        head: list[ToolCallInterceptor] = []
        if self.audit is not None:
            head.append(self.audit)
        self.head = (*head, *self.interceptors)

    def needs_approval(self, tool: Tool) -> bool:
        """Whether calls of ``tool`` need an approval decision before they run."""
        if self.approval is not None:
            return self.approval.needs_approval(tool)
        return tool.metadata.requires_approval

    def steps(self, tool: Tool) -> tuple[ToolCallInterceptor, ...]:
        """The built-in and user steps a call of ``tool`` goes through, outermost first."""
        metadata = tool.metadata
        steps = self.head
        if self.authorization is not None and not metadata.extra.get(META_TOOL):
            steps = (self.authorization, *steps)
        if metadata.idempotency_key is not None:
            steps = (*steps, self.idempotency)
        if self.needs_approval(tool):
            steps = (*steps, self.approval if self.approval is not None else _unapproved)
        return steps

    def check_tools(self, tools: Iterable[Tool], *, owner: str) -> None:
        """Refuse to build when a tool requires approval and no approval is configured.

        Args:
            tools: The tools known now (a live catalog's later tools are refused at run time).
            owner: Where the fix goes, for the message (``"ChatClient"``...).

        Raises:
            ConfigurationError: Naming the tools and the one-line fix.
        """
        if self.approval is not None:
            return
        names = sorted({t.definition.name for t in tools if t.metadata.requires_approval})
        if names:
            listed = ", ".join(repr(n) for n in names)
            raise ConfigurationError(
                f"{listed} require{'s' if len(names) == 1 else ''} approval, and no approval "
                f"is configured, so {'it' if len(names) == 1 else 'they'} could never run: "
                f"pass {owner}(..., approval=handler) with an async handler returning "
                "Approve(), Deny(reason) or Defer(), or approval=ApprovalInterceptor() to let a "
                "person decide later"
            )


class ContextNeeds:
    """What a set of tools needs in the tool context: computed once, checked per request.

    Args:
        tools: The tools.
    """

    __slots__ = ("any_context", "keys")

    def __init__(self, tools: Iterable[Tool]) -> None:
        self.keys: dict[str, str] = {}  # key -> the first tool that needs it
        self.any_context: str | None = None  # a tool that needs some context
        for tool in tools:
            name = tool.definition.name
            for key in tool.metadata.context_keys:
                self.keys.setdefault(key, name)
            if self.any_context is None and getattr(tool, "context_required", False):
                self.any_context = name

    def check(self, context: Mapping[str, Any]) -> None:
        """Refuse ``context`` when it lacks what one of the tools needs.

        Raises:
            ToolContextError: Naming the tool and the missing key.
        """
        for key, name in self.keys.items():
            if context.get(key) in (None, ""):
                raise ToolContextError(name, key)
        if not context and self.any_context is not None:
            raise ToolContextError(self.any_context)


def check_context(tools: Iterable[Tool], context: Mapping[str, Any]) -> None:
    """Refuse a request whose tool context lacks what one of ``tools`` declares it needs.

    Raises:
        ToolContextError: Naming the first such tool and the missing key.
    """
    ContextNeeds(tools).check(context)
