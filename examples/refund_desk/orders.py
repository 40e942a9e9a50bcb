"""Order-center tools: orders, their items, timeline, shipping, notes and customers."""

from __future__ import annotations

from datetime import date

from toolrelay.tools import ToolContext, tool

from .backend import RefundDeskBackend
from .common import actor_of, detached
from .records import Customer, Order, OrderEvent, OrderItem, OrderStatus, RefundDeskError

__all__ = ["OrderService"]


class OrderService:
    """Order-center tools over a :class:`RefundDeskBackend`."""

    def __init__(self, backend: RefundDeskBackend) -> None:
        self.backend = backend

    @tool(name="order.get", read_only=True)
    def get(self, order_id: str) -> Order:
        """Read-only lookup of one order in the order center: customer, merchant, total, status.

        Use when you know the order id, e.g. from a refund record, and need the purchase
        behind it. It does not show refunds (use refund.find_orders) and changes nothing.

        Args:
            order_id: Order id, e.g. "O-5001".
        """
        return detached(self.backend.order(order_id))

    @tool(name="order.search", read_only=True)
    def search(
        self,
        customer_id: str | None = None,
        merchant_id: str | None = None,
        status: OrderStatus | None = None,
        placed_from: date | None = None,
        placed_to: date | None = None,
        limit: int = 20,
    ) -> list[Order]:
        """Read-only search of orders by customer, merchant, status or the day they were placed.

        Use to find a customer's purchases or all orders of a merchant. This searches orders,
        not refunds: for refund records use refund.find_orders. It changes nothing.

        Args:
            customer_id: Only orders of this customer, e.g. "C-01".
            merchant_id: Only orders sold by this merchant, e.g. "M-100".
            status: Only orders in this status.
            placed_from: Earliest day the order was placed, inclusive, as YYYY-MM-DD.
            placed_to: Latest day the order was placed, inclusive, as YYYY-MM-DD.
            limit: Maximum number of orders to return.
        """
        found = [
            o
            for o in self.backend.orders.values()
            if customer_id in (None, o.customer_id)
            and merchant_id in (None, o.merchant_id)
            and status in (None, o.status)
            and (placed_from is None or o.created_at.date() >= placed_from)
            and (placed_to is None or o.created_at.date() <= placed_to)
        ]
        return detached(found[:limit])

    @tool(name="order.list_items", read_only=True)
    def list_items(self, order_id: str) -> list[OrderItem]:
        """Read-only list of the line items of an order: SKU, title, quantity and unit price.

        Use to see what was bought, e.g. to check that a refund amount matches the returned
        items. It changes nothing.

        Args:
            order_id: Order id, e.g. "O-5002".
        """
        return detached(self.backend.order(order_id).items)

    @tool(name="order.get_timeline", read_only=True)
    def get_timeline(self, order_id: str) -> list[OrderEvent]:
        """Read-only timeline of an order's events: placed, paid, refund requested, refunded.

        Use to reconstruct what happened to an order and when, for example before answering
        a customer complaint. It does not add events or notes.

        Args:
            order_id: Order id, e.g. "O-5001".
        """
        return detached(self.backend.order(order_id).events)

    @tool(name="order.get_shipping_status", read_only=True)
    def get_shipping_status(self, order_id: str) -> dict[str, str | None]:
        """Read-only shipping or return status of an order with its carrier tracking number.

        Use when a refund depends on the goods coming back, or the customer asks where a
        parcel is. It does not contact the carrier and changes nothing.

        Args:
            order_id: Order id, e.g. "O-5014".
        """
        order = self.backend.order(order_id)
        return {
            "order_id": order.order_id,
            "shipping_status": order.shipping_status,
            "carrier_tracking": order.carrier_tracking,
        }

    @tool(name="order.get_customer", read_only=True)
    def get_customer(self, customer_id: str) -> Customer:
        """Read-only profile of a shopper: name, email, phone and loyalty tier.

        Use to find how to reach the customer behind an order or refund. Customers are
        shoppers, not employees: for staff use user.get. It changes nothing.

        Args:
            customer_id: Customer id, e.g. "C-02".
        """
        return detached(self.backend.customer(customer_id))

    @tool(name="order.add_note")
    def add_note(self, order_id: str, note: str, context: ToolContext | None = None) -> Order:
        """Append an internal note to an order, visible to support and refund operations.

        Use to record what was done about an order, e.g. "refund retried, succeeded". Side
        effect: the note is stored with the author; it does not change the order status and
        is never shown to the customer.

        Args:
            order_id: Order id, e.g. "O-5001".
            note: Text of the note.
        """
        order = self.backend.order(order_id)
        actor = actor_of(context)
        at = self.backend.tick()
        order.notes.append(f"{at.isoformat()} {actor}: {note}")
        self.backend.audit(actor, f"noted on {order_id}")
        return detached(order)

    @tool(name="order.update_status", destructive=True)
    def update_status(
        self, order_id: str, status: OrderStatus, context: ToolContext | None = None
    ) -> Order:
        """Overwrite the status of an order in the order center.

        Use only to correct an order whose status is demonstrably wrong. Side effect: the
        status changes for every downstream system (shipping, billing); the previous status is
        kept only in the timeline. It does not move money or touch refunds.

        Args:
            order_id: Order id, e.g. "O-5001".
            status: The new order status.
        """
        order = self.backend.order(order_id)
        previous = order.status
        order.status = status
        at = self.backend.tick()
        order.events.append(
            OrderEvent(at=at, kind="status_changed", detail=f"{previous}->{status}")
        )
        self.backend.audit(actor_of(context), f"set {order_id} {previous}->{status}")
        return detached(order)

    @tool(name="order.cancel", destructive=True, requires_approval=True)
    def cancel(self, order_id: str, reason: str, context: ToolContext | None = None) -> Order:
        """Cancel an order that has not been delivered, stopping shipment and fulfilment.

        Irreversible and requires approval. It does not refund the payment: request a refund
        separately with refund.create_request. Never use it on delivered orders.

        Args:
            order_id: Order id, e.g. "O-5014".
            reason: Why the order is cancelled; stored on the timeline.
        """
        order = self.backend.order(order_id)
        if order.status in ("delivered", "cancelled"):
            raise RefundDeskError(f"order {order_id} is {order.status} and cannot be cancelled")
        order.status = "cancelled"
        at = self.backend.tick()
        order.events.append(OrderEvent(at=at, kind="cancelled", detail=reason))
        self.backend.audit(actor_of(context), f"cancelled order {order_id}: {reason}")
        return detached(order)
