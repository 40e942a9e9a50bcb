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
    saved = response.approval.to_json()

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

A decision binds to exactly one call and to what it was shown:

- call ids are unique within a turn (the loop renames ids a model repeats), so a decision
  by id names one call;
- a state is consistent or refused: each waiting call is the model's call in that slot, and
  the arguments it shows are that call's arguments (a state edited to show one refund and
  run another is a :class:`~toolrelay.exceptions.LoadError`);
- a decision keyed by the :class:`PendingApproval` itself (``{pending: Approve()}``) applies
  only if the state being resumed holds that very call, arguments included;
- a decision applies only to a call that still resolves to the tool it named; otherwise the
  call is asked about again;
- the state belongs to its conversation, scoped by tenant
  (:mod:`~toolrelay.client._conversations`): resuming it under another is refused.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from toolrelay._storable import json_text
from toolrelay.exceptions import ConfigurationError, LoadError, ToolRelayError
from toolrelay.execution import ApprovalStatus, ToolCallOutcome, ToolCallStatus, ToolExecutionResult
from toolrelay.execution._approval import ResumedRound
from toolrelay.execution._arguments import parse_arguments
from toolrelay.execution._audit import arguments_digest
from toolrelay.execution._result import ApprovalDecision
from toolrelay.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResponse,
    Usage,
    message_from_dict,
    message_to_dict,
)

__all__ = [
    "APPROVAL_STATE_FORMAT",
    "ApprovalState",
    "Decisions",
    "PendingApproval",
    "Resumption",
]

APPROVAL_STATE_FORMAT = "toolrelay.approval_state/2"
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

    def __hash__(self) -> int:
        return hash((self.call, self.tool_name))

    @property
    def call_id(self) -> str:
        """The id decisions are given by (unique within the turn)."""
        return self.call.id

    def shows(self, other: PendingApproval) -> bool:
        """Whether ``other`` is this very call, with the same tool and arguments."""
        return (
            self.call == other.call
            and self.tool_name == other.tool_name
            and arguments_digest(self.arguments) == arguments_digest(other.arguments)
        )


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
        conversation: The key of the conversation the turn belongs to, scoped by tenant
            (:func:`~toolrelay.client._conversations.scoped_key`); a resume under another is
            refused. ``None`` binds to none (a state built by hand).

    Raises:
        ConfigurationError: The state is inconsistent: call ids repeat, or the waiting calls
            are not the assistant's unanswered calls with their own arguments.
    """

    history: tuple[Message, ...]
    assistant: AssistantMessage
    answered: tuple[ToolCallOutcome | None, ...]
    pending: tuple[PendingApproval, ...]
    model_calls: int
    usage: Usage = field(default_factory=Usage)
    conversation: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "history", tuple(self.history))
        object.__setattr__(self, "answered", tuple(self.answered))
        object.__setattr__(self, "pending", tuple(self.pending))
        self._check()

    def _check(self) -> None:
        """Refuse a state that would show a person one call and run another."""
        calls = self.assistant.tool_calls
        ids = [c.id for c in calls]
        if len(self.answered) != len(calls):
            raise ConfigurationError(
                f"an approval state needs one answer slot per call: {len(calls)} calls, "
                f"{len(self.answered)} slots"
            )
        if "" in ids or len(set(ids)) != len(ids):
            raise ConfigurationError(f"the calls of an approval state repeat ids: {ids}")
        for call, outcome in zip(calls, self.answered, strict=True):
            if outcome is not None and outcome.call != call:
                raise ConfigurationError(f"call {call.id!r} is answered by another call")
        waiting = [c for c, a in zip(calls, self.answered, strict=True) if a is None]
        if [p.call for p in self.pending] != waiting:
            raise ConfigurationError(
                "the pending approvals are not the calls waiting in the assistant's message: "
                f"{[p.call_id for p in self.pending]} against {[c.id for c in waiting]}"
            )
        for pending in self.pending:
            try:
                actual = parse_arguments(pending.call.name, pending.call.arguments).values
            except ToolRelayError as exc:
                raise ConfigurationError(f"pending call {pending.call_id!r}: {exc}") from exc
            if arguments_digest(pending.arguments) != arguments_digest(actual):
                raise ConfigurationError(
                    f"pending call {pending.call_id!r} shows arguments "
                    f"{dict(pending.arguments)} but would run with {dict(actual)}"
                )

    @classmethod
    def of(
        cls,
        result: ToolExecutionResult,
        *,
        history: Sequence[Message],
        model_calls: int,
        usage: Usage,
        conversation: str | None,
    ) -> ApprovalState:
        """The state of a turn whose round ``result`` has calls waiting for approval."""
        assistant = result.conversation_history[-2]
        assert isinstance(assistant, AssistantMessage)  # the manager puts it before the answers
        waiting = ToolCallStatus.PENDING_APPROVAL
        return cls(
            history=tuple(history),
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
            model_calls=model_calls,
            usage=usage,
            conversation=conversation,
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
            "conversation": self.conversation,
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
                conversation=_text_or_none(data["conversation"]),
            )
        except ConfigurationError as exc:
            raise LoadError("approval state", f"refused: {exc}") from exc
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


Decisions = (
    Mapping[str, ApprovalDecision]
    | Mapping[PendingApproval, ApprovalDecision]
    | Mapping[str | PendingApproval, ApprovalDecision]
)
"""People's decisions, by call id or by the :class:`PendingApproval` they were shown."""


@dataclass(frozen=True, kw_only=True)
class Resumption:
    """A stopped turn and the decisions that continue it (a request's ``resume``).

    Attributes:
        state: The stopped turn.
        decisions: As given: by call id, or by the :class:`PendingApproval` shown.
        by_call_id: The decisions by call id, once checked.

    Raises:
        ConfigurationError: A decision names a call that is not waiting, names one twice,
            is keyed by a :class:`PendingApproval` the state does not hold as it was shown,
            or is not ``Approve``/``Deny``.
    """

    state: ApprovalState
    decisions: Decisions = field(default_factory=dict)
    by_call_id: Mapping[str, ApprovalDecision] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        waiting = {p.call_id: p for p in self.state.pending}
        by_id: dict[str, ApprovalDecision] = {}
        given: list[tuple[str | PendingApproval, ApprovalDecision]] = list(self.decisions.items())
        for key, decision in given:
            call_id = key.call_id if isinstance(key, PendingApproval) else key
            held = waiting.get(call_id)
            if held is None:
                raise ConfigurationError(
                    f"a decision names call {call_id!r}, which is not waiting for approval; "
                    f"waiting: {sorted(waiting)}"
                )
            if isinstance(key, PendingApproval) and not held.shows(key):
                raise ConfigurationError(
                    f"the decision for call {call_id!r} was made about {key.tool_name} with "
                    f"{dict(key.arguments)}, but the state resumed holds {held.tool_name} with "
                    f"{dict(held.arguments)}: a decision applies only to the call it was shown"
                )
            if call_id in by_id:
                raise ConfigurationError(f"two decisions name call {call_id!r}")
            by_id[call_id] = decision
        object.__setattr__(self, "by_call_id", MappingProxyType(by_id))
        self.round()  # checks the decisions' types

    def round(self) -> ResumedRound:
        """The waiting round, as the execution manager resumes it."""
        return ResumedRound(
            calls=self.state.assistant.tool_calls,
            answered=self.state.answered,
            decisions=self.by_call_id,
            tool_names={p.call_id: p.tool_name for p in self.state.pending},
        )


# --- JSON of calls and outcomes --------------------------------------------------------------


def _text_or_none(value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"'conversation' must be text or null, not {value!r}")
    return value


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
        "recorded_result": outcome.recorded_result,
        "recorded_at": outcome.recorded_at,
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
        recorded_result=data.get("recorded_result"),
        recorded_at=None if data.get("recorded_at") is None else float(data["recorded_at"]),
    )
