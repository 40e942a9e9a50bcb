"""The refund-triage scenario: who works where, what was ordered, which refunds failed when.

Yesterday (``TODAY - 1``) five refunds failed: RF-2001 and RF-2005 (``channel_timeout``) and
RF-2006 (``network_error``) are recoverable; RF-2002 (``account_closed``) and RF-2004
(``insufficient_merchant_balance``) are not. Distractors: RF-2008 failed two days ago, RF-2009
failed today, RF-2003 succeeded, RF-2007 is still processing, RF-2011 was cancelled and
RF-2013 is stuck because its refund task was lost.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import Literal, cast

from .backend import RefundDeskBackend
from .records import (
    Merchant,
    Order,
    OrderEvent,
    OrderItem,
    PaymentChannel,
    Refund,
    RefundAttempt,
    RefundStatus,
    RefundTask,
    Transaction,
)
from .seed_workplace import seed_github, seed_people, seed_tickets_and_messages

__all__ = ["seed"]

# One refund per line: refund, order, customer, merchant, cents, channel, status, failure
# reason ("-" for none), days before today, time of the last attempt, number of attempts.
_REFUNDS = """
RF-2001 O-5001 C-01 M-100  4999 cardpay  failed     channel_timeout               1 08:14 1
RF-2002 O-5002 C-02 M-100 12900 walletx  failed     account_closed                1 09:31 1
RF-2003 O-5003 C-03 M-300  2599 cardpay  succeeded  -                             1 10:02 1
RF-2004 O-5004 C-04 M-200  8450 bankwire failed     insufficient_merchant_balance 1 11:05 1
RF-2005 O-5005 C-05 M-300 31900 cardpay  failed     channel_timeout               1 13:42 2
RF-2006 O-5006 C-06 M-100  1500 walletx  failed     network_error                 1 16:22 1
RF-2007 O-5007 C-07 M-300  6400 cardpay  processing -                             1 23:50 0
RF-2008 O-5008 C-01 M-100  2200 cardpay  failed     channel_timeout               2 15:10 1
RF-2009 O-5009 C-08 M-200  5000 bankwire failed     account_closed                0 08:20 1
RF-2010 O-5010 C-02 M-300  9900 walletx  succeeded  -                             2 12:00 1
RF-2011 O-5011 C-03 M-100  4300 cardpay  cancelled  -                             1 14:15 0
RF-2013 O-5013 C-05 M-300  7750 cardpay  processing -                             3 10:45 0
"""

_ITEMS = {
    "M-100": (
        "Northwind Outdoor",
        [("NW-TENT-2P", "Two-person trail tent"), ("NW-STOVE", "Camp stove")],
    ),
    "M-200": ("Blue Harbor Books", [("BH-ATLAS", "Coastal atlas"), ("BH-NOVEL", "Signed novel")]),
    "M-300": (
        "Kestrel Electronics",
        [("KE-HDPH", "Noise-cancelling headphones"), ("KE-CBL", "USB-C cable")],
    ),
}


def seed(backend: RefundDeskBackend) -> None:
    """Fill an empty back end with the refund-triage scenario."""
    today = backend.today

    def at(days_before: int, hhmm: str) -> datetime:
        hours, minutes = (int(p) for p in hhmm.split(":"))
        return datetime.combine(today - timedelta(days=days_before), time(hours, minutes))

    seed_people(backend)
    for merchant_id, balance in (("M-100", 1_250_000), ("M-200", 3_400), ("M-300", 880_000)):
        backend.merchants[merchant_id] = Merchant(
            merchant_id=merchant_id,
            name=_ITEMS[merchant_id][0],
            balance_cents=balance,
            currency="USD",
            owner_user_id="U-KIM",
        )
    backend.channels = {
        "cardpay": PaymentChannel(
            name="cardpay",
            status="operational",
            error_rate_24h=0.041,
            p95_latency_ms=2900,
            note=f"Timeouts between 08:00 and 14:00 on {backend.yesterday}; fixed by PR #415.",
        ),
        "walletx": PaymentChannel(
            name="walletx", status="operational", error_rate_24h=0.012, p95_latency_ms=640
        ),
        "bankwire": PaymentChannel(
            name="bankwire", status="operational", error_rate_24h=0.006, p95_latency_ms=4100
        ),
    }

    for index, line in enumerate(_REFUNDS.strip().splitlines()):
        refund_id, order_id, customer_id, merchant_id, amount, channel, status, *rest = line.split()
        reason_code, days, hhmm, attempt_count = rest
        cents, attempts = int(amount), int(attempt_count)
        reason = None if reason_code == "-" else reason_code
        last = at(int(days), hhmm)
        placed = last - timedelta(days=4, hours=3)
        sku, title = _ITEMS[merchant_id][1][index % 2]
        backend.orders[order_id] = Order(
            order_id=order_id,
            customer_id=customer_id,
            merchant_id=merchant_id,
            status="refund_requested",
            total_cents=cents,
            currency="USD",
            created_at=placed,
            items=[OrderItem(sku=sku, title=title, quantity=1, unit_price_cents=cents)],
            shipping_status="returned",
            carrier_tracking=f"1Z{9000 + index:04d}",
            events=[
                OrderEvent(at=placed, kind="placed", detail="web checkout"),
                OrderEvent(at=placed + timedelta(minutes=2), kind="paid", detail=channel),
                OrderEvent(at=last - timedelta(hours=1), kind="refund_requested", detail=refund_id),
            ],
        )
        backend.transactions[f"TX-{8001 + index}"] = Transaction(
            transaction_id=f"TX-{8001 + index}",
            order_id=order_id,
            kind="payment",
            amount_cents=cents,
            currency="USD",
            channel=channel,
            status="settled",
            at=placed + timedelta(minutes=2),
        )
        refund = Refund(
            refund_id=refund_id,
            order_id=order_id,
            customer_id=customer_id,
            merchant_id=merchant_id,
            amount_cents=cents,
            currency="USD",
            channel=channel,
            status=cast(RefundStatus, status),
            reason="item returned" if index % 3 else "damaged on arrival",
            requested_at=last - timedelta(hours=1),
            updated_at=last,
            failure_reason=reason,
        )
        for n in range(attempts):
            outcome: Literal["succeeded", "failed"] = (
                "succeeded" if status == "succeeded" else "failed"
            )
            refund.attempts.append(
                RefundAttempt(
                    attempt_no=n + 1,
                    at=last - timedelta(minutes=30 * (attempts - 1 - n)),
                    outcome=outcome,
                    failure_reason=reason,
                    channel_reference=f"{channel}-{refund_id}-{n + 1}",
                )
            )
        if status == "processing":
            task_id = f"TASK-{refund_id[3:]}"
            state: Literal["queued", "lost"] = "queued" if refund_id == "RF-2007" else "lost"
            refund.task_id = task_id
            backend.refund_tasks[task_id] = RefundTask(
                task_id=task_id, refund_id=refund_id, state=state, created_at=refund.requested_at
            )
        backend.refunds[refund_id] = refund
    backend.orders["O-5014"] = Order(
        order_id="O-5014",
        customer_id="C-06",
        merchant_id="M-300",
        status="shipped",
        total_cents=15800,
        currency="USD",
        created_at=at(2, "17:30"),
        items=[
            OrderItem(
                sku="KE-HDPH",
                title="Noise-cancelling headphones",
                quantity=1,
                unit_price_cents=15800,
            )
        ],
        shipping_status="in_transit",
        carrier_tracking="1Z9914",
        events=[OrderEvent(at=at(2, "17:30"), kind="placed", detail="mobile app")],
    )

    seed_tickets_and_messages(backend, at)
    seed_github(backend, at)
    backend.counters.update({"TCK": 403, "MSG": 7002, "TX": 9001, "RF": 2014, "TASK": 3001})
