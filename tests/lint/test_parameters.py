from __future__ import annotations

from typing import Any

from toolrelay.lint._rules.parameters import undocumented_parameters

from ._catalogs import findings, flagged, target


def test_undescribed_parameters_are_named_nested_ones_included() -> None:
    params: dict[str, Any] = {
        "city": {"type": "string", "description": "City name."},
        "unit": {"type": "string", "enum": ["c", "f"]},
        "filters": {
            "type": "object",
            "description": "Filters.",
            "properties": {"status": {"type": "string"}},
        },
        "tags": {
            "type": "array",
            "description": "Tags.",
            "items": {"type": "object", "properties": {"key": {}}},
        },
    }
    [found] = findings([target("search_orders", params=params)], "parameter-undocumented")
    assert "3 of 6 parameters" in found.message
    assert "unit" in found.message
    assert "filters.status" in found.message
    assert "tags.key" in found.message


def test_a_ref_to_a_described_definition_counts_as_described() -> None:
    schema = {
        "type": "object",
        "properties": {"address": {"$ref": "#/$defs/Address"}},
        "$defs": {
            "Address": {
                "type": "object",
                "description": "A postal address.",
                "properties": {"street": {"type": "string", "description": "Street."}},
            }
        },
    }
    assert undocumented_parameters(schema) == ([], 2)


def test_described_parameters_and_no_parameters_pass() -> None:
    assert (
        flagged([target("get_weather"), target("ping", params={})], "parameter-undocumented") == []
    )
