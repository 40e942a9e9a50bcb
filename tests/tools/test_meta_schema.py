"""Input schemas are checked against the JSON Schema 2020-12 meta-schema, object at the top."""

import doctest
import enum
import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from toolrelay.exceptions import ToolArgumentError, ToolDefinitionError
from toolrelay.tools import FunctionTool, ToolDefinition
from toolrelay.tools import _meta_schema as meta_schema
from toolrelay.tools._arguments import SchemaValidator
from toolrelay.tools._meta_schema import (
    SchemaProblem,
    check_input_schema,
    input_schema_problems,
)

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data"


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
        assert input_schema_problems(schema) == ()


@pytest.mark.parametrize(
    "dataset", ["bfcl", "stabletoolbench", "restbench", "acebench_zh", "hammerbench_zh"]
)
def test_the_benchmark_catalogs_pass_and_their_arguments_are_validated(dataset: str) -> None:
    lines = (DATA / dataset / "tools.jsonl").read_text(encoding="utf-8").splitlines()
    schemas = [json.loads(line)["parameters"] for line in lines if line.strip()]
    assert all(input_schema_problems(s) == () for s in schemas)
    assert all(SchemaValidator("t", s).active for s in schemas)


def test_rarer_keywords_are_checked_too() -> None:
    good = {"type": "object", "$id": "https://example.com/order", "$anchor": "order"}
    bad = {"type": "object", "$id": "https://example.com/order#part"}
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
    draft7["properties"] = {"pair": {"type": "array", "items": [{"type": "strin"}]}}
    assert messages(draft7) == [
        'at /properties/pair/items/0/type: "strin" is not a JSON Schema type; did you mean '
        '"string"? (the types are array, boolean, integer, null, number, object, string)'
    ]
    draft4 = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"n": {"type": "number", "exclusiveMinimum": 3}},
    }
    assert messages(draft4) == [
        'at /properties/n: the schema here needs "minimum" (another of its keywords depends on it)',
        'at /properties/n/exclusiveMinimum: "exclusiveMinimum" must be a boolean, not 3',
    ]


def test_an_unknown_dialect_is_checked_and_validated_as_2020_12() -> None:
    schema = {"$schema": "urn:example:dialect", "type": "object", "required": "a"}
    assert messages(schema) == [
        'at /required: "required" must be an array of property names, not "a"; '
        'write "required": ["a"]'
    ]
    schema["required"] = ["a"]
    assert messages(schema) == []
    assert SchemaValidator("t", schema).active


def test_a_pattern_is_judged_by_the_engine_that_matches_arguments() -> None:
    # ECMA-262 regular expressions, as JSON Schema specifies: a Unicode class compiles,
    # Python's \Z (an ECMA-262 error) does not.
    unicode = {"type": "object", "properties": {"name": {"type": "string", "pattern": "^\\p{Lu}"}}}
    assert messages(unicode) == []
    assert SchemaValidator("t", unicode).active
    python_only = {"type": "object", "properties": {"name": {"pattern": "a\\Z"}}}
    assert messages(python_only) == [
        'at /properties/name/pattern: "pattern" must be a valid regular expression, not "a\\\\Z"'
    ]
    names = {"type": "object", "patternProperties": {"(": {}}}
    assert messages(names) == [
        'at /patternProperties: "patternProperties" must be a valid regular expression, not "("'
    ]


class Colour(enum.StrEnum):
    RED = "red"


def test_a_schema_is_the_json_written_from_it() -> None:
    # json writes a str enum as its string and a number key as a string; the arguments are
    # validated against the same JSON.
    schema = {
        "type": "object",
        "properties": {"colour": {"type": "string", "enum": [Colour.RED]}, 1: {"type": "integer"}},
        "required": ("colour",),
    }
    assert messages(schema) == []
    with pytest.raises(ToolArgumentError) as caught:
        SchemaValidator("t", schema).validate({"colour": "blue", "1": "x"})
    assert [str(p) for p in caught.value.problems] == [
        '1: "x" is not of type "integer"',
        'colour: "blue" is not one of "red"',
    ]
    assert messages({"type": "object", "properties": {("a", "b"): {}}}) == [
        "at /properties: is not JSON: keys must be str, int, float, bool or None, not tuple"
    ]


# --- what the check accepts, arguments are validated against ---------------------------------

KEYWORDS = [
    *("type", "properties", "required", "items", "prefixItems", "enum", "const", "minimum"),
    *("maxLength", "pattern", "patternProperties", "additionalProperties", "allOf", "anyOf"),
    *("not", "$defs", "format", "description", "default", "dependentRequired", "minItems"),
    *("uniqueItems", "$comment", "x-custom"),
]
VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-1, 3)
    | st.floats(-1, 3)
    | st.sampled_from(["string", "object", "integer", "objekt", "a", "^a+$", "(", "\\d"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.just("a"), inner, max_size=1),
    max_leaves=4,
)
SCHEMAS = st.recursive(
    st.booleans() | st.just({}),
    lambda inner: st.dictionaries(
        st.sampled_from(KEYWORDS),
        inner
        | VALUES
        | st.lists(inner, min_size=1, max_size=2)
        | st.dictionaries(st.sampled_from(["a", "b/c"]), inner, max_size=2),
        min_size=1,
        max_size=4,
    ),
    max_leaves=8,
)


def resolve(schema: Any, pointer: str) -> Any:
    for part in pointer.split("/")[1:]:
        name = part.replace("~1", "/").replace("~0", "~")
        schema = schema[int(name)] if isinstance(schema, list) else schema[name]
    return schema


@settings(max_examples=300, deadline=None)
@given(SCHEMAS)
def test_an_accepted_schema_validates_arguments_and_a_problem_points_into_the_schema(
    schema: Any,
) -> None:
    body = {k: v for k, v in schema.items() if k != "type"} if isinstance(schema, dict) else {}
    top = {"type": "object", **body}
    problems = input_schema_problems(top)
    for problem in problems:
        resolve(top, problem.pointer)  # names a place that exists
    if not problems:
        jsonschema_rs.validator_for(top, offline=True)  # builds: arguments are validated
    assert (problems == ()) == jsonschema_rs.meta.is_valid(top) or any(
        "regular expression" in p.message for p in problems
    )
