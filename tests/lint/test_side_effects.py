from __future__ import annotations

from toolrelay.lint._targets import metadata_from_annotations
from toolrelay.tools import ToolMetadata

from ._catalogs import findings, flagged, target

MUTATING = [
    ("refund_order", "Refunds an order to the original payment method of the customer."),
    ("user.delete", "Deletes a user account and everything it owns, for good."),
    ("notify_owner", "Sends a chat message to the owner of a service about an incident."),
    ("job.retry", "Retries a failed background job from its last checkpoint."),
    ("card.disable", "Disables a payment card so that it can no longer be charged."),
    ("pay_invoice", "Pays an invoice from the company account on its due date."),
    ("session_terminate", "Ends the session of a user on every device at once."),
    ("退款", "为订单发起退款，退回到原支付方式。"),
    ("shell", "执行一条系统命令并返回输出。"),
]
READING = [
    ("get_refund_status", "Returns the status of a refund: pending, succeeded or failed."),
    ("order_list", "Orders of a customer, newest first, with their totals and status."),
    ("schedules", "Schedules of golf tournaments for a season, with venues and dates."),
    ("is_registered", "Whether a phone number is registered on WhatsApp, as true or false."),
    ("refund_report", "Returns yesterday's refunds grouped by payment channel."),
    ("退款查询", "查询退款状态，不会发起退款。"),
]


def test_mutating_verbs_in_names_and_descriptions_need_declared_side_effects() -> None:
    targets = [target(name, text) for name, text in MUTATING]
    assert flagged(targets, "side-effect-unmarked") == [name for name, _ in MUTATING]


def test_reading_tools_and_nouns_are_not_flagged() -> None:
    targets = [target(name, text) for name, text in READING]
    assert flagged(targets, "side-effect-unmarked") == []


def test_any_declared_flag_satisfies_the_rule() -> None:
    name, text = MUTATING[0]
    for metadata in (
        ToolMetadata(read_only=True),
        ToolMetadata(destructive=True, requires_approval=True),
        ToolMetadata(requires_approval=True),
    ):
        assert flagged([target(name, text, metadata=metadata)], "side-effect-unmarked") == []
    assert flagged([target(name, text, metadata=ToolMetadata())], "side-effect-unmarked") == [name]


def test_mcp_annotations_declare_side_effects_even_when_not_destructive() -> None:
    name, text = MUTATING[0]
    stated = metadata_from_annotations({"annotations": {"destructiveHint": False}})
    assert flagged([target(name, text, metadata=stated)], "side-effect-unmarked") == []


def test_the_finding_names_the_verb_and_how_to_declare() -> None:
    [found] = findings([target(*MUTATING[1])], "side-effect-unmarked")
    assert "'delete'" in found.message
    assert "destructive=True" in found.fix


def test_destructive_tools_without_approval_are_flagged() -> None:
    risky = target("user.delete", MUTATING[1][1], metadata=ToolMetadata(destructive=True))
    safe = target(
        "user.purge",
        MUTATING[1][1],
        metadata=ToolMetadata(destructive=True, requires_approval=True),
    )
    assert flagged([risky, safe], "destructive-without-approval") == ["user.delete"]
