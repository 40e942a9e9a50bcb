from __future__ import annotations

from typing import Any

import pytest

from toolrelay.exceptions import ToolArgumentError
from toolrelay.mcp.arguments import SchemaValidator

ORDER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "customer": {"type": "string"},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "quantity": {"type": "integer"}},
                "required": ["sku", "quantity"],
            },
        },
    },
    "required": ["customer", "items"],
    "additionalProperties": False,
}


def problems(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    with pytest.raises(ToolArgumentError) as caught:
        SchemaValidator("orders.create", schema).validate(arguments)
    assert caught.value.tool == "orders.create"
    return [str(p) for p in caught.value.problems]


def test_valid_arguments_pass() -> None:
    SchemaValidator("t", ORDER_SCHEMA).validate(
        {"customer": "c1", "items": [{"sku": "A", "quantity": 2}]}
    )


def test_every_problem_is_listed_with_its_location() -> None:
    found = problems(
        ORDER_SCHEMA, {"items": [{"sku": "A", "quantity": "two"}, {"quantity": 1}], "x": 1}
    )
    assert found == [
        "Additional properties are not allowed ('x' was unexpected)",
        "customer: Field required",
        "items.0.quantity: 'two' is not of type 'integer'",
        "items.1.sku: Field required",
    ]


def test_the_offending_value_is_kept() -> None:
    with pytest.raises(ToolArgumentError) as caught:
        SchemaValidator("t", ORDER_SCHEMA).validate({"customer": 7, "items": []})
    (problem,) = caught.value.problems
    assert problem.location == "customer"
    assert problem.input == 7


def test_an_invalid_schema_is_not_checked_against() -> None:
    validator = SchemaValidator("t", {"type": "no-such-type"})
    assert not validator.active
    validator.validate({"anything": 1})  # the server still validates


def test_refs_resolve_only_inside_the_schema() -> None:
    schema = {
        "type": "object",
        "$defs": {"sku": {"type": "string", "minLength": 2}},
        "properties": {"sku": {"$ref": "#/$defs/sku"}},
    }
    assert problems(schema, {"sku": "A"}) == ["sku: 'A' is too short"]
    remote = {"type": "object", "properties": {"a": {"$ref": "https://example.test/s.json"}}}
    SchemaValidator("t", remote).validate({"a": 1})  # never fetched; not checked
