"""Reading the provider-neutral tool choice from extras and defaults."""

from __future__ import annotations

import pytest

from toolrelay.exceptions import ConfigurationError
from toolrelay.models._tool_choice import tool_choice_settings
from toolrelay.models._tool_names import ToolNameMap
from toolrelay.tools import ToolDefinition

WEATHER = ToolDefinition(
    name="weather.current", description="Weather.", input_schema={"type": "object"}
)


def test_request_extras_win_over_defaults_and_are_removed_from_the_rest() -> None:
    settings = tool_choice_settings(
        {"tool_choice": "refund.retry", "parallel_tool_calls": False, "seed": 1},
        default_choice="auto",
        default_parallel=True,
    )
    assert (settings.mode, settings.tool, settings.parallel) == ("tool", "refund.retry", False)
    assert dict(settings.extras) == {"seed": 1}


def test_defaults_apply_when_the_request_says_nothing() -> None:
    settings = tool_choice_settings({}, default_choice="required")
    assert settings.mode == "required"
    assert settings.parallel is None
    assert tool_choice_settings({}).mode is None


def test_a_mapping_is_sent_raw() -> None:
    settings = tool_choice_settings({"tool_choice": {"type": "any"}})
    assert settings.mode == "raw"
    assert settings.raw == {"type": "any"}


@pytest.mark.parametrize(
    "extras", [{"tool_choice": 3}, {"tool_choice": ""}, {"parallel_tool_calls": "no"}]
)
def test_bad_values_are_configuration_errors(extras: dict[str, object]) -> None:
    with pytest.raises(ConfigurationError):
        tool_choice_settings(extras)


@pytest.mark.parametrize("choice", ["required", "weather.current", {"type": "any"}])
def test_a_requested_call_without_tools_is_refused_not_dropped(choice: object) -> None:
    settings = tool_choice_settings({"tool_choice": choice})
    with pytest.raises(ConfigurationError, match="offers no tools"):
        settings.check(ToolNameMap([]), model="m")
    settings.check(ToolNameMap([WEATHER]), model="m")  # with tools it is honoured


def test_a_requested_tool_must_be_offered() -> None:
    settings = tool_choice_settings({"tool_choice": "refund.retry"})
    with pytest.raises(ConfigurationError, match="not one of the request's tools"):
        settings.check(ToolNameMap([WEATHER]), model="m")
    tool_choice_settings({"tool_choice": "weather__current"}).check(
        ToolNameMap([WEATHER]), model="m"
    )


def test_an_adapter_default_applies_only_where_it_can() -> None:
    # A default tool choice is for the requests that offer tools; the others leave it out.
    tool_choice_settings({}, default_choice="required").check(ToolNameMap([]), model="m")
    tool_choice_settings({"tool_choice": "auto"}).check(ToolNameMap([]), model="m")
