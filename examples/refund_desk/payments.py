"""Payment-system tools: transactions, payment channels and merchant balances."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from toolrelay.tools import ToolContext, tool

from .backend import RefundDeskBackend
from .common import actor_of, detached
from .records import Merchant, PaymentChannel, RefundDeskError, Transaction

__all__ = ["MerchantBalance", "PaymentService"]


@dataclass(frozen=True, kw_only=True)
class MerchantBalance:
    """A merchant's balance and the failed refunds it cannot currently cover."""

    merchant_id: str
    name: str
    balance_cents: int
    currency: str
    uncovered_failed_refunds: list[str]


class PaymentService:
    """Payment tools over a :class:`RefundDeskBackend`."""

    def __init__(self, backend: RefundDeskBackend) -> None:
        self.backend = backend

    @tool(name="payment.get_transaction", read_only=True)
    def get_transaction(self, transaction_id: str) -> Transaction:
        """Read-only lookup of one payment or refund transaction in the payment ledger.

        Use when you have a transaction id from a statement or an order and need its amount,
        channel, status and time. It does not change the ledger.

        Args:
            transaction_id: Ledger transaction id, e.g. "TX-8001".
        """
        try:
            return detached(self.backend.transactions[transaction_id])
        except KeyError:
            raise RefundDeskError(f"no transaction {transaction_id!r}") from None

    @tool(name="payment.find_transactions_by_order", read_only=True)
    def find_transactions_by_order(self, order_id: str) -> list[Transaction]:
        """Read-only list of the ledger transactions (payments and settled refunds) of an order.

        Use to check whether the customer's payment was captured and whether any refund money
        actually left the merchant's account. It changes nothing.

        Args:
            order_id: Order id, e.g. "O-5001".
        """
        found = [t for t in self.backend.transactions.values() if t.order_id == order_id]
        return detached(sorted(found, key=lambda t: t.at))

    @tool(name="payment.list_channel_status", read_only=True)
    def list_channel_status(self) -> list[PaymentChannel]:
        """Read-only health of every payment channel: status, 24 h error rate, p95 latency.

        Use before retrying refunds to make sure the channel (cardpay, walletx, bankwire) is
        operational again, or to explain a wave of channel_timeout failures. It does not
        change channel settings.
        """
        return detached(list(self.backend.channels.values()))

    @tool(name="payment.get_channel_status", read_only=True)
    def get_channel_status(self, channel: str) -> PaymentChannel:
        """Read-only health of one payment channel, including operator notes about incidents.

        Use when a single channel is suspected, e.g. many refunds on cardpay failed with
        channel_timeout. It does not pause, resume or reconfigure the channel.

        Args:
            channel: Payment channel name: "cardpay", "walletx" or "bankwire".
        """
        return detached(self._channel(channel))

    @tool(name="payment.set_channel_availability", destructive=True, requires_approval=True)
    def set_channel_availability(
        self,
        channel: str,
        status: Literal["operational", "degraded", "down"],
        note: str,
        context: ToolContext | None = None,
    ) -> PaymentChannel:
        """Change the declared availability of a payment channel for all merchants.

        Setting "down" stops every refund and payment on that channel until it is set back to
        "operational"; this affects all customers and requires approval. Use only on explicit
        instruction from payments engineering, never to investigate failures.

        Args:
            channel: Payment channel name: "cardpay", "walletx" or "bankwire".
            status: New availability of the channel.
            note: Operator note explaining the change, shown on the channel status.
        """
        target = self._channel(channel)
        target.status = status
        target.note = note
        self.backend.tick()
        self.backend.audit(actor_of(context), f"set channel {channel} {status}: {note}")
        return detached(target)

    def _channel(self, channel: str) -> PaymentChannel:
        try:
            return self.backend.channels[channel]
        except KeyError:
            raise RefundDeskError(f"no payment channel {channel!r}") from None

    @tool(name="payment.get_merchant_balance", read_only=True)
    def get_merchant_balance(self, merchant_id: str) -> MerchantBalance:
        """Read-only balance of a merchant account and the failed refunds it cannot cover.

        Use when refunds fail with insufficient_merchant_balance, to see how much is missing.
        It does not move money and does not top up the balance.

        Args:
            merchant_id: Merchant id, e.g. "M-200".
        """
        merchant = self.backend.merchant(merchant_id)
        uncovered = [
            r.refund_id
            for r in self.backend.refunds.values()
            if r.merchant_id == merchant_id
            and r.status == "failed"
            and r.amount_cents > merchant.balance_cents
        ]
        return MerchantBalance(
            merchant_id=merchant.merchant_id,
            name=merchant.name,
            balance_cents=merchant.balance_cents,
            currency=merchant.currency,
            uncovered_failed_refunds=uncovered,
        )

    @tool(name="payment.top_up_merchant_balance", destructive=True, requires_approval=True)
    def top_up_merchant_balance(
        self, merchant_id: str, amount_cents: int, context: ToolContext | None = None
    ) -> Merchant:
        """Transfer funds from the platform reserve to a merchant account.

        Moves real money and requires approval by merchant accounts. Use only when the user
        explicitly asks to fund a merchant; it does not retry the refunds that failed for lack
        of balance.

        Args:
            merchant_id: Merchant id, e.g. "M-200".
            amount_cents: Amount to add in cents; must be positive.
        """
        if amount_cents <= 0:
            raise RefundDeskError("amount_cents must be positive")
        merchant = self.backend.merchant(merchant_id)
        merchant.balance_cents += amount_cents
        self.backend.tick()
        self.backend.audit(actor_of(context), f"topped up {merchant_id} by {amount_cents}")
        return detached(merchant)
