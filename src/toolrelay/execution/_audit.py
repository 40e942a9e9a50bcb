"""Audit: one record per tool call that reaches its interceptors, written to a sink.

:class:`AuditInterceptor` writes an :class:`AuditRecord` for every call that passed name
resolution, limits, JSON parsing and the interceptors outside it (a round's visibility and
authorization checks), whatever happened next: ran, failed, timed out, was replayed from an
idempotency record, was denied or deferred by an approval. A manager's ``audit=`` puts it
right after ``authorize`` (whose denials it does not record), so it sees the final outcome::

    manager = ToolCallingManager(
        audit=JsonLinesAuditSink("audit.jsonl"), idempotency=store, approval=ask_on_call
    )

A record names the tenant and user (from the tool context), the tool, a SHA-256 digest of
the arguments the tool ran with (canonical JSON: sorted keys, no spaces), the full arguments
only when ``include_arguments=True`` (they may hold personal data), the status, the run's
duration, the approval decision, and the length of the call's whole text (the tool's result,
or the error the model read) with whether the model read only its start (the manager's
``max_result_chars``); the text itself, whole, only when ``include_results=True``. A deferred
call that is resumed later is recorded twice: once pending, once with the decision.

Sinks: :class:`JsonLinesAuditSink` (one JSON object per line in a file) and
:class:`LoggingAuditSink` (a ``logging`` logger); anything with ``async write(record)`` fits
:class:`AuditSink`. A failing sink, or one that does not answer within ``timeout`` seconds
(:data:`DEFAULT_AUDIT_TIMEOUT`, 10 s, by default), is logged and does not fail or hold up the
call: the tool has already run, and losing its result would be worse than a missing record.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, Protocol, runtime_checkable

from toolrelay._storable import json_text
from toolrelay.execution._canonical import canonical_json, sha256_hex
from toolrelay.execution._interception import Proceed, ToolInvocation
from toolrelay.execution._result import ApprovalStatus, ToolCallOutcome, ToolCallStatus
from toolrelay.tools._base import check_seconds

__all__ = [
    "DEFAULT_AUDIT_TIMEOUT",
    "AuditInterceptor",
    "AuditRecord",
    "AuditSink",
    "JsonLinesAuditSink",
    "LoggingAuditSink",
    "arguments_digest",
]

_log = logging.getLogger("toolrelay.execution._audit")

DEFAULT_AUDIT_TIMEOUT: Final = 10.0
"""Seconds a sink has to write a record before the call goes on without it (logged)."""


def arguments_digest(arguments: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the arguments as canonical JSON; equal arguments, equal digests."""
    return sha256_hex(canonical_json(dict(arguments)))


@dataclass(frozen=True, kw_only=True)
class AuditRecord:
    """One tool call, as the audit trail keeps it.

    Attributes:
        timestamp: When the call was answered (UTC).
        call_id: The call's id as the model wrote it.
        tool: The tool's canonical name.
        tenant_id: The context's ``tenant_id`` (as text), if any.
        user_id: The context's ``user_id`` (as text), if any.
        arguments_sha256: Digest of the arguments the tool ran with (an approval's edited
            arguments when there were some, else the model's); see :func:`arguments_digest`.
        arguments: Those arguments in full, only when the sink's interceptor includes them.
        status: How the call ended.
        duration_ms: How long the tool ran (``0.0`` when it did not run).
        approval: What an approval decided, or ``None`` when none was needed.
        replayed: Answered with a result recorded under its idempotency key.
        idempotency_key: The key the call was checked against, if its tool declares one.
        error: The type name of the exception behind a failed call, if any.
        result_chars: Characters of the call's whole text (the tool's result, or the error
            text), before the bound on what the model reads; ``0`` when the call raised.
        truncated: The model read only the start of that text (it was over the bound).
        result: That text in full, only when the sink's interceptor includes results.
    """

    timestamp: datetime
    call_id: str
    tool: str
    tenant_id: str | None
    user_id: str | None
    arguments_sha256: str
    arguments: Mapping[str, Any] | None = None
    status: ToolCallStatus
    duration_ms: float
    approval: ApprovalStatus | None = None
    replayed: bool = False
    idempotency_key: str | None = None
    error: str | None = None
    result_chars: int = 0
    truncated: bool = False
    result: str | None = None

    def __post_init__(self) -> None:
        if self.arguments is not None:
            object.__setattr__(self, "arguments", MappingProxyType(dict(self.arguments)))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data: the timestamp in ISO 8601, enums as their values."""
        return {
            "timestamp": self.timestamp.isoformat(),
            "call_id": self.call_id,
            "tool": self.tool,
            "tenant_id": self.tenant_id,
            "user_id": self.user_id,
            "arguments_sha256": self.arguments_sha256,
            "arguments": None if self.arguments is None else dict(self.arguments),
            "status": self.status.value,
            "duration_ms": self.duration_ms,
            "approval": None if self.approval is None else self.approval.value,
            "replayed": self.replayed,
            "idempotency_key": self.idempotency_key,
            "error": self.error,
            "result_chars": self.result_chars,
            "truncated": self.truncated,
            "result": self.result,
        }


@runtime_checkable
class AuditSink(Protocol):
    """Where audit records go."""

    async def write(self, record: AuditRecord) -> None:
        """Keep ``record``."""
        ...


class JsonLinesAuditSink:
    """Appends each record as one line of JSON to a file.

    Args:
        path: The file; created (with missing parent folders) on the first record.

    Each record is one ``write`` under a lock, in a worker thread, and the file is opened per
    record, so external log rotation needs no coordination.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    async def write(self, record: AuditRecord) -> None:
        """Append ``record``."""
        # Valid UTF-8 whatever the model wrote: a lone surrogate is written as its escape.
        line = json_text(record.to_dict(), default=str) + "\n"

        def append() -> None:
            with self._lock:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as file:
                    file.write(line)

        await asyncio.to_thread(append)


class LoggingAuditSink:
    """Logs each record: the message is the record's JSON, ``extra`` holds its dict.

    Args:
        logger: The logger, or its name.
        level: The level to log at.
    """

    def __init__(
        self, logger: logging.Logger | str = "toolrelay.audit", *, level: int = logging.INFO
    ) -> None:
        self.logger = logging.getLogger(logger) if isinstance(logger, str) else logger
        self.level = level

    async def write(self, record: AuditRecord) -> None:
        """Log ``record``."""
        data = record.to_dict()
        message = json_text(data, default=str)
        self.logger.log(self.level, "%s", message, extra={"toolrelay_audit": data})


class AuditInterceptor:
    """Writes an :class:`AuditRecord` for every call it sees (see the module docs).

    Args:
        sink: Where records go.
        include_arguments: Put the full arguments in each record (the digest is always there).
        include_results: Put the call's whole text in each record, also when the model read
            only its start (its length is always there). Results may be large and hold
            personal data.
        timeout: Seconds the sink has to write one record (finite, above 0); ``None`` waits
            for ever. A sink that fails or runs out of time is logged, never the call's end.

    Raises:
        ConfigurationError: ``timeout`` is not a finite number of seconds above 0.
    """

    def __init__(
        self,
        sink: AuditSink,
        *,
        include_arguments: bool = False,
        timeout: float | None = DEFAULT_AUDIT_TIMEOUT,
        include_results: bool = False,
    ) -> None:
        check_seconds("timeout", timeout)
        self.sink = sink
        self.include_arguments = include_arguments
        self.include_results = include_results
        self.timeout = timeout

    async def __call__(self, invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        """Run the call, then record its outcome (also when the round is aborted)."""
        try:
            outcome = await proceed(invocation)
        except Exception as exc:  # a "raise" policy aborts the round: still on the record
            await self._write(invocation, None, exc)
            raise
        await self._write(invocation, outcome, outcome.exception)
        return outcome

    def record(
        self,
        invocation: ToolInvocation,
        outcome: ToolCallOutcome | None,
        error: BaseException | None = None,
    ) -> AuditRecord:
        """The record of ``invocation`` ending in ``outcome`` (``None``: it raised ``error``)."""
        arguments: Mapping[str, Any] = invocation.arguments.values
        if outcome is not None and outcome.edited_arguments is not None:
            arguments = json.loads(outcome.edited_arguments)
        context = invocation.context
        whole = None if outcome is None else outcome.result_text
        return AuditRecord(
            timestamp=datetime.now(UTC),
            call_id=invocation.call.id,
            tool=invocation.tool_name,
            tenant_id=_text(context.tenant_id),
            user_id=_text(context.user_id),
            arguments_sha256=arguments_digest(arguments),
            arguments=arguments if self.include_arguments else None,
            status=ToolCallStatus.ERROR if outcome is None else outcome.status,
            duration_ms=0.0 if outcome is None else outcome.duration_ms,
            approval=None if outcome is None else outcome.approval,
            replayed=False if outcome is None else outcome.replayed,
            idempotency_key=None if outcome is None else outcome.idempotency_key,
            error=None if error is None else type(error).__name__,
            result_chars=0 if whole is None else len(whole),
            truncated=outcome is not None and outcome.truncated,
            result=whole if self.include_results else None,
        )

    async def _write(
        self,
        invocation: ToolInvocation,
        outcome: ToolCallOutcome | None,
        error: BaseException | None,
    ) -> None:
        call_id = invocation.call.id
        try:
            record = self.record(invocation, outcome, error)
            if self.timeout is None:
                await self.sink.write(record)
                return
            async with asyncio.timeout(self.timeout):
                await self.sink.write(record)
        except TimeoutError:
            _log.error(
                "audit sink %s did not write the record of call %r within %g s; the call goes "
                "on without it",
                type(self.sink).__name__,
                call_id,
                self.timeout,
            )
        except (KeyboardInterrupt, MemoryError):
            raise
        except BaseException as exc:
            task = asyncio.current_task()
            if isinstance(exc, asyncio.CancelledError) and task is not None and task.cancelling():
                raise  # the round is being cancelled from outside
            # Whatever it raised (SystemExit, a CancelledError of its own...): the call has
            # its outcome already, and keeps it.
            _log.error(
                "audit sink %s failed to write the record of call %r",
                type(self.sink).__name__,
                call_id,
                exc_info=exc,
            )


def _text(value: object) -> str | None:
    return None if value is None else str(value)
