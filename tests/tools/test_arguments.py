"""Decoding and validating the model's argument text."""

import pytest
from pydantic import BaseModel, TypeAdapter

from toolrelay.exceptions import ArgumentProblem, InvalidJsonError, ToolArgumentError
from toolrelay.tools.arguments import decode_arguments, validate_arguments


class Query(BaseModel):
    text: str
    limit: int = 5


def test_decode_object() -> None:
    assert decode_arguments("t", '{"a": [1, "é"]}') == {"a": [1, "é"]}


@pytest.mark.parametrize("blank", ["", " ", "\n"])
def test_decode_blank(blank: str) -> None:
    assert decode_arguments("t", blank) == {}


@pytest.mark.parametrize(
    ("text", "kind"),
    [("1", "a number"), ("2.5", "a number"), ("true", "a boolean"), ("[]", "an array")],
)
def test_decode_non_object(text: str, kind: str) -> None:
    with pytest.raises(InvalidJsonError) as caught:
        decode_arguments("t", text)
    assert caught.value.problems[0].message == f"arguments must be a JSON object, got {kind}"


def test_decode_too_deeply_nested_json_is_invalid_json() -> None:
    text = "[" * 100_000 + "]" * 100_000
    with pytest.raises(InvalidJsonError) as caught:
        decode_arguments("t", text)
    assert caught.value.problems[0].message.startswith("arguments are not valid JSON: ")


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
