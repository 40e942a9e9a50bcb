from __future__ import annotations

from toolrelay.lint import LintTarget

from ._catalogs import findings, flagged, run, target

WEATHER = "Retrieves the current weather conditions for a specified city and state"
VARIANTS = [  # the same search terms in other words and order
    WEATHER + ".",
    "Retrieves current weather conditions for the specified city and state.",
    "For a specified city and state, retrieves the current weather conditions.",
]
# The others score about 50% of this one for its own description.
FURTHER = target("weather_service", WEATHER + " from the national weather service.")
OTHERS = [
    target("translate_text", "Translates a text into another language, keeping markup."),
    target("convert_currency", "Converts an amount of money between two currencies."),
]


def _weather() -> list[LintTarget]:
    return [target(f"get_current_weather_{i}", text) for i, text in enumerate(VARIANTS)]


def test_tools_with_near_identical_descriptions_form_a_cluster() -> None:
    tools = [*_weather(), *OTHERS]
    found = findings(tools, "confusable-tools")
    assert [f.tool for f in found] == [t.name for t in tools[:3]]
    assert set(found[0].related) == {"get_current_weather_1", "get_current_weather_2"}
    assert "20%" in found[0].message
    report = run(tools)
    assert report.retrieval is not None
    assert report.retrieval.clusters == (tuple(t.name for t in tools[:3]),)


def test_distinct_descriptions_are_not_confusable() -> None:
    tools = [
        target("get_weather", VARIANTS[0]),
        target("get_forecast", "Predicts tomorrow's rain and snow for a region, hour by hour."),
        target("get_air_quality", "Measures pollution levels (PM2.5, ozone) near an address."),
        *OTHERS,
    ]
    assert flagged(tools, "confusable-tools") == []


def test_the_margin_decides() -> None:
    tools = [*_weather(), FURTHER, *OTHERS]
    assert "weather_service" not in flagged(tools, "confusable-tools")
    wide = flagged(tools, "confusable-tools", confusable_margin=0.6)
    assert wide == [*(t.name for t in tools[:3]), "weather_service"]
