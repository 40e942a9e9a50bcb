"""What one round of tool execution produced: per-call outcomes and the new history."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeAlias

from toolrelay.messages import (
    AssistantMessage,
    Generation,
    Message,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
)

__all__ = [
    "RETURN_DIRECT_FINISH_REASON",
    "ApprovalDecision",
    "ApprovalStatus",
    "ApprovalVerdict",
    "Approve",
    "Defer",
    "Deny",
    "ToolCallOutcome",
    "ToolCallStatus",
    "ToolExecutionResult",
]

RETURN_DIRECT_FINISH_REASON = "returnDirect"
"""Finish reason of the generations built by :meth:`ToolExecutionResult.build_generations`."""


class ToolCallStatus(StrEnum):
    """How one call ended. Every status except ``OK`` produces an error tool response."""

    OK = "ok"
    """The tool ran and returned a result."""
    ERROR = "error"
    """The tool raised; the exception processor's text is the response."""
    UNKNOWN_TOOL = "unknown_tool"
    """No tool answers to the name; the closest names are suggested."""
    INVALID_ARGUMENTS = "invalid_arguments"
    """The arguments were not a JSON object or did not fit the schema; the tool did not run."""
    TIMEOUT = "timeout"
    """The tool ran past its timeout and was cancelled (or waited that long for a thread)."""
    DENIED = "denied"
    """An interceptor (authorization, visibility, approval) refused the call; it did not run."""
    LIMIT = "limit"
    """The call went over a per-turn call limit; the tool did not run."""
    PENDING_APPROVAL = "pending_approval"
    """A person must approve the call first; the tool did not run (yet)."""
    IDEMPOTENCY_CONFLICT = "idempotency_conflict"
    """The call's idempotency key was already used by a call with other arguments; the tool
    did not run, and the earlier call's record is left as it was."""


class ApprovalStatus(StrEnum):
    """What an approval decided about a call (``None`` on an outcome: none was needed)."""

    APPROVED = "approved"
    """Approved with the model's arguments."""
    EDITED = "edited"
    """Approved with changed arguments (see ``ToolCallOutcome.edited_arguments``)."""
    DENIED = "denied"
    """Refused; the tool did not run."""
    PENDING = "pending"
    """Deferred to a person; the tool did not run (yet)."""


@dataclass(frozen=True, kw_only=True)
class ToolCallOutcome:
    """The outcome of one tool call.

    Attributes:
        call: The call as the model wrote it.
        tool_name: The canonical name of the tool it resolved to, or ``None``.
        response: What the model reads.
        status: How the call ended.
        duration_ms: Wall-clock time the tool ran (``time.perf_counter``), waiting for a
            concurrency slot excluded; ``0.0`` when the tool did not run.
        exception: The exception behind an ``ERROR`` or ``INVALID_ARGUMENTS`` outcome, for
            logging and tracing (not part of equality).
        approval: What an approval decided, or ``None`` when the call needed none.
        edited_arguments: The JSON text the tool ran with when an approval changed the
            model's arguments; ``None`` otherwise.
        replayed: The response is a result recorded earlier under the call's idempotency
            key; the tool did not run again.
        idempotency_key: The key the call was checked against, when its tool declares one.
        result_unknown: Whether the tool did its work is unknown: it timed out while running
            (an ``async`` tool was cancelled part-way, a synchronous one may still finish),
            or, for an idempotent call answered without running, an identical earlier call
            did so and its outcome is still unknown.
        late_result: For a synchronous tool still running after its call timed out: its
            text, once the function returns (or its exception). Not part of equality.
        full_result: The whole text the tool produced (its result, or its error text) when
            ``response`` holds only its start because it was longer than the call's bound
            (``max_result_chars``, see :attr:`truncated`); ``None`` when the response is
            whole. Kept for the application; the model never reads it.
        recorded_result: For a ``replayed`` call, the result text recorded by the original
            run, exactly (``response.data`` starts with a line telling the model the call was
            not run again).
        recorded_at: When the call holding the idempotency key ran (seconds since the epoch):
            the original run of a ``replayed`` call, or the earlier call of an
            ``IDEMPOTENCY_CONFLICT`` or of an unknown outcome; ``None`` otherwise.
    """

    call: ToolCall
    tool_name: str | None
    response: ToolResponse
    status: ToolCallStatus
    duration_ms: float = 0.0
    exception: Exception | None = field(default=None, compare=False, repr=False)
    approval: ApprovalStatus | None = None
    edited_arguments: str | None = None
    replayed: bool = False
    idempotency_key: str | None = None
    result_unknown: bool = False
    late_result: concurrent.futures.Future[str] | None = field(
        default=None, compare=False, repr=False
    )
    full_result: str | None = field(default=None, repr=False)
    recorded_result: str | None = None
    recorded_at: float | None = None

    @property
    def ok(self) -> bool:
        """Whether the tool ran and returned a result."""
        return self.status is ToolCallStatus.OK

    @property
    def truncated(self) -> bool:
        """Whether the model read only the start of the tool's text (see ``full_result``)."""
        return self.full_result is not None

    @property
    def result_text(self) -> str:
        """The tool's whole text: ``full_result`` when the response was cut, else its data."""
        return self.response.data if self.full_result is None else self.full_result


@dataclass(frozen=True, kw_only=True)
class ToolExecutionResult:
    """The result of one round (Spring AI's ``ToolExecutionResult``).

    Attributes:
        conversation_history: The prompt's messages, the assistant message with the calls, and
            one :class:`~toolrelay.messages.ToolResponseMessage` answering every call in order.
        return_direct: Whether the tool results are the final answer (the loop should not ask
            the model again). True only when every call of the round resolved to a tool whose
            metadata says ``return_direct`` and that call succeeded: Spring AI's rule (an AND
            over the round's tools), made strict so that a failed or unknown call always goes
            back to the model instead of being shown to the user.
        outcomes: One entry per call, in the order of the calls.
    """

    conversation_history: tuple[Message, ...]
    return_direct: bool = False
    outcomes: tuple[ToolCallOutcome, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "conversation_history", tuple(self.conversation_history))
        object.__setattr__(self, "outcomes", tuple(self.outcomes))

    @property
    def tool_response_message(self) -> ToolResponseMessage | None:
        """The last message of the history when it holds the tool responses."""
        last = self.conversation_history[-1] if self.conversation_history else None
        return last if isinstance(last, ToolResponseMessage) else None

    @property
    def pending(self) -> tuple[ToolCallOutcome, ...]:
        """The outcomes of the calls waiting for a person's approval, in call order."""
        return tuple(o for o in self.outcomes if o.status is ToolCallStatus.PENDING_APPROVAL)

    @property
    def responses(self) -> tuple[ToolResponse, ...]:
        """The tool responses of the round, in the order of the calls."""
        message = self.tool_response_message
        return message.responses if message is not None else ()

    def build_generations(self) -> tuple[Generation, ...]:
        """One generation per tool response, for returning tool results as the answer.

        Each has the response's text as its message, finish reason ``"returnDirect"`` and
        metadata ``{"tool_id": ..., "tool_name": ...}``.
        """
        return tuple(
            Generation(
                message=AssistantMessage(text=response.data),
                finish_reason=RETURN_DIRECT_FINISH_REASON,
                metadata={"tool_id": response.id, "tool_name": response.name},
            )
            for response in self.responses
        )


@dataclass(frozen=True, kw_only=True)
class Approve:
    """Run the call.

    Attributes:
        arguments: Replacement arguments (a JSON object); ``None`` keeps the model's.
    """

    arguments: Mapping[str, Any] | None = None


@dataclass(frozen=True)  # positional too: ``Deny("Refunds need a lead's approval.")``
class Deny:
    """Do not run the call.

    Attributes:
        reason: What the model reads; empty for the standard denial text.
    """

    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class Defer:
    """Leave the decision to a person; the tool loop stops with ``"approvalRequired"``."""


ApprovalDecision: TypeAlias = Approve | Deny
"""A person's decision about a pending call."""

ApprovalVerdict: TypeAlias = Approve | Deny | Defer
"""What an approval handler answers."""
