"""One round of tool execution that never crashes on a model's mistake.

:class:`ToolCallingManager` resolves each call of a model response (the request's tools, then a
:class:`ToolResolver` chain, then lenient name matching), validates the arguments, runs the
calls concurrently with timeouts and limits through one pipeline of interceptors, and answers
every call: a result, or an error text the model can act on. The result is a
:class:`ToolExecutionResult` with the new conversation history.

    manager = ToolCallingManager(resolver=StaticToolResolver(tools))
    result = await manager.execute_tool_calls(prompt, chat_response)
    if result.return_direct:
        answer = result.build_generations()

Whether and how a call runs is decided by interceptors around each run
(:class:`ToolCallInterceptor`), each seeing the call as a :class:`ToolInvocation`:
``authorize=`` (an :data:`Authorizer` allows or denies each call),
:class:`ApprovalInterceptor` (approve, deny, edit or defer calls of tools that need
approval), :class:`IdempotencyInterceptor` (a repeated call gets the recorded result, kept in
an :class:`IdempotencyStore` such as :class:`SqliteIdempotencyStore`) and
:class:`AuditInterceptor` (an :class:`AuditRecord` per call, to an :class:`AuditSink`)::

    manager = ToolCallingManager(
        resolver=StaticToolResolver(tools),
        authorize=may_run,
        audit=JsonLinesAuditSink("audit.jsonl"),
        idempotency=SqliteIdempotencyStore("idempotency.sqlite3"),
        approval=ApprovalInterceptor(destructive=True),  # no handler: a person decides later
    )

A tool's declared guards always hold: a tool that ``requires_approval`` never runs without an
approval decision (with no ``approval=`` it is refused), and idempotency keys are honoured
with an in-process store unless ``idempotency=`` names another.
"""

from toolrelay.execution._approval import ApprovalHandler, ApprovalInterceptor
from toolrelay.execution._arguments import validate_call_arguments
from toolrelay.execution._audit import (
    AuditInterceptor,
    AuditRecord,
    AuditSink,
    JsonLinesAuditSink,
    LoggingAuditSink,
)
from toolrelay.execution._authorization import Authorizer
from toolrelay.execution._exceptions_policy import (
    DefaultToolExceptionProcessor,
    ToolExceptionProcessor,
)
from toolrelay.execution._forwarding import ForwardingTool
from toolrelay.execution._idempotency import (
    IdempotencyInterceptor,
    IdempotencyStore,
    InMemoryIdempotencyStore,
    Reservation,
    ReservationStatus,
    idempotency_key,
)
from toolrelay.execution._idempotency_sqlite import SqliteIdempotencyStore
from toolrelay.execution._interception import (
    Proceed,
    ToolCallInterceptor,
    ToolInvocation,
    answer,
    proceed_with_arguments,
)
from toolrelay.execution._limits import CallLimits
from toolrelay.execution._manager import (
    DEFAULT_MAX_RESULT_CHARS,
    DEFAULT_TIMEOUT,
    ToolCallingManager,
)
from toolrelay.execution._pipeline import GuardOptions
from toolrelay.execution._resolution import DelegatingToolResolver, StaticToolResolver, ToolResolver
from toolrelay.execution._result import (
    ApprovalStatus,
    Approve,
    Defer,
    Deny,
    ToolCallOutcome,
    ToolCallStatus,
    ToolExecutionResult,
)

__all__ = [
    "DEFAULT_MAX_RESULT_CHARS",
    "DEFAULT_TIMEOUT",
    "ApprovalHandler",
    "ApprovalInterceptor",
    "ApprovalStatus",
    "Approve",
    "AuditInterceptor",
    "AuditRecord",
    "AuditSink",
    "Authorizer",
    "CallLimits",
    "DefaultToolExceptionProcessor",
    "Defer",
    "DelegatingToolResolver",
    "Deny",
    "ForwardingTool",
    "GuardOptions",
    "IdempotencyInterceptor",
    "IdempotencyStore",
    "InMemoryIdempotencyStore",
    "JsonLinesAuditSink",
    "LoggingAuditSink",
    "Proceed",
    "Reservation",
    "ReservationStatus",
    "SqliteIdempotencyStore",
    "StaticToolResolver",
    "ToolCallInterceptor",
    "ToolCallOutcome",
    "ToolCallStatus",
    "ToolCallingManager",
    "ToolExceptionProcessor",
    "ToolExecutionResult",
    "ToolInvocation",
    "ToolResolver",
    "answer",
    "idempotency_key",
    "proceed_with_arguments",
    "validate_call_arguments",
]
