"""BFCL's AST checker rules, one by one, and the suite built from the dev split's ground truth."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolrelay.evaluation._bfcl import BfclCall, bfcl_problem, bfcl_suite
from toolrelay.exceptions import LoadError
from toolrelay.tools import ToolDefinition

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "bfcl"

WEATHER = ToolDefinition(
    name="weather.get",
    description="Weather.",
    input_schema={
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer"},
            "lat": {"type": "number"},
            "metric": {"type": "boolean"},
            "fields": {"type": "array", "items": {"type": "string"}},
            "filters": {"type": "object"},
            "stops": {"type": "array", "items": {"type": "object"}},
            "note": {},
        },
        "required": ["city"],
    },
)
DEFINITIONS = {"weather.get": WEATHER}
EXPECTED = BfclCall(
    name="weather.get",
    arguments={"city": ["San Francisco, CA", "SF"], "days": [3, ""], "lat": [37.5]},
)


def problem(expected: BfclCall, **arguments: Any) -> str | None:
    found = bfcl_problem([expected], [("weather.get", arguments)], DEFINITIONS)
    return None if found is None else found.removeprefix("no call matches weather.get: ")


def test_an_acceptable_call_passes_and_optional_parameters_may_be_left_out() -> None:
    assert problem(EXPECTED, city="SF", days=3, lat=37.5) is None
    assert problem(EXPECTED, city="SF", lat=37.5) is None  # "" among days' values


def test_strings_are_compared_without_case_spaces_and_punctuation() -> None:
    assert problem(EXPECTED, city="san francisco ca", lat=37.5) is None
    assert problem(EXPECTED, city="San-Francisco/CA.", lat=37.5) is None
    assert problem(EXPECTED, city="Oakland", lat=37.5) == (
        'city="Oakland" is not an acceptable value'
    )


def test_an_integer_is_accepted_for_a_number_but_not_the_other_way() -> None:
    whole = BfclCall(name="weather.get", arguments={"city": ["SF"], "lat": [37.0]})
    assert problem(whole, city="SF", lat=37) is None
    assert problem(EXPECTED, city="SF", days=3.0, lat=37.5) == (
        "days=3.0 has the wrong type (expected integer)"
    )
    assert problem(EXPECTED, city="SF", days=True, lat=37.5) == (
        "days=true has the wrong type (expected integer)"
    )


def test_required_unexpected_and_not_optional_parameters() -> None:
    assert problem(EXPECTED, lat=37.5) == "missing required parameter 'city'"
    assert problem(EXPECTED, city="SF", lat=37.5, metric=True) == "unexpected parameter 'metric'"
    assert problem(EXPECTED, city="SF", lat=37.5, unit="c") == "unexpected parameter 'unit'"
    assert problem(EXPECTED, city="SF") == "parameter 'lat' not given and not optional"


def test_arrays_must_equal_an_acceptable_array() -> None:
    expected = BfclCall(
        name="weather.get", arguments={"city": ["SF"], "fields": [["Wind Speed", "rain"]]}
    )
    assert problem(expected, city="SF", fields=["wind speed", "Rain"]) is None
    assert problem(expected, city="SF", fields=["rain", "wind speed"]) is not None  # order counts
    assert problem(expected, city="SF", fields=[1, 2]) == (
        "fields=[1, 2] has the wrong type (expected array)"
    )


def test_objects_need_acceptable_keys_and_values() -> None:
    expected = BfclCall(
        name="weather.get",
        arguments={"city": ["SF"], "filters": [{"sky": ["Clear"], "wind": ["", "low"]}]},
    )
    assert problem(expected, city="SF", filters={"sky": "clear"}) is None
    assert problem(expected, city="SF", filters={"sky": "clear", "wind": "low"}) is None
    assert problem(expected, city="SF", filters={"wind": "low"}) is not None  # sky not optional
    assert problem(expected, city="SF", filters={"sky": "clear", "rain": 1}) is not None


def test_arrays_of_objects_match_object_by_object() -> None:
    expected = BfclCall(
        name="weather.get",
        arguments={"city": ["SF"], "stops": [[{"at": ["LA"]}, {"at": ["SD", "San Diego"]}]]},
    )
    assert problem(expected, city="SF", stops=[{"at": "la"}, {"at": "san diego"}]) is None
    assert problem(expected, city="SF", stops=[{"at": "la"}]) is not None


def test_a_value_of_the_answers_type_is_a_variable_compared_as_it_is() -> None:
    # No schema type counts as a string; a number given where the answers are numbers passes
    # the type check and is then compared for membership.
    expected = BfclCall(name="weather.get", arguments={"city": ["SF"], "note": [5]})
    assert problem(expected, city="SF", note=5) is None
    assert problem(expected, city="SF", note=6) == "note=6 is not an acceptable value"


def test_parallel_calls_match_in_any_order_and_must_be_as_many() -> None:
    sf = BfclCall(name="weather.get", arguments={"city": ["SF"]})
    la = BfclCall(name="weather.get", arguments={"city": ["LA"]})
    made = [("weather.get", {"city": "LA"}), ("weather.get", {"city": "SF"})]
    assert bfcl_problem([sf, la], made, DEFINITIONS) is None
    assert bfcl_problem([sf, la], made[:1], DEFINITIONS) == (
        "wrong number of calls: 1 made, 2 expected"
    )
    assert bfcl_problem([sf], made, DEFINITIONS) == "wrong number of calls: 2 made, 1 expected"
    assert bfcl_problem([sf, sf], made, DEFINITIONS).startswith("no call matches weather.get")


def test_another_function_or_unusable_arguments_fail() -> None:
    assert bfcl_problem([EXPECTED], [("other", {})], DEFINITIONS) == (
        "no call matches weather.get: called other"
    )
    assert bfcl_problem([EXPECTED], [("weather.get", None)], DEFINITIONS) == (
        "no call matches weather.get: the arguments are not a JSON object"
    )
    with pytest.raises(LoadError, match="not in the catalog"):
        bfcl_problem([BfclCall(name="gone", arguments={})], [("gone", {})], DEFINITIONS)


def _concrete(value: Any) -> Any:
    """One concrete value of a BFCL acceptable value (objects' keys take their first)."""
    if isinstance(value, dict):
        return {k: _concrete(v[0]) for k, v in value.items() if v and v[0] != ""}
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [_concrete(v) for v in value]
    return value


def test_the_ground_truth_of_every_dev_query_passes_and_a_wrong_value_fails() -> None:
    suite = bfcl_suite(DATA)
    assert len(suite.tasks) == 1347  # 1,355 dev queries, 8 that no call could pass left out
    assert "2,566 tools" in suite.description
    environment = suite.environments["bfcl"]()
    definitions = {t.definition.name: t.definition for t in environment.tools}
    wrong = 0
    for task in suite.tasks:
        expected = task.checks[0].calls  # type: ignore[attr-defined]
        made = []
        for c in expected:
            required = definitions[c.name].input_schema.get("required", [])
            # A required parameter whose only acceptable value is "" is given as "".
            given = {
                k: [v for v in values if v != ""] or values for k, values in c.arguments.items()
            }
            made.append(
                (
                    c.name,
                    {
                        k: _concrete(values[0])
                        for k, values in given.items()
                        if values and (k in required or "" not in c.arguments[k])
                    },
                )
            )
        assert bfcl_problem(expected, list(reversed(made)), definitions) is None, task.id
        name, arguments = made[0]
        if arguments:
            key = next(iter(arguments))
            broken = {**arguments, key: "surely not an acceptable value 12345"}
            wrong += bfcl_problem(expected, [(name, broken), *made[1:]], definitions) is not None
    assert wrong > 1300


def test_the_suite_samples_tasks_and_a_smaller_catalog() -> None:
    suite = bfcl_suite(DATA, limit=20, catalog_size=60)
    tools = suite.environments["bfcl"]().tools
    names = {t.definition.name for t in tools}
    assert len(suite.tasks) == 20
    assert len(names) == 60
    assert all(set(t.needed) <= names for t in suite.tasks)
    assert [t.id for t in suite.tasks] == [t.id for t in bfcl_suite(DATA).tasks[:20]]
    assert {t.tags[0] for t in bfcl_suite(DATA).tasks[:60]} >= {"simple_python", "live_multiple"}
    with pytest.raises(LoadError, match="smaller than"):
        bfcl_suite(DATA, limit=20, catalog_size=5)
