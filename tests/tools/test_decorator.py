"""``@tool``: options, shapes of callables, and declaration errors raised at decoration time."""

import inspect
from typing import Any

import pytest
from pydantic import BaseModel

from toolrelay.exceptions import ConfigurationError, InvalidToolNameError, ToolDefinitionError
from toolrelay.tools import FunctionTool, ToolMetadata, tool, tools_from
from toolrelay.tools._decorator import ToolSpec, get_tool_spec


@tool
def get_weather(city: str) -> str:
    return f"sunny in {city}"


@tool
def uses_later_model(order: "LaterModel") -> str:
    """Refers to a model defined below it in the module."""
    return order.order_id


class LaterModel(BaseModel):
    order_id: str


def test_bare_decorator_returns_the_function_itself() -> None:
    assert get_weather("Paris") == "sunny in Paris"
    assert inspect.isfunction(get_weather)
    assert get_tool_spec(get_weather) == ToolSpec()


def test_options_are_attached_and_become_metadata() -> None:
    def convert(value: Any) -> str:
        return "converted"

    @tool(
        name="orders.refund",
        description="Refund an order.",
        return_direct=True,
        result_converter=convert,
        timeout=2.5,
        read_only=False,
        destructive=True,
        requires_approval=True,
    )
    def refund(order_id: str) -> None: ...

    spec = get_tool_spec(refund)
    assert spec == ToolSpec(
        name="orders.refund",
        description="Refund an order.",
        return_direct=True,
        result_converter=convert,
        timeout=2.5,
        destructive=True,
        requires_approval=True,
    )
    made = FunctionTool.from_function(refund)
    assert made.definition.name == "orders.refund"
    assert made.definition.description == "Refund an order."
    assert made.metadata == ToolMetadata(
        return_direct=True, timeout=2.5, destructive=True, requires_approval=True
    )
    assert made.call_sync('{"order_id": "A1"}') == "converted"


def test_read_only_flag() -> None:
    @tool(read_only=True)
    def lookup(key: str) -> str:
        return key

    assert FunctionTool.from_function(lookup).metadata == ToolMetadata(read_only=True)


def test_async_function_stays_a_coroutine_function() -> None:
    @tool
    async def fetch(url: str) -> str:
        return url

    assert inspect.iscoroutinefunction(fetch)
    assert get_tool_spec(fetch) == ToolSpec()


def test_description_fallbacks() -> None:
    @tool
    def documented(x: int) -> None:
        """From the docstring."""

    @tool
    def get_weather_report(x: int) -> None:
        pass

    @tool(description="Explicit.")
    def both(x: int) -> None:
        """From the docstring."""

    assert FunctionTool.from_function(documented).definition.description == "From the docstring."
    assert FunctionTool.from_function(get_weather_report).definition.description == (
        "get weather report"
    )
    assert FunctionTool.from_function(both).definition.description == "Explicit."


def test_from_function_keywords_override_the_attached_options() -> None:
    made = FunctionTool.from_function(
        get_weather, name="weather.now", description="Now.", metadata=ToolMetadata(timeout=1.0)
    )
    assert made.definition.name == "weather.now"
    assert made.definition.description == "Now."
    assert made.metadata == ToolMetadata(timeout=1.0)


class Shop:
    def __init__(self) -> None:
        self.currency = "EUR"

    @tool
    def price(self, sku: str) -> str:
        return f"10 {self.currency}"

    @staticmethod
    @tool
    def static_below(x: int) -> int:
        return x

    @tool
    @staticmethod
    def static_above(x: int) -> int:
        return x + 1

    @classmethod
    @tool
    def class_below(cls, x: int) -> str:
        return f"{cls.__name__}:{x}"

    @tool
    @classmethod
    def class_above(cls, x: int) -> str:
        return f"{cls.__name__}+{x}"


def test_methods_still_work_as_methods() -> None:
    shop = Shop()
    assert shop.price("x") == "10 EUR"
    assert Shop.static_below(1) == 1
    assert Shop.static_above(1) == 2
    assert Shop.class_below(3) == "Shop:3"
    assert Shop.class_above(3) == "Shop+3"


def test_every_method_shape_becomes_a_tool() -> None:
    tools = {t.definition.name: t for t in tools_from(Shop())}
    assert list(tools) == ["price", "static_below", "static_above", "class_below", "class_above"]
    assert tools["price"].call_sync('{"sku": "a"}') == "10 EUR"
    assert tools["static_below"].call_sync('{"x": 4}') == "4"
    assert tools["static_above"].call_sync('{"x": 4}') == "5"
    assert tools["class_below"].call_sync('{"x": 4}') == "Shop:4"
    assert tools["class_above"].call_sync('{"x": 4}') == "Shop+4"
    for made in tools.values():
        assert "self" not in made.definition.input_schema["properties"]
        assert "cls" not in made.definition.input_schema["properties"]


def test_forward_reference_is_resolved_when_the_tool_is_made() -> None:
    made = FunctionTool.from_function(uses_later_model)
    assert made.definition.input_schema["properties"] == {"order": {"$ref": "#/$defs/LaterModel"}}
    assert made.call_sync('{"order": {"order_id": "A7"}}') == "A7"


@tool
def returns_unresolvable(x: int) -> "OnlyImportedWhenTypeChecking":  # type: ignore[name-defined] # noqa: F821
    return None  # type: ignore[return-value]


def test_return_annotation_is_never_resolved() -> None:
    made = FunctionTool.from_function(returns_unresolvable)
    assert made.definition.input_schema["properties"] == {"x": {"type": "integer"}}
    assert made.call_sync('{"x": 1}') == "Done"


def test_method_taken_from_the_class_is_rejected() -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        FunctionTool.from_function(Shop.price)
    assert caught.value.problems == (
        "Shop.price is a method that needs its instance; use tools_from(instance) "
        "or pass the bound method (instance.method)",
    )
    assert FunctionTool.from_function(Shop().price).call_sync('{"sku": "a"}') == "10 EUR"


def test_dotted_names_are_accepted() -> None:
    @tool(name="refund.find_failed_orders")
    def find() -> list[str]:
        return []

    assert FunctionTool.from_function(find).definition.name == "refund.find_failed_orders"


# --- declaration errors -----------------------------------------------------------------------


def test_bad_name_is_an_invalid_tool_name_error() -> None:
    with pytest.raises(InvalidToolNameError) as caught:

        @tool(name="get weather!")
        def f(city: str) -> None: ...

    assert str(caught.value) == (
        "invalid tool 'get weather!': characters ' ' '!' are not allowed; "
        "use letters, digits, '_', '-' (and '.' between segments)"
    )
    assert caught.value.name == "get weather!"


def test_too_long_name() -> None:
    with pytest.raises(InvalidToolNameError) as caught:
        tool(name="a" * 65)(get_weather)
    assert str(caught.value) == (
        f"invalid tool '{'a' * 65}': the provider-safe name '{'a' * 65}' has 65 characters; "
        "the limit is 64"
    )


def test_lambda_name_is_rejected() -> None:
    with pytest.raises(InvalidToolNameError) as caught:
        tool(lambda: None)
    assert str(caught.value) == (
        "invalid tool '<lambda>': characters '<' '>' are not allowed; "
        "use letters, digits, '_', '-' (and '.' between segments)"
    )


def test_var_args_and_var_kwargs_are_rejected() -> None:
    with pytest.raises(ToolDefinitionError) as caught:

        @tool
        def search(query: str, *terms: str, **filters: str) -> None: ...

    assert str(caught.value) == (
        "invalid tool 'search': "
        "parameter 'terms': *terms is not supported; declare each argument explicitly; "
        "parameter 'filters': **filters is not supported; declare each argument explicitly"
    )
    assert type(caught.value) is ToolDefinitionError


def test_unannotated_parameter_is_rejected() -> None:
    with pytest.raises(ToolDefinitionError) as caught:

        @tool
        def search(query, limit: int = 5) -> None: ...  # type: ignore[no-untyped-def]

    assert str(caught.value) == (
        "invalid tool 'search': parameter 'query' has no type annotation; "
        "annotate it (for example 'query: str')"
    )


def test_all_problems_of_a_declaration_are_collected() -> None:
    with pytest.raises(ToolDefinitionError) as caught:

        @tool(name="bad name", required=["missing"])
        def f(a, *rest, **options) -> None: ...  # type: ignore[no-untyped-def]

    assert type(caught.value) is ToolDefinitionError
    assert caught.value.tool == "bad name"
    assert caught.value.problems == (
        "characters ' ' are not allowed; use letters, digits, '_', '-' (and '.' between segments)",
        "parameter 'a' has no type annotation; annotate it (for example 'a: str')",
        "parameter 'rest': *rest is not supported; declare each argument explicitly",
        "parameter 'options': **options is not supported; declare each argument explicitly",
        "required lists 'missing', which is not a parameter",
    )


def test_non_function_cannot_be_decorated() -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        tool(print)
    assert caught.value.problems == (
        "@tool decorates functions and methods; "
        "use FunctionTool.from_function() for other callables",
    )


def test_non_callable_result_converter() -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        tool(result_converter="json")(get_weather)  # type: ignore[arg-type]
    assert caught.value.problems == ("result_converter must be callable",)


@pytest.mark.parametrize("seconds", [float("inf"), float("nan"), 0, -1])
def test_a_timeout_that_cannot_fire_is_refused_by_the_decorator(seconds: float) -> None:
    with pytest.raises(ConfigurationError, match="timeout must be a finite number of seconds"):

        @tool(timeout=seconds)
        def slow() -> None: ...
