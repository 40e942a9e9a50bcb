"""Strict tool schemas and removing the nulls strictness added."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from toolrelay.exceptions import ConfigurationError
from toolrelay.models._strict_schema import drop_added_nulls, to_strict_schema
from toolrelay.tools import FunctionTool, tool


class Address(BaseModel):
    street: str
    zip_code: str | None = None
    country: str = "FR"


@tool
def ship(order_id: str, address: Address, note: str | None = None, express: bool = False) -> str:
    """Ship an order."""
    return order_id


SCHEMA = FunctionTool.from_function(ship).definition.input_schema


def _objects(schema: Any) -> list[dict[str, Any]]:
    """Every object schema inside ``schema``."""
    found = []
    if isinstance(schema, dict):
        if schema.get("type") == "object" or "properties" in schema:
            found.append(schema)
        for value in schema.values():
            found.extend(_objects(value))
    elif isinstance(schema, list):
        for value in schema:
            found.extend(_objects(value))
    return found


def test_every_object_requires_all_its_properties_and_forbids_others() -> None:
    strict = to_strict_schema(SCHEMA)
    objects = _objects(strict)
    assert len(objects) == 2  # the arguments and the Address model in $defs
    for obj in objects:
        assert obj["required"] == list(obj["properties"])
        assert obj["additionalProperties"] is False
    assert "default" not in json.dumps(strict)
    assert "$schema" not in strict


def test_optional_properties_become_nullable_and_required_ones_stay_as_they_were() -> None:
    strict = to_strict_schema(SCHEMA)
    properties = strict["properties"]
    assert properties["order_id"]["type"] == "string"
    assert properties["express"]["type"] == ["boolean", "null"]
    # Already nullable: unchanged apart from the default.
    assert {"type": "null"} in properties["note"]["anyOf"]
    address = strict["$defs"]["Address"]["properties"]
    assert address["country"]["type"] == ["string", "null"]
    assert address["street"]["type"] == "string"


def test_enums_and_refs_become_nullable_too() -> None:
    schema = {
        "type": "object",
        "properties": {
            "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
            "where": {"$ref": "#/$defs/Place"},
        },
        "required": [],
        "$defs": {"Place": {"type": "object", "properties": {"name": {"type": "string"}}}},
    }
    strict = to_strict_schema(schema)
    assert strict["properties"]["unit"] == {"type": ["string", "null"], "enum": ["c", "f", None]}
    assert strict["properties"]["where"] == {"anyOf": [{"$ref": "#/$defs/Place"}, {"type": "null"}]}
    assert strict["$defs"]["Place"]["required"] == ["name"]


def test_the_original_schema_is_not_changed() -> None:
    before = json.dumps(SCHEMA, sort_keys=True)
    to_strict_schema(SCHEMA)
    assert json.dumps(SCHEMA, sort_keys=True) == before


def test_added_nulls_are_dropped_and_meaningful_ones_kept() -> None:
    arguments = json.dumps(
        {
            "order_id": "O-1",
            "address": {"street": "Rue A", "zip_code": None, "country": None},
            "note": None,
            "express": None,
        }
    )
    cleaned = json.loads(drop_added_nulls(arguments, SCHEMA))
    # note and zip_code accept null themselves; express and country only got it from strictness.
    assert cleaned == {
        "order_id": "O-1",
        "address": {"street": "Rue A", "zip_code": None},
        "note": None,
    }


def test_nothing_to_drop_returns_the_text_unchanged() -> None:
    text = '{"order_id":"O-1","address":{"street":"x"}}'
    assert drop_added_nulls(text, SCHEMA) == text
    assert drop_added_nulls("not json", SCHEMA) == "not json"
    assert drop_added_nulls("[1, 2]", SCHEMA) == "[1, 2]"


@tool
def convert(value: float, unit: Literal["c", "f"] = "c") -> float:
    """Convert a temperature."""
    return value


async def test_a_cleaned_call_passes_the_tools_own_validation() -> None:
    tool_ = FunctionTool.from_function(convert)
    cleaned = drop_added_nulls('{"value": 3.5, "unit": null}', tool_.definition.input_schema)
    assert json.loads(cleaned) == {"value": 3.5}
    assert json.loads(await tool_.call(cleaned, None)) == 3.5


def test_a_free_form_map_cannot_be_strict_and_says_where() -> None:
    def tag(labels: dict[str, int], note: str = "") -> None: ...

    schema = FunctionTool.from_function(tag).definition.input_schema
    with pytest.raises(ConfigurationError, match=r"free-form map at properties\.labels"):
        to_strict_schema(schema)
    nested = {
        "type": "object",
        "properties": {"metadata": {"additionalProperties": {"type": "string"}}},
    }
    with pytest.raises(ConfigurationError, match=r"at properties\.metadata"):
        to_strict_schema(nested)


def test_a_tool_without_arguments_and_closed_empty_objects_stay_strict() -> None:
    assert to_strict_schema({"type": "object"}) == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }
    closed = {
        "type": "object",
        "properties": {"empty": {"type": "object", "properties": {}}},
        "required": ["empty"],
    }
    assert to_strict_schema(closed)["properties"]["empty"] == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }


def test_an_object_without_type_gets_one() -> None:
    strict = to_strict_schema(
        {"properties": {"config": {"properties": {"key": {"type": "string"}}}}}
    )
    assert strict["type"] == "object"
    assert strict["properties"]["config"] == {
        "type": ["object", "null"],
        "properties": {"key": {"type": ["string", "null"]}},
        "required": ["key"],
        "additionalProperties": False,
    }


def test_a_schema_nested_too_deeply_is_refused_instead_of_overflowing() -> None:
    root: dict[str, Any] = {"type": "object", "properties": {}}
    current = root
    for _ in range(1_000):
        child: dict[str, Any] = {"type": "object", "properties": {}}
        current["properties"]["child"] = child
        current = child
    with pytest.raises(ConfigurationError, match="nested too deeply"):
        to_strict_schema(root)


def test_the_input_schema_is_not_changed() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "string"}}}
    before = json.dumps(schema)
    assert to_strict_schema(schema)["required"] == ["x"]
    assert json.dumps(schema) == before
