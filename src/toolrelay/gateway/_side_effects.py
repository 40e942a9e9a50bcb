"""Approval, idempotency and audit around every gateway call, as the execution layer does them.

.. code-block:: toml

    [approval]
    handler = "approvals.py:decide"   # or "package.module:decide": decide(request) -> verdict
    destructive = true                # also ask about destructive tools (default: false)

    [idempotency]
    path = "state/idempotency.sqlite3"  # a SQLite file gateways on one machine share;
                                        # without it, results are kept in memory
    ttl = 86400                         # seconds a recorded result is kept (default: forever)
    lease = 300                         # seconds before an unfinished call counts as abandoned
    wait = 30                           # seconds to wait for an identical call elsewhere

    [audit]
    path = "audit/tools.jsonl"          # one JSON record per call
    include_arguments = false           # the arguments' digest only (they may be personal)

The gateway's :class:`~toolrelay.execution.ToolCallingManager` is built with these as its
``audit=`` (with ``[audit]`` or an audit sink), ``idempotency=`` (always) and ``approval=``
(with a handler): a recorded result answers a repeated call before anyone is asked again.
Which calls they act on follows each tool's metadata, with the file's ``[tools."NAME"]``
policies applied (``_policy.py``).

The handler receives the call as a :class:`~toolrelay.execution.ToolInvocation` (tool,
validated arguments, the caller's context) and answers ``Approve()``, ``Deny(reason)`` or
``Defer()``; it may be a plain or an ``async`` function (a deferred call does not run: the
client is told it is waiting for approval). Without one, a
gateway over a tool that requires approval refuses to start; such a tool that appears later
(an MCP server's) is refused at each call, logged as an error.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Awaitable, Callable
from typing import TypeAlias, Unpack, cast

from pydantic import Field, ValidationInfo, field_validator

from toolrelay._settings import RelativePath, Settings, file_folder
from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import (
    ApprovalHandler,
    ApprovalInterceptor,
    AuditInterceptor,
    GuardOptions,
    IdempotencyInterceptor,
    IdempotencyStore,
    InMemoryIdempotencyStore,
    JsonLinesAuditSink,
    SqliteIdempotencyStore,
    ToolInvocation,
)
from toolrelay.execution._idempotency import DEFAULT_LEASE, DEFAULT_WAIT
from toolrelay.execution._result import ApprovalVerdict
from toolrelay.tools._modules import load_attribute

__all__ = [
    "ApprovalSettings",
    "Approver",
    "AuditSettings",
    "IdempotencySettings",
    "as_approval_handler",
    "gateway_guards",
]

Approver: TypeAlias = Callable[[ToolInvocation], ApprovalVerdict | Awaitable[ApprovalVerdict]]
"""Decides about a call that needs approval: ``Approve()``, ``Deny(reason)`` or ``Defer()``."""


class ApprovalSettings(Settings):
    """The ``[approval]`` table.

    Attributes:
        handler: Where the handler is: ``path/to/file.py:name`` (read from a file, relative
            to its folder, and then absolute) or ``package.module:name``; ``None`` for none.
        destructive: Also ask about tools whose metadata says ``destructive``, not only
            those that say ``requires_approval``.
    """

    handler: str | None = None
    destructive: bool = False

    @field_validator("handler")
    @classmethod
    def _module_and_function(cls, handler: str | None, info: ValidationInfo) -> str | None:
        if handler is None:
            return None
        target, _, name = handler.rpartition(":")
        if not target or not name:
            raise ValueError(
                "must name a module and a function: 'approvals.py:decide' or "
                "'package.module:decide'"
            )
        folder = file_folder(info)
        if folder is not None and (target.endswith(".py") or "/" in target):  # a file
            return f"{folder / target}:{name}"
        return handler


class IdempotencySettings(Settings):
    """The ``[idempotency]`` table.

    Attributes:
        path: A SQLite file for the recorded results (read from a file, relative to its
            folder); ``None`` keeps them in this process's memory.
        ttl: Seconds a recorded result is kept; ``None`` keeps it.
        lease: Seconds after which a reservation without a result counts as abandoned.
        wait: Seconds a call waits for an identical call running in another process.
    """

    path: RelativePath | None = None
    ttl: float | None = Field(None, gt=0)
    lease: float = Field(DEFAULT_LEASE, gt=0)
    wait: float = Field(DEFAULT_WAIT, ge=0)

    def store(self) -> IdempotencyStore:
        """A new store as configured: SQLite at :attr:`path`, else in memory."""
        if self.path is None:
            return InMemoryIdempotencyStore(ttl=self.ttl)
        return SqliteIdempotencyStore(self.path, ttl=self.ttl)


class AuditSettings(Settings):
    """The ``[audit]`` table.

    Attributes:
        path: The JSON-lines file (read from a file, relative to its folder).
        include_arguments: Put each call's full arguments in its record.
    """

    path: RelativePath = Field(description="the JSON-lines file the records go to")
    include_arguments: bool = False


_NO_APPROVAL_SETTINGS = ApprovalSettings()
_NO_IDEMPOTENCY_SETTINGS = IdempotencySettings()


def as_approval_handler(approver: Approver) -> ApprovalHandler:
    """``approver`` (a plain or ``async`` function) as an execution-layer approval handler."""

    async def handler(invocation: ToolInvocation, /) -> ApprovalVerdict:
        verdict = approver(invocation)
        if inspect.isawaitable(verdict):
            return await verdict
        return verdict

    return handler


def gateway_guards(
    *,
    approval_settings: ApprovalSettings = _NO_APPROVAL_SETTINGS,
    idempotency_settings: IdempotencySettings = _NO_IDEMPOTENCY_SETTINGS,
    audit_settings: AuditSettings | None = None,
    closing: contextlib.ExitStack | None = None,
    **given: Unpack[GuardOptions],
) -> GuardOptions:
    """The guard options of a gateway's manager: the file's, with those given in code winning.

    Without either: no approval (a tool that requires it is refused), and idempotency keys
    recorded in the process's store. Pass them as ``ToolCallingManager(**gateway_guards(...))``.

    Args:
        approval_settings: The ``[approval]`` table.
        idempotency_settings: The ``[idempotency]`` table.
        audit_settings: The ``[audit]`` table, if any.
        closing: Gets the close of a store opened here (a SQLite file).
        given: Guard options given in code (:class:`~toolrelay.execution.GuardOptions`):
            each replaces what the file says of it.

    Raises:
        LoadError: The file's handler cannot be loaded.
        ConfigurationError: It is not callable.
    """
    guards: GuardOptions = {**given}
    if given.get("audit") is None and audit_settings is not None:
        sink = JsonLinesAuditSink(audit_settings.path)
        include = audit_settings.include_arguments
        guards["audit"] = AuditInterceptor(sink, include_arguments=include)
    if given.get("idempotency") is None and idempotency_settings != _NO_IDEMPOTENCY_SETTINGS:
        store = idempotency_settings.store()
        if closing is not None and isinstance(store, SqliteIdempotencyStore):
            closing.callback(store.close)
        guards["idempotency"] = IdempotencyInterceptor(
            store, lease=idempotency_settings.lease, wait=idempotency_settings.wait
        )
    spec, destructive = approval_settings.handler, approval_settings.destructive
    approval = given.get("approval")
    if approval is None and spec is not None:
        loaded = load_attribute(spec, isolated=True)
        if not callable(loaded):
            raise ConfigurationError(f"[approval] handler {spec!r} is not a function")
        approval = as_approval_handler(cast(Approver, loaded))
    if isinstance(approval, ApprovalInterceptor):
        if destructive and not approval.destructive:
            raise ConfigurationError(
                "[approval] destructive = true, but the ApprovalInterceptor given in code asks "
                "only about tools that require approval: give it destructive=True, or drop "
                "the file's setting"
            )
    elif approval is not None:
        approval = ApprovalInterceptor(approval, destructive=destructive)
    if approval is not None:
        guards["approval"] = approval
    return guards
