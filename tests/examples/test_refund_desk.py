"""The refund-desk example catalog: well-formed tools, honest metadata, and the triage task."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from toolrelay.exceptions import ToolArgumentError, ToolContextError
from toolrelay.tools import Tool, ToolCatalog, ToolContext
from toolrelay.tools._names import validate_tool_name

# examples/ is a directory of scripts, not an installed package: import it from the repo root.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from examples.refund_desk import (
    REQUIRED_TOOLS,
    TASK,
    RefundDeskBackend,
    RefundDeskError,
    all_tools,
    build_catalog,
)

DOMAINS = {"refund", "payment", "order", "ticket", "notify", "user", "github", "db", "report"}
YESTERDAY_FAILED = {"RF-2001", "RF-2002", "RF-2004", "RF-2005", "RF-2006"}
RECOVERABLE = {"RF-2001", "RF-2005", "RF-2006"}
UNRECOVERABLE = {"RF-2002", "RF-2004"}
CTX = ToolContext(tenant_id="acme", user_id="U-ZHANG")
REPO = "acme/refund-service"

# Arguments for every read-only tool; each call must return data and change nothing.
READ_ONLY_CALLS: dict[str, dict[str, Any]] = {
    "refund.find_failed_orders": {},
    "refund.find_orders": {"status": "failed"},
    "refund.get_detail": {"refund_id": "RF-2001"},
    "refund.query_result": {"refund_id": "RF-2001"},
    "refund.list_attempts": {"refund_id": "RF-2005"},
    "refund.explain_failure_reason": {"reason_code": "account_closed"},
    "refund.list_tasks": {"state": "lost"},
    "payment.get_transaction": {"transaction_id": "TX-8001"},
    "payment.find_transactions_by_order": {"order_id": "O-5001"},
    "payment.list_channel_status": {},
    "payment.get_channel_status": {"channel": "cardpay"},
    "payment.get_merchant_balance": {"merchant_id": "M-200"},
    "order.get": {"order_id": "O-5001"},
    "order.search": {"customer_id": "C-01"},
    "order.list_items": {"order_id": "O-5002"},
    "order.get_timeline": {"order_id": "O-5001"},
    "order.get_shipping_status": {"order_id": "O-5014"},
    "order.get_customer": {"customer_id": "C-02"},
    "ticket.get": {"ticket_id": "TCK-402"},
    "ticket.search": {"text": "cardpay"},
    "ticket.find_by_refund": {"refund_id": "RF-2008"},
    "notify.list_sent_messages": {},
    "notify.get_delivery_status": {"message_id": "MSG-7001"},
    "user.get": {"user_id": "U-LIN"},
    "user.search": {"query": "payments"},
    "user.find_owner": {"domain": "refunds"},
    "user.get_oncall": {"team": "refund-ops"},
    "user.list_team_members": {"team": "refund-ops"},
    "user.get_permissions": {"user_id": "U-ZHANG"},
    "github.search_issues": {"query": "timeout"},
    "github.get_issue": {"repo": REPO, "number": 412},
    "github.get_pull_request": {"repo": REPO, "number": 415},
    "github.list_pull_requests": {"repo": REPO, "state": "all"},
    "github.list_recent_commits": {"repo": REPO},
    "github.list_workflow_runs": {"repo": REPO},
    "db.list_tables": {},
    "db.describe_table": {"table": "refunds"},
    "db.query_rows": {"table": "refunds", "where": {"status": "failed"}},
    "db.count_rows": {"table": "refunds", "where": {"status": "failed"}},
    "db.get_row": {"table": "refund_tasks", "key": "TASK-2013"},
    "report.refund_daily_summary": {},
    "report.failed_refund_trend": {"days": 3},
    "report.refund_failures_by_channel": {},
    "report.merchant_refund_exposure": {},
    "report.ticket_backlog": {},
    "report.export_refunds_csv": {"status": "failed"},
}

# Arguments for every other tool; each call, on a fresh back end, must change something.
MUTATING_CALLS: dict[str, dict[str, Any]] = {
    "refund.retry_failed_order": {"refund_id": "RF-2001"},
    "refund.rebuild_task": {"refund_id": "RF-2013"},
    "refund.force_success": {"refund_id": "RF-2004", "justification": "paid by hand, BT-77"},
    "refund.create_request": {"order_id": "O-5014", "amount_cents": 15800, "reason": "return"},
    "refund.cancel_request": {"refund_id": "RF-2007", "reason": "duplicate request"},
    "payment.set_channel_availability": {"channel": "walletx", "status": "down", "note": "m"},
    "payment.top_up_merchant_balance": {"merchant_id": "M-200", "amount_cents": 10000},
    "order.add_note": {"order_id": "O-5001", "note": "retried"},
    "order.update_status": {"order_id": "O-5014", "status": "delivered"},
    "order.cancel": {"order_id": "O-5014", "reason": "customer request"},
    "ticket.create_incident": {"title": "t", "description": "d", "refund_ids": ["RF-2002"]},
    "ticket.create_task": {"title": "t", "description": "d", "team": "merchant-accounts"},
    "ticket.add_comment": {"ticket_id": "TCK-402", "body": "still failing"},
    "ticket.assign": {"ticket_id": "TCK-402", "assignee": "U-ZHANG"},
    "ticket.update_status": {"ticket_id": "TCK-401", "status": "resolved"},
    "ticket.escalate": {"ticket_id": "TCK-402", "severity": "sev2", "reason": "spreading"},
    "ticket.close": {"ticket_id": "TCK-402", "resolution": "fixed by PR #415"},
    "notify.send_owner_message": {"message": "all good"},
    "notify.send_email": {"to": "U-KIM", "subject": "s", "body": "b"},
    "notify.send_sms": {"user_id": "U-OKAFOR", "text": "call me"},
    "notify.post_chat_message": {"chat_channel": "#refund-ops", "text": "hi"},
    "notify.send_direct_message": {"user_id": "U-ZHANG", "text": "hi"},
    "notify.page_oncall": {"team": "payments-platform", "summary": "cardpay down"},
    "notify.send_customer_refund_notice": {"refund_id": "RF-2003"},
    "user.grant_role": {"user_id": "U-ZHANG", "role": "refund_admin"},
    "user.deactivate": {"user_id": "U-MUELLER", "reason": "left"},
    "github.create_issue": {"repo": REPO, "title": "t", "body": "b", "labels": ["bug"]},
    "github.comment_on_issue": {"repo": REPO, "number": 412, "body": "RF-2001 too"},
    "github.close_issue": {"repo": REPO, "number": 412, "comment": "fixed"},
    "github.rerun_workflow": {"repo": REPO, "run_id": 5102},
    "db.update_row": {"table": "tickets", "key": "TCK-401", "values": {"status": "closed"}},
    "db.delete_row": {"table": "customers", "key": "C-08"},
}


@pytest.fixture
def backend() -> RefundDeskBackend:
    return RefundDeskBackend.seeded()


@pytest.fixture
def catalog(backend: RefundDeskBackend) -> ToolCatalog:
    return build_catalog(backend)


def _tool(catalog: ToolCatalog, name: str) -> Tool:
    found = catalog.get(name)
    assert found is not None, name
    return found


async def _call(catalog: ToolCatalog, name: str, **arguments: Any) -> Any:
    return json.loads(await _tool(catalog, name).call(json.dumps(arguments), CTX))


# --- the catalog ---------------------------------------------------------------------------


def test_catalog_is_large_with_unique_valid_domain_names(catalog: ToolCatalog) -> None:
    names = catalog.names()
    assert len(names) >= 60
    assert len(set(names)) == len(names)
    for name in names:
        assert validate_tool_name(name) == name
        domain, _, action = name.partition(".")
        assert domain in DOMAINS, name
        assert action, name
    assert set(REQUIRED_TOOLS) <= set(names)
    assert {
        "refund.find_orders",
        "refund.query_result",
        "refund.rebuild_task",
        "refund.force_success",
    } <= set(names)


def test_every_tool_is_documented(catalog: ToolCatalog) -> None:
    for definition in catalog.definitions():
        words = definition.description.split()
        assert len(words) >= 15, f"{definition.name}: {definition.description!r}"
        properties = definition.input_schema.get("properties", {})
        for parameter, schema in properties.items():
            description = schema.get("description", "")
            assert len(description.split()) >= 2, f"{definition.name}.{parameter}"


def test_metadata_marks_reads_and_dangerous_writes(catalog: ToolCatalog) -> None:
    read_only = {t.definition.name for t in catalog if t.metadata.read_only}
    assert read_only == set(READ_ONLY_CALLS)
    assert set(MUTATING_CALLS) == set(catalog.names()) - read_only
    for t in catalog:
        assert not (t.metadata.read_only and t.metadata.destructive), t.definition.name
        if t.metadata.read_only:
            assert t.definition.description.startswith("Read-only"), t.definition.name
        if t.metadata.requires_approval:
            assert "approval" in t.definition.description, t.definition.name
    approval = {t.definition.name for t in catalog if t.metadata.requires_approval}
    assert {"refund.force_success", "db.update_row", "db.delete_row"} <= approval
    assert _tool(catalog, "refund.retry_failed_order").metadata.destructive
    assert not _tool(catalog, "refund.retry_failed_order").metadata.requires_approval


async def test_catalogs_without_a_backend_do_not_share_state() -> None:
    first, second = build_catalog(), build_catalog()
    assert len(all_tools()) == len(first) == len(second)
    await _call(first, "refund.retry_failed_order", refund_id="RF-2001")
    assert len(await _call(first, "refund.find_failed_orders")) == 4
    assert len(await _call(second, "refund.find_failed_orders")) == 5


# --- the task ------------------------------------------------------------------------------


async def test_triage_task_with_the_four_required_tools(
    backend: RefundDeskBackend, catalog: ToolCatalog
) -> None:
    assert "yesterday's failed refunds" in TASK
    find, retry, open_incident, notify_owner = REQUIRED_TOOLS
    tickets_before, messages_before = set(backend.tickets), len(backend.messages)
    balance_before = backend.merchants["M-100"].balance_cents

    failed = await _call(catalog, find)
    assert {f["refund_id"] for f in failed} == YESTERDAY_FAILED
    recoverable = [f["refund_id"] for f in failed if f["retryable"]]
    assert set(recoverable) == RECOVERABLE

    outcomes = [await _call(catalog, retry, refund_id=r) for r in recoverable]
    assert all(o["succeeded"] and o["status"] == "succeeded" for o in outcomes)

    still_failing = [f for f in await _call(catalog, find) if f["refund_id"] in YESTERDAY_FAILED]
    assert {f["refund_id"] for f in still_failing} == UNRECOVERABLE
    ticket_ids = []
    for f in still_failing:
        ticket = await _call(
            catalog,
            open_incident,
            title=f"Refund {f['refund_id']} failing: {f['failure_reason']}",
            description=f"Retry cannot fix {f['failure_reason']}; a person must act.",
            refund_ids=[f["refund_id"]],
            severity="sev2",
        )
        ticket_ids.append(ticket["ticket_id"])

    message = await _call(
        catalog,
        notify_owner,
        message=f"Retried {len(recoverable)} refunds; {len(ticket_ids)} still failing.",
        ticket_ids=ticket_ids,
    )

    for refund_id in RECOVERABLE:
        refund = backend.refunds[refund_id]
        assert refund.status == "succeeded"
        assert refund.attempts[-1].outcome == "succeeded"
    for refund_id in UNRECOVERABLE:
        assert backend.refunds[refund_id].status == "failed"
        assert len(backend.refunds[refund_id].attempts) == 1  # never retried
    # Distractors from other days are untouched.
    assert backend.refunds["RF-2008"].status == "failed"
    assert backend.refunds["RF-2009"].status == "failed"
    assert backend.merchants["M-100"].balance_cents == balance_before - 4999 - 1500

    new_tickets = [backend.tickets[t] for t in sorted(set(backend.tickets) - tickets_before)]
    assert [t.ticket_id for t in new_tickets] == ticket_ids
    assert sorted(r for t in new_tickets for r in t.refund_ids) == sorted(UNRECOVERABLE)
    for t in new_tickets:
        assert (t.kind, t.status, t.reporter, t.tenant_id) == (
            "incident",
            "open",
            "U-ZHANG",
            "acme",
        )
        assert t.assignee == "U-ZHANG"  # refund-ops on call

    sent = backend.messages[messages_before:]
    assert len(sent) == 1
    assert sent[0].message_id == message["message_id"]
    assert sent[0].recipient == "U-LIN"  # owner of the refunds domain
    assert sent[0].channel == "chat"
    for ticket_id in ticket_ids:
        assert ticket_id in sent[0].body


async def test_retry_of_unrecoverable_refund_fails_again(
    backend: RefundDeskBackend, catalog: ToolCatalog
) -> None:
    outcome = await _call(catalog, "refund.retry_failed_order", refund_id="RF-2004")
    assert outcome["succeeded"] is False
    assert outcome["failure_reason"] == "insufficient_merchant_balance"
    assert "ticket.create_incident" in outcome["next_step"]
    refund = backend.refunds["RF-2004"]
    assert refund.status == "failed"
    assert [a.outcome for a in refund.attempts] == ["failed", "failed"]
    assert backend.merchants["M-200"].balance_cents == 3_400


async def test_retry_is_refused_for_refunds_that_are_not_failed(catalog: ToolCatalog) -> None:
    retry = _tool(catalog, "refund.retry_failed_order")
    with pytest.raises(RefundDeskError, match="only failed refunds"):
        await retry.call('{"refund_id": "RF-2003"}', CTX)
    with pytest.raises(RefundDeskError, match="no refund 'RF-9999'"):
        await retry.call('{"refund_id": "RF-9999"}', CTX)


async def test_incident_needs_a_context_and_refuses_duplicates(catalog: ToolCatalog) -> None:
    create = _tool(catalog, "ticket.create_incident")
    args = json.dumps({"title": "t", "description": "d", "refund_ids": ["RF-2008"]})
    with pytest.raises(ToolContextError):
        await create.call(args, None)
    with pytest.raises(RefundDeskError, match="already has open incident TCK-402"):
        await create.call(args, CTX)


async def test_bad_arguments_are_reported(catalog: ToolCatalog) -> None:
    with pytest.raises(ToolArgumentError):
        await _tool(catalog, "refund.find_failed_orders").call('{"day": "yesterday"}', CTX)
    with pytest.raises(ToolArgumentError):
        await _tool(catalog, "ticket.create_incident").call('{"title": "t"}', CTX)


async def test_find_failed_orders_filters(catalog: ToolCatalog) -> None:
    only_retryable = await _call(catalog, "refund.find_failed_orders", retryable_only=True)
    assert {f["refund_id"] for f in only_retryable} == RECOVERABLE
    two_days_ago = await _call(catalog, "refund.find_failed_orders", day="2025-06-10")
    assert [f["refund_id"] for f in two_days_ago] == ["RF-2008"]
    closed = await _call(catalog, "refund.find_failed_orders", failure_reason="account_closed")
    assert [f["refund_id"] for f in closed] == ["RF-2002"]


# --- metadata is honest --------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(READ_ONLY_CALLS))
async def test_read_only_tools_change_nothing(
    name: str, backend: RefundDeskBackend, catalog: ToolCatalog
) -> None:
    before = backend.snapshot()
    text = await _tool(catalog, name).call(json.dumps(READ_ONLY_CALLS[name]), CTX)
    assert text.strip() not in ("", "[]", "{}", "null", "Done"), f"{name} found nothing"
    assert backend.snapshot() == before


@pytest.mark.parametrize("name", sorted(MUTATING_CALLS))
async def test_other_tools_have_side_effects(
    name: str, backend: RefundDeskBackend, catalog: ToolCatalog
) -> None:
    before = backend.snapshot()
    await _tool(catalog, name).call(json.dumps(MUTATING_CALLS[name]), CTX)
    after = backend.snapshot()
    assert after != before
    assert len(after["audit_log"]) == len(before["audit_log"]) + 1
