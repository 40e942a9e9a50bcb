"""Refund desk: an enterprise tool catalog for refund triage, backed by a deterministic fake.

The catalog spans the order center, payment system, ticket platform, notifications, GitHub,
a database and the users directory: 78 tools with dotted domain names, several of them
confusable on purpose (``refund.find_orders`` / ``refund.find_failed_orders``,
``refund.retry_failed_order`` / ``refund.rebuild_task`` / ``refund.force_success``). It is the
scenario progressive tool disclosure is built for: the model should find the four tools of
:data:`TASK` among dozens without seeing them all.

The desk also speaks Chinese: ``build_catalog(lang="zh")`` shows the same tools (same names,
schemas and code) with Chinese descriptions (see :mod:`.zh`), and ``TASKS["zh"]`` is the task
in the seed documents' words.

Example::

    from examples.refund_desk import RefundDeskBackend, build_catalog

    backend = RefundDeskBackend.seeded()
    catalog = build_catalog(backend)
    finder = catalog.get("refund.find_failed_orders")
    print(finder.call_sync("{}"))         # yesterday's failed refunds, as JSON
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from toolrelay.tools import Tool, ToolCatalog, tools_from

from .backend import FAILURE_REASONS, TODAY, RefundDeskBackend
from .database import DatabaseService
from .github import GitHubService
from .notify import NotifyService
from .orders import OrderService
from .payments import PaymentService
from .records import RefundDeskError
from .refunds import RefundService
from .reports import ReportService
from .tickets import TicketService
from .users import UserService
from .zh import TASK_ZH, in_chinese

__all__ = [
    "FAILURE_REASONS",
    "LANGUAGES",
    "REQUIRED_TOOLS",
    "TASK",
    "TASKS",
    "TODAY",
    "RefundDeskBackend",
    "RefundDeskError",
    "all_tools",
    "build_catalog",
    "services",
]

TASK = (
    "Find yesterday's failed refunds, retry the recoverable ones, open tickets for the ones "
    "still failing, and notify the owner."
)
"""The refund-triage task the catalog is built around."""

TASKS: Mapping[str, str] = MappingProxyType({"en": TASK, "zh": TASK_ZH})
"""The task in each language :func:`build_catalog` speaks."""

LANGUAGES = tuple(TASKS)
"""The languages of the catalog's texts: ``"en"`` (the tools' own) and ``"zh"``."""

REQUIRED_TOOLS = (
    "refund.find_failed_orders",
    "refund.retry_failed_order",
    "ticket.create_incident",
    "notify.send_owner_message",
)
"""The tools :data:`TASK` needs, in the order they are called."""


def services(backend: RefundDeskBackend) -> list[object]:
    """One instance of every service class, all sharing ``backend``."""
    return [
        RefundService(backend),
        PaymentService(backend),
        OrderService(backend),
        TicketService(backend),
        NotifyService(backend),
        UserService(backend),
        GitHubService(backend),
        DatabaseService(backend),
        ReportService(backend),
    ]


def all_tools(backend: RefundDeskBackend | None = None) -> list[Tool]:
    """Every refund-desk tool, bound to ``backend`` (a freshly seeded one when omitted)."""
    backend = backend if backend is not None else RefundDeskBackend.seeded()
    return [t for service in services(backend) for t in tools_from(service)]


def build_catalog(backend: RefundDeskBackend | None = None, *, lang: str = "en") -> ToolCatalog:
    """A :class:`~toolrelay.tools.ToolCatalog` of every refund-desk tool.

    Args:
        backend: The back end the tools read and change; a freshly seeded one when omitted.
        lang: The language of the texts the model reads: ``"en"`` or ``"zh"`` (the same
            tools, names and schemas, with Chinese descriptions).

    Raises:
        RefundDeskError: ``lang`` is not one of :data:`LANGUAGES`.
    """
    if lang not in TASKS:
        raise RefundDeskError(f"no refund desk in {lang!r}; choose one of {', '.join(TASKS)}")
    tools = all_tools(backend)
    return ToolCatalog(in_chinese(tools) if lang == "zh" else tools, source="examples.refund_desk")
