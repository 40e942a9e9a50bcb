"""Notification tools: owner updates, email, SMS, chat, pager and customer notices."""

from __future__ import annotations

from toolrelay.tools import ToolContext, tool

from .backend import RefundDeskBackend
from .common import actor_of, detached
from .records import Channel, Message, RefundDeskError

__all__ = ["NotifyService"]


class NotifyService:
    """Notification tools over a :class:`RefundDeskBackend`; messages land in its outbox."""

    def __init__(self, backend: RefundDeskBackend) -> None:
        self.backend = backend

    @tool(name="notify.send_owner_message")
    def send_owner_message(
        self,
        message: str,
        domain: str = "refunds",
        subject: str = "Refund desk update",
        ticket_ids: list[str] | None = None,
        context: ToolContext | None = None,
    ) -> Message:
        """Send a status update to the business owner of a domain (refunds by default).

        Use at the end of a triage to tell the owner what was done, e.g. how many refunds
        were retried and which incident tickets were opened. The owner is looked up in the
        users directory and reached on their preferred channel. Side effect: one message is
        delivered. It does not page on-call engineers and does not contact customers.

        Args:
            message: The update to send, in plain text.
            domain: Business domain whose owner is notified: "refunds", "payments",
                "orders", "support", "database" or "merchant_accounts".
            subject: Subject line (used by email; shown as a heading in chat).
            ticket_ids: Ticket ids to reference; they are listed under the message.
        """
        owner_id = self.backend.domain_owners.get(domain)
        if owner_id is None:
            known = ", ".join(sorted(self.backend.domain_owners))
            raise RefundDeskError(f"no owner for domain {domain!r}; known domains: {known}")
        owner = self.backend.user(owner_id)
        tickets = list(ticket_ids or [])
        for ticket_id in tickets:
            self.backend.ticket(ticket_id)
        body = message
        if tickets:
            body += "\n\nRelated tickets: " + ", ".join(tickets)
        return detached(
            self.backend.send_message(
                channel=owner.preferred_channel,
                recipient=owner.user_id,
                subject=subject,
                body=body,
                sender=actor_of(context),
                related_ids=tickets,
            )
        )

    @tool(name="notify.send_email")
    def send_email(
        self, to: str, subject: str, body: str, context: ToolContext | None = None
    ) -> Message:
        """Send an email to an employee (by user id) or to any email address.

        Use for detailed written updates that are not urgent. Side effect: the email is
        delivered and cannot be recalled. For the domain owner prefer
        notify.send_owner_message; for customers use notify.send_customer_refund_notice.

        Args:
            to: User id such as "U-KIM", or an email address.
            subject: Subject line.
            body: Plain-text body.
        """
        recipient = self.backend.user(to).email if to in self.backend.users else to
        if "@" not in recipient:
            raise RefundDeskError(f"{to!r} is neither a known user id nor an email address")
        return self._send("email", recipient, subject, body, context)

    @tool(name="notify.send_sms")
    def send_sms(self, user_id: str, text: str, context: ToolContext | None = None) -> Message:
        """Send a short text message (SMS) to an employee's mobile phone.

        Use for short urgent notes to someone who may be away from chat. Side effect: an SMS
        is delivered; keep it under 160 characters. It does not page and is not for customers.

        Args:
            user_id: User id of the employee, e.g. "U-OKAFOR".
            text: Message text, at most 160 characters.
        """
        if len(text) > 160:
            raise RefundDeskError(f"an SMS holds at most 160 characters, got {len(text)}")
        phone = self.backend.user(user_id).phone
        return self._send("sms", phone, "", text, context)

    @tool(name="notify.post_chat_message")
    def post_chat_message(
        self, chat_channel: str, text: str, context: ToolContext | None = None
    ) -> Message:
        """Post a message to a team chat channel such as "#refund-ops" or "#payments".

        Use to share progress with a whole team. Side effect: everyone in the channel sees it.
        For one person use notify.send_direct_message.

        Args:
            chat_channel: Channel name starting with "#", e.g. "#refund-ops".
            text: Message text (Markdown allowed).
        """
        if not chat_channel.startswith("#"):
            raise RefundDeskError(f"chat channels start with '#', got {chat_channel!r}")
        return self._send("chat", chat_channel, "", text, context)

    @tool(name="notify.send_direct_message")
    def send_direct_message(
        self, user_id: str, text: str, context: ToolContext | None = None
    ) -> Message:
        """Send a private chat message (direct message) to one employee.

        Use for a quick personal note, e.g. asking an assignee to look at a ticket. Side
        effect: the message is delivered in chat. It does not create tickets.

        Args:
            user_id: User id of the recipient, e.g. "U-ZHANG".
            text: Message text (Markdown allowed).
        """
        user = self.backend.user(user_id)
        return self._send("chat", user.user_id, "", text, context)

    @tool(name="notify.page_oncall")
    def page_oncall(self, team: str, summary: str, context: ToolContext | None = None) -> Message:
        """Page the on-call engineer of a team through the pager, waking them if necessary.

        Use only for urgent production problems that need a person now, such as a payment
        channel being down. Side effect: a high-priority page is sent. Do not use it for
        routine status updates; use notify.send_owner_message or chat instead.

        Args:
            team: Team whose on-call person is paged, e.g. "payments-platform".
            summary: One-line description of the emergency.
        """
        user_id = self.backend.oncall.get(team)
        if user_id is None:
            known = ", ".join(sorted(self.backend.oncall))
            raise RefundDeskError(f"team {team!r} has no on-call rotation; known: {known}")
        return self._send("pager", user_id, f"PAGE {team}", summary, context)

    @tool(name="notify.send_customer_refund_notice")
    def send_customer_refund_notice(
        self, refund_id: str, extra_note: str = "", context: ToolContext | None = None
    ) -> Message:
        """Email the customer of a refund a notice about its current status.

        Use after a refund succeeded, or when the customer must act (e.g. account_closed
        means they need to provide a new payout method). Side effect: an email goes to the
        shopper. It is never for employees or owners.

        Args:
            refund_id: Refund id, e.g. "RF-2001".
            extra_note: Optional sentence appended to the standard notice.
        """
        refund = self.backend.refund(refund_id)
        customer = self.backend.customer(refund.customer_id)
        amount = f"{refund.amount_cents / 100:.2f} {refund.currency}"
        body = f"Dear {customer.name}, your refund {refund_id} of {amount} is {refund.status}."
        if extra_note:
            body += f" {extra_note}"
        return self._send(
            "email", customer.email, f"Your refund {refund_id}", body, context, related=[refund_id]
        )

    @tool(name="notify.list_sent_messages", read_only=True)
    def list_sent_messages(
        self, recipient: str | None = None, channel: Channel | None = None, limit: int = 20
    ) -> list[Message]:
        """Read-only list of messages already sent (email, SMS, chat, pager), newest first.

        Use to check whether someone was already notified before sending again. It sends
        nothing.

        Args:
            recipient: Only messages to this user id, address, phone or chat channel.
            channel: Only messages sent on this channel.
            limit: Maximum number of messages to return.
        """
        found = [
            m
            for m in reversed(self.backend.messages)
            if recipient in (None, m.recipient) and channel in (None, m.channel)
        ]
        return detached(found[:limit])

    @tool(name="notify.get_delivery_status", read_only=True)
    def get_delivery_status(self, message_id: str) -> Message:
        """Read-only delivery status of one sent message: delivered, queued or failed.

        Use when someone says they never got a notification. It does not resend anything.

        Args:
            message_id: Message id, e.g. "MSG-7001".
        """
        for message in self.backend.messages:
            if message.message_id == message_id:
                return detached(message)
        raise RefundDeskError(f"no message {message_id!r}")

    def _send(
        self,
        channel: Channel,
        recipient: str,
        subject: str,
        body: str,
        context: ToolContext | None,
        related: list[str] | None = None,
    ) -> Message:
        message = self.backend.send_message(
            channel=channel,
            recipient=recipient,
            subject=subject,
            body=body,
            sender=actor_of(context),
            related_ids=related,
        )
        return detached(message)
