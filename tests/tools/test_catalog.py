"""``ToolCatalog`` and ``as_tools``."""

from collections.abc import Mapping
from typing import Any

import pytest

from toolrelay.exceptions import DuplicateToolError, ToolDefinitionError
from toolrelay.tools import (
    FunctionTool,
    Tool,
    ToolCatalog,
    ToolContext,
    ToolDefinition,
    ToolMetadata,
    as_tools,
    tool,
)


class EchoTool:
    """A hand-written tool satisfying the protocol."""

    def __init__(self, name: str) -> None:
        self._definition = ToolDefinition(name=name, description="Echo.")

    @property
    def definition(self) -> ToolDefinition:
        return self._definition

    @property
    def metadata(self) -> ToolMetadata:
        return ToolMetadata()

    async def call(self, arguments_json: str, context: ToolContext | None = None) -> str:
        return arguments_json


@tool(name="refund.find_failed_orders")
def find_failed_orders(since: str) -> list[str]:
    return []


@tool
def get_weather(city: str) -> str:
    return city


class Orders:
    @tool(name="orders.list")
    def list_orders(self) -> list[str]:
        return ["A1"]


def fn_tool(fn: Any) -> FunctionTool:
    return FunctionTool.from_function(fn)


def test_lookup_by_canonical_and_provider_safe_name() -> None:
    refund = fn_tool(find_failed_orders)
    catalog = ToolCatalog([refund, fn_tool(get_weather)])
    assert catalog.get("refund.find_failed_orders") is refund
    assert catalog.get("refund__find_failed_orders") is refund
    assert catalog.get("refund") is None
    assert "refund__find_failed_orders" in catalog
    assert "get_weather" in catalog
    assert "nope" not in catalog
    assert 3 not in catalog


def test_names_definitions_len_iter() -> None:
    refund, weather = fn_tool(find_failed_orders), fn_tool(get_weather)
    catalog = ToolCatalog([refund, weather])
    assert catalog.names() == ["refund.find_failed_orders", "get_weather"]
    assert catalog.definitions() == [refund.definition, weather.definition]
    assert len(catalog) == 2
    assert list(catalog) == [refund, weather]
    assert repr(catalog) == "ToolCatalog(['refund.find_failed_orders', 'get_weather'])"


def test_duplicate_names_both_sources() -> None:
    catalog = ToolCatalog([fn_tool(get_weather)])
    with pytest.raises(DuplicateToolError) as caught:
        catalog.add(EchoTool("get_weather"), source="plugins.echo")
    error = caught.value
    assert str(error) == (
        f"invalid tool 'get_weather': defined twice, by {get_weather.__module__}.get_weather "
        "and by plugins.echo; give each tool its own name"
    )
    assert error.first_source == f"{get_weather.__module__}.get_weather"
    assert error.second_source == "plugins.echo"
    assert isinstance(error, ToolDefinitionError)


def test_default_source_of_a_hand_written_tool_is_its_type() -> None:
    catalog = ToolCatalog([EchoTool("echo")])
    assert catalog.source("echo") == f"{EchoTool.__module__}.EchoTool"
    with pytest.raises(DuplicateToolError) as caught:
        catalog.add(EchoTool("echo"), source="second")
    assert caught.value.first_source == f"{EchoTool.__module__}.EchoTool"


def test_provider_safe_collision_is_a_duplicate() -> None:
    catalog = ToolCatalog([EchoTool("refund.find")], source="pack.a")
    with pytest.raises(DuplicateToolError) as caught:
        catalog.add(EchoTool("refund__find"), source="pack.b")
    assert str(caught.value) == (
        "invalid tool 'refund__find': 'refund.find' (defined by pack.a) and 'refund__find' "
        "(defined by pack.b) are both sent to providers as 'refund__find'; give each tool its "
        "own name"
    )
    assert caught.value.names == ("refund.find", "refund__find")


def test_source_labels() -> None:
    catalog = ToolCatalog([EchoTool("a")], source="bundle")
    catalog.add(fn_tool(get_weather))
    assert catalog.source("a") == "bundle"
    assert catalog.source("get_weather") == f"{get_weather.__module__}.get_weather"
    assert catalog.source("missing") is None


def test_merge_returns_a_new_catalog() -> None:
    first = ToolCatalog([EchoTool("a")])
    second = ToolCatalog([EchoTool("b")], source="second")
    merged = first.merge(second)
    assert merged.names() == ["a", "b"]
    assert merged.source("b") == "second"
    assert first.names() == ["a"]
    assert second.names() == ["b"]
    assert ToolCatalog.merged(first, second, ToolCatalog([EchoTool("c")])).names() == [
        "a",
        "b",
        "c",
    ]


def test_merge_rejects_duplicates() -> None:
    first = ToolCatalog([EchoTool("a")], source="one")
    with pytest.raises(DuplicateToolError) as caught:
        ToolCatalog.merged(first, ToolCatalog([EchoTool("a")], source="two"))
    assert (caught.value.first_source, caught.value.second_source) == ("one", "two")


def test_as_tools_flattens_everything() -> None:
    echo = EchoTool("echo")
    catalog = ToolCatalog([EchoTool("from_catalog")])

    def plain(x: int) -> int:
        return x

    tools = as_tools(echo, get_weather, [Orders(), (plain,)], catalog, iter([find_failed_orders]))
    assert [t.definition.name for t in tools] == [
        "echo",
        "get_weather",
        "orders.list",
        "plain",
        "from_catalog",
        "refund.find_failed_orders",
    ]
    assert tools[0] is echo
    assert all(isinstance(t, Tool) for t in tools)


def test_as_tools_accepts_classes_with_static_tools() -> None:
    class Rates:
        @staticmethod
        @tool
        def rates() -> dict[str, float]:
            return {}

    assert [t.definition.name for t in as_tools(Rates)] == ["rates"]


def test_as_tools_rejects_duplicates() -> None:
    with pytest.raises(DuplicateToolError) as caught:
        as_tools(get_weather, EchoTool("get_weather"))
    assert str(caught.value) == (
        f"invalid tool 'get_weather': defined twice, by {get_weather.__module__}.get_weather "
        f"and by {EchoTool.__module__}.EchoTool; give each tool its own name"
    )


def test_as_tools_rejects_unusable_things() -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        as_tools(42)
    assert caught.value.problems == (
        "cannot make tools of a value of type int; pass a Tool, a function, an object or class "
        "with @tool methods, a ToolCatalog, or a list of these",
    )


def test_catalog_accepts_any_tool_implementation() -> None:
    class Minimal:
        definition = ToolDefinition(name="minimal", description="m")
        metadata = ToolMetadata()

        async def call(self, arguments_json: str, context: Mapping[str, Any] | None = None) -> str:
            return "ok"

    catalog = ToolCatalog([Minimal()])
    assert catalog.names() == ["minimal"]


def test_a_function_is_not_a_tool_and_the_error_says_what_to_do() -> None:
    def plain(city: str) -> str:
        return city

    with pytest.raises(ToolDefinitionError) as info:
        ToolCatalog([plain])  # type: ignore[list-item]
    assert str(info.value) == (
        "invalid tool 'test_a_function_is_not_a_tool_and_the_error_says_what_to_do.<locals>.plain'"
        ": not a Tool; wrap functions and objects with tool methods with as_tools(...)"
    )
