"""Spring AI's JSON Schema tests (JsonSchemaGeneratorTests), in toolrelay's API.

Spring AI reads Java method parameters and records, with @ToolParam, @Schema, Jackson and
@Nullable annotations; Python has one way to say each of those things (a default, ``Field``,
a docstring), so the annotation variants of one case are ported once. Options toolrelay does
not have (ALLOW_ADDITIONAL_PROPERTIES_BY_DEFAULT, UPPER_CASE_TYPE_VALUES) and
JsonSchemaUtilsTests (repairing hand-written schemas) are not ported; see docs/tools.md.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from toolrelay.tools import FunctionTool, ToolContext
from toolrelay.tools._schema import build_function_schema, build_model_function_schema

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def schema_of(fn: Any) -> dict[str, Any]:
    return dict(FunctionTool.from_function(fn).definition.input_schema)


def model_schema_of(fn: Any) -> dict[str, Any]:
    return dict(FunctionTool.from_model_function(fn).definition.input_schema)


def resolve(schema: dict[str, Any], pointer: str) -> Any:
    """The node at a JSON pointer (``/properties/a/$ref``)."""
    node: Any = schema
    for part in pointer.strip("/").split("/"):
        node = node[part]
    return node


# --- methods ---------------------------------------------------------------------------------


def simple_method(name: str, age: int) -> None: ...


def test_generate_schema_for_method_with_simple_parameters() -> None:
    # ports generateSchemaForMethodWithSimpleParameters
    assert schema_of(simple_method) == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
        "required": ["name", "age"],
        "additionalProperties": False,
    }


def test_generate_schema_for_method_with_parameter_descriptions_and_optional_ones() -> None:
    # ports generateSchemaForMethodWithToolParamAnnotations,
    # generateSchemaForMethodWithOpenApiSchemaAnnotations and
    # generateSchemaForMethodWithJacksonAnnotations: optional means "has a default"
    def annotated_method(
        password: str,
        username: str = Field("", description="The username of the customer"),
    ) -> None: ...

    assert schema_of(annotated_method) == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {
            "password": {"type": "string"},
            "username": {
                "default": "",
                "description": "The username of the customer",
                "type": "string",
            },
        },
        "required": ["password"],
        "additionalProperties": False,
    }


def test_generate_schema_for_method_when_parameter_required_by_default() -> None:
    # ports generateSchemaForMethodWhenParameterRequiredByDefault
    def another_annotated_method(username: str, password: str) -> None: ...

    assert schema_of(another_annotated_method)["required"] == ["username", "password"]


def test_generate_schema_for_method_with_object_param() -> None:
    # ports generateSchemaForMethodWithObjectParam
    def object_param_method(value: object) -> None: ...

    schema = schema_of(object_param_method)
    assert schema["properties"] == {"value": {}}
    assert schema["required"] == ["value"]


def test_generate_schema_for_method_with_nullable_annotations() -> None:
    # ports generateSchemaForMethodWithNullableAnnotations: a parameter that accepts None but
    # has no default is still required (a documented difference); with a default it is not
    def nullable_method(
        username: str | None, password: str, nickname: str | None = None
    ) -> None: ...

    schema = schema_of(nullable_method)
    assert schema["required"] == ["username", "password"]
    assert schema["properties"]["username"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}


@dataclass
class RecordData:
    id: int
    name: str
    """The special name"""


@dataclass
class MoreRecordData:
    """Much more data"""

    id: int
    name: str
    """Even more special name"""


def test_generate_schema_for_method_with_complex_parameters() -> None:
    # ports generateSchemaForMethodWithComplexParameters: nested types are definitions
    # referred to by $ref (Spring AI inlines them), each closed to unknown keys
    def complex_method(items: list[str], data: RecordData, more_data: MoreRecordData) -> None: ...

    assert schema_of(complex_method) == {
        "$schema": DIALECT,
        "type": "object",
        "$defs": {
            "RecordData": {
                "additionalProperties": False,
                "properties": {
                    "id": {"type": "integer"},
                    "name": {"description": "The special name", "type": "string"},
                },
                "required": ["id", "name"],
                "type": "object",
            },
            "MoreRecordData": {
                "additionalProperties": False,
                "description": "Much more data",
                "properties": {
                    "id": {"type": "integer"},
                    "name": {"description": "Even more special name", "type": "string"},
                },
                "required": ["id", "name"],
                "type": "object",
            },
        },
        "properties": {
            "items": {"items": {"type": "string"}, "type": "array"},
            "data": {"$ref": "#/$defs/RecordData"},
            "more_data": {"$ref": "#/$defs/MoreRecordData"},
        },
        "required": ["items", "data", "more_data"],
        "additionalProperties": False,
    }


def test_generate_schema_for_method_with_time_parameters() -> None:
    # ports generateSchemaForMethodWithTimeParameters
    def time_method(duration: timedelta, local_date_time: datetime, instant: datetime) -> None: ...

    assert schema_of(time_method)["properties"] == {
        "duration": {"format": "duration", "type": "string"},
        "local_date_time": {"format": "date-time", "type": "string"},
        "instant": {"format": "date-time", "type": "string"},
    }


def test_generate_schema_for_method_with_tool_context() -> None:
    # ports generateSchemaForMethodWithToolContext
    def context_method(
        delivery_status: str, expected_delivery: datetime, tool_context: ToolContext
    ) -> None: ...

    schema = schema_of(context_method)
    assert list(schema["properties"]) == ["delivery_status", "expected_delivery"]
    assert schema["required"] == ["delivery_status", "expected_delivery"]


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str


def test_a_model_input_can_open_the_top_level() -> None:
    # ports generateSchemaForMethodWithAdditionalPropertiesAllowed and
    # generateSchemaForTypeWithAdditionalPropertiesAllowed: there is no global option; an
    # input type that declares extra="allow" says so itself
    def takes(open_input: Open) -> None: ...

    assert model_schema_of(takes)["additionalProperties"] is True
    assert schema_of(simple_method)["additionalProperties"] is False


# --- types -----------------------------------------------------------------------------------


@dataclass
class Person:
    email: str
    id: int
    name: str


def test_generate_schema_for_simple_type() -> None:
    # ports generateSchemaForSimpleType and generateSchemaWhenParameterRequiredByDefault
    def takes(person: Person) -> None: ...

    assert model_schema_of(takes) == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {
            "email": {"type": "string"},
            "id": {"type": "integer"},
            "name": {"type": "string"},
        },
        "required": ["email", "id", "name"],
        "additionalProperties": False,
    }


class AnnotatedPerson(BaseModel):
    id: int
    name: str
    email: str | None = Field(None, description="The email of the person")


def test_generate_schema_for_type_with_optional_described_field() -> None:
    # ports generateSchemaForTypeWithToolArgAnnotation, generateSchemaForTypeWithOpenApiAnnotation
    # and generateSchemaForTypeWithJacksonAnnotation
    def takes(person: AnnotatedPerson) -> None: ...

    schema = model_schema_of(takes)
    assert schema["required"] == ["id", "name"]
    assert schema["properties"]["email"]["description"] == "The email of the person"


class NullablePerson(BaseModel):
    id: int
    name: str
    email: str | None


def test_generate_schema_for_type_with_nullable_field() -> None:
    # ports generateSchemaForTypeWithNullableAnnotation and
    # generateSchemaForTypeWithJSpecifyNullableField: nullable without a default stays required
    def takes(person: NullablePerson) -> None: ...

    assert model_schema_of(takes)["required"] == ["id", "name", "email"]


def test_generate_schema_for_record() -> None:
    # ports generateSchemaForRecord
    def takes(data: RecordData) -> None: ...

    assert model_schema_of(takes) == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "name": {"description": "The special name", "type": "string"},
        },
        "required": ["id", "name"],
        "additionalProperties": False,
    }


@dataclass
class WithMapField:
    name: str
    scores: dict[str, int]


def test_generate_schema_for_type_with_map_field_does_not_forbid_additional_properties() -> None:
    # ports generateSchemaForTypeWithMapFieldDoesNotForbidAdditionalProperties
    def takes(value: WithMapField) -> None: ...

    schema = model_schema_of(takes)
    assert schema["additionalProperties"] is False
    assert schema["properties"]["scores"]["additionalProperties"] == {"type": "integer"}


class Month(Enum):
    JANUARY = "JANUARY"
    FEBRUARY = "FEBRUARY"
    MARCH = "MARCH"


def test_generate_schema_for_enum() -> None:
    # ports generateSchemaForEnum (an enum is a parameter's type, not a whole input)
    def takes(month: Month) -> None: ...

    schema = schema_of(takes)
    assert schema["$defs"]["Month"] == {"enum": ["JANUARY", "FEBRUARY", "MARCH"], "type": "string"}
    assert schema["properties"]["month"] == {"$ref": "#/$defs/Month"}


# --- $defs -----------------------------------------------------------------------------------


@dataclass
class RecursiveFilter:
    field: str
    operator: str
    filters: list[RecursiveFilter]


@dataclass
class SearchRequest:
    filters: list[RecursiveFilter]
    limit: int


def search_books_method(request: SearchRequest) -> None: ...


def test_generate_schema_for_method_with_recursive_parameter_defs_appears_before_properties() -> (
    None
):
    # ports generateSchemaForMethodWithRecursiveParameter_defsAppearsBeforeProperties
    text = json.dumps(schema_of(search_books_method))
    assert text.index('"$defs"') < text.index('"properties"')


def test_generate_schema_for_method_with_simple_parameters_no_defs_in_output() -> None:
    # ports generateSchemaForMethodWithSimpleParameters_noDefsInOutput
    assert "$defs" not in json.dumps(schema_of(simple_method))


def test_generate_schema_for_method_with_transitively_recursive_parameter_type_hoists_defs() -> (
    None
):
    # ports generateSchemaForMethodWithTransitivelyRecursiveParameterTypeHoistsDefs
    schema = schema_of(search_books_method)
    assert "RecursiveFilter" in schema["$defs"]
    assert resolve(schema, "/properties/request") == {"$ref": "#/$defs/SearchRequest"}
    assert "$defs" not in schema["$defs"]["SearchRequest"]
    assert resolve(schema, "/$defs/SearchRequest/properties/filters/items/$ref") == (
        "#/$defs/RecursiveFilter"
    )
    assert resolve(schema, "/$defs/RecursiveFilter/properties/filters/items/$ref") == (
        "#/$defs/RecursiveFilter"
    )


def test_generate_schema_for_method_reuses_root_defs_when_colliding_defs_values_are_equal() -> None:
    # ports generateSchemaForMethodReusesRootDefsWhenCollidingDefsValuesAreEqual
    def same_outer_two_params_method(a: SearchRequest, b: SearchRequest) -> None: ...

    schema = schema_of(same_outer_two_params_method)
    assert set(schema["$defs"]) == {"SearchRequest", "RecursiveFilter"}
    assert (
        schema["properties"]["a"] == schema["properties"]["b"] == {"$ref": "#/$defs/SearchRequest"}
    )


class OuterA:
    @dataclass
    class Filter:
        label: str
        children: list[OuterA.Filter]

    @dataclass
    class SearchRequest:
        filters: list[OuterA.Filter]
        limit: int


class OuterB:
    @dataclass
    class Filter:
        code: str
        children: list[OuterB.Filter]

    @dataclass
    class SearchRequest:
        filters: list[OuterB.Filter]
        limit: int


def test_generate_schema_for_method_renames_defs_and_rewrites_refs_on_simple_name_collision() -> (
    None
):
    # ports generateSchemaForMethodRenamesDefsAndRewritesRefsOnSimpleNameCollision: two types
    # with one simple name get two definitions, each reference pointing at its own
    def colliding_simple_name_method(a: OuterA.SearchRequest, b: OuterB.SearchRequest) -> None: ...

    schema = schema_of(colliding_simple_name_method)

    def target(pointer: str) -> dict[str, Any]:
        ref = resolve(schema, pointer)["$ref"]
        return dict(resolve(schema, ref.removeprefix("#")))

    a_filter = target("/properties/a")["properties"]["filters"]["items"]["$ref"]
    b_filter = target("/properties/b")["properties"]["filters"]["items"]["$ref"]
    assert a_filter != b_filter
    assert set(resolve(schema, a_filter.removeprefix("#"))["properties"]) == {"label", "children"}
    assert set(resolve(schema, b_filter.removeprefix("#"))["properties"]) == {"code", "children"}
    # Each self-reference follows its own type.
    assert (
        resolve(schema, a_filter.removeprefix("#") + "/properties/children/items/$ref") == a_filter
    )
    assert (
        resolve(schema, b_filter.removeprefix("#") + "/properties/children/items/$ref") == b_filter
    )


class PeerA:
    @dataclass
    class Filter:
        label: str
        children: list[PeerA.Filter]

    @dataclass
    class SearchRequest:
        filters: list[PeerA.Filter]


class PeerB:
    @dataclass
    class Filter:
        code: str
        children: list[PeerB.Filter]

    @dataclass
    class Wrapper:
        filters: list[PeerB.Filter]
        nested: list[PeerB.Wrapper]

    @dataclass
    class SearchRequest:
        wrapper: PeerB.Wrapper


def test_generate_schema_for_method_rewrites_peer_definition_refs_after_rename() -> None:
    # ports generateSchemaForMethodRewritesPeerDefinitionRefsAfterRename
    def peer_reference_method(a: PeerA.SearchRequest, b: PeerB.SearchRequest) -> None: ...

    schema = schema_of(peer_reference_method)
    b_request = resolve(schema, resolve(schema, "/properties/b/$ref").removeprefix("#"))
    wrapper_ref = b_request["properties"]["wrapper"]["$ref"]
    wrapper = resolve(schema, wrapper_ref.removeprefix("#"))
    filter_ref = wrapper["properties"]["filters"]["items"]["$ref"]
    assert set(resolve(schema, filter_ref.removeprefix("#"))["properties"]) == {"code", "children"}
    assert wrapper["properties"]["nested"]["items"]["$ref"] == wrapper_ref
    a_request = resolve(schema, resolve(schema, "/properties/a/$ref").removeprefix("#"))
    a_filter = a_request["properties"]["filters"]["items"]["$ref"]
    assert set(resolve(schema, a_filter.removeprefix("#"))["properties"]) == {"label", "children"}


def test_generate_schema_for_method_with_recursive_type_applies_additional_properties_false() -> (
    None
):
    # ports generateSchemaForMethodWithRecursiveTypeAppliesAdditionalPropertiesFalseToDefsEntries
    # (dataclasses and TypedDicts inherit the arguments' closed config; a pydantic model
    # keeps its own, a documented difference)
    schema = schema_of(search_books_method)
    assert schema["$defs"]["RecursiveFilter"]["additionalProperties"] is False


class OrderedStatement(BaseModel):
    account_id: str
    account_name: str
    currency: str | None = None
    totals: dict[str, float] = {}


def test_generate_schema_for_type_and_method_input_can_run_concurrently() -> None:
    # ports generateSchemaForTypeCanRunConcurrently and
    # generateSchemaForMethodInputCanRunConcurrently
    def statement(value: OrderedStatement) -> None: ...

    jobs = [
        (build_model_function_schema, statement)
        if i % 2
        else (build_function_schema, search_books_method)
        for i in range(48)
    ]
    with ThreadPoolExecutor(max_workers=12) as pool:
        schemas = list(pool.map(lambda job: job[0](job[1], tool_name="t").json_schema, jobs))
    assert len(schemas) == 48  # Spring AI runs 240; 48 on 12 threads still overlap
    assert all(s == schemas[1] for s in schemas[1::2])
    assert all(s == schemas[0] for s in schemas[0::2])
    assert "properties" in schemas[1]
    assert "$defs" in schemas[0]
