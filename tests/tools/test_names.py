"""Tool name rules and the provider-safe mapping."""

import doctest
import hashlib

import pytest

from toolrelay.exceptions import DuplicateToolError, InvalidToolNameError
from toolrelay.tools import FunctionTool, ToolCatalog, provider_safe_name
from toolrelay.tools import _names as names_module
from toolrelay.tools._names import (
    HASH_LENGTH,
    fold_name,
    is_provider_safe,
    split_name_words,
    validate_tool_name,
)


@pytest.mark.parametrize(
    "name",
    [
        "get_weather",
        "a",
        "A-b_9",
        "refund.find_failed_orders",
        "Navigation.TrainTickets.queryPassengerTrainOrder",
        "查询天气",
        "情感_文本分析",
        "天气.查询-v2",
        "météo",
        "क्षेत्र",  # Devanagari: letters and combining vowel signs
    ],
)
def test_valid_names(name: str) -> None:
    assert validate_tool_name(name) == name


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "invalid tool '': a tool name must not be empty"),
        ("a..b", "invalid tool 'a..b': a dotted name must not have empty segments"),
        (".a", "invalid tool '.a': a dotted name must not have empty segments"),
        (
            "天气 查询!",
            "invalid tool '天气 查询!': characters ' ' '!' are not allowed; "
            "use letters, digits, '_', '-' (and '.' between segments)",
        ),
        ("查询..天气", "invalid tool '查询..天气': a dotted name must not have empty segments"),
    ],
)
def test_invalid_names(name: str, message: str) -> None:
    with pytest.raises(InvalidToolNameError) as caught:
        validate_tool_name(name)
    assert str(caught.value) == message


def test_dotted_name_limit_counts_the_provider_safe_form() -> None:
    name = "a." + "b" * 61  # 63 characters, 64 once the dot becomes "__"
    assert validate_tool_name(name) == name
    with pytest.raises(InvalidToolNameError):
        validate_tool_name(name + "c")


def test_the_examples_in_the_docstrings_hold() -> None:
    results = doctest.testmod(names_module)
    assert results.attempted >= 3
    assert results.failed == 0


def test_provider_safe_mapping() -> None:
    assert provider_safe_name("refund.find_failed_orders") == "refund__find_failed_orders"
    assert provider_safe_name("plain") == "plain"
    assert is_provider_safe("refund__find")
    assert not is_provider_safe("refund.find")


def test_words_and_folding() -> None:
    assert split_name_words("refund.findFailedOrders_v2") == [
        "refund",
        "find",
        "failed",
        "orders",
        "v2",
    ]
    assert split_name_words("get_weather") == ["get", "weather"]
    assert {fold_name(n) for n in ["getWeather", "get_weather", "get-weather", "get.weather"]} == {
        "getweather"
    }


# --- names in any script ---------------------------------------------------------------------

SCRIPT_NAMES = [
    "查询天气",
    "情感_文本分析",
    "文案分析工具",
    "Navigation.查询火车票",
    "Navigation.TrainTickets.查询乘客订单",
    "天气.查询-v2",
    "météo",
    "café.menu",
    "क्षेत्र",
    "文" * 80,  # 80 characters: its provider-safe form is still at most 64
]


@pytest.mark.parametrize("name", SCRIPT_NAMES)
def test_names_in_any_script_have_a_valid_deterministic_ascii_form(name: str) -> None:
    safe = provider_safe_name(name)
    assert is_provider_safe(safe), safe
    assert validate_tool_name(name) == name
    # A hash of the whole name ends the form: the same in every process, different per name.
    digest = hashlib.sha256(name.encode()).hexdigest()[:HASH_LENGTH]
    assert safe.endswith(f"_{digest}")
    assert provider_safe_name(name) == safe


def test_the_ascii_form_keeps_what_is_readable() -> None:
    assert provider_safe_name("查询天气") == "tool_22cf3c76"
    assert provider_safe_name("Navigation.查询火车票").startswith("Navigation_")
    assert provider_safe_name("Navigation.TrainTickets.查询乘客订单").startswith(
        "Navigation__TrainTickets_"
    )
    assert provider_safe_name("météo").startswith("meteo_")  # accents dropped
    assert provider_safe_name("café.menu").startswith("cafe__menu_")


def test_names_in_any_script_get_distinct_forms() -> None:
    forms = [provider_safe_name(n) for n in SCRIPT_NAMES]
    assert len(set(forms)) == len(forms)
    # Names that differ only where ASCII cannot show it still differ.
    assert provider_safe_name("查询天气") != provider_safe_name("查询火车")
    assert provider_safe_name("天气.查询") != provider_safe_name("天气__查询")


def test_dotted_ascii_names_map_as_before() -> None:
    name = "Navigation.TrainTickets.queryPassengerTrainOrder"
    assert provider_safe_name(name) == "Navigation__TrainTickets__queryPassengerTrainOrder"
    # Invalid names are only dot-mapped, so they stay unsafe and are reported as such.
    assert provider_safe_name("get weather!") == "get weather!"
    assert not is_provider_safe(provider_safe_name("天气 查询"))


def test_the_catalog_maps_names_in_any_script_back_and_checks_collisions() -> None:
    def make(name: str) -> FunctionTool:
        def run() -> str:
            return name

        return FunctionTool.from_function(run, name=name, description=f"{name} tool")

    names = [
        "查询天气",
        "Navigation.查询火车票",
        "Navigation.TrainTickets.queryPassengerTrainOrder",
    ]
    catalog = ToolCatalog([make(n) for n in names])
    for name in names:
        tool = catalog.get(provider_safe_name(name))
        assert tool is not None
        assert tool.definition.name == name
        assert catalog.get(name) is tool
    # A tool literally named like another's provider-safe form is a collision.
    with pytest.raises(DuplicateToolError) as caught:
        catalog.add(make(provider_safe_name("查询天气")))
    assert "查询天气" in str(caught.value)
    with pytest.raises(DuplicateToolError):
        catalog.add(make("Navigation__TrainTickets__queryPassengerTrainOrder"))
