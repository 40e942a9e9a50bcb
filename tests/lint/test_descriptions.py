from __future__ import annotations

from toolrelay.lint import Severity

from ._catalogs import GOOD_DESCRIPTION, findings, flagged, target

RULES = ("description-missing", "description-repeats-name", "description-too-short")


def _rules(description: str, name: str = "get_weather") -> list[str]:
    from ._catalogs import run

    report = run([target(name, description)])
    return [f.rule for f in report.findings if f.rule.startswith("description-")]


def test_missing_description_is_an_error() -> None:
    [found] = findings([target("get_weather", "  ")], "description-missing")
    assert found.severity is Severity.ERROR


def test_a_description_that_repeats_the_name_says_so_and_nothing_else() -> None:
    assert _rules("Get weather.") == ["description-repeats-name"]
    assert _rules("Get the weather tool.") == ["description-repeats-name"]


def test_short_descriptions_are_flagged_under_eight_words() -> None:
    [found] = findings(
        [target("get_weather", "Current weather for a city.")], "description-too-short"
    )
    assert found.severity is Severity.WARNING
    assert "5 words" in found.message
    assert flagged([target("get_weather", GOOD_DESCRIPTION)], "description-too-short") == []


def test_chinese_characters_count_as_half_a_word() -> None:
    # 10 characters = 5 words: too short; 20 characters = 10 words: long enough.
    assert flagged([target("weather", "查询城市当前天气情况")], "description-too-short") == [
        "weather"
    ]
    long_enough = "查询指定城市的当前天气情况，包括温度风力和湿度"
    assert flagged([target("weather", long_enough)], "description-too-short") == []


def test_very_long_descriptions_are_flagged() -> None:
    long = GOOD_DESCRIPTION + " Changelog entry." * 200
    [found] = findings([target("get_weather", long)], "description-too-long")
    assert "characters" in found.message
    assert (
        flagged([target("get_weather", long)], "description-too-long", max_description_chars=10_000)
        == []
    )


def test_a_good_description_has_no_length_findings() -> None:
    assert not set(_rules(GOOD_DESCRIPTION)) & set(RULES)
