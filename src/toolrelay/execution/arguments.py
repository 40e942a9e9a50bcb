"""Reading the model's argument text: blank is ``{}``, anything else must be a JSON object."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from toolrelay.tools.arguments import load_json, require_object

__all__ = ["ParsedArguments", "parse_arguments"]


@dataclass(frozen=True, kw_only=True)
class ParsedArguments:
    """Arguments that are a JSON object.

    Attributes:
        text: The JSON text handed to the tool (``"{}"`` for blank input).
        values: The parsed object, read-only.
    """

    text: str
    values: Mapping[str, Any]


def parse_arguments(tool_name: str, text: str) -> ParsedArguments:
    """Parse a call's argument text.

    Blank text means no arguments. Some models send the object JSON-encoded a second time
    (a JSON string holding the object); that is unwrapped.

    Raises:
        InvalidJsonError: The text is not JSON, or is JSON but not an object.
    """
    if not text or not text.strip():
        return ParsedArguments(text="{}", values=MappingProxyType({}))
    value = load_json(tool_name, text)
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            inner = json.loads(value)
        except (ValueError, RecursionError):
            inner = None
        if isinstance(inner, dict):
            text, value = value, inner
    return ParsedArguments(text=text, values=MappingProxyType(require_object(tool_name, value)))
