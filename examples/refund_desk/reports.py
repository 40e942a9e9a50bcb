"""Reporting tools: read-only aggregates over refunds, merchants and tickets."""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass
from datetime import date, timedelta

from toolrelay.tools import tool

from .backend import FAILURE_REASONS, RefundDeskBackend
from .common import day_or_yesterday
from .records import RefundStatus

__all__ = ["DailyRefundSummary", "ReportService"]


@dataclass(frozen=True, kw_only=True)
class DailyRefundSummary:
    """Refund activity of one day."""

    day: date
    by_status: dict[str, int]
    failed_by_reason: dict[str, int]
    retryable_failures: int
    failed_amount_cents: int


class ReportService:
    """Report tools over a :class:`RefundDeskBackend`."""

    def __init__(self, backend: RefundDeskBackend) -> None:
        self.backend = backend

    @tool(name="report.refund_daily_summary", read_only=True)
    def refund_daily_summary(self, day: date | None = None) -> DailyRefundSummary:
        """Read-only summary of one day's refund activity: counts by status and failure reason.

        Use for a quick overview or a management update, e.g. "how did refunds go yesterday".
        It reports numbers only; to get the failed refunds themselves use
        refund.find_failed_orders. It changes nothing.

        Args:
            day: Day to summarise, as YYYY-MM-DD; omit it for yesterday.
        """
        target = day_or_yesterday(self.backend, day)
        active = [r for r in self.backend.refunds.values() if r.updated_at.date() == target]
        failed = self.backend.failed_refunds_on(target)
        reasons = Counter(r.failure_reason or "unknown" for r in failed)
        retryable = sum(
            1
            for r in failed
            if FAILURE_REASONS.get(r.failure_reason or "", None) is not None
            and FAILURE_REASONS[r.failure_reason or ""].retryable
        )
        return DailyRefundSummary(
            day=target,
            by_status=dict(Counter(r.status for r in active)),
            failed_by_reason=dict(reasons),
            retryable_failures=retryable,
            failed_amount_cents=sum(r.amount_cents for r in failed),
        )

    @tool(name="report.failed_refund_trend", read_only=True)
    def failed_refund_trend(self, days: int = 7) -> dict[str, int]:
        """Read-only count of failed refunds per day over the last days, oldest day first.

        Use to tell whether refund failures are rising, e.g. after a deploy or a channel
        incident. It changes nothing.

        Args:
            days: Number of days to cover, ending today.
        """
        today = self.backend.today
        return {
            str(d): len(self.backend.failed_refunds_on(d))
            for d in (today - timedelta(days=n) for n in range(days - 1, -1, -1))
        }

    @tool(name="report.refund_failures_by_channel", read_only=True)
    def refund_failures_by_channel(self) -> dict[str, dict[str, int]]:
        """Read-only count of currently failed refunds per payment channel and failure reason.

        Use to see whether one channel (cardpay, walletx, bankwire) causes most failures
        before contacting payments engineering. It changes nothing.
        """
        table: dict[str, Counter[str]] = {}
        for refund in self.backend.refunds.values():
            if refund.status == "failed":
                table.setdefault(refund.channel, Counter())[refund.failure_reason or "unknown"] += 1
        return {channel: dict(counts) for channel, counts in sorted(table.items())}

    @tool(name="report.merchant_refund_exposure", read_only=True)
    def merchant_refund_exposure(self) -> list[dict[str, object]]:
        """Read-only comparison per merchant of failed refund amounts against the balance.

        Use to find merchants whose balance cannot cover their pending and failed refunds.
        It does not move money or top up balances.
        """
        rows: list[dict[str, object]] = []
        for merchant in self.backend.merchants.values():
            owed = sum(
                r.amount_cents
                for r in self.backend.refunds.values()
                if r.merchant_id == merchant.merchant_id and r.status in ("failed", "processing")
            )
            rows.append(
                {
                    "merchant_id": merchant.merchant_id,
                    "name": merchant.name,
                    "balance_cents": merchant.balance_cents,
                    "owed_cents": owed,
                    "short_by_cents": max(0, owed - merchant.balance_cents),
                }
            )
        return rows

    @tool(name="report.ticket_backlog", read_only=True)
    def ticket_backlog(self, team: str | None = None) -> dict[str, int]:
        """Read-only number of unresolved tickets per severity, for one team or all teams.

        Use to judge a team's workload before assigning new incidents. It changes nothing.

        Args:
            team: Only tickets of this team, e.g. "refund-ops".
        """
        counts = Counter(
            t.severity
            for t in self.backend.tickets.values()
            if t.status in ("open", "in_progress") and team in (None, t.team)
        )
        return dict(sorted(counts.items()))

    @tool(name="report.export_refunds_csv", read_only=True)
    def export_refunds_csv(
        self, day: date | None = None, status: RefundStatus | None = None
    ) -> str:
        """Read-only export of the refunds requested on one day as CSV text for spreadsheets.

        Use when the user wants a file or table of refunds for finance or an audit. It
        returns text and neither writes files nor changes refunds.

        Args:
            day: Day the refunds were requested, as YYYY-MM-DD; omit it for yesterday.
            status: Only refunds in this status.
        """
        target = day_or_yesterday(self.backend, day)
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(
            [
                "refund_id",
                "order_id",
                "amount_cents",
                "currency",
                "channel",
                "status",
                "failure_reason",
            ]
        )
        for r in self.backend.refunds.values():
            if r.requested_at.date() == target and status in (None, r.status):
                writer.writerow(
                    [
                        r.refund_id,
                        r.order_id,
                        r.amount_cents,
                        r.currency,
                        r.channel,
                        r.status,
                        r.failure_reason or "",
                    ]
                )
        return out.getvalue()
