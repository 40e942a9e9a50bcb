"""Provider-safe names out, canonical names back."""

from __future__ import annotations

import pytest

from toolrelay.models import _tool_names as tool_names
from toolrelay.models._tool_names import ToolNameMap
from toolrelay.tools._base import ToolDefinition

DEFINITIONS = [
    ToolDefinition(name="refund.find_orders", description="a"),
    ToolDefinition(name="get_weather", description="b"),
]


def test_names_map_both_ways() -> None:
    names = ToolNameMap(DEFINITIONS)
    assert names.provider_names() == ["refund__find_orders", "get_weather"]
    assert names.to_canonical("refund__find_orders") == "refund.find_orders"
    assert names.to_canonical("refund.find_orders") == "refund.find_orders"
    assert names.to_canonical("get_weather") == "get_weather"
    assert names.definition("refund__find_orders") is DEFINITIONS[0]


def test_unknown_names_stay_as_the_model_wrote_them() -> None:
    names = ToolNameMap(DEFINITIONS)
    assert names.to_canonical("getWeather") == "getWeather"
    assert names.definition("getWeather") is None


def test_made_up_names_in_the_history_are_made_acceptable() -> None:
    assert ToolNameMap.to_provider("get weather!") == "get_weather_"
    assert ToolNameMap.to_provider("x" * 80) == "x" * 64
    assert ToolNameMap.to_provider("") == "unnamed_tool"
    assert ToolNameMap.to_provider("a.b") == "a__b"


def test_a_runaway_made_up_name_is_cut_before_it_is_mapped(monkeypatch: pytest.MonkeyPatch) -> None:
    mapped: list[int] = []
    real = tool_names.provider_safe_name
    monkeypatch.setattr(
        tool_names, "provider_safe_name", lambda name: mapped.append(len(name)) or real(name)
    )
    assert ToolNameMap.to_provider("查" * 1_000_000) == ToolNameMap.to_provider("查" * 256)
    assert ToolNameMap.to_provider("x" * 1_000_000) == "x" * 64
    assert max(mapped) == 256
