from __future__ import annotations

from typing import Any

import pytest

from toolrelay.exceptions import DuplicateToolError
from toolrelay.execution import DelegatingToolResolver, StaticToolResolver, ToolResolver
from toolrelay.execution._resolution import ToolLookup, closest_names, match_tool_name
from toolrelay.tools._base import ToolDefinition, ToolMetadata


class NamedTool:
    def __init__(self, name: str) -> None:
        self.definition = ToolDefinition(name=name, description=f"the {name} tool")
        self.metadata = ToolMetadata()

    async def call(self, arguments_json: str, context: Any = None) -> str:
        return self.definition.name


@pytest.mark.parametrize(
    ("name", "candidates", "expected"),
    [
        ("get_weather", ["get_weather", "get_time"], "get_weather"),
        ("getWeather", ["get_weather", "get_time"], "get_weather"),
        ("GET-WEATHER", ["get_weather"], "get_weather"),
        ("refund__find_orders", ["refund.find_orders"], "refund.find_orders"),
        ("refund.find_orders", ["refund__find_orders"], "refund__find_orders"),
        ("refundFindOrders", ["refund.find_orders"], "refund.find_orders"),
        # two tools fold to the same key: refuse to guess
        ("getweather", ["get_weather", "getWeather"], None),
        ("a__b", ["a.b", "a__b__"], "a.b"),
        ("getWether", ["get_weather"], None),
        ("", ["get_weather"], None),
        ("___", ["get_weather", "__"], None),
    ],
)
def test_match_tool_name(name: str, candidates: list[str], expected: str | None) -> None:
    assert match_tool_name(name, candidates) == expected


def test_exact_match_wins_over_ambiguous_folding() -> None:
    assert match_tool_name("getWeather", ["get_weather", "getWeather"]) == "getWeather"


def test_closest_names_best_first_and_at_most_five() -> None:
    names = [f"get_weather_{i}" for i in range(8)] + ["get_time", "delete_user"]
    found = closest_names("getWether", names)
    assert len(found) == 5
    assert found == sorted(found)  # equal scores are ordered by name
    assert "delete_user" not in found


def test_closest_names_suggests_similar_and_skips_unrelated() -> None:
    found = closest_names("getWether", ["get_weather", "get_time", "search_orders"])
    assert found == ["get_weather", "get_time"]
    assert closest_names("xyz", ["get_weather"]) == []
    assert closest_names("anything", []) == []


def test_a_higher_cutoff_keeps_only_the_close_names() -> None:
    names = ["get_weather", "get_time", "search_orders"]
    assert closest_names("getWether", names, cutoff=0.7) == ["get_weather"]
    assert closest_names("getWether", names, cutoff=1.0) == []


def test_static_resolver_by_canonical_and_provider_safe_name() -> None:
    tool = NamedTool("refund.find_orders")
    resolver = StaticToolResolver([tool, NamedTool("get_time")])
    assert isinstance(resolver, ToolResolver)
    assert resolver.resolve("refund.find_orders") is tool
    assert resolver.resolve("refund__find_orders") is tool
    assert resolver.resolve("refund_find_orders") is None
    assert resolver.names() == ["refund.find_orders", "get_time"]
    assert len(resolver) == 2


def test_static_resolver_keeps_the_same_object_once() -> None:
    tool = NamedTool("get_time")
    assert StaticToolResolver([tool, tool]).names() == ["get_time"]


@pytest.mark.parametrize(("first", "second"), [("get_time", "get_time"), ("a.b", "a__b")])
def test_static_resolver_rejects_duplicates(first: str, second: str) -> None:
    with pytest.raises(DuplicateToolError) as info:
        StaticToolResolver([NamedTool(first), NamedTool(second)])
    assert info.value.name == second


def test_delegating_resolver_first_answer_wins_and_names_are_merged() -> None:
    first, shadowed, other = NamedTool("a"), NamedTool("a"), NamedTool("b")
    chain = DelegatingToolResolver(
        [StaticToolResolver([first]), StaticToolResolver([shadowed, other])]
    )
    assert chain.resolve("a") is first
    assert chain.resolve("b") is other
    assert chain.resolve("c") is None
    assert chain.names() == ["a", "b"]


def test_lookup_prefers_request_tools_then_resolver_then_lenient() -> None:
    request_tool, resolver_tool = NamedTool("get_time"), NamedTool("get_time")
    remote = NamedTool("crm.find_customer")
    lookup = ToolLookup([request_tool], StaticToolResolver([resolver_tool, remote]))
    assert lookup.find("get_time") is request_tool
    assert lookup.find("getTime") is request_tool
    assert lookup.find("crm__find_customer") is remote
    assert lookup.find("crmFindCustomer") is remote
    assert lookup.find("nothing") is None
    assert lookup.names() == ["get_time", "crm.find_customer"]
    assert lookup.suggestions("get_tme") == ["get_time"]


def test_lookup_first_request_tool_of_a_name_wins() -> None:
    first, second = NamedTool("x"), NamedTool("x")
    assert ToolLookup([first, second], StaticToolResolver()).find("x") is first
