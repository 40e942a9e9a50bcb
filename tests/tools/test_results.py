"""Result conversion: what a tool function returns → the text the model reads."""

import base64
import io
import json
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from enum import Enum
from typing import Any

import pytest
from pydantic import BaseModel, Field

from tests.extras import needs_extra
from toolrelay.tools import FunctionTool, tool
from toolrelay.tools._results import DONE, PNG_SIGNATURE, convert_result

# A complete 1x1 PNG (red pixel).
PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)


class Status(Enum):
    OPEN = "open"


class Ticket(BaseModel):
    id: int
    title: str
    status: Status
    opened: datetime


@dataclass
class Point:
    x: int
    y: int


def test_none_is_done() -> None:
    assert DONE == "Done"
    assert convert_result(None) == "Done"


@pytest.mark.parametrize("text", ["", "plain", '{"already": "json"}', "naïve — ✓"])
def test_strings_are_unchanged(text: str) -> None:
    assert convert_result(text) == text


def test_pydantic_model() -> None:
    ticket = Ticket(
        id=7, title="Café", status=Status.OPEN, opened=datetime(2024, 5, 1, 12, tzinfo=UTC)
    )
    assert convert_result(ticket) == (
        '{"id": 7, "title": "Café", "status": "open", "opened": "2024-05-01T12:00:00Z"}'
    )


def test_dataclass() -> None:
    assert convert_result(Point(x=1, y=2)) == '{"x": 1, "y": 2}'


def test_dict_with_dates_enums_and_unicode() -> None:
    value = {"day": date(2024, 2, 29), "status": Status.OPEN, "city": "Zürich", "n": None}
    assert convert_result(value) == (
        '{"day": "2024-02-29", "status": "open", "city": "Zürich", "n": null}'
    )


def test_list_and_tuple() -> None:
    assert convert_result([1, "a", Point(x=0, y=0)]) == '[1, "a", {"x": 0, "y": 0}]'
    assert convert_result((1, 2)) == "[1, 2]"


@pytest.mark.parametrize(
    ("value", "text"),
    [(42, "42"), (-1.5, "-1.5"), (True, "true"), (False, "false"), (Decimal("1.10"), '"1.10"')],
)
def test_numbers_and_bools(value: Any, text: str) -> None:
    assert convert_result(value) == text


def test_png_bytes() -> None:
    assert json.loads(convert_result(PNG_1X1)) == {
        "mime_type": "image/png",
        "data": base64.b64encode(PNG_1X1).decode(),
    }
    assert convert_result(bytearray(PNG_SIGNATURE)) == (
        '{"mime_type": "image/png", "data": "iVBORw0KGgo="}'
    )


def test_other_bytes() -> None:
    assert convert_result(b"\x00\x01binary") == (
        '{"mime_type": "application/octet-stream", "data": "AAFiaW5hcnk="}'
    )


def test_pil_image() -> None:
    image_module = pytest.importorskip("PIL.Image", reason=needs_extra("dev"))
    image = image_module.new("RGB", (2, 1), (0, 128, 255))
    result = json.loads(convert_result(image))
    assert result["mime_type"] == "image/png"
    data = base64.b64decode(result["data"])
    assert data.startswith(PNG_SIGNATURE)
    decoded = image_module.open(io.BytesIO(data))
    assert decoded.size == (2, 1)
    assert decoded.convert("RGB").getpixel((1, 0)) == (0, 128, 255)


def test_results_module_does_not_import_pil() -> None:
    code = "import sys, toolrelay.tools; print('PIL' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_unserialisable_object_falls_back_to_str() -> None:
    class Opaque:
        def __str__(self) -> str:
            return "opaque thing"

    assert convert_result(Opaque()) == "opaque thing"


async def test_tool_results_are_converted() -> None:
    @tool
    def ticket() -> Ticket:
        return Ticket(id=1, title="t", status=Status.OPEN, opened=datetime(2024, 1, 1, tzinfo=UTC))

    @tool
    async def image() -> bytes:
        return PNG_SIGNATURE

    assert await FunctionTool.from_function(ticket).call("") == (
        '{"id": 1, "title": "t", "status": "open", "opened": "2024-01-01T00:00:00Z"}'
    )
    assert await FunctionTool.from_function(image).call("") == (
        '{"mime_type": "image/png", "data": "iVBORw0KGgo="}'
    )


async def test_custom_result_converter_overrides_the_default() -> None:
    def as_csv(rows: list[Point]) -> str:
        return "\n".join(f"{p.x},{p.y}" for p in rows)

    @tool(result_converter=as_csv)
    def points() -> list[Point]:
        return [Point(x=1, y=2), Point(x=3, y=4)]

    @tool
    async def points_async() -> list[Point]:
        return [Point(x=5, y=6)]

    assert await FunctionTool.from_function(points).call("") == "1,2\n3,4"
    override = FunctionTool.from_function(points_async, result_converter=as_csv)
    assert await override.call("") == "5,6"


def test_models_are_written_with_their_aliases() -> None:
    class Wire(BaseModel):
        value: int = Field(serialization_alias="wireOut")
        user_name: str = Field(alias="userName")

    assert json.loads(convert_result(Wire(value=1, userName="ada"))) == {
        "wireOut": 1,
        "userName": "ada",
    }
