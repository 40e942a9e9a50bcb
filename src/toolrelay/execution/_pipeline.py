"""The manager's pipeline: the guards a tool declares, always enforced, in one fixed order.

A tool's declarations (``requires_approval``, ``idempotency_key``, ``context_keys``) hold
wherever it runs, because every run goes through a manager and the manager assembles the
guard steps itself: ``authorize``, ``audit``, the user's ``interceptors``, idempotency
(engaged by default with the process's in-memory store), approval. The guard options are
declared once, as :class:`GuardOptions`, and every door that runs tools takes them as the
same keyword arguments. A tool that requires approval where no approval is configured is
refused: at build time when the tool is known then (:meth:`Guards.check_tools`), else as
feedback to the model, logged as an error. Each call gets only the steps that concern its
tool, so a tool with no key and no approval pays for none of them.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, TypedDict, Unpack

from toolrelay.exceptions import ConfigurationError, ToolContextError
from toolrelay.execution import _feedback as feedback
from toolrelay.execution import _idempotency as idempotency_
from toolrelay.execution._approval import ApprovalHandler, ApprovalInterceptor
from toolrelay.execution._audit import AuditInterceptor, AuditSink
from toolrelay.execution._authorization import AuthorizationInterceptor, Authorizer
from toolrelay.execution._idempotency import IdempotencyInterceptor, IdempotencyStore
from toolrelay.execution._interception import (
    Proceed,
    ToolCallInterceptor,
    ToolInvocation,
    answer,
)
from toolrelay.execution._result import ToolCallOutcome
from toolrelay.tools._base import Tool

__all__ = [
    "GUARD_OPTIONS",
    "META_TOOL",
    "ContextNeeds",
    "GuardOptions",
    "Guards",
    "check_context",
    "check_guard_options",
    "check_tool_context",
    "given_guards",
]

_log = logging.getLogger("toolrelay.execution")

META_TOOL = "toolrelay.meta_tool"
"""``ToolMetadata.extra`` key of the library's own tools (``tool_search``, ``call_tool``):
never authorized themselves, and their answers are never cut (they fit the bound whole)."""


class GuardOptions(TypedDict, total=False):
    """The guards around every tool call: one declaration, the same keywords at every door.

    ``ToolCallingManager(**guards)``, ``ChatClient(model, **guards)``, ``ToolGateway``,
    ``BridgeSearch``, the bridges' converters and ``tools_server`` all take these keyword
    arguments, spelt and meaning the same (``None`` is the same as leaving one out). A door
    given its own ``tool_calling_manager=`` takes none of them: they build that manager.

    Keys:
        approval: Decides about calls of tools that need approval (``requires_approval``):
            an async handler ``(invocation) -> Approve() | Deny(reason) | Defer()``, or an
            :class:`~toolrelay.execution.ApprovalInterceptor` for its options (no handler: a
            person decides later; ``destructive=True``: destructive tools too). Without it
            such a tool never runs: a door refuses to build over it, and one that appears
            later is refused per call.
        idempotency: Where results of tools with an ``idempotency_key`` are recorded: an
            :class:`~toolrelay.execution.IdempotencyStore` (several processes: a Redis or
            SQLite one) or an :class:`~toolrelay.execution.IdempotencyInterceptor` for its
            options. Without it, the process's in-memory store, shared by every manager of
            the process, so a declared key never runs twice in one process whichever door
            runs its tool.
        audit: Where a record of every call goes: an :class:`~toolrelay.execution.AuditSink`
            or an :class:`~toolrelay.execution.AuditInterceptor` for its options.
        authorize: Asked whether each call may run: ``(context, tool, arguments) -> True``,
            or ``False`` / a reason to deny; never asked about the library's own tools.
        interceptors: Steps of your own around every call, between audit and idempotency,
            outermost first (see :class:`~toolrelay.execution.ToolCallInterceptor`).
    """

    approval: ApprovalHandler | ApprovalInterceptor | None
    idempotency: IdempotencyStore | IdempotencyInterceptor | None
    audit: AuditSink | AuditInterceptor | None
    authorize: Authorizer | None
    interceptors: Sequence[ToolCallInterceptor]


GUARD_OPTIONS = tuple(GuardOptions.__annotations__)
"""The names of the guard options, in the pipeline's order of documentation."""


def given_guards(options: Mapping[str, Any]) -> list[str]:
    """The guard options ``options`` sets (not left out, not ``None``, not empty)."""
    return [f"{name}=" for name in GUARD_OPTIONS if options.get(name) not in (None, (), [])]


def check_guard_options(
    options: Mapping[str, Any], *, owner: str, parameters: Collection[str] = ()
) -> None:
    """Refuse keywords that are no guard option (a misspelt one would be ignored).

    Args:
        options: The keyword arguments a door collected as guard options.
        owner: The door, for the message (``"ChatClient"``...).
        parameters: The door's other keyword arguments, suggested too.

    Raises:
        ConfigurationError: Naming the unknown keyword and the closest real one.
    """
    for name in options:
        if name in GUARD_OPTIONS:
            continue
        known = [*GUARD_OPTIONS, *parameters]
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"did you mean {close[0]}=? " if close else ""
        raise ConfigurationError(
            f"{owner} got an unknown keyword argument {name}=; {hint}its guard options are "
            f"{', '.join(f'{g}=' for g in GUARD_OPTIONS)}"
        )


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
        options: The guard options (see :class:`GuardOptions`).

    Raises:
        ConfigurationError: An option of the wrong kind, an unknown option, or a built-in
            step given among ``interceptors`` (it has its own option).
    """

    __slots__ = ("_idempotency", "approval", "audit", "authorization", "head", "interceptors")

    def __init__(self, **options: Unpack[GuardOptions]) -> None:
        check_guard_options(options, owner="ToolCallingManager")
        approval = options.get("approval")
        idempotency = options.get("idempotency")
        audit = options.get("audit")
        authorize = options.get("authorize")
        interceptors = tuple(options.get("interceptors") or ())
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
        if idempotency is not None and not isinstance(idempotency, IdempotencyInterceptor):
            if not isinstance(idempotency, IdempotencyStore):
                raise ConfigurationError(
                    "idempotency= takes an IdempotencyStore (InMemoryIdempotencyStore, "
                    f"SqliteIdempotencyStore, RedisIdempotencyStore) or an "
                    f"IdempotencyInterceptor, not {idempotency!r}"
                )
            idempotency = IdempotencyInterceptor(idempotency)
        # None: the process's interceptor, looked up per call (a test may give it a clean store).
        self._idempotency: IdempotencyInterceptor | None = idempotency
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
        self.interceptors = interceptors
        self.head = (*([self.audit] if self.audit is not None else []), *self.interceptors)

    @property
    def idempotency(self) -> IdempotencyInterceptor:
        """The idempotency step: the one configured, else the process's."""
        if self._idempotency is not None:
            return self._idempotency
        return idempotency_.process_idempotency()

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

    A tool needs the keys of its ``context_keys``; a non-empty context when its function
    requires a ``ToolContext``; and, when it keeps idempotency keys made of argument names,
    the caller its keys are kept for (see :func:`~toolrelay.execution.idempotency_key`):
    ``tenant_id`` for ``idempotency_scope="tenant"``, and for the default ``"user"`` scope a
    ``user_id``, ``tenant_id`` or ``session_id``, so that callers the application tells
    apart never share results, and a call naming no caller at all is refused rather than
    answered from a stranger's record.

    Args:
        tools: The tools.
    """

    __slots__ = ("any_context", "caller", "keys")

    def __init__(self, tools: Iterable[Tool]) -> None:
        self.keys: dict[str, str] = {}  # key -> the first tool that needs it
        self.any_context: str | None = None  # a tool that needs some context
        self.caller: str | None = None  # a tool whose idempotency keys are kept per caller
        for tool in tools:
            name = tool.definition.name
            metadata = tool.metadata
            for key in metadata.context_keys:
                self.keys.setdefault(key, name)
            if self.any_context is None and getattr(tool, "context_required", False):
                self.any_context = name
            key_spec = metadata.idempotency_key
            if key_spec is None or callable(key_spec):
                continue  # a key function decides its key, scope included, alone
            if metadata.idempotency_scope == "tenant":
                self.keys.setdefault("tenant_id", name)
            elif metadata.idempotency_scope == "user" and self.caller is None:
                self.caller = name

    def check(self, context: Mapping[str, Any]) -> None:
        """Refuse ``context`` when it lacks what one of the tools needs.

        Raises:
            ToolContextError: Naming the tool and the missing key.
        """
        for key, name in self.keys.items():
            if _blank(context.get(key)):
                raise ToolContextError(name, key)
        if not context and self.any_context is not None:
            raise ToolContextError(self.any_context)
        if self.caller is not None and all(map(_blank, map(context.get, _CALLER_KEYS))):
            raise ToolContextError(self.caller, "user_id", caller=True)


_CALLER_KEYS = ("user_id", "tenant_id", "session_id")


def _blank(value: object) -> bool:
    return value is None or value == ""


def check_tool_context(tool: Tool, context: Mapping[str, Any]) -> None:
    """Refuse a call of ``tool`` whose tool context lacks what it needs (see ContextNeeds).

    What the manager checks before any call runs, at every door; free for a tool that needs
    nothing.

    Raises:
        ToolContextError: Naming the tool and the missing key.
    """
    metadata = tool.metadata
    if (
        metadata.context_keys
        or metadata.idempotency_key is not None
        or getattr(tool, "context_required", False)
    ):
        ContextNeeds((tool,)).check(context)


def check_context(tools: Iterable[Tool], context: Mapping[str, Any]) -> None:
    """Refuse a request whose tool context lacks what one of ``tools`` declares it needs.

    Raises:
        ToolContextError: Naming the first such tool and the missing key.
    """
    ContextNeeds(tools).check(context)
