"""Seed data of the workplace around the refunds: employees, tickets, messages and GitHub."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import cast

from .backend import RefundDeskBackend
from .records import (
    Channel,
    Commit,
    Customer,
    GitHubIssue,
    Message,
    PullRequest,
    Ticket,
    TicketComment,
    User,
    WorkflowRun,
)

__all__ = ["Stamp", "seed_github", "seed_people", "seed_tickets_and_messages"]

Stamp = Callable[[int, str], datetime]
"""(days before today, "HH:MM") -> datetime."""

# Employees: user id | name | team | title | preferred channel | roles
_PEOPLE = """
U-LIN     | Mei Lin       | refund-ops        | Refund operations lead    | chat  | refund_admin
U-ZHANG   | Wei Zhang     | refund-ops        | Refund operations analyst | chat  | refund_operator
U-OKAFOR  | Chidi Okafor  | payments-platform | Payments engineer         | pager | engineer
U-GARCIA  | Sofia Garcia  | customer-support  | Support lead              | email | support_agent
U-PATEL   | Arjun Patel   | data-platform     | Database administrator    | chat  | dba
U-MUELLER | Jonas Mueller | order-center      | Order center owner        | email | engineer
U-KIM     | Ji-woo Kim    | merchant-accounts | Merchant accounts manager | email | finance
U-ROSSI   | Luca Rossi    | refund-ops        | Former analyst            | email | refund_operator
"""


def seed_people(backend: RefundDeskBackend) -> None:
    for line in _PEOPLE.strip().splitlines():
        user_id, name, team, title, channel, roles = (cell.strip() for cell in line.split("|"))
        first, last = name.lower().split(" ", 1)
        backend.users[user_id] = User(
            user_id=user_id,
            name=name,
            email=f"{first}.{last}@acme.example",
            phone=f"+1-555-01{len(backend.users):02d}",
            team=team,
            title=title,
            chat_handle=f"@{first}.{last}",
            preferred_channel=cast(Channel, channel),
            roles=roles.split(","),
            active=user_id != "U-ROSSI",
        )
    backend.domain_owners = {
        "refunds": "U-LIN",
        "payments": "U-OKAFOR",
        "orders": "U-MUELLER",
        "support": "U-GARCIA",
        "database": "U-PATEL",
        "merchant_accounts": "U-KIM",
    }
    backend.oncall = {
        "refund-ops": "U-ZHANG",
        "payments-platform": "U-OKAFOR",
        "data-platform": "U-PATEL",
        "customer-support": "U-GARCIA",
    }
    names = (
        "Ava Brooks",
        "Noah Reyes",
        "Liam Chen",
        "Emma Novak",
        "Olivia Haddad",
        "Mateo Silva",
        "Zoe Tanaka",
        "Ethan Walsh",
    )
    for n, name in enumerate(names, start=1):
        first, last = name.lower().split(" ")
        backend.customers[f"C-{n:02d}"] = Customer(
            customer_id=f"C-{n:02d}",
            name=name,
            email=f"{first}.{last}@mail.example",
            phone=f"+1-555-02{n:02d}",
            tier=("standard", "gold", "platinum")[n % 3],
        )


def seed_tickets_and_messages(backend: RefundDeskBackend, stamp: Stamp) -> None:
    backend.tickets["TCK-401"] = Ticket(
        ticket_id="TCK-401",
        kind="task",
        title="Reconcile bankwire payouts for May",
        description="Month-end reconciliation of bankwire refund payouts against statements.",
        severity="sev4",
        status="in_progress",
        team="merchant-accounts",
        assignee="U-KIM",
        reporter="U-LIN",
        tenant_id="acme",
        created_at=stamp(9, "10:00"),
    )
    backend.tickets["TCK-402"] = Ticket(
        ticket_id="TCK-402",
        kind="incident",
        title="cardpay timeouts failing refunds",
        description="cardpay answered after the 3 s client timeout; RF-2008 failed.",
        severity="sev3",
        status="open",
        team="payments-platform",
        assignee="U-OKAFOR",
        reporter="U-ZHANG",
        tenant_id="acme",
        created_at=stamp(2, "15:40"),
        refund_ids=["RF-2008"],
        comments=[
            TicketComment(
                author="U-OKAFOR", body="Raising the timeout in PR #415.", at=stamp(1, "18:00")
            )
        ],
    )
    backend.messages.append(
        Message(
            message_id="MSG-7001",
            channel="email",
            recipient="U-KIM",
            subject="Blue Harbor Books balance is low",
            body="Merchant M-200 has 34.00 USD left; refunds above that amount will fail.",
            sender="system",
            sent_at=stamp(2, "07:00"),
            related_ids=["M-200"],
        )
    )


def seed_github(backend: RefundDeskBackend, stamp: Stamp) -> None:
    repo = "acme/refund-service"
    backend.issues[(repo, 412)] = GitHubIssue(
        repo=repo,
        number=412,
        title="cardpay client timeout (3s) too low, refunds fail with channel_timeout",
        body="Under load cardpay answers in 4-6 s; our client gives up after 3 s.",
        state="open",
        author="okafor",
        labels=["bug", "payments"],
    )
    backend.issues[(repo, 398)] = GitHubIssue(
        repo=repo,
        number=398,
        title="Refund task queue loses tasks on worker restart",
        body="Tasks in state 'queued' vanish when a worker restarts mid-batch; see RF-2013.",
        state="open",
        author="zhang",
        labels=["bug", "refund-tasks"],
    )
    backend.issues[("acme/order-center", 77)] = GitHubIssue(
        repo="acme/order-center",
        number=77,
        title="Order timeline shows refunds twice",
        body="Cosmetic duplication in the order timeline view.",
        state="closed",
        author="mueller",
        labels=["ui"],
    )
    backend.pull_requests[(repo, 415)] = PullRequest(
        repo=repo,
        number=415,
        title="Raise cardpay timeout to 10s and add jittered retry",
        author="okafor",
        state="closed",
        merged=True,
        changed_files=["refunds/channels/cardpay.py", "tests/channels/test_cardpay.py"],
    )
    backend.pull_requests[(repo, 417)] = PullRequest(
        repo=repo,
        number=417,
        title="Persist refund tasks before acknowledging the queue",
        author="zhang",
        state="open",
        merged=False,
        changed_files=["refunds/tasks/queue.py"],
    )
    backend.commits = [
        Commit(
            repo=repo,
            sha="9f3c2e1",
            message="Raise cardpay timeout to 10s (#415)",
            author="okafor",
            at=stamp(1, "17:55"),
            paths=["refunds/channels/cardpay.py"],
        ),
        Commit(
            repo=repo,
            sha="4b7a9d0",
            message="Log channel latency per refund attempt",
            author="zhang",
            at=stamp(3, "11:20"),
            paths=["refunds/attempts.py"],
        ),
        Commit(
            repo="acme/payment-gateway",
            sha="c01d5aa",
            message="walletx: reuse connections",
            author="okafor",
            at=stamp(2, "09:05"),
            paths=["gateway/walletx.py"],
        ),
    ]
    backend.workflow_runs = {
        5101: WorkflowRun(
            repo=repo,
            run_id=5101,
            workflow="deploy-production",
            status="completed",
            conclusion="success",
            commit_sha="9f3c2e1",
            started_at=stamp(1, "18:10"),
        ),
        5102: WorkflowRun(
            repo=repo,
            run_id=5102,
            workflow="nightly-integration",
            status="completed",
            conclusion="failure",
            commit_sha="9f3c2e1",
            started_at=stamp(0, "02:00"),
        ),
    }
