"""Spring AI's result conversion tests (DefaultToolCallResultConverterTests), in toolrelay's API.

Spring AI writes every result as JSON, a string included (``"test"`` becomes ``"\\"test\\""``),
and ``null`` for a missing value. toolrelay sends text as it is and ``Done`` for ``None``
(docs/tools.md says why); the structured cases are the same.
"""

from __future__ import annotations

import base64
import io
import json
from dataclasses import dataclass

import pytest
from pydantic import BaseModel

from tests.extras import needs_extra
from toolrelay.tools import FunctionTool
from toolrelay.tools._results import DONE, convert_result

Image = pytest.importorskip("PIL.Image", reason=needs_extra("dev"))


def test_convert_with_null_return_type_should_return() -> None:
    # ports convertWithNullReturnTypeShouldReturn and convertNullReturnValueShouldReturnNullJson:
    # a function that returns nothing tells the model it is done (a documented difference)
    assert convert_result(None) == DONE == "Done"


def test_convert_void_return_type_should_return_done_json() -> None:
    # ports convertVoidReturnTypeShouldReturnDoneJson
    def consumer(value: str) -> None:
        return None

    assert FunctionTool.from_function(consumer).call_sync('{"value": "x"}') == "Done"


def test_convert_string_return_type_should_return_json() -> None:
    # ports convertStringReturnTypeShouldReturnJson: text is sent as it is
    assert convert_result("test") == "test"


@dataclass
class SampleObject:
    name: str
    value: int


def test_convert_object_return_type_should_return_json() -> None:
    # ports convertObjectReturnTypeShouldReturnJson
    assert json.loads(convert_result(SampleObject("test", 42))) == {"name": "test", "value": 42}


def test_convert_collection_return_type_should_return_json() -> None:
    # ports convertCollectionReturnTypeShouldReturnJson
    assert json.loads(convert_result(["one", "two", "three"])) == ["one", "two", "three"]


def test_convert_map_return_type_should_return_json() -> None:
    # ports convertMapReturnTypeShouldReturnJson
    assert json.loads(convert_result({"one": 1, "two": 2})) == {"one": 1, "two": 2}


def test_convert_image_should_return_base64_image() -> None:
    # ports convertImageShouldReturnBase64Image
    image = Image.new("RGBA", (64, 64), (255, 255, 255, 255))
    wrapped = json.loads(convert_result(image))
    assert wrapped["mime_type"] == "image/png"
    decoded = Image.open(io.BytesIO(base64.b64decode(wrapped["data"])))
    assert decoded.size == (64, 64)
    assert decoded.getpixel((0, 0)) == image.getpixel((0, 0))


def test_convert_empty_collections_should_return_empty_json() -> None:
    # ports convertEmptyCollectionsShouldReturnEmptyJson
    assert convert_result([]) == "[]"
    assert convert_result({}) == "{}"
    assert convert_result(()) == "[]"


class SampleRecord(BaseModel):
    name: str
    value: int


def test_convert_record_return_type_should_return_json() -> None:
    # ports convertRecordReturnTypeShouldReturnJson
    assert json.loads(convert_result(SampleRecord(name="recordName", value=1))) == {
        "name": "recordName",
        "value": 1,
    }


def test_convert_special_characters_in_strings_should_escape_json() -> None:
    # ports convertSpecialCharactersInStringsShouldEscapeJson: a string is text, unchanged;
    # inside a structure it is escaped as JSON requires
    special = 'Test with "quotes", newlines\n, tabs\t, and backslashes\\'
    assert convert_result(special) == special
    text = convert_result({"text": special})
    assert '\\"quotes\\"' in text
    assert "\\n" in text
    assert "\\t" in text
    assert "\\\\" in text
    assert json.loads(text) == {"text": special}
