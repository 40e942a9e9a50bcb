"""Declare tools, look at what a model is shown, and call them the way the runtime does.

Runs offline: no API key, no server.

    python examples/quickstart.py
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

from toolrelay.exceptions import ToolArgumentError
from toolrelay.tools import FunctionTool, ToolCatalog, ToolContext, tool, tools_from
from toolrelay.tools._names import provider_safe_name


# A plain function: the docstring's summary becomes the description, its Args section the
# parameter descriptions, and the type hints the JSON Schema.
@tool
def get_weather(city: str, unit: Literal["c", "f"] = "c") -> dict[str, Any]:
    """Current weather for a city.

    Args:
        city: City name, for example "Paris".
        unit: "c" for Celsius or "f" for Fahrenheit.
    """
    celsius = {"paris": 18.0, "oslo": 4.0}.get(city.lower(), 21.0)
    temperature = celsius if unit == "c" else round(celsius * 9 / 5 + 32, 1)
    return {"city": city, "temperature": temperature, "unit": unit}


# An async function is awaited; a sync one runs in a worker thread.
@tool
async def convert_currency(amount: float, source: str, target: str) -> float:
    """Convert an amount of money between currencies at today's rate.

    Args:
        amount: The amount in the source currency.
        source: ISO code of the source currency, for example "EUR".
        target: ISO code of the target currency.
    """
    await asyncio.sleep(0)  # stands in for a rate lookup over the network
    per_euro = {"EUR": 1.0, "USD": 1.08, "GBP": 0.85}
    return round(amount / per_euro[source] * per_euro[target], 2)


# Methods of a service become tools bound to the instance. A parameter typed ToolContext
# receives the caller's context: the model never sees it and cannot forge the tenant.
class RefundService:
    """Refunds for a shop with several tenants."""

    def __init__(self, failed_orders: dict[str, list[str]]) -> None:
        self._failed_orders = failed_orders

    @tool(name="refund.find_failed_orders")
    def find_failed_orders(self, days: int, context: ToolContext) -> list[str]:
        """Orders of the caller's tenant whose payment failed recently.

        Args:
            days: How many days back to look.
        """
        return [f"{order} (last {days} days)" for order in self._failed_orders[context.tenant_id]]

    @tool(name="refund.issue_refund")
    def issue_refund(self, order_id: str, reason: str) -> str:
        """Refund an order in full.

        Args:
            order_id: The order to refund.
            reason: Why, in a few words; shown to the customer.
        """
        return f"refunded {order_id}: {reason}"


async def main() -> None:
    service = RefundService({"acme": ["A-1001", "A-1007"], "globex": ["G-2002"]})
    catalog = ToolCatalog(
        [
            FunctionTool.from_function(get_weather),
            FunctionTool.from_function(convert_currency),
            *tools_from(service),
        ]
    )

    print(f"{len(catalog)} tools\n")
    for each in catalog:
        definition = each.definition
        print(f"{definition.name}  (sent to providers as {provider_safe_name(definition.name)})")
        print(f"  {definition.description.splitlines()[0]}")
        print(f"  schema: {json.dumps(definition.input_schema, sort_keys=True)}\n")

    # Decorated functions stay plain callables.
    print(f"get_weather('Paris') -> {get_weather('Paris')}\n")

    # A model answers with a provider-safe name and JSON arguments; the caller adds the context.
    finder = catalog.get("refund__find_failed_orders")
    assert finder is not None
    result = await finder.call('{"days": 7}', ToolContext(tenant_id="acme", user_id="u-42"))
    print(f"refund.find_failed_orders for tenant acme -> {result}\n")

    # Bad arguments never reach the function: every problem is listed, ready to be sent back
    # to the model as feedback.
    weather = catalog.get("get_weather")
    assert weather is not None
    try:
        await weather.call('{"unit": "kelvin"}')
    except ToolArgumentError as error:
        print(f"bad call rejected: {error}")


if __name__ == "__main__":
    asyncio.run(main())
