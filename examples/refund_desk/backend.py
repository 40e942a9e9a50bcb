"""A deterministic in-memory stand-in for the systems behind the refund desk.

One :class:`RefundDeskBackend` holds the order center, payment system, ticket platform,
message outbox, GitHub, users directory and the clock. ``RefundDeskBackend.seeded()`` returns
the scenario the examples are built around: on ``today - 1`` five refunds failed, three for
reasons a retry fixes (``channel_timeout``, ``network_error``) and two it cannot fix
(``account_closed``, ``insufficient_merchant_balance``), among distractors from other days.

Everything is deterministic: the clock advances one minute per change, ids come from counters
and a retry's outcome depends only on the failure reason.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any, TypeVar

from .records import (
    Channel,
    Commit,
    Customer,
    FailureReason,
    GitHubIssue,
    Merchant,
    Message,
    Order,
    OrderEvent,
    PaymentChannel,
    PullRequest,
    Refund,
    RefundAttempt,
    RefundDeskError,
    RefundTask,
    Ticket,
    Transaction,
    User,
    WorkflowRun,
)

__all__ = ["FAILURE_REASONS", "TODAY", "RefundDeskBackend"]

_T = TypeVar("_T")

TODAY = date(2025, 6, 12)

FAILURE_REASONS: dict[str, FailureReason] = {
    reason.code: reason
    for reason in (
        FailureReason(
            code="channel_timeout",
            retryable=True,
            explanation="The payment channel did not answer in time; no money moved.",
            suggested_action="Retry the refund once the channel is operational.",
        ),
        FailureReason(
            code="network_error",
            retryable=True,
            explanation="The connection to the payment channel dropped before a response.",
            suggested_action="Retry the refund; the request is idempotent on the channel.",
        ),
        FailureReason(
            code="channel_rate_limited",
            retryable=True,
            explanation="The payment channel throttled the request.",
            suggested_action="Retry the refund after a few minutes.",
        ),
        FailureReason(
            code="account_closed",
            retryable=False,
            explanation="The customer's destination account is closed; the channel rejects it.",
            suggested_action="Open an incident so support collects a new payout method.",
        ),
        FailureReason(
            code="insufficient_merchant_balance",
            retryable=False,
            explanation="The merchant's balance cannot cover the refund amount.",
            suggested_action="Open an incident for merchant accounts to top up the balance.",
        ),
        FailureReason(
            code="risk_rejected",
            retryable=False,
            explanation="The risk engine blocked the refund as suspicious.",
            suggested_action="Open an incident for the risk team to review the refund.",
        ),
    )
}


@dataclass(kw_only=True)
class RefundDeskBackend:
    """The whole fake enterprise: every collection the refund-desk tools read or change.

    Attributes:
        today: The business date; "yesterday" is the day before.
        clock: The current time; :meth:`tick` advances it one minute per change.
        domain_owners: Business domain (``refunds``, ``payments``...) to owning user id.
        oncall: Team to the user id currently on call.
        audit_log: One line per change, in order.
    """

    today: date = TODAY
    clock: datetime = field(default_factory=lambda: datetime.combine(TODAY, time(9, 0)))
    customers: dict[str, Customer] = field(default_factory=dict)
    orders: dict[str, Order] = field(default_factory=dict)
    refunds: dict[str, Refund] = field(default_factory=dict)
    refund_tasks: dict[str, RefundTask] = field(default_factory=dict)
    transactions: dict[str, Transaction] = field(default_factory=dict)
    merchants: dict[str, Merchant] = field(default_factory=dict)
    channels: dict[str, PaymentChannel] = field(default_factory=dict)
    users: dict[str, User] = field(default_factory=dict)
    domain_owners: dict[str, str] = field(default_factory=dict)
    oncall: dict[str, str] = field(default_factory=dict)
    tickets: dict[str, Ticket] = field(default_factory=dict)
    messages: list[Message] = field(default_factory=list)
    issues: dict[tuple[str, int], GitHubIssue] = field(default_factory=dict)
    pull_requests: dict[tuple[str, int], PullRequest] = field(default_factory=dict)
    commits: list[Commit] = field(default_factory=list)
    workflow_runs: dict[int, WorkflowRun] = field(default_factory=dict)
    audit_log: list[str] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=dict)

    @classmethod
    def seeded(cls) -> RefundDeskBackend:
        """A back end holding the refund-triage scenario (see the module docstring)."""
        from .seed import seed

        backend = cls()
        seed(backend)
        return backend

    # --- time, ids, audit ---------------------------------------------------------------------

    @property
    def yesterday(self) -> date:
        """The day before :attr:`today`."""
        return self.today - timedelta(days=1)

    def tick(self) -> datetime:
        """Advance the clock one minute and return the new time."""
        self.clock += timedelta(minutes=1)
        return self.clock

    def next_id(self, prefix: str, start: int = 1) -> str:
        """The next id ``{prefix}-{n}`` of a counter that begins at ``start``."""
        n = self.counters.get(prefix, start)
        self.counters[prefix] = n + 1
        return f"{prefix}-{n}"

    def audit(self, actor: str, action: str) -> None:
        """Record a change with the current time."""
        self.audit_log.append(f"{self.clock.isoformat()} {actor}: {action}")

    def snapshot(self) -> dict[str, Any]:
        """A deep, comparable copy of every collection (and the clock and counters)."""
        return {
            f.name: copy.deepcopy(_plain(getattr(self, f.name))) for f in dataclasses.fields(self)
        }

    # --- lookups ------------------------------------------------------------------------------

    def refund(self, refund_id: str) -> Refund:
        """The refund with this id, or :class:`RefundDeskError`."""
        return _get(self.refunds, refund_id, "refund")

    def order(self, order_id: str) -> Order:
        """The order with this id, or :class:`RefundDeskError`."""
        return _get(self.orders, order_id, "order")

    def ticket(self, ticket_id: str) -> Ticket:
        """The ticket with this id, or :class:`RefundDeskError`."""
        return _get(self.tickets, ticket_id, "ticket")

    def user(self, user_id: str) -> User:
        """The user with this id, or :class:`RefundDeskError`."""
        return _get(self.users, user_id, "user")

    def customer(self, customer_id: str) -> Customer:
        """The customer with this id, or :class:`RefundDeskError`."""
        return _get(self.customers, customer_id, "customer")

    def merchant(self, merchant_id: str) -> Merchant:
        """The merchant with this id, or :class:`RefundDeskError`."""
        return _get(self.merchants, merchant_id, "merchant")

    def issue(self, repo: str, number: int) -> GitHubIssue:
        """The GitHub issue ``repo#number``, or :class:`RefundDeskError`."""
        issue = self.issues.get((repo, number))
        if issue is None:
            raise RefundDeskError(f"no issue {repo}#{number}")
        return issue

    def failed_refunds_on(self, day: date) -> list[Refund]:
        """Refunds currently failed whose last attempt failed on ``day``, oldest first."""
        found = [r for r in self.refunds.values() if r.failed_on == day]
        return sorted(found, key=lambda r: r.attempts[-1].at)

    # --- state changes shared by several tools ------------------------------------------------

    def retry_refund(self, refund_id: str, actor: str) -> Refund:
        """Send a failed refund to its payment channel again.

        Retryable failure reasons succeed when the channel is not down; the others fail again
        with the same reason. Either way an attempt is recorded.

        Raises:
            RefundDeskError: The refund does not exist or is not failed.
        """
        refund = self.refund(refund_id)
        if refund.status != "failed":
            raise RefundDeskError(
                f"refund {refund_id} is {refund.status}; only failed refunds can be retried"
            )
        reason = FAILURE_REASONS.get(refund.failure_reason or "")
        channel = self.channels.get(refund.channel)
        at = self.tick()
        attempt_no = len(refund.attempts) + 1
        reference = f"{refund.channel}-{refund.refund_id}-{attempt_no}"
        if reason is not None and reason.retryable and channel and channel.status != "down":
            refund.attempts.append(
                RefundAttempt(
                    attempt_no=attempt_no,
                    at=at,
                    outcome="succeeded",
                    failure_reason=None,
                    channel_reference=reference,
                )
            )
            refund.status = "succeeded"
            refund.failure_reason = None
            self.settle_refund(refund, at)
        else:
            refund.attempts.append(
                RefundAttempt(
                    attempt_no=attempt_no,
                    at=at,
                    outcome="failed",
                    failure_reason=refund.failure_reason,
                    channel_reference=reference,
                )
            )
        refund.updated_at = at
        self.audit(actor, f"retried refund {refund_id}: {refund.status}")
        return refund

    def settle_refund(self, refund: Refund, at: datetime) -> None:
        """Book the money movement of a refund that just succeeded."""
        merchant = self.merchants.get(refund.merchant_id)
        if merchant is not None:
            merchant.balance_cents -= refund.amount_cents
        tx_id = self.next_id("TX", 9001)
        self.transactions[tx_id] = Transaction(
            transaction_id=tx_id,
            order_id=refund.order_id,
            kind="refund",
            amount_cents=refund.amount_cents,
            currency=refund.currency,
            channel=refund.channel,
            status="settled",
            at=at,
        )
        order = self.orders.get(refund.order_id)
        if order is not None:
            order.events.append(OrderEvent(at=at, kind="refunded", detail=refund.refund_id))

    def send_message(
        self,
        *,
        channel: Channel,
        recipient: str,
        subject: str,
        body: str,
        sender: str,
        related_ids: list[str] | None = None,
    ) -> Message:
        """Append a delivered message to the outbox and return it."""
        at = self.tick()
        message = Message(
            message_id=self.next_id("MSG", 7001),
            channel=channel,
            recipient=recipient,
            subject=subject,
            body=body,
            sender=sender,
            sent_at=at,
            related_ids=list(related_ids or []),
        )
        self.messages.append(message)
        self.audit(sender, f"sent {channel} message {message.message_id} to {recipient}")
        return message


def _get(collection: dict[str, _T], key: str, kind: str) -> _T:
    try:
        return collection[key]
    except KeyError:
        known = ", ".join(sorted(collection)[:8])
        raise RefundDeskError(f"no {kind} {key!r}; known ids include: {known}") from None


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
