"""Deferred approval: the tool loop stops for a person's decision and resumes the turn later.

When an :class:`~toolrelay.execution.ApprovalInterceptor` defers calls (no handler, or one
answering :class:`~toolrelay.execution.Defer`), the loop ends the turn with finish reason
``"approvalRequired"``. The answer names the waiting calls, and its :class:`ApprovalState`
holds what continuing the same turn needs: the conversation so far, the model's message with
the round's calls, the answers of the calls that did not wait, the waiting calls and the
turn's counters. It survives a JSON round trip, so another process may continue::

    response = client.prompt("Retry refund r-1").call()
    for pending in response.pending_approvals:
        print(pending.call_id, pending.tool_name, pending.arguments)
    saved = response.approval_state.to_json()

    # later, anywhere: a client with the same tools and interceptors
    state = ApprovalState.from_json(saved)
    decisions = {"call_1": Approve(arguments={"refund_id": "r-1", "amount": 40})}
    answer = client.prompt().resume(state, decisions).call().content()

A resumed turn runs the waiting round again without asking the model: answered calls keep
their answers, each pending call gets its decision (``Approve()``, ``Approve(arguments=...)``
or ``Deny(reason)``), a pending call without one is asked about again (and may wait again),
and the loop goes on as usual. The waiting round's request is rebuilt with the loop's
``before_call`` hook (so a subclass shows the same tools), but the model is not called for
it. The state carries neither tools nor the tool context: resume with the same tools and
interceptors, the same tool context and the same advisor parameters (conversation id).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from toolrelay._storable import json_text
from toolrelay.client.requests import ChatClientRequest, ChatClientResponse
from toolrelay.client.tool_loop import APPROVAL_REQUIRED_FINISH_REASON, ToolLoopState
from toolrelay.exceptions import ConfigurationError, LoadError
from toolrelay.execution import (
    ApprovalDecision,
    ApprovalStatus,
    ResumedRound,
    ToolCallOutcome,
    ToolCallStatus,
    ToolExecutionResult,
    parse_arguments,
)
from toolrelay.messages import (
    AssistantMessage,
    ChatResponse,
    Generation,
    Message,
    ToolCall,
    ToolResponse,
    Usage,
    message_from_dict,
    message_to_dict,
)

__all__ = [
    "APPROVAL_STATE_FORMAT",
    "APPROVAL_STATE_KEY",
    "RESUME_KEY",
    "ApprovalState",
    "PendingApproval",
    "Resumption",
    "approval_required",
    "approval_state",
    "resumption_of",
]

APPROVAL_STATE_KEY = "toolrelay.approval_state"
"""Response context key of the :class:`ApprovalState` of a turn waiting for approval."""
RESUME_KEY = "toolrelay.resume"
"""Request context key of the :class:`Resumption` that continues a turn."""
APPROVAL_STATE_FORMAT = "toolrelay.approval_state/1"
"""The ``format`` entry of a serialised state; other formats are refused."""


@dataclass(frozen=True, kw_only=True)
class PendingApproval:
    """A call waiting for a person's decision.

    Attributes:
        call: The call as the model wrote it.
        tool_name: The canonical name of its tool.
        arguments: The model's arguments, parsed.
        idempotency_key: The call's idempotency key, when its tool declares one (calls
            sharing a key are one operation: approving one is enough).
    """

    call: ToolCall
    tool_name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    idempotency_key: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "arguments", MappingProxyType(dict(self.arguments)))

    @property
    def call_id(self) -> str:
        """The id decisions are given by."""
        return self.call.id


@dataclass(frozen=True, kw_only=True)
class ApprovalState:
    """A turn stopped for approval, ready to be resumed (see the module docs).

    Attributes:
        history: The turn's messages before the waiting round.
        assistant: The model's message with the waiting round's calls.
        answered: Per call of that message, its answer, or ``None`` while it waits.
        pending: The waiting calls, in call order.
        model_calls: Model calls made in the turn so far (they count towards the limit).
        usage: Usage summed over the turn so far.
    """

    history: tuple[Message, ...]
    assistant: AssistantMessage
    answered: tuple[ToolCallOutcome | None, ...]
    pending: tuple[PendingApproval, ...]
    model_calls: int
    usage: Usage = field(default_factory=Usage)

    def __post_init__(self) -> None:
        object.__setattr__(self, "history", tuple(self.history))
        object.__setattr__(self, "answered", tuple(self.answered))
        object.__setattr__(self, "pending", tuple(self.pending))

    @classmethod
    def of(cls, state: ToolLoopState, result: ToolExecutionResult) -> ApprovalState:
        """The state of a turn whose round ``result`` has calls waiting for approval."""
        assistant = result.conversation_history[-2]
        assert isinstance(assistant, AssistantMessage)  # the manager puts it before the answers
        waiting = ToolCallStatus.PENDING_APPROVAL
        return cls(
            history=tuple(state.history),
            assistant=assistant,
            answered=tuple(None if o.status is waiting else o for o in result.outcomes),
            pending=tuple(
                PendingApproval(
                    call=o.call,
                    tool_name=o.tool_name or o.call.name,
                    arguments=parse_arguments(o.call.name, o.call.arguments).values,
                    idempotency_key=o.idempotency_key,
                )
                for o in result.pending
            ),
            model_calls=state.model_calls,
            usage=state.usage,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (see :meth:`from_dict`)."""
        return {
            "format": APPROVAL_STATE_FORMAT,
            "history": [message_to_dict(m) for m in self.history],
            "assistant": message_to_dict(self.assistant),
            "answered": [None if o is None else _outcome_to_dict(o) for o in self.answered],
            "pending": [
                {
                    "call": _call_to_dict(p.call),
                    "tool_name": p.tool_name,
                    "arguments": dict(p.arguments),
                    "idempotency_key": p.idempotency_key,
                }
                for p in self.pending
            ],
            "model_calls": self.model_calls,
            "usage": dataclasses.asdict(self.usage),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ApprovalState:
        """Rebuild a state from :meth:`to_dict` output.

        Raises:
            LoadError: The data is not a state of this format.
        """
        if not isinstance(data, Mapping) or data.get("format") != APPROVAL_STATE_FORMAT:
            raise LoadError("approval state", f"not a {APPROVAL_STATE_FORMAT!r} object")
        try:
            assistant = message_from_dict(data["assistant"])
            if not isinstance(assistant, AssistantMessage):
                raise ValueError("'assistant' is not an assistant message")
            return cls(
                history=tuple(message_from_dict(m) for m in data["history"]),
                assistant=assistant,
                answered=tuple(
                    None if o is None else _outcome_from_dict(o) for o in data["answered"]
                ),
                pending=tuple(
                    PendingApproval(
                        call=_call_from_dict(p["call"]),
                        tool_name=p["tool_name"],
                        arguments=p["arguments"],
                        idempotency_key=p.get("idempotency_key"),
                    )
                    for p in data["pending"]
                ),
                model_calls=int(data["model_calls"]),
                usage=Usage(**data["usage"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise LoadError("approval state", f"malformed: {exc!r}") from exc

    def to_json(self) -> str:
        """The state as JSON text (valid UTF-8: a model's lone surrogates are escaped)."""
        return json_text(self.to_dict())

    @classmethod
    def from_json(cls, text: str) -> ApprovalState:
        """Rebuild a state from :meth:`to_json` output.

        Raises:
            LoadError: The text is not JSON, or not a state of this format.
        """
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise LoadError("approval state", f"not JSON: {exc}") from exc
        return cls.from_dict(data)


@dataclass(frozen=True, kw_only=True)
class Resumption:
    """A stopped turn and the decisions that continue it (in the request context).

    Raises:
        ConfigurationError: A decision names a call that is not waiting, or is not
            ``Approve``/``Deny``.
    """

    state: ApprovalState
    decisions: Mapping[str, ApprovalDecision] = field(default_factory=dict)

    def __post_init__(self) -> None:
        waiting = {p.call_id for p in self.state.pending}
        unknown = sorted(set(self.decisions) - waiting)
        if unknown:
            raise ConfigurationError(
                f"decisions name calls that are not waiting for approval: {unknown}; "
                f"waiting: {sorted(waiting)}"
            )
        object.__setattr__(self, "decisions", MappingProxyType(dict(self.decisions)))
        self.round()  # checks the decisions' types

    def round(self) -> ResumedRound:
        """The waiting round, as the execution manager resumes it."""
        return ResumedRound(
            calls=self.state.assistant.tool_calls,
            answered=self.state.answered,
            decisions=self.decisions,
        )

    def restore(self, state: ToolLoopState) -> None:
        """Put the stopped turn's history and counters back into ``state``."""
        state.history = list(self.state.history)
        state.model_calls = self.state.model_calls
        state.usage = self.state.usage

    def response(self, request: ChatClientRequest) -> ChatClientResponse:
        """The model answer that asked for the waiting round (its usage is counted already)."""
        generation = Generation(message=self.state.assistant)
        return ChatClientResponse(
            chat_response=ChatResponse(generations=(generation,)), context=request.context
        )


def resumption_of(request: ChatClientRequest) -> Resumption | None:
    """The resumption a request carries, if any."""
    value = request.context.get(RESUME_KEY)
    return value if isinstance(value, Resumption) else None


def approval_required(response: ChatClientResponse, state: ApprovalState) -> ChatClientResponse:
    """The answer of a turn stopped for approval: finish reason ``"approvalRequired"``."""
    waiting = ", ".join(f"{p.tool_name} (call {p.call_id})" for p in state.pending)
    generation = Generation(
        message=AssistantMessage(text=f"Waiting for approval: {waiting}."),
        finish_reason=APPROVAL_REQUIRED_FINISH_REASON,
    )
    answer = dataclasses.replace(response.chat_response, generations=(generation,))
    return response.with_chat_response(answer).with_context(**{APPROVAL_STATE_KEY: state})


def approval_state(response: ChatClientResponse) -> ApprovalState | None:
    """The state in ``response``'s context when its turn waits for approval, else ``None``."""
    value = response.context.get(APPROVAL_STATE_KEY)
    return value if isinstance(value, ApprovalState) else None


# --- JSON of calls and outcomes --------------------------------------------------------------


def _call_to_dict(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "arguments": call.arguments}


def _call_from_dict(data: Mapping[str, Any]) -> ToolCall:
    return ToolCall(id=data["id"], name=data["name"], arguments=data.get("arguments", ""))


def _outcome_to_dict(outcome: ToolCallOutcome) -> dict[str, Any]:
    response = outcome.response
    return {
        "call": _call_to_dict(outcome.call),
        "tool_name": outcome.tool_name,
        "response": {
            "id": response.id,
            "name": response.name,
            "data": response.data,
            "is_error": response.is_error,
        },
        "status": outcome.status.value,
        "duration_ms": outcome.duration_ms,
        "approval": None if outcome.approval is None else outcome.approval.value,
        "edited_arguments": outcome.edited_arguments,
        "replayed": outcome.replayed,
        "idempotency_key": outcome.idempotency_key,
    }


def _outcome_from_dict(data: Mapping[str, Any]) -> ToolCallOutcome:
    response = data["response"]
    approval = data.get("approval")
    return ToolCallOutcome(
        call=_call_from_dict(data["call"]),
        tool_name=data.get("tool_name"),
        response=ToolResponse(
            id=response["id"],
            name=response["name"],
            data=response["data"],
            is_error=bool(response.get("is_error")),
        ),
        status=ToolCallStatus(data["status"]),
        duration_ms=float(data.get("duration_ms", 0.0)),
        approval=None if approval is None else ApprovalStatus(approval),
        edited_arguments=data.get("edited_arguments"),
        replayed=bool(data.get("replayed")),
        idempotency_key=data.get("idempotency_key"),
    )
