from __future__ import annotations

from toolrelay.lint._rules.near_duplicates import name_key

from ._catalogs import findings, flagged, target


def test_case_separators_order_plural_and_versions_are_set_aside() -> None:
    assert name_key("get_order") == name_key("getOrders")
    assert name_key("user_get") == name_key("get-user")
    assert name_key("get_weather") == name_key("get_weather__v2")
    assert name_key("Alarm_1_AddAlarm") == name_key("Alarm_2_AddAlarm")
    assert name_key("get_order") != name_key("cancel_order")


def test_every_member_of_a_group_names_the_others() -> None:
    targets = [
        target("get_weather"),
        target("getWeather"),
        target("get_weather__v2"),
        target("get_forecast"),
    ]
    found = findings(targets, "name-near-duplicate")
    assert [f.tool for f in found] == ["get_weather", "getWeather", "get_weather__v2"]
    assert set(found[0].related) == {"getWeather", "get_weather__v2"}
    assert "getWeather" in found[0].message


def test_distinct_names_pass() -> None:
    targets = [target("get_order"), target("cancel_order"), target("refund.get_order_status")]
    assert flagged(targets, "name-near-duplicate") == []
