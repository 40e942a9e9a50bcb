"""Records kept by the fake refund-desk back end.

They are plain mutable dataclasses because the back end is a small in-memory database: tools
change them in place, and tests compare ``RefundDeskBackend.snapshot()`` before and after a
call to prove that read-only tools change nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Literal

RefundStatus = Literal["requested", "processing", "succeeded", "failed", "cancelled"]
OrderStatus = Literal["placed", "paid", "shipped", "delivered", "refund_requested", "cancelled"]
TicketStatus = Literal["open", "in_progress", "resolved", "closed"]
Severity = Literal["sev1", "sev2", "sev3", "sev4"]
Channel = Literal["email", "sms", "chat", "pager"]


class RefundDeskError(Exception):
    """A request the refund-desk back end refuses: an unknown id or a forbidden state change."""


@dataclass(frozen=True, kw_only=True)
class FailureReason:
    """A payment-channel failure code and whether retrying it can help."""

    code: str
    retryable: bool
    explanation: str
    suggested_action: str


@dataclass(kw_only=True)
class Customer:
    customer_id: str
    name: str
    email: str
    phone: str
    tier: Literal["standard", "gold", "platinum"] = "standard"


@dataclass(kw_only=True)
class OrderItem:
    sku: str
    title: str
    quantity: int
    unit_price_cents: int


@dataclass(kw_only=True)
class OrderEvent:
    at: datetime
    kind: str
    detail: str


@dataclass(kw_only=True)
class Order:
    order_id: str
    customer_id: str
    merchant_id: str
    status: OrderStatus
    total_cents: int
    currency: str
    created_at: datetime
    items: list[OrderItem] = field(default_factory=list)
    shipping_status: str = "not_shipped"
    carrier_tracking: str | None = None
    notes: list[str] = field(default_factory=list)
    events: list[OrderEvent] = field(default_factory=list)


@dataclass(kw_only=True)
class RefundAttempt:
    attempt_no: int
    at: datetime
    outcome: Literal["succeeded", "failed"]
    failure_reason: str | None
    channel_reference: str


@dataclass(kw_only=True)
class Refund:
    refund_id: str
    order_id: str
    customer_id: str
    merchant_id: str
    amount_cents: int
    currency: str
    channel: str
    status: RefundStatus
    reason: str
    requested_at: datetime
    updated_at: datetime
    failure_reason: str | None = None
    attempts: list[RefundAttempt] = field(default_factory=list)
    task_id: str | None = None
    forced: bool = False
    forced_by: str | None = None

    @property
    def failed_on(self) -> date | None:
        """The day of the last failed attempt while the refund is failed, else ``None``."""
        if self.status != "failed" or not self.attempts:
            return None
        return self.attempts[-1].at.date()


@dataclass(kw_only=True)
class RefundTask:
    task_id: str
    refund_id: str
    state: Literal["queued", "running", "done", "lost", "superseded"]
    created_at: datetime


@dataclass(kw_only=True)
class Transaction:
    transaction_id: str
    order_id: str
    kind: Literal["payment", "refund"]
    amount_cents: int
    currency: str
    channel: str
    status: Literal["settled", "pending", "failed"]
    at: datetime


@dataclass(kw_only=True)
class Merchant:
    merchant_id: str
    name: str
    balance_cents: int
    currency: str
    owner_user_id: str


@dataclass(kw_only=True)
class PaymentChannel:
    name: str
    status: Literal["operational", "degraded", "down"]
    error_rate_24h: float
    p95_latency_ms: int
    note: str = ""


@dataclass(kw_only=True)
class User:
    user_id: str
    name: str
    email: str
    phone: str
    team: str
    title: str
    chat_handle: str
    preferred_channel: Channel = "chat"
    roles: list[str] = field(default_factory=list)
    active: bool = True


@dataclass(kw_only=True)
class TicketComment:
    author: str
    body: str
    at: datetime


@dataclass(kw_only=True)
class Ticket:
    ticket_id: str
    kind: Literal["incident", "task"]
    title: str
    description: str
    severity: Severity
    status: TicketStatus
    team: str
    assignee: str | None
    reporter: str
    tenant_id: str | None
    created_at: datetime
    refund_ids: list[str] = field(default_factory=list)
    comments: list[TicketComment] = field(default_factory=list)
    resolution: str | None = None


@dataclass(kw_only=True)
class Message:
    message_id: str
    channel: Channel
    recipient: str
    subject: str
    body: str
    sender: str
    sent_at: datetime
    status: Literal["delivered", "queued", "failed"] = "delivered"
    related_ids: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class GitHubIssue:
    repo: str
    number: int
    title: str
    body: str
    state: Literal["open", "closed"]
    author: str
    labels: list[str] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class PullRequest:
    repo: str
    number: int
    title: str
    author: str
    state: Literal["open", "closed"]
    merged: bool
    changed_files: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class Commit:
    repo: str
    sha: str
    message: str
    author: str
    at: datetime
    paths: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class WorkflowRun:
    repo: str
    run_id: int
    workflow: str
    status: Literal["queued", "in_progress", "completed"]
    conclusion: Literal["success", "failure", "cancelled"] | None
    commit_sha: str
    started_at: datetime
    attempt: int = 1
