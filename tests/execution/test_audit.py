"""Audit: one record per call that reaches the interceptors, to pluggable sinks."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import (
    ApprovalInterceptor,
    ApprovalStatus,
    Approve,
    AuditInterceptor,
    AuditRecord,
    AuditSink,
    DefaultToolExceptionProcessor,
    Deny,
    IdempotencyInterceptor,
    JsonLinesAuditSink,
    LoggingAuditSink,
    ToolCallingManager,
    ToolCallStatus,
    ToolExecutionResult,
    ToolInvocation,
)
from toolrelay.execution._audit import DEFAULT_AUDIT_TIMEOUT, arguments_digest
from toolrelay.messages import ToolCall, UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import tool_call_response
from toolrelay.tools import FunctionTool, tool


@tool(name="payments.refund", requires_approval=True, idempotency_key=["payment_id"])
def refund(payment_id: str, amount: int) -> str:
    """Refund a payment.

    Args:
        payment_id: The payment.
        amount: Cents.
    """
    if amount < 0:
        raise ValueError("amount must not be negative")
    return f"refunded {amount} of {payment_id}"


class ListSink:
    def __init__(self) -> None:
        self.records: list[AuditRecord] = []

    async def write(self, record: AuditRecord) -> None:
        self.records.append(record)


class Approver:
    def __init__(self, verdict: Any) -> None:
        self.verdict = verdict

    async def __call__(self, request: ToolInvocation, /) -> Any:
        return self.verdict


CONTEXT = {"tenant_id": "acme", "user_id": 42, "api_key": "never logged"}


async def run(
    audit: AuditInterceptor,
    *calls: tuple[str, dict[str, Any]],
    approval: ApprovalInterceptor | None = None,
    **kwargs: Any,
) -> ToolExecutionResult:
    """A round of ``calls`` audited by ``audit``; refunds are approved unless ``approval``."""
    if approval is None:
        approval = ApprovalInterceptor(Approver(Approve()))
    manager = ToolCallingManager(audit=audit, approval=approval, **kwargs)
    prompt = Prompt(
        messages=(UserMessage(text="refund"),),
        options=ChatOptions(tools=(FunctionTool.from_function(refund),), tool_context=CONTEXT),
    )
    response = tool_call_response(
        *(ToolCall(id=f"c{i}", name=n, arguments=json.dumps(a)) for i, (n, a) in enumerate(calls))
    )
    return await manager.execute_tool_calls(prompt, response)


ARGS = {"payment_id": "p-1", "amount": 250}


def expected_digest(arguments: dict[str, Any]) -> str:
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


async def test_a_record_holds_who_what_and_how_but_only_a_digest_of_the_arguments() -> None:
    sink = ListSink()
    await run(
        AuditInterceptor(sink),
        ("payments.refund", ARGS),
        approval=ApprovalInterceptor(Approver(Approve())),
    )
    (record,) = sink.records
    assert isinstance(sink, AuditSink)
    assert record.call_id == "c0"
    assert record.tool == "payments.refund"
    assert (record.tenant_id, record.user_id) == ("acme", "42")
    assert record.arguments_sha256 == expected_digest(ARGS)
    assert record.arguments is None
    assert record.status is ToolCallStatus.OK
    assert record.approval is ApprovalStatus.APPROVED
    assert record.duration_ms >= 0.0
    assert record.timestamp.tzinfo is UTC
    assert record.error is None
    assert "never logged" not in json.dumps(record.to_dict())


async def test_full_arguments_only_when_asked_for() -> None:
    sink = ListSink()
    await run(AuditInterceptor(sink, include_arguments=True), ("payments.refund", ARGS))
    (record,) = sink.records
    assert dict(record.arguments or {}) == ARGS
    assert record.to_dict()["arguments"] == ARGS
    assert record.approval is ApprovalStatus.APPROVED  # the tool requires it: always asked


async def test_edited_arguments_are_the_ones_recorded() -> None:
    sink = ListSink()
    edited = {"payment_id": "p-1", "amount": 100}
    await run(
        AuditInterceptor(sink, include_arguments=True),
        ("payments.refund", ARGS),
        approval=ApprovalInterceptor(Approver(Approve(arguments=edited))),
    )
    (record,) = sink.records
    assert record.approval is ApprovalStatus.EDITED
    assert record.arguments_sha256 == expected_digest(edited)
    assert dict(record.arguments or {}) == edited


async def test_denials_deferrals_replays_and_failures_are_recorded() -> None:
    sink = ListSink()
    await run(
        AuditInterceptor(sink),
        ("payments.refund", ARGS),
        approval=ApprovalInterceptor(Approver(Deny("no"))),
    )
    await run(AuditInterceptor(sink), ("payments.refund", ARGS), approval=ApprovalInterceptor())
    idempotency = IdempotencyInterceptor()
    approve = ApprovalInterceptor(Approver(Approve()))
    await run(
        AuditInterceptor(sink),
        ("payments.refund", ARGS),
        ("payments.refund", ARGS),
        approval=approve,
        idempotency=idempotency,
    )
    await run(
        AuditInterceptor(sink),
        ("payments.refund", {"payment_id": "p-2", "amount": -1}),
        approval=approve,
    )
    summary = [(r.status, r.approval, r.replayed, r.error) for r in sink.records]
    assert summary[:2] == [
        (ToolCallStatus.DENIED, ApprovalStatus.DENIED, False, None),
        (ToolCallStatus.PENDING_APPROVAL, ApprovalStatus.PENDING, False, None),
    ]
    assert sorted(summary[2:4], key=lambda s: s[2]) == [
        (ToolCallStatus.OK, ApprovalStatus.APPROVED, False, None),
        (ToolCallStatus.OK, None, True, None),
    ]
    assert summary[4] == (ToolCallStatus.ERROR, ApprovalStatus.APPROVED, False, "ValueError")
    assert all(r.idempotency_key is not None for r in sink.records[2:4])


async def test_a_round_aborted_by_a_tool_is_still_recorded() -> None:
    sink = ListSink()
    with pytest.raises(ValueError, match="negative"):
        await run(
            AuditInterceptor(sink),
            ("payments.refund", {"payment_id": "p-1", "amount": -1}),
            exception_processor=DefaultToolExceptionProcessor(rethrow=[ValueError]),
        )
    (record,) = sink.records
    assert (record.status, record.error) == (ToolCallStatus.ERROR, "ValueError")


async def test_calls_that_never_reach_a_tool_are_not_recorded() -> None:
    sink = ListSink()
    result = await run(AuditInterceptor(sink), ("payments.refnd_all", {}))
    assert result.outcomes[0].status is ToolCallStatus.UNKNOWN_TOOL
    assert sink.records == []


def test_the_digest_ignores_key_order_and_spacing() -> None:
    assert arguments_digest({"b": 1, "a": [1, "é"]}) == arguments_digest({"a": [1, "é"], "b": 1})
    assert arguments_digest({"a": 1}) != arguments_digest({"a": 2})
    assert arguments_digest({"a": "é"}) == expected_digest({"a": "é"})


async def test_json_lines_sink_appends_one_object_per_record(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "audit.jsonl"
    sink = JsonLinesAuditSink(path)
    await run(AuditInterceptor(sink), ("payments.refund", ARGS), ("payments.refund", ARGS))
    await run(AuditInterceptor(sink), ("payments.refund", ARGS))
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3
    rows = [json.loads(line) for line in lines]
    assert {row["tool"] for row in rows} == {"payments.refund"}
    assert {row["status"] for row in rows} == {"ok"}
    assert rows[0]["tenant_id"] == "acme"
    assert datetime.fromisoformat(rows[0]["timestamp"]).tzinfo is not None


async def test_text_utf8_cannot_encode_is_recorded_as_json_escapes(tmp_path: Path) -> None:
    # A model's lone surrogates in the call id and the arguments, and one in the context.
    path = tmp_path / "audit.jsonl"
    sink = AuditInterceptor(JsonLinesAuditSink(path), include_arguments=True)
    manager = ToolCallingManager(audit=sink, approval=Approver(Approve()))
    prompt = Prompt(
        messages=(UserMessage(text="refund"),),
        options=ChatOptions(
            tools=(FunctionTool.from_function(refund),), tool_context={"user_id": "u\udc00"}
        ),
    )
    call = ToolCall(
        id="c\ud83d", name="payments.refund", arguments='{"payment_id": "p\\ud83d", "amount": 1}'
    )
    result = await manager.execute_tool_calls(prompt, tool_call_response(call))
    assert result.outcomes[0].ok
    line = path.read_text(encoding="utf-8")
    assert "\\ud83d" in line  # an escape: the file is valid UTF-8
    row = json.loads(line)
    assert (row["call_id"], row["user_id"]) == ("c\ud83d", "u\udc00")
    assert row["arguments"] == {"payment_id": "p\ud83d", "amount": 1}
    assert row["arguments_sha256"] == arguments_digest({"payment_id": "p\ud83d", "amount": 1})


async def test_logging_sink_logs_the_record(caplog: pytest.LogCaptureFixture) -> None:
    sink = LoggingAuditSink("tests.audit")
    with caplog.at_level(logging.INFO, logger="tests.audit"):
        await run(AuditInterceptor(sink), ("payments.refund", ARGS))
    (logged,) = [r for r in caplog.records if r.name == "tests.audit"]
    assert json.loads(logged.getMessage())["tool"] == "payments.refund"
    assert logged.toolrelay_audit["arguments_sha256"] == expected_digest(ARGS)


async def test_a_failing_sink_is_logged_and_the_call_keeps_its_result(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Broken:
        async def write(self, record: AuditRecord) -> None:
            raise OSError("disk full")

    with caplog.at_level(logging.ERROR, logger="toolrelay.execution._audit"):
        result = await run(AuditInterceptor(Broken()), ("payments.refund", ARGS))
    assert result.outcomes[0].ok
    assert any("failed to write" in r.getMessage() for r in caplog.records)


class NotAnException(BaseException):
    """A ``BaseException`` that is none of the standard ones."""


@pytest.mark.parametrize(
    "raised", [SystemExit(1), asyncio.CancelledError(), NotAnException()], ids=type
)
async def test_a_sink_raising_what_is_not_an_exception_still_costs_only_the_record(
    raised: BaseException,
) -> None:
    class Odd:
        async def write(self, record: AuditRecord) -> None:
            raise raised

    result = await run(
        AuditInterceptor(Odd()),
        ("payments.refund", ARGS),
        ("payments.refund", ARGS | {"payment_id": "p-2"}),
    )
    assert [o.status for o in result.outcomes] == [ToolCallStatus.OK, ToolCallStatus.OK]


async def test_keyboard_interrupt_from_a_sink_propagates() -> None:
    class Interrupted:
        async def write(self, record: AuditRecord) -> None:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        await run(AuditInterceptor(Interrupted()), ("payments.refund", ARGS))


def test_records_are_frozen_and_serialisable() -> None:
    record = AuditRecord(
        timestamp=datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC),
        call_id="c1",
        tool="t",
        tenant_id=None,
        user_id=None,
        arguments_sha256="0" * 64,
        arguments={"a": 1},
        status=ToolCallStatus.DENIED,
        duration_ms=0.0,
        approval=ApprovalStatus.DENIED,
    )
    with pytest.raises(AttributeError):
        record.tool = "other"  # type: ignore[misc]
    data = record.to_dict()
    assert data["timestamp"] == "2025-01-02T03:04:05+00:00"
    assert (data["status"], data["approval"], data["arguments"]) == ("denied", "denied", {"a": 1})
    assert json.loads(json.dumps(data)) == data


async def test_a_sink_that_never_answers_costs_the_call_nothing_but_its_record(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Silent:
        async def write(self, record: AuditRecord) -> None:
            await asyncio.sleep(30)

    with caplog.at_level(logging.ERROR, logger="toolrelay.execution._audit"):
        result = await run(AuditInterceptor(Silent(), timeout=0.05), ("payments.refund", ARGS))
    assert result.outcomes[0].ok
    assert result.outcomes[0].response.data == "refunded 250 of p-1"
    assert any("did not write the record" in r.getMessage() for r in caplog.records)


async def test_records_hold_the_validated_arguments() -> None:
    sink = ListSink()
    await run(AuditInterceptor(sink), ("payments.refund", {"payment_id": "p-1", "amount": "250"}))
    (record,) = sink.records
    assert record.arguments_sha256 == expected_digest(ARGS)


def test_the_audit_timeout_is_finite_by_default_and_checked() -> None:
    assert AuditInterceptor(ListSink()).timeout == DEFAULT_AUDIT_TIMEOUT == 10.0
    with pytest.raises(ConfigurationError, match="finite"):
        AuditInterceptor(ListSink(), timeout=float("nan"))
