"""Reading the model's argument text: blank is ``{}``, anything else must be a JSON object."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from toolrelay.exceptions import ArgumentProblem, InvalidJsonError

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
    value = _load(tool_name, text)
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            inner = json.loads(value)
        except (ValueError, RecursionError):
            inner = None
        if isinstance(inner, dict):
            text, value = value, inner
    if not isinstance(value, dict):
        raise InvalidJsonError(
            tool_name,
            [
                ArgumentProblem(
                    location="",
                    message=f"Arguments must be a JSON object, not {_json_kind(value)}.",
                    input=value,
                )
            ],
        )
    return ParsedArguments(text=text, values=MappingProxyType(value))


def _load(tool_name: str, text: str) -> Any:
    error: Exception
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        problem = (
            f"Arguments are not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}."
        )
        error = exc
    except RecursionError as exc:
        problem, error = "Arguments are nested too deeply.", exc
    except ValueError as exc:  # e.g. an integer beyond Python's digit limit
        problem, error = f"Arguments are not usable JSON: {exc}.", exc
    raise InvalidJsonError(
        tool_name, [ArgumentProblem(location="", message=problem, input=text)]
    ) from error


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"
