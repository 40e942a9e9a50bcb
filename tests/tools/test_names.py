"""Tool name rules and the provider-safe mapping."""

import pytest

from toolrelay.exceptions import InvalidToolNameError
from toolrelay.tools import (
    fold_name,
    is_provider_safe,
    provider_safe_name,
    split_name_words,
    validate_tool_name,
)


@pytest.mark.parametrize("name", ["get_weather", "a", "A-b_9", "refund.find_failed_orders"])
def test_valid_names(name: str) -> None:
    assert validate_tool_name(name) == name


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "invalid tool '': a tool name must not be empty"),
        ("a..b", "invalid tool 'a..b': a dotted name must not have empty segments"),
        (".a", "invalid tool '.a': a dotted name must not have empty segments"),
        (
            "météo",
            "invalid tool 'météo': characters 'é' are not allowed; "
            "use letters, digits, '_', '-' (and '.' between segments)",
        ),
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
