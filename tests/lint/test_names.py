from __future__ import annotations

from toolrelay.lint import Severity

from ._catalogs import findings, flagged, target


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


def test_dotted_names_are_info_naming_the_provider_form() -> None:
    [found] = findings([target("refund.create")], "name-not-provider-safe")
    assert found.severity is Severity.INFO
    assert "'refund__create'" in found.message


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
    assert "defined 2 times" in next(f.message for f in found if f.tool == "twice")
