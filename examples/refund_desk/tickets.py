"""Ticket-platform tools: incidents and tasks, their search, comments, assignment and status."""

from __future__ import annotations

from toolrelay.tools import ToolContext, tool

from .backend import RefundDeskBackend
from .common import actor_of, detached
from .records import RefundDeskError, Severity, Ticket, TicketComment, TicketStatus

__all__ = ["TicketService"]


class TicketService:
    """Ticket tools over a :class:`RefundDeskBackend`."""

    def __init__(self, backend: RefundDeskBackend) -> None:
        self.backend = backend

    @tool(name="ticket.create_incident")
    def create_incident(
        self,
        title: str,
        description: str,
        refund_ids: list[str],
        context: ToolContext,
        severity: Severity = "sev3",
        team: str = "refund-ops",
        assignee: str | None = None,
    ) -> Ticket:
        """Open an incident ticket for refunds that are still failing and need a person.

        Use after a retry did not help (e.g. account_closed, insufficient_merchant_balance),
        one incident per failing refund or per shared root cause. Side effect: creates a
        ticket assigned to the team's on-call person unless an assignee is given; the reporter
        and tenant come from the caller's context. It refuses refunds that already have an
        open incident (comment on that one instead) and notifies nobody.

        Args:
            title: Short summary, e.g. "Refund RF-2002 failing: account_closed".
            description: What failed, what was tried, and what a person must do next.
            refund_ids: Ids of the failing refunds this incident is about.
            severity: "sev1" (critical) to "sev4" (minor).
            team: Team that owns the incident, e.g. "refund-ops" or "merchant-accounts".
            assignee: User id to assign; defaults to the team's on-call person.
        """
        if not refund_ids:
            raise RefundDeskError("an incident must name at least one refund id")
        for refund_id in refund_ids:
            self.backend.refund(refund_id)
            for existing in self.backend.tickets.values():
                if (
                    existing.kind == "incident"
                    and existing.status in ("open", "in_progress")
                    and refund_id in existing.refund_ids
                ):
                    raise RefundDeskError(
                        f"refund {refund_id} already has open incident {existing.ticket_id}; "
                        "add a comment to it with ticket.add_comment"
                    )
        return self._create(
            "incident", title, description, severity, team, assignee, refund_ids, context
        )

    @tool(name="ticket.create_task")
    def create_task(
        self,
        title: str,
        description: str,
        team: str,
        assignee: str | None = None,
        context: ToolContext | None = None,
    ) -> Ticket:
        """Open an ordinary work ticket (a to-do for a team), not an incident.

        Use for follow-up work without urgency, e.g. "reconcile bankwire payouts". For
        refunds that are failing use ticket.create_incident instead. Side effect: creates a
        sev4 task ticket; it notifies nobody.

        Args:
            title: Short summary of the work.
            description: What should be done and why.
            team: Team that owns the task, e.g. "merchant-accounts".
            assignee: User id to assign; defaults to the team's on-call person.
        """
        return self._create("task", title, description, "sev4", team, assignee, [], context)

    @tool(name="ticket.get", read_only=True)
    def get(self, ticket_id: str) -> Ticket:
        """Read-only lookup of one ticket with its status, assignee, refunds and comments.

        Use when you have a ticket id and need its current state. It changes nothing.

        Args:
            ticket_id: Ticket id, e.g. "TCK-402".
        """
        return detached(self.backend.ticket(ticket_id))

    @tool(name="ticket.search", read_only=True)
    def search(
        self,
        text: str | None = None,
        status: TicketStatus | None = None,
        team: str | None = None,
        kind: str | None = None,
        limit: int = 20,
    ) -> list[Ticket]:
        """Read-only search of tickets by words in the title or description, status and team.

        Use to check whether a problem is already tracked before opening a new ticket. It
        does not create or change tickets.

        Args:
            text: Words that must all appear in the title or description (case-insensitive).
            status: Only tickets in this status.
            team: Only tickets owned by this team.
            kind: Only "incident" or "task" tickets.
            limit: Maximum number of tickets to return.
        """
        words = (text or "").lower().split()
        found = [
            t
            for t in self.backend.tickets.values()
            if all(w in f"{t.title} {t.description}".lower() for w in words)
            and status in (None, t.status)
            and team in (None, t.team)
            and kind in (None, t.kind)
        ]
        return detached(found[:limit])

    @tool(name="ticket.find_by_refund", read_only=True)
    def find_by_refund(self, refund_id: str) -> list[Ticket]:
        """Read-only list of the tickets that mention a refund id, open or closed.

        Use before opening an incident for a refund, to avoid duplicates, or to see how an
        earlier failure of the same refund was handled. It changes nothing.

        Args:
            refund_id: Refund id, e.g. "RF-2008".
        """
        return detached([t for t in self.backend.tickets.values() if refund_id in t.refund_ids])

    @tool(name="ticket.add_comment")
    def add_comment(self, ticket_id: str, body: str, context: ToolContext | None = None) -> Ticket:
        """Add a comment to an existing ticket, e.g. a progress update or new evidence.

        Side effect: the comment is stored with the author from the context. It does not
        change the status or the assignee, and notifies nobody.

        Args:
            ticket_id: Ticket id, e.g. "TCK-402".
            body: Text of the comment.
        """
        ticket = self.backend.ticket(ticket_id)
        actor = actor_of(context)
        ticket.comments.append(TicketComment(author=actor, body=body, at=self.backend.tick()))
        self.backend.audit(actor, f"commented on {ticket_id}")
        return detached(ticket)

    @tool(name="ticket.assign")
    def assign(self, ticket_id: str, assignee: str, context: ToolContext | None = None) -> Ticket:
        """Assign a ticket to a person, replacing the current assignee.

        Side effect: changes the ticket's assignee. It does not message the new assignee;
        use a notify tool for that.

        Args:
            ticket_id: Ticket id, e.g. "TCK-403".
            assignee: User id of the new assignee, e.g. "U-KIM".
        """
        ticket = self.backend.ticket(ticket_id)
        self.backend.user(assignee)
        ticket.assignee = assignee
        self.backend.tick()
        self.backend.audit(actor_of(context), f"assigned {ticket_id} to {assignee}")
        return detached(ticket)

    @tool(name="ticket.update_status")
    def update_status(
        self, ticket_id: str, status: TicketStatus, context: ToolContext | None = None
    ) -> Ticket:
        """Move a ticket to another workflow status such as in_progress or resolved.

        Side effect: changes the ticket status. To close with a resolution text use
        ticket.close; to raise urgency use ticket.escalate.

        Args:
            ticket_id: Ticket id, e.g. "TCK-401".
            status: The new status.
        """
        ticket = self.backend.ticket(ticket_id)
        ticket.status = status
        self.backend.tick()
        self.backend.audit(actor_of(context), f"set {ticket_id} {status}")
        return detached(ticket)

    @tool(name="ticket.escalate")
    def escalate(
        self, ticket_id: str, severity: Severity, reason: str, context: ToolContext | None = None
    ) -> Ticket:
        """Raise the severity of a ticket and record why, e.g. when many customers are affected.

        Side effect: changes the severity and adds a comment. It does not page anyone; use
        notify.page_oncall for that.

        Args:
            ticket_id: Ticket id, e.g. "TCK-402".
            severity: The new, higher severity ("sev1" is the highest).
            reason: Why the ticket is escalated.
        """
        ticket = self.backend.ticket(ticket_id)
        if severity >= ticket.severity:
            raise RefundDeskError(f"{ticket_id} is already {ticket.severity}; pick a higher one")
        actor = actor_of(context)
        ticket.severity = severity
        ticket.comments.append(
            TicketComment(
                author=actor, body=f"Escalated to {severity}: {reason}", at=self.backend.tick()
            )
        )
        self.backend.audit(actor, f"escalated {ticket_id} to {severity}")
        return detached(ticket)

    @tool(name="ticket.close")
    def close(self, ticket_id: str, resolution: str, context: ToolContext | None = None) -> Ticket:
        """Close a ticket with a resolution text once the problem is solved.

        Side effect: the ticket becomes closed and leaves every backlog. It does not fix the
        underlying refund or order.

        Args:
            ticket_id: Ticket id, e.g. "TCK-402".
            resolution: How the problem was solved.
        """
        ticket = self.backend.ticket(ticket_id)
        ticket.status = "closed"
        ticket.resolution = resolution
        self.backend.tick()
        self.backend.audit(actor_of(context), f"closed {ticket_id}")
        return detached(ticket)

    def _create(
        self,
        kind: str,
        title: str,
        description: str,
        severity: Severity,
        team: str,
        assignee: str | None,
        refund_ids: list[str],
        context: ToolContext | None,
    ) -> Ticket:
        if assignee is not None:
            self.backend.user(assignee)
        reporter = actor_of(context)
        ticket = Ticket(
            ticket_id=self.backend.next_id("TCK"),
            kind=kind,  # type: ignore[arg-type]
            title=title,
            description=description,
            severity=severity,
            status="open",
            team=team,
            assignee=assignee or self.backend.oncall.get(team),
            reporter=reporter,
            tenant_id=None if context is None else context.tenant_id,
            created_at=self.backend.tick(),
            refund_ids=list(refund_ids),
        )
        self.backend.tickets[ticket.ticket_id] = ticket
        self.backend.audit(reporter, f"opened {kind} {ticket.ticket_id}: {title}")
        return detached(ticket)
