from __future__ import annotations

import pytest

from toolrelay.lint import Severity
from toolrelay.tools import provider_safe_name
from toolrelay.tools._names import validate_tool_name

from ._catalogs import findings, flagged, run, target


def test_characters_providers_reject_are_an_error_with_a_safe_suggestion() -> None:
    [found] = findings([target("get weather!"), target("ok_name")], "name-not-provider-safe")
    assert found.tool == "get weather!"
    assert found.severity is Severity.ERROR
    assert "' '" in found.message
    assert "'!'" in found.message
    assert "'get_weather'" in found.fix


def test_empty_dotted_segment_is_an_error() -> None:
    [found] = findings([target("refund..create")], "name-not-provider-safe")
    assert found.severity is Severity.ERROR
    assert "empty dotted segment" in found.message


def test_dotted_names_are_not_findings() -> None:
    # The docs recommend them; they are sent as refund__find_failed_orders, every word intact.
    names = ["refund.find_failed_orders", "refund.issue", "a.b.c-d"]
    assert flagged([target(n) for n in names], "name-not-provider-safe") == []


@pytest.mark.parametrize("name", ["查询天气", "weather.查询天气", "météo", "Navigation.查询火车票"])
def test_names_in_any_script_are_valid_and_info_naming_the_hashed_form(name: str) -> None:
    assert validate_tool_name(name) == name  # the catalog accepts them, so lint must not fail
    report = run([target(name)])
    [found] = [f for f in report.findings if f.rule == "name-not-provider-safe"]
    assert found.severity is Severity.INFO
    assert repr(provider_safe_name(name)) in found.message
    assert "hash" in found.message
    assert not report.failed(Severity.ERROR)
    assert flagged([target(name)], "name-too-long") == []


def test_a_name_without_ascii_letters_gets_a_category_suggested() -> None:
    [chinese] = findings([target("查询天气")], "name-not-provider-safe")
    assert "'orders.查询天气'" in chinese.fix
    [prefixed] = findings([target("weather.查询天气")], "name-not-provider-safe")
    assert "category" not in prefixed.fix  # its sent form starts with "weather" already


def test_rejected_characters_in_a_chinese_name_are_an_error_keeping_its_letters() -> None:
    [found] = findings([target("查询 天气!")], "name-not-provider-safe")
    assert found.severity is Severity.ERROR
    assert "' '" in found.message
    assert "'!'" in found.message
    assert "查询" not in found.message  # letters of any script are not what is wrong
    assert "'查询_天气'" in found.fix
    assert validate_tool_name("查询_天气") == "查询_天气"


def test_a_chinese_name_colliding_with_an_ascii_one_is_a_duplicate() -> None:
    hashed = provider_safe_name("查询天气")
    found = findings([target("查询天气"), target(hashed)], "name-duplicate")
    assert [(f.tool, f.related, f.severity) for f in found] == [
        ("查询天气", (hashed,), Severity.ERROR)
    ]
    assert repr(hashed) in found[0].message


def test_provider_safe_names_pass() -> None:
    assert flagged([target("get_weather"), target("get-weather-2")], "name-not-provider-safe") == []


def test_names_over_64_characters_once_mapped_are_too_long() -> None:
    fits = "a" * 64
    dotted = "b" * 31 + "." + "c" * 32  # 64 characters, 65 once "." becomes "__"
    assert flagged([target(fits), target(dotted)], "name-too-long") == [dotted]
    [found] = findings([target(dotted)], "name-too-long")
    assert found.severity is Severity.ERROR
    assert "65 characters" in found.message


def test_duplicates_and_provider_safe_collisions_are_errors() -> None:
    targets = [target("a.b"), target("a__b"), target("twice"), target("twice"), target("once")]
    found = findings(targets, "name-duplicate")
    assert {(f.tool, f.related) for f in found} == {("a.b", ("a__b",)), ("twice", ())}
    assert all(f.severity is Severity.ERROR for f in found)
    assert "'a__b'" in next(f.message for f in found if f.tool == "a.b")
    assert "defined twice" in next(f.message for f in found if f.tool == "twice")


def test_a_name_defined_twice_is_reported_beside_its_provider_name_clash() -> None:
    targets = [target("get.time"), target("get__time"), target("get.time"), target("get.time")]
    found = findings(targets, "name-duplicate")
    assert [(f.tool, f.message, f.related) for f in found] == [
        ("get.time", "defined 3 times; only the first is linted further", ()),
        (
            "get.time",
            "'get.time' and 'get__time' are both sent to providers as 'get__time'",
            ("get__time",),
        ),
    ]
