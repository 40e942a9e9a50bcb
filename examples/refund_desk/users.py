"""Users-directory tools: employees, teams, domain owners, on-call rotations and roles."""

from __future__ import annotations

from toolrelay.tools import ToolContext, tool

from .backend import RefundDeskBackend
from .common import actor_of, detached
from .records import RefundDeskError, User

__all__ = ["UserService"]

ROLES = ("refund_operator", "refund_admin", "support_agent", "engineer", "dba", "finance")


class UserService:
    """Directory tools over a :class:`RefundDeskBackend`."""

    def __init__(self, backend: RefundDeskBackend) -> None:
        self.backend = backend

    @tool(name="user.get", read_only=True)
    def get(self, user_id: str) -> User:
        """Read-only profile of an employee: name, team, title, contact details and roles.

        Use when you have a user id (an assignee, a reporter, an owner) and need to know who
        it is. Employees only; shoppers are customers (order.get_customer). It changes nothing.

        Args:
            user_id: User id, e.g. "U-LIN".
        """
        return detached(self.backend.user(user_id))

    @tool(name="user.search", read_only=True)
    def search(self, query: str) -> list[User]:
        """Read-only search of employees by part of their name, email, team or title.

        Use to find the user id of a person mentioned by name, e.g. "Mei" or "payments". It
        changes nothing.

        Args:
            query: Text to look for, case-insensitive.
        """
        needle = query.lower()
        return detached(
            [
                u
                for u in self.backend.users.values()
                if needle in f"{u.name} {u.email} {u.team} {u.title}".lower()
            ]
        )

    @tool(name="user.find_owner", read_only=True)
    def find_owner(self, domain: str) -> User:
        """Read-only lookup of the accountable business owner of a domain such as refunds.

        Use to learn who must be informed about, or decide on, problems in a domain. To send
        them an update directly use notify.send_owner_message. It changes nothing.

        Args:
            domain: Business domain: "refunds", "payments", "orders", "support", "database"
                or "merchant_accounts".
        """
        owner_id = self.backend.domain_owners.get(domain)
        if owner_id is None:
            known = ", ".join(sorted(self.backend.domain_owners))
            raise RefundDeskError(f"no owner for domain {domain!r}; known domains: {known}")
        return detached(self.backend.user(owner_id))

    @tool(name="user.get_oncall", read_only=True)
    def get_oncall(self, team: str) -> User:
        """Read-only lookup of who is on call right now for a team.

        Use to know who would handle an urgent problem or a new incident of that team. It
        does not page them (notify.page_oncall does) and changes nothing.

        Args:
            team: Team name, e.g. "payments-platform" or "refund-ops".
        """
        user_id = self.backend.oncall.get(team)
        if user_id is None:
            known = ", ".join(sorted(self.backend.oncall))
            raise RefundDeskError(f"team {team!r} has no on-call rotation; known: {known}")
        return detached(self.backend.user(user_id))

    @tool(name="user.list_team_members", read_only=True)
    def list_team_members(self, team: str, include_inactive: bool = False) -> list[User]:
        """Read-only list of the employees of a team.

        Use to pick an assignee or to see who works on refunds, payments or support. It
        changes nothing.

        Args:
            team: Team name, e.g. "refund-ops".
            include_inactive: Also list deactivated accounts.
        """
        members = [
            u
            for u in self.backend.users.values()
            if u.team == team and (u.active or include_inactive)
        ]
        return detached(members)

    @tool(name="user.get_permissions", read_only=True)
    def get_permissions(self, user_id: str) -> dict[str, object]:
        """Read-only roles of an employee and whether their account is active.

        Use to check whether someone may retry or force refunds (refund_operator,
        refund_admin) before acting on their request. It changes nothing.

        Args:
            user_id: User id, e.g. "U-ZHANG".
        """
        user = self.backend.user(user_id)
        return {"user_id": user.user_id, "active": user.active, "roles": list(user.roles)}

    @tool(name="user.grant_role", destructive=True, requires_approval=True)
    def grant_role(self, user_id: str, role: str, context: ToolContext | None = None) -> User:
        """Give an employee an additional role, widening what they may do.

        Security-sensitive: requires approval and is audited. Use only on an explicit access
        request; never grant roles to get a task done yourself.

        Args:
            user_id: User id of the employee.
            role: Role to grant: "refund_operator", "refund_admin", "support_agent",
                "engineer", "dba" or "finance".
        """
        if role not in ROLES:
            raise RefundDeskError(f"unknown role {role!r}; roles: {', '.join(ROLES)}")
        user = self.backend.user(user_id)
        if role not in user.roles:
            user.roles.append(role)
        self.backend.tick()
        self.backend.audit(actor_of(context), f"granted {role} to {user_id}")
        return detached(user)

    @tool(name="user.deactivate", destructive=True, requires_approval=True)
    def deactivate(self, user_id: str, reason: str, context: ToolContext | None = None) -> User:
        """Deactivate an employee account so it can no longer sign in or receive assignments.

        Irreversible without an administrator and requires approval. Use only for people who
        left the company or on a security instruction.

        Args:
            user_id: User id of the employee.
            reason: Why the account is deactivated.
        """
        user = self.backend.user(user_id)
        user.active = False
        self.backend.tick()
        self.backend.audit(actor_of(context), f"deactivated {user_id}: {reason}")
        return detached(user)
