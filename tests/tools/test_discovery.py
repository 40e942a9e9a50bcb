"""``tools_from``: decorated methods of instances, classes and modules."""

import types

import pytest

from toolrelay.exceptions import DuplicateToolError, ToolDefinitionError
from toolrelay.tools import FunctionTool, tool, tools_from


class Billing:
    def __init__(self, account: str) -> None:
        self.account = account

    @tool
    def balance(self) -> str:
        """Current balance."""
        return f"{self.account}: 10"

    @tool(name="billing.invoice")
    def invoice(self, amount: float) -> str:
        return f"{self.account} owes {amount}"

    def helper(self) -> None:
        """Not a tool."""

    @staticmethod
    @tool
    def currencies() -> list[str]:
        return ["EUR", "USD"]


class StaticOnly:
    @staticmethod
    @tool
    def rates() -> dict[str, float]:
        return {"EUR": 1.0}

    @classmethod
    @tool
    def describe(cls) -> str:
        return cls.__name__


class Premium(Billing):
    @tool
    def balance(self) -> str:
        return f"{self.account}: 1000"

    @tool
    def perks(self) -> list[str]:
        return ["lounge"]


class Plain:
    def method(self) -> None: ...


def test_instance_methods_are_bound() -> None:
    tools = tools_from(Billing("acme"))
    assert [t.name for t in tools] == ["balance", "billing.invoice", "currencies"]
    assert all(isinstance(t, FunctionTool) for t in tools)
    assert tools[0].call_sync("") == "acme: 10"
    assert tools[1].call_sync('{"amount": 2.5}') == "acme owes 2.5"
    assert tools[2].call_sync("") == '["EUR", "USD"]'


def test_class_with_static_and_class_methods() -> None:
    tools = tools_from(StaticOnly)
    assert [t.name for t in tools] == ["rates", "describe"]
    assert tools[0].call_sync("") == '{"EUR": 1.0}'
    assert tools[1].call_sync("") == "StaticOnly"


def test_subclass_overrides_and_adds_tools() -> None:
    tools = tools_from(Premium("vip"))
    assert [t.name for t in tools] == ["balance", "billing.invoice", "currencies", "perks"]
    assert tools[0].call_sync("") == "vip: 1000"
    assert tools[0].source.endswith("Premium.balance")


def test_instance_methods_via_the_class_are_an_error() -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        tools_from(Billing)
    assert str(caught.value) == (
        "invalid tool 'Billing': decorated instance methods need an instance "
        "('balance', 'invoice'): pass an instance, e.g. tools_from(Billing(...)), not the class"
    )


def test_object_without_tools() -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        tools_from(Plain())
    assert str(caught.value) == (
        "invalid tool 'Plain instance': no methods decorated with @tool were found; "
        "decorate methods with @tool (from toolrelay.tools import tool), "
        "or pass functions directly"
    )


def test_class_without_tools() -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        tools_from(Plain)
    assert caught.value.tool == "Plain"
    assert caught.value.problems == (
        "no methods decorated with @tool were found; decorate methods with @tool "
        "(from toolrelay.tools import tool), or pass functions directly",
    )


def test_duplicate_names_within_one_object() -> None:
    class Twice:
        @tool(name="lookup")
        def first(self) -> None: ...

        @tool(name="lookup")
        def second(self) -> None: ...

    with pytest.raises(DuplicateToolError) as caught:
        tools_from(Twice())
    prefix = f"{Twice.__module__}.{Twice.__qualname__}"
    assert str(caught.value) == (
        f"invalid tool 'lookup': defined twice, by {prefix}.first and by {prefix}.second; "
        "give each tool its own name"
    )


def test_module_functions() -> None:
    module = types.ModuleType("weather_tools")
    exec(
        "from toolrelay.tools import tool\n"
        "@tool\n"
        "def forecast(city: str) -> str:\n"
        "    return city\n"
        "def helper() -> None: ...\n",
        module.__dict__,
    )
    assert [t.name for t in tools_from(module)] == ["forecast"]
