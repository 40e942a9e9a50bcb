"""Turning what a tool function returns into the text the model reads.

=========================================  ==================================================
Returned value                             Text
=========================================  ==================================================
``None``                                   ``Done``
``str``                                    unchanged
PIL image, PNG bytes                       ``{"mime_type": "image/png", "data": <base64>}``
other ``bytes``                            ``{"mime_type": "application/octet-stream", ...}``
models, dataclasses, dicts, lists, ...     JSON (non-ASCII kept; datetimes, enums, aliases)
anything JSON cannot represent             ``str(value)``
=========================================  ==================================================

Models are written with their serialization aliases (``Field(serialization_alias=...)``,
``alias=...``): the names a model declares for the outside world, the same names the input
schema uses. A tool's own ``result_converter`` replaces all of this.
"""

from __future__ import annotations

import base64
import io
import json
import sys
from collections.abc import Callable
from typing import Any, TypeAlias

from pydantic_core import PydanticSerializationError, to_jsonable_python

__all__ = ["DONE", "PNG_SIGNATURE", "ResultConverter", "convert_result"]

ResultConverter: TypeAlias = Callable[[Any], str]
"""Turns a tool function's return value into the text the model reads."""

DONE = "Done"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def convert_result(value: Any) -> str:
    """The default conversion of a tool function's return value (see the module table)."""
    if value is None:
        return DONE
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        data = bytes(value)
        mime = "image/png" if data.startswith(PNG_SIGNATURE) else "application/octet-stream"
        return _binary(mime, data)
    png = _pil_png(value)
    if png is not None:
        return _binary("image/png", png)
    try:
        return json.dumps(to_jsonable_python(value, by_alias=True), ensure_ascii=False)
    except (PydanticSerializationError, TypeError, ValueError):
        return str(value)


def _binary(mime_type: str, data: bytes) -> str:
    return json.dumps({"mime_type": mime_type, "data": base64.b64encode(data).decode("ascii")})


def _pil_png(value: Any) -> bytes | None:
    # A PIL image can only exist if PIL was imported by someone; never import it here.
    pil_image = sys.modules.get("PIL.Image")
    image_type = getattr(pil_image, "Image", None)
    if not isinstance(image_type, type) or not isinstance(value, image_type):
        return None
    buffer = io.BytesIO()
    value.save(buffer, format="PNG")  # type: ignore[attr-defined]
    return buffer.getvalue()
