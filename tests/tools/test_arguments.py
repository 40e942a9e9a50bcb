"""Decoding and validating the model's argument text."""

import http.server
import json
import threading
from types import MappingProxyType
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter

from toolrelay.exceptions import ArgumentProblem, InvalidJsonError, ToolArgumentError
from toolrelay.tools._arguments import (
    SchemaValidator,
    decode_arguments,
    require_object,
    validate_arguments,
)


class Query(BaseModel):
    text: str
    limit: int = 5


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ('{"amount": NaN}', "NaN"),
        ('{"amount": Infinity}', "Infinity"),
        ('{"amount": -Infinity}', "-Infinity"),
        ('{"amount": 1e999}', "1e999"),
        ('{"nested": [{"x": -1E400}]}', "-1E400"),
    ],
)
def test_numbers_json_does_not_have_are_refused(text: str, shown: str) -> None:
    with pytest.raises(InvalidJsonError) as caught:
        decode_arguments("refund", text)
    (problem,) = caught.value.problems
    assert problem.message == (
        f"Arguments are not valid JSON: {shown} is not a JSON number; send a finite number or null."
    )


def test_finite_numbers_are_kept_exactly() -> None:
    assert decode_arguments("t", '{"a": 1.5e300, "b": -0.0, "c": 12345678901234567890}') == {
        "a": 1.5e300,
        "b": -0.0,
        "c": 12345678901234567890,
    }


def test_decode_object() -> None:
    assert decode_arguments("t", '{"a": [1, "é"]}') == {"a": [1, "é"]}


@pytest.mark.parametrize("blank", ["", " ", "\n"])
def test_decode_blank(blank: str) -> None:
    assert decode_arguments("t", blank) == {}


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("1", "a number"),
        ("2.5", "a number"),
        ("true", "a boolean"),
        ("false", "a boolean"),
        ("[]", "an array"),
        ('"x"', "a string"),
        ("null", "null"),
    ],
)
def test_decode_non_object(text: str, kind: str) -> None:
    with pytest.raises(InvalidJsonError) as caught:
        decode_arguments("t", text)
    assert caught.value.problems == (
        ArgumentProblem(
            location="",
            message=f"Arguments must be a JSON object, not {kind}.",
            input=json.loads(text),
        ),
    )


def test_require_object_returns_the_object_itself() -> None:
    value = {"a": 1}
    assert require_object("t", value) is value


def test_require_object_names_the_tool() -> None:
    with pytest.raises(InvalidJsonError) as caught:
        require_object("get_weather", ["Paris"])
    assert caught.value.tool == "get_weather"
    assert str(caught.value) == (
        "invalid arguments for tool 'get_weather':\n"
        "- Arguments must be a JSON object, not an array."
    )


def test_decode_too_deeply_nested_json_is_invalid_json() -> None:
    text = "[" * 100_000 + "]" * 100_000
    with pytest.raises(InvalidJsonError) as caught:
        decode_arguments("t", text)
    assert caught.value.problems[0].message == "Arguments are nested too deeply."


def test_invalid_json_is_an_argument_error() -> None:
    with pytest.raises(ToolArgumentError) as caught:
        decode_arguments("t", '{"a": }')
    assert isinstance(caught.value, InvalidJsonError)
    assert caught.value.tool == "t"


def test_validate_coerces() -> None:
    assert validate_arguments("t", TypeAdapter(Query), {"text": "x", "limit": "7"}) == Query(
        text="x", limit=7
    )


def test_validate_problems() -> None:
    with pytest.raises(ToolArgumentError) as caught:
        validate_arguments("search", TypeAdapter(Query), {"limit": [1]})
    assert caught.value.problems == (
        ArgumentProblem(location="text", message="Field required"),
        ArgumentProblem(location="limit", message="Input should be a valid integer", input=[1]),
    )


def test_validate_reports_keys_outside_the_known_names_after_the_adapter_problems() -> None:
    # Query declares no extra behaviour: pydantic alone would drop "page" and "sort".
    with pytest.raises(ToolArgumentError) as caught:
        validate_arguments(
            "search",
            TypeAdapter(Query),
            {"page": 2, "limit": "x", "sort": "asc"},
            known={"text", "limit"},
        )
    assert caught.value.problems == (
        ArgumentProblem(location="text", message="Field required"),
        ArgumentProblem(
            location="limit",
            message="Input should be a valid integer, unable to parse string as an integer",
            input="x",
        ),
        ArgumentProblem(location="page", message="Extra inputs are not permitted", input=2),
        ArgumentProblem(location="sort", message="Extra inputs are not permitted", input="asc"),
    )


def test_validate_reports_unknown_keys_when_the_rest_is_valid() -> None:
    with pytest.raises(ToolArgumentError) as caught:
        validate_arguments(
            "search", TypeAdapter(Query), {"text": "x", "page": 2}, known={"text", "limit"}
        )
    assert caught.value.problems == (
        ArgumentProblem(location="page", message="Extra inputs are not permitted", input=2),
    )


def test_validate_without_known_names_leaves_unknown_keys_to_the_adapter() -> None:
    assert validate_arguments("search", TypeAdapter(Query), {"text": "x", "page": 2}) == Query(
        text="x"
    )
    assert validate_arguments(
        "search", TypeAdapter(Query), {"text": "x"}, known={"text", "limit"}
    ) == Query(text="x")


# --- JSON Schema validation ------------------------------------------------------------------

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
        'items.0.quantity: "two" is not of type "integer"',
        "items.1.sku: Field required",
    ]


def test_json_numbers_are_judged_by_value_and_read_only_arguments_like_a_dict() -> None:
    # 2.0 is an integer to JSON Schema.
    SchemaValidator("t", ORDER_SCHEMA).validate(
        {"customer": "c1", "items": [{"sku": "A", "quantity": 2.0}]}
    )
    with pytest.raises(ToolArgumentError) as caught:
        SchemaValidator("t", ORDER_SCHEMA).validate(MappingProxyType({"customer": 7, "items": []}))
    assert [str(p) for p in caught.value.problems] == ['customer: 7 is not of type "string"']


def test_the_offending_value_is_kept() -> None:
    with pytest.raises(ToolArgumentError) as caught:
        SchemaValidator("t", ORDER_SCHEMA).validate({"customer": 7, "items": []})
    (problem,) = caught.value.problems
    assert problem.location == "customer"
    assert problem.input == 7


def test_an_invalid_schema_is_logged_once_and_not_checked_against(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level("WARNING", logger="toolrelay.tools"):
        validator = SchemaValidator("t", {"type": "no-such-type"})
        validator.validate({"anything": 1})  # the server still validates
        validator.validate({"anything": 2})
    assert not validator.active
    (record,) = caplog.records
    assert record.getMessage().startswith("tool 't': invalid input schema, not validated: ")


def test_the_draft_is_the_one_the_schema_names() -> None:
    pair = {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}
    draft7 = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"pair": pair},
    }
    assert problems(draft7, {"pair": ["a", "b"]}) == ['pair.1: "b" is not of type "integer"']
    unknown = {"$schema": "urn:example:dialect", "type": "object", "required": ["a"]}
    assert problems(unknown, {}) == ["a: Field required"]  # as 2020-12


def test_refs_resolve_only_inside_the_schema() -> None:
    schema = {
        "type": "object",
        "$defs": {"sku": {"type": "string", "minLength": 2}},
        "properties": {"sku": {"$ref": "#/$defs/sku"}},
    }
    assert problems(schema, {"sku": "A"}) == ['sku: "A" is shorter than 2 characters']


def test_a_schema_referring_elsewhere_is_never_fetched_and_not_checked() -> None:
    requests: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            body = b'{"type": "string"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/schema+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/s.json"
        validator = SchemaValidator("t", {"type": "object", "properties": {"a": {"$ref": url}}})
        validator.validate({"a": 1})
    finally:
        server.shutdown()
        server.server_close()
    assert requests == []
    assert not validator.active
