"""The catalog every bridge's tests search: a few tools, one forbidden, one approval-gated.

Besides it, a keyed refund (``idempotency_key="order_id"``) for the tests of the one-door
guarantees, and an audit sink that keeps its records.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolrelay.bridges import BridgeSearch
from toolrelay.execution import ApprovalInterceptor, AuditRecord
from toolrelay.tools import Tool, ToolCatalog, ToolContext, ToolDefinition, as_tools, tool
from toolrelay.toolsearch import SearchOptions

RAN: list[tuple[str, dict[str, Any]]] = []
"""The tools that ran, with their arguments and the context's user, in order."""


@tool(name="weather.current")
def current_weather(city: str, context: ToolContext) -> str:
    """Current weather conditions for a city.

    Args:
        city: The city, e.g. 'Paris'.
    """
    RAN.append(("weather.current", {"city": city, "user": context.user_id}))
    return f"Sunny in {city}"


@tool(name="orders.cancel", requires_approval=True)
def cancel_order(order_id: str) -> str:
    """Cancel a customer order by its id.

    Args:
        order_id: The order's id.
    """
    RAN.append(("orders.cancel", {"order_id": order_id}))
    return f"order {order_id} cancelled"


@tool(name="payroll.export")
def export_payroll(month: str) -> str:
    """Export the payroll of every employee for a month.

    Args:
        month: The month, e.g. '2026-01'.
    """
    RAN.append(("payroll.export", {"month": month}))
    return "payroll exported"


@tool(name="calendar.create_event")
def create_event(title: str, day: str) -> str:
    """Create a calendar event on a day.

    Args:
        title: The event's title.
        day: The day, e.g. '2026-01-05'.
    """
    return f"created {title}"


@tool(name="stocks.quote")
def stock_quote(symbol: str) -> str:
    """The latest stock price quote for a ticker symbol.

    Args:
        symbol: The ticker, e.g. 'ACME'.
    """
    return f"{symbol}: 42.0"


@tool(name="billing.refund", idempotency_key="order_id")
def refund(order_id: int) -> str:
    """Refund a customer order by its number.

    Args:
        order_id: The order's number.
    """
    RAN.append(("billing.refund", {"order_id": order_id}))
    return f"refunded order {order_id}"


class AuditRecords:
    """An audit sink that keeps its records, in order."""

    def __init__(self) -> None:
        self.records: list[AuditRecord] = []

    async def write(self, record: AuditRecord) -> None:
        self.records.append(record)


def catalog() -> list[Tool]:
    return as_tools(current_weather, cancel_order, export_payroll, create_event, stock_quote)


def hide_payroll(context: ToolContext, definition: ToolDefinition) -> bool:
    """Only admins see payroll tools."""
    return not definition.name.startswith("payroll.") or context.get("role") == "admin"


def bridge(**guards: Any) -> BridgeSearch:
    """A bridge over :func:`catalog`, payroll hidden from all but admins.

    The catalog has a tool that requires approval, so a bridge needs ``approval=``: by default
    ``ApprovalInterceptor()``, a person decides through the framework's own way of pausing.
    """
    RAN.clear()
    guards.setdefault("approval", ApprovalInterceptor())
    return BridgeSearch(catalog(), options=SearchOptions(tool_filter=hide_payroll), **guards)


def ungated_catalog() -> ToolCatalog:
    """A live catalog of :func:`catalog`'s tools but the one that requires approval."""
    return ToolCatalog(t for t in catalog() if not t.metadata.requires_approval)


def add_gated_tool(live: ToolCatalog) -> None:
    """Add ``orders.cancel`` (it requires approval) to ``live``: seen at a bridge's next search."""
    live.add(as_tools(cancel_order)[0])


def names_in(listing: Mapping[str, Any] | list[Any]) -> set[str]:
    return set(listing)
