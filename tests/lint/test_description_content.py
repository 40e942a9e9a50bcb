from __future__ import annotations

from ._catalogs import GOOD_DESCRIPTION, flagged, target

NO_VERB = "TheClique concert info: artist, venue, date, city, tickets, lineup and prices."


def test_a_description_without_a_verb_misses_what_the_tool_does() -> None:
    assert flagged([target("concert", NO_VERB)], "description-missing-what") == ["concert"]
    assert flagged([target("concert", GOOD_DESCRIPTION)], "description-missing-what") == []


def test_missing_when_and_missing_not_are_reported_separately() -> None:
    only_what = "Returns the temperature, wind speed and conditions for the given city name."
    tools = [target("weather", only_what)]
    assert flagged(tools, "description-missing-when") == ["weather"]
    assert flagged(tools, "description-missing-not") == ["weather"]
    assert flagged([target("weather", GOOD_DESCRIPTION)], "description-missing-when") == []
    assert flagged([target("weather", GOOD_DESCRIPTION)], "description-missing-not") == []


def test_chinese_cues_count() -> None:
    text = "查询指定城市的当前天气。用于用户询问实时天气时；不提供未来几天的天气预报。"
    assert flagged([target("weather", text)], "description-missing-what") == []
    assert flagged([target("weather", text)], "description-missing-when") == []
    assert flagged([target("weather", text)], "description-missing-not") == []


def test_short_descriptions_are_left_to_the_length_rules() -> None:
    for rule in ("description-missing-what", "description-missing-when", "description-missing-not"):
        assert flagged([target("weather", "Concert info.")], rule) == []
