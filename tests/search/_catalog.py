"""A small catalog with known answers, shared by the search tests."""

from __future__ import annotations

from toolrelay.tools.base import ToolDefinition


def tool(name: str, description: str, **properties: dict[str, object]) -> ToolDefinition:
    required = [p for p, spec in properties.items() if spec.pop("required", False)]
    return ToolDefinition(
        name=name,
        description=description,
        input_schema={"type": "object", "properties": properties, "required": required},
    )


CATALOG: tuple[ToolDefinition, ...] = (
    tool(
        "get_weather",
        "Get the current weather for a city.",
        city={"type": "string", "description": "City name, e.g. Paris", "required": True},
        unit={"type": "string", "enum": ["celsius", "fahrenheit"]},
    ),
    tool(
        "get_forecast",
        "Five-day weather forecast for a city.",
        city={"type": "string", "description": "City name", "required": True},
    ),
    tool(
        "refund.find_failed_orders",
        "List the orders whose payment failed.",
        customer_email={"type": "string", "description": "The customer's email"},
    ),
    tool(
        "refund.issueRefund",
        "Refund an order to the customer's card.",
        order_id={"type": "string", "description": "The order to refund", "required": True},
    ),
    tool(
        "shop_search_orders",
        "Search orders by customer email address.",
        query={"type": "string", "required": True},
    ),
    tool(
        "shop_get_order_order_id",
        "Get the details of one order: items, totals and status.",
        order_id={"type": "string", "required": True},
    ),
    tool(
        "send_email",
        "Send an email message to a recipient.",
        to={"type": "string", "description": "Recipient address"},
        subject={"type": "string"},
        body={"type": "string"},
    ),
    tool(
        "convert_currency",
        "Convert an amount of money between currencies.",
        amount={"type": "number"},
        target={"type": "string", "enum": ["USD", "EUR", "JPY"]},
    ),
)

NAMES: tuple[str, ...] = tuple(t.name for t in CATALOG)
