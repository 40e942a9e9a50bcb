"""Refund tools of the payment system: find, inspect, retry, rebuild, cancel and force refunds.

Several of these have confusable names on purpose (``find_orders`` / ``find_failed_orders``,
``query_result`` / ``get_detail``, ``retry_failed_order`` / ``rebuild_task`` /
``force_success``); their descriptions say which one to pick and what each does NOT do.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from toolrelay.tools import ToolContext, tool

from .backend import FAILURE_REASONS, RefundDeskBackend
from .common import actor_of, day_or_yesterday, detached
from .records import (
    FailureReason,
    Refund,
    RefundAttempt,
    RefundDeskError,
    RefundStatus,
    RefundTask,
)

__all__ = ["FailedRefund", "RefundResult", "RefundService", "RetryOutcome"]


@dataclass(frozen=True, kw_only=True)
class FailedRefund:
    """One failed refund as the failure finder reports it."""

    refund_id: str
    order_id: str
    customer_id: str
    merchant_id: str
    amount_cents: int
    currency: str
    channel: str
    failure_reason: str
    retryable: bool
    failed_at: datetime
    attempts: int


@dataclass(frozen=True, kw_only=True)
class RefundResult:
    """The payment channel's answer about a refund's latest attempt."""

    refund_id: str
    status: RefundStatus
    channel: str
    channel_status: str
    last_attempt: RefundAttempt | None


@dataclass(frozen=True, kw_only=True)
class RetryOutcome:
    """What a retry did."""

    refund_id: str
    status: RefundStatus
    succeeded: bool
    failure_reason: str | None
    attempt_no: int
    next_step: str


class RefundService:
    """Refund tools over a :class:`RefundDeskBackend`."""

    def __init__(self, backend: RefundDeskBackend) -> None:
        self.backend = backend

    @tool(name="refund.find_failed_orders", read_only=True)
    def find_failed_orders(
        self,
        day: date | None = None,
        failure_reason: str | None = None,
        retryable_only: bool = False,
        limit: int = 50,
    ) -> list[FailedRefund]:
        """Read-only query of refunds that failed on a given day (yesterday by default).

        Use when the user asks to investigate refund failures, count refund errors or look for
        refunds that can be retried; each result says whether its failure reason is retryable.
        This tool does not re-initiate refunds and does not change any refund or order status.
        To list refunds in any status use refund.find_orders instead.

        Args:
            day: Day the refunds failed, as YYYY-MM-DD; omit it for yesterday.
            failure_reason: Only refunds that failed with this reason code, e.g.
                "channel_timeout" or "account_closed".
            retryable_only: Only refunds whose failure reason a retry can fix.
            limit: Maximum number of refunds to return.
        """
        found: list[FailedRefund] = []
        for refund in self.backend.failed_refunds_on(day_or_yesterday(self.backend, day)):
            reason = FAILURE_REASONS.get(refund.failure_reason or "")
            retryable = reason is not None and reason.retryable
            if failure_reason is not None and refund.failure_reason != failure_reason:
                continue
            if retryable_only and not retryable:
                continue
            found.append(
                FailedRefund(
                    refund_id=refund.refund_id,
                    order_id=refund.order_id,
                    customer_id=refund.customer_id,
                    merchant_id=refund.merchant_id,
                    amount_cents=refund.amount_cents,
                    currency=refund.currency,
                    channel=refund.channel,
                    failure_reason=refund.failure_reason or "unknown",
                    retryable=retryable,
                    failed_at=refund.attempts[-1].at,
                    attempts=len(refund.attempts),
                )
            )
        return found[:limit]

    @tool(name="refund.find_orders", read_only=True)
    def find_orders(
        self,
        status: RefundStatus | None = None,
        customer_id: str | None = None,
        order_id: str | None = None,
        requested_from: date | None = None,
        requested_to: date | None = None,
        limit: int = 50,
    ) -> list[Refund]:
        """Read-only search of refund records in any status by customer, order or request date.

        Use to look up the refunds of a customer or an order, or to list refunds that are
        processing, succeeded or cancelled. For failures of a given day prefer
        refund.find_failed_orders, which also says whether each failure is retryable. This tool
        does not contact the payment channel and changes nothing.

        Args:
            status: Only refunds in this status.
            customer_id: Only refunds of this customer, e.g. "C-01".
            order_id: Only refunds of this order, e.g. "O-5001".
            requested_from: Earliest request day, inclusive, as YYYY-MM-DD.
            requested_to: Latest request day, inclusive, as YYYY-MM-DD.
            limit: Maximum number of refunds to return.
        """
        found = [
            r
            for r in self.backend.refunds.values()
            if (status is None or r.status == status)
            and (customer_id is None or r.customer_id == customer_id)
            and (order_id is None or r.order_id == order_id)
            and (requested_from is None or r.requested_at.date() >= requested_from)
            and (requested_to is None or r.requested_at.date() <= requested_to)
        ]
        return detached(found[:limit])

    @tool(name="refund.get_detail", read_only=True)
    def get_detail(self, refund_id: str) -> Refund:
        """Read-only full record of one refund: amount, channel, status, reason, every attempt.

        Use when you already know the refund id and need all stored fields, for example before
        deciding whether to retry. It reads the refund database only and does not ask the
        payment channel; for the channel's live answer use refund.query_result.

        Args:
            refund_id: Refund id, e.g. "RF-2001".
        """
        return detached(self.backend.refund(refund_id))

    @tool(name="refund.query_result", read_only=True)
    def query_result(self, refund_id: str) -> RefundResult:
        """Read-only query of the payment channel's result for a refund's latest attempt.

        Use to confirm whether money actually moved after a retry, or when a refund looks stuck
        in processing. Returns the outcome and channel reference of the last attempt and the
        current health of the channel. This tool does not retry, does not change the refund and
        does not create tasks.

        Args:
            refund_id: Refund id, e.g. "RF-2001".
        """
        refund = self.backend.refund(refund_id)
        channel = self.backend.channels.get(refund.channel)
        return RefundResult(
            refund_id=refund.refund_id,
            status=refund.status,
            channel=refund.channel,
            channel_status=channel.status if channel else "unknown",
            last_attempt=detached(refund.attempts[-1]) if refund.attempts else None,
        )

    @tool(name="refund.list_attempts", read_only=True)
    def list_attempts(self, refund_id: str) -> list[RefundAttempt]:
        """Read-only history of every attempt the payment channel made for one refund.

        Use to see how often a refund was tried, when, and with which failure reason each
        time, e.g. to spot a refund that keeps failing. It changes nothing and does not
        contact the channel.

        Args:
            refund_id: Refund id, e.g. "RF-2005".
        """
        return detached(self.backend.refund(refund_id).attempts)

    @tool(name="refund.explain_failure_reason", read_only=True)
    def explain_failure_reason(self, reason_code: str) -> FailureReason:
        """Read-only explanation of a refund failure reason code and whether a retry can fix it.

        Use when a refund failed with a code such as "channel_timeout" or "account_closed" and
        you must decide between retrying it and opening an incident. It looks up a static
        catalog and does not touch any refund.

        Args:
            reason_code: Failure reason code as reported on the refund.
        """
        reason = FAILURE_REASONS.get(reason_code)
        if reason is None:
            known = ", ".join(sorted(FAILURE_REASONS))
            raise RefundDeskError(f"unknown failure reason {reason_code!r}; known: {known}")
        return reason

    @tool(name="refund.list_tasks", read_only=True)
    def list_tasks(self, state: str | None = None) -> list[RefundTask]:
        """Read-only list of the asynchronous refund tasks in the processing queue.

        Use to find refunds stuck in processing because their task was lost or never ran
        (state "lost"). It does not start, rebuild or cancel any task.

        Args:
            state: Only tasks in this state: "queued", "running", "done", "lost" or
                "superseded".
        """
        tasks = [t for t in self.backend.refund_tasks.values() if state in (None, t.state)]
        return detached(tasks)

    @tool(name="refund.retry_failed_order", destructive=True)
    def retry_failed_order(
        self, refund_id: str, context: ToolContext | None = None
    ) -> RetryOutcome:
        """Re-execute a failed refund by sending it to its payment channel again.

        This tool changes the refund status and calls the payment channel: it has side effects
        and may move money. Use only when the user explicitly asks to retry refunds, and only
        for failed refunds; retryable reasons such as channel_timeout usually succeed, while
        reasons such as account_closed fail again. It does not rebuild lost tasks, does not
        open tickets and does not notify anyone.

        Args:
            refund_id: Id of the failed refund to retry, e.g. "RF-2001".
        """
        refund = self.backend.retry_refund(refund_id, actor_of(context))
        succeeded = refund.status == "succeeded"
        return RetryOutcome(
            refund_id=refund.refund_id,
            status=refund.status,
            succeeded=succeeded,
            failure_reason=refund.failure_reason,
            attempt_no=refund.attempts[-1].attempt_no,
            next_step="none; the refund is settled"
            if succeeded
            else "still failing; open an incident with ticket.create_incident",
        )

    @tool(name="refund.rebuild_task")
    def rebuild_task(self, refund_id: str, context: ToolContext | None = None) -> RefundTask:
        """Re-create the asynchronous processing task of a refund stuck in processing.

        Use when a refund has been processing for too long because its task was lost (see
        refund.list_tasks). It replaces the old task with a fresh queued one; the payment
        channel is only called later by the task worker. Side effect: writes the task queue.
        It does not retry failed refunds (use refund.retry_failed_order for those).

        Args:
            refund_id: Id of the refund in processing, e.g. "RF-2013".
        """
        refund = self.backend.refund(refund_id)
        if refund.status != "processing":
            raise RefundDeskError(
                f"refund {refund_id} is {refund.status}; only processing refunds have tasks"
            )
        if refund.task_id in self.backend.refund_tasks:
            self.backend.refund_tasks[refund.task_id].state = "superseded"
        task = RefundTask(
            task_id=self.backend.next_id("TASK"),
            refund_id=refund_id,
            state="queued",
            created_at=self.backend.tick(),
        )
        self.backend.refund_tasks[task.task_id] = task
        refund.task_id = task.task_id
        self.backend.audit(actor_of(context), f"rebuilt task of {refund_id} as {task.task_id}")
        return detached(task)

    @tool(name="refund.force_success", destructive=True, requires_approval=True)
    def force_success(
        self, refund_id: str, justification: str, context: ToolContext | None = None
    ) -> Refund:
        """Mark a refund as succeeded without any money moving through a payment channel.

        Dangerous manual override for finance administrators, e.g. after a refund was paid
        out by hand. It changes the refund status irreversibly, books no transaction and
        requires approval. Never use it to make failed refunds disappear or instead of
        refund.retry_failed_order.

        Args:
            refund_id: Id of the refund to mark as succeeded.
            justification: Why the override is correct, e.g. the manual payout reference.
        """
        refund = self.backend.refund(refund_id)
        if refund.status == "succeeded":
            raise RefundDeskError(f"refund {refund_id} already succeeded")
        actor = actor_of(context)
        refund.status = "succeeded"
        refund.failure_reason = None
        refund.forced = True
        refund.forced_by = actor
        refund.updated_at = self.backend.tick()
        self.backend.audit(actor, f"forced {refund_id} to succeeded: {justification}")
        return detached(refund)

    @tool(name="refund.create_request")
    def create_request(
        self, order_id: str, amount_cents: int, reason: str, context: ToolContext | None = None
    ) -> Refund:
        """Open a new refund request for an order; the payment channel processes it later.

        Use when a customer is owed money and no refund exists for the order yet. Side effect:
        creates a refund in status "processing" and queues its task. It does not retry or
        change existing refunds.

        Args:
            order_id: Id of the order to refund, e.g. "O-5014".
            amount_cents: Amount to refund in cents; at most the order total.
            reason: Business reason shown to the customer, e.g. "item returned".
        """
        order = self.backend.order(order_id)
        if not 0 < amount_cents <= order.total_cents:
            raise RefundDeskError(
                f"amount must be between 1 and {order.total_cents} cents for {order_id}"
            )
        at = self.backend.tick()
        refund_id = self.backend.next_id("RF")
        task_id = self.backend.next_id("TASK")
        channel = next(
            (t.channel for t in self.backend.transactions.values() if t.order_id == order_id),
            "cardpay",
        )
        refund = Refund(
            refund_id=refund_id,
            order_id=order_id,
            customer_id=order.customer_id,
            merchant_id=order.merchant_id,
            amount_cents=amount_cents,
            currency=order.currency,
            channel=channel,
            status="processing",
            reason=reason,
            requested_at=at,
            updated_at=at,
            task_id=task_id,
        )
        self.backend.refunds[refund_id] = refund
        self.backend.refund_tasks[task_id] = RefundTask(
            task_id=task_id, refund_id=refund_id, state="queued", created_at=at
        )
        order.status = "refund_requested"
        self.backend.audit(actor_of(context), f"requested refund {refund_id} for {order_id}")
        return detached(refund)

    @tool(name="refund.cancel_request", destructive=True)
    def cancel_request(
        self, refund_id: str, reason: str, context: ToolContext | None = None
    ) -> Refund:
        """Cancel a refund that has not succeeded yet so it is never sent to the channel again.

        Use when a refund was requested by mistake or the customer withdrew it. Side effect:
        the refund becomes "cancelled" and its task is superseded; this cannot be undone. It
        does not reverse refunds that already succeeded.

        Args:
            refund_id: Id of the refund to cancel.
            reason: Why it is cancelled; stored in the audit log.
        """
        refund = self.backend.refund(refund_id)
        if refund.status in ("succeeded", "cancelled"):
            raise RefundDeskError(f"refund {refund_id} is already {refund.status}")
        refund.status = "cancelled"
        refund.updated_at = self.backend.tick()
        if refund.task_id in self.backend.refund_tasks:
            self.backend.refund_tasks[refund.task_id].state = "superseded"
        self.backend.audit(actor_of(context), f"cancelled {refund_id}: {reason}")
        return detached(refund)
