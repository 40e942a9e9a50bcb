"""Input schemas are checked against the JSON Schema 2020-12 meta-schema, object at the top."""

import doctest
import json
from pathlib import Path
from typing import Any

import jsonschema_specifications
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from jsonschema.validators import validator_for
from pydantic import BaseModel

from toolrelay.exceptions import ToolDefinitionError
from toolrelay.tools import FunctionTool, ToolDefinition
from toolrelay.tools import _meta_schema as meta_schema
from toolrelay.tools._meta_schema import (
    JSON_SCHEMA_DIALECT,
    LEFT_TO_VALIDATOR,
    SIMPLE_TYPES,
    SchemaProblem,
    check_input_schema,
    input_schema_problems,
)

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data"
ORACLE = Draft202012Validator(
    Draft202012Validator.META_SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER
)


def messages(schema: Any) -> list[str]:
    return [str(p) for p in input_schema_problems(schema)]


# --- what is reported ------------------------------------------------------------------------


def test_an_unknown_type_names_the_tool_the_pointer_and_the_closest_type() -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        ToolDefinition(
            name="get_weather",
            description="Weather.",
            input_schema={"type": "object", "properties": {"city": {"type": "objekt"}}},
        )
    assert caught.value.tool == "get_weather"
    assert str(caught.value) == (
        "invalid tool 'get_weather': input schema at /properties/city/type: \"objekt\" is not "
        'a JSON Schema type; did you mean "object"? (the types are array, boolean, integer, '
        "null, number, object, string)"
    )


def test_required_as_a_string_shows_the_array_to_write() -> None:
    assert messages({"type": "object", "required": "city"}) == [
        'at /required: "required" must be an array of property names, not "city"; '
        'write "required": ["city"]'
    ]


def test_properties_as_an_array_says_what_properties_must_be() -> None:
    schema = {"type": "object", "properties": [{"name": "city", "type": "string"}]}
    assert messages(schema) == [
        'at /properties: "properties" must be an object mapping each property name to its '
        'schema, not an array; write {"<property name>": {"type": ...}, ...}'
    ]


def test_every_problem_is_listed_once_in_pointer_order() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "minLength": -1, "pattern": "("},
            "b": "string",
            "c": {"type": "array", "items": [{"type": "string"}]},
        },
        "required": ["a", 3, "a"],
    }
    assert messages(schema) == [
        'at /properties/a/minLength: "minLength" must be at least 0, not -1',
        'at /properties/a/pattern: "pattern" must be a valid regular expression, not "("',
        'at /properties/b: must be a schema (an object such as {"type": "string"}, or true or '
        'false), not "string"; write {"type": "string"}',
        'at /properties/c/items: must be a schema (an object such as {"type": "string"}, or true '
        'or false), not [{"type": "string"}]; for one schema per position use "prefixItems"',
        'at /required: "required" names a property twice; list each once',
        'at /required/1: "required" lists property names (strings), not 3',
    ]


def test_a_pointer_escapes_slashes_and_tildes_in_names() -> None:
    schema = {"type": "object", "properties": {"a/b~c": {"type": 3}}}
    assert messages(schema)[0].startswith("at /properties/a~1b~0c/type: ")


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (
            {},
            'the top level needs "type": "object" (a tool\'s arguments are one JSON object); '
            "add it",
        ),
        (
            {"type": "string"},
            'at /type: the top level must be an object schema, not "string": a tool\'s '
            'arguments are one JSON object; write {"type": "object", "properties": '
            '{"<name>": <this schema>}}',
        ),
        (
            {"type": ["object", "null"], "properties": {}},
            'at /type: the top level must be an object schema, not ["object", "null"]: a '
            'tool\'s arguments are one JSON object; write {"type": "object", "properties": '
            '{"<name>": <this schema>}}',
        ),
        (
            [{"type": "object"}],
            'must be a JSON object such as {"type": "object", "properties": {...}}, not an array',
        ),
        (
            True,
            'must be a JSON object such as {"type": "object", "properties": {...}}, not a '
            "boolean (true)",
        ),
    ],
)
def test_the_top_level_must_be_an_object_schema(schema: Any, expected: str) -> None:
    assert messages(schema) == [expected]


def test_a_misspelled_top_level_type_is_reported_once() -> None:
    assert messages({"type": "objekt"}) == [
        'at /type: "objekt" is not a JSON Schema type; did you mean "object"? (the types are '
        "array, boolean, integer, null, number, object, string)"
    ]


def test_a_schema_is_checked_as_the_json_the_model_receives() -> None:
    assert messages({"type": "object", "required": ("a",), "properties": {"a": {}}}) == []
    assert messages({"type": "object", "properties": {"a": {"default": {1, 2}}}}) == [
        "at /properties/a/default: is not JSON: Object of type set is not JSON serializable"
    ]
    assert messages({"type": "object", "properties": {"a": {"maximum": float("nan")}}}) == [
        "at /properties/a/maximum: is not JSON: Out of range float values are not JSON compliant"
    ]


def test_check_input_schema_raises_with_every_problem() -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        check_input_schema("t", {"type": "object", "required": "a", "properties": []})
    assert caught.value.problems == (
        'input schema at /properties: "properties" must be an object mapping each property '
        'name to its schema, not an array; write {"<property name>": {"type": ...}, ...}',
        'input schema at /required: "required" must be an array of property names, not "a"; '
        'write "required": ["a"]',
    )
    check_input_schema("t", {"type": "object"})  # nothing to report
    with pytest.raises(ToolDefinitionError) as whole:
        check_input_schema("t", {"properties": {}})
    assert whole.value.problems == (
        'input schema: the top level needs "type": "object" (a tool\'s arguments are one JSON '
        "object); add it",
    )


def test_the_module_examples_hold() -> None:
    results = doctest.testmod(meta_schema)
    assert results.attempted > 0
    assert results.failed == 0


def test_a_problem_prints_its_pointer() -> None:
    assert str(SchemaProblem(pointer="/type", message="m")) == "at /type: m"
    assert str(SchemaProblem(pointer="", message="m")) == "m"


# --- what is accepted ------------------------------------------------------------------------


class Address(BaseModel):
    street: str
    city: str


class Order(BaseModel):
    sku: str
    ship_to: Address
    notes: list[str] = []


def test_generated_schemas_with_defs_and_refs_pass() -> None:
    def place(order: Order, rush: bool = False) -> str:
        """Place an order."""
        return order.sku

    def place_model(order: Order) -> str:
        """Place an order."""
        return order.sku

    for tool in (FunctionTool.from_function(place), FunctionTool.from_model_function(place_model)):
        schema = tool.definition.input_schema
        assert "$defs" in schema
        assert "$schema" in schema
        assert meta_schema._is_schema(schema)  # no validator needed: the first pass proves it
        assert input_schema_problems(schema) == ()


@pytest.mark.parametrize("dataset", ["bfcl", "stabletoolbench", "restbench", "acebench_zh"])
def test_the_benchmark_catalogs_pass_without_the_validator(dataset: str) -> None:
    lines = (DATA / dataset / "tools.jsonl").read_text(encoding="utf-8").splitlines()
    schemas = [json.loads(line)["parameters"] for line in lines if line.strip()]
    assert all(meta_schema._is_schema(s) for s in schemas)  # the first pass proves them all
    assert all(input_schema_problems(s) == () for s in schemas)


def test_rarer_keywords_go_to_the_validator() -> None:
    good = {"type": "object", "$id": "https://example.com/order", "$anchor": "order"}
    bad = {"type": "object", "$id": "https://example.com/order#part"}
    assert not meta_schema._is_schema(good)
    assert messages(good) == []
    assert messages(bad) == [
        'at /$id: "$id" must match ^[^#]*#?$, not "https://example.com/order#part"'
    ]


def test_a_schema_declaring_another_dialect_is_checked_against_that_dialect() -> None:
    pair = {"type": "array", "items": [{"type": "string"}, {"type": "number"}]}  # draft 7 tuple
    draft7 = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"pair": pair},
    }
    assert messages(draft7) == []
    assert messages({"type": "object", "properties": {"pair": pair}}) == [
        'at /properties/pair/items: must be a schema (an object such as {"type": "string"}, '
        'or true or false), not [{"type": "string"}, {"type": "number"}]; for one schema per '
        'position use "prefixItems"'
    ]
    draft4 = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"n": {"type": "number", "exclusiveMinimum": 3}},
    }
    assert messages(draft4) == [
        "at /properties/n: the schema here is invalid: 'minimum' is a dependency of "
        "'exclusiveMinimum'",
        'at /properties/n/exclusiveMinimum: "exclusiveMinimum" must be a boolean, not 3',
    ]


def test_the_validator_decides_each_distinct_schema_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    real = meta_schema._meta_validator(None)

    class Counting:
        def iter_errors(self, instance: object) -> Any:
            calls.append(instance)
            return real.iter_errors(instance)

    monkeypatch.setattr(meta_schema, "_meta_validator", lambda dialect: Counting())
    meta_schema._problems_of_text.cache_clear()
    first = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1, "x": 1}}}
    first["properties"]["n"]["$comment"] = 5  # invalid: the first pass cannot prove it
    same = json.loads(json.dumps(first))  # an equal schema, another object, other key order
    same["properties"]["n"] = dict(reversed(list(same["properties"]["n"].items())))
    assert (
        messages(first)
        == messages(same)
        == ['at /properties/n/$comment: "$comment" must be a string, not 5']
    )
    assert len(calls) == 1
    meta_schema._problems_of_text.cache_clear()


# --- the first pass agrees with the meta-schema ----------------------------------------------


def meta_schema_keywords() -> set[str]:
    keywords: set[str] = set()
    for uri in jsonschema_specifications.REGISTRY:
        if "/draft/2020-12/" in uri:
            keywords |= set(jsonschema_specifications.REGISTRY[uri].contents.get("properties", {}))
    return keywords


def test_the_first_pass_knows_every_keyword_the_meta_schema_constrains() -> None:
    assert set(meta_schema._KEYWORDS) | LEFT_TO_VALIDATOR == meta_schema_keywords()
    assert not set(meta_schema._KEYWORDS) & LEFT_TO_VALIDATOR


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 3) | st.floats(-2, 3) | st.sampled_from(["", "a"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2)
    ),
    max_leaves=5,
)
NAMES = st.sampled_from(["a", "b", "type", "a/b"])
TYPES = st.sampled_from([*SIMPLE_TYPES, "objekt"])


def keyword_value(keyword: str, schemas: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly what the meta-schema asks of ``keyword``, sometimes a near miss."""
    valid, miss = _keyword_values(keyword, schemas)
    return st.integers(0, 9).flatmap(lambda draw: miss if draw == 0 else valid)


def _keyword_values(
    keyword: str, schemas: st.SearchStrategy[Any]
) -> tuple[st.SearchStrategy[Any], st.SearchStrategy[Any]]:
    check = meta_schema._KEYWORDS.get(keyword)
    pairs: dict[object, tuple[st.SearchStrategy[Any], st.SearchStrategy[Any]]] = {
        "type": (
            TYPES | st.lists(TYPES, min_size=1, max_size=2, unique=True),
            st.just("objekt") | st.lists(TYPES, max_size=3) | st.integers(0, 1),
        ),
        "required": (
            st.lists(NAMES, max_size=3, unique=True),
            NAMES | st.lists(NAMES, min_size=2, max_size=3) | st.just([1]),
        ),
        "pattern": (st.sampled_from(["a+", "[a-z]", "\\d", ""]), st.just("(") | st.just(1)),
        "patternProperties": (
            st.dictionaries(st.sampled_from(["^a", "b+"]), schemas, max_size=2),
            st.dictionaries(st.just("("), schemas, min_size=1) | NAMES,
        ),
        "dependentRequired": (
            st.dictionaries(NAMES, st.lists(NAMES, max_size=2, unique=True)),
            st.dictionaries(NAMES, NAMES, min_size=1),
        ),
        "multipleOf": (st.integers(1, 3) | st.floats(0.5, 3), st.integers(-1, 0) | st.booleans()),
        meta_schema._is_schema: (schemas, JSON_VALUES),
        meta_schema._is_json: (JSON_VALUES, JSON_VALUES),
        meta_schema._json_array: (st.lists(JSON_VALUES, max_size=3), JSON_VALUES),
        meta_schema._schemas: (st.dictionaries(NAMES, schemas, max_size=3), st.lists(schemas)),
        meta_schema._schema_array: (
            st.lists(schemas, min_size=1, max_size=3),
            st.just([]) | schemas,
        ),
        meta_schema._count: (st.integers(0, 3), st.just(-1) | st.just(2.0) | st.booleans()),
        meta_schema._number: (st.integers(-2, 3) | st.floats(-2, 3), st.booleans() | st.just("1")),
        meta_schema._boolean: (st.booleans(), st.integers(0, 1)),
        meta_schema._string: (st.sampled_from(["", "text"]), st.integers(0, 1)),
        meta_schema._dialect: (
            st.just(JSON_SCHEMA_DIALECT),
            st.sampled_from(["http://json-schema.org/draft-07/schema#", "urn:x"])
            | st.just(1)
            | st.just(["x"]),
        ),
        meta_schema._reference: (
            st.sampled_from(["#/$defs/a", "#", "other.json"]),
            st.just("a b") | st.integers(0, 1),
        ),
    }
    if keyword in pairs:
        return pairs[keyword]
    if check is not None:
        return pairs[check]
    if keyword in LEFT_TO_VALIDATOR:
        return st.sampled_from(["a", "https://example.com/s", "#"]), st.just("a#b") | JSON_VALUES
    return JSON_VALUES, JSON_VALUES  # a keyword the meta-schema does not constrain


KEYWORDS = sorted(meta_schema_keywords() | {"name", "x-custom"})
SCHEMAS = st.recursive(
    st.booleans() | st.just({}),
    lambda inner: st.lists(st.sampled_from(KEYWORDS), min_size=1, max_size=4, unique=True).flatmap(
        lambda keys: st.fixed_dictionaries({k: keyword_value(k, inner) for k in keys})
    ),
    max_leaves=10,
)


@settings(max_examples=120, deadline=None)
@given(SCHEMAS)
def test_the_first_pass_proves_only_what_the_meta_schema_accepts(schema: Any) -> None:
    body = {k: v for k, v in schema.items() if k != "type"} if isinstance(schema, dict) else {}
    top = {"type": "object", **body}  # tuples stay tuples: the first pass sees them as arrays
    as_json = json.loads(json.dumps(top))
    declared = as_json if isinstance(as_json.get("$schema"), str) else {}  # as $schema says
    dialect = validator_for(declared, default=Draft202012Validator)
    valid = dialect(dialect.META_SCHEMA, format_checker=dialect.FORMAT_CHECKER).is_valid(as_json)
    if meta_schema._is_schema(top):
        assert valid
    assert (input_schema_problems(top) == ()) == valid
