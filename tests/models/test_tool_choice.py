"""Reading the provider-neutral tool choice from extras and defaults."""

from __future__ import annotations

import pytest

from toolrelay.exceptions import ConfigurationError
from toolrelay.models.tool_choice import tool_choice_settings


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
