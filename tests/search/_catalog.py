"""A small catalog with known answers, shared by the search tests."""

from __future__ import annotations

from toolrelay.tools._base import ToolDefinition


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

# Chinese descriptions, mostly English names (as Chinese catalogs usually are), one Chinese
# name, and tools that share words with each other (退款, 订单, 查询).
CATALOG_ZH: tuple[ToolDefinition, ...] = (
    tool(
        "refund.findFailedRefunds",
        "查询指定时间范围内退款失败的订单",
        start_date={"type": "string", "description": "开始日期"},
        end_date={"type": "string", "description": "结束日期"},
    ),
    tool(
        "refund.issueRefund",
        "为订单发起退款，退回到客户的银行卡",
        order_id={"type": "string", "description": "订单号", "required": True},
    ),
    tool(
        "orders.getOrderStatus",
        "查询订单的物流状态和快递单号",
        order_id={"type": "string", "description": "订单号", "required": True},
    ),
    tool(
        "weather.forecast",
        "查询城市未来五天的天气预报",
        city={"type": "string", "description": "城市名称，例如北京", "required": True},
    ),
    tool(
        "文案分析工具",
        "分析营销文案的情感倾向",
        text={"type": "string", "description": "要分析的文案", "required": True},
    ),
    tool(
        "send_email",
        "Send an email message to a recipient.",
        to={"type": "string", "description": "Recipient address"},
    ),
)
