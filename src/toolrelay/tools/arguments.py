"""Turning the model's argument text into validated input, or into precise feedback.

Blank text means ``{}`` (models often send nothing for tools without parameters). Text that is
not JSON, or JSON that is not an object, raises :class:`~toolrelay.exceptions.InvalidJsonError`;
values that break the schema raise :class:`~toolrelay.exceptions.ToolArgumentError` with one
:class:`~toolrelay.exceptions.ArgumentProblem` per field problem, located by a dotted path such
as ``items.0.sku``, so the model can fix every mistake in one retry.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter, ValidationError

from toolrelay.exceptions import ArgumentProblem, InvalidJsonError, ToolArgumentError

__all__ = ["decode_arguments", "validate_arguments"]

_JSON_TYPE_NAMES = {
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
    type(None): "null",
}


def decode_arguments(tool: str, arguments_json: str) -> dict[str, Any]:
    """Parse the model's argument text into a JSON object.

    Raises:
        InvalidJsonError: The text is not JSON, or its value is not an object.
    """
    if not arguments_json or not arguments_json.strip():
        return {}
    try:
        value = json.loads(arguments_json)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, too-deep or too-long input
        problem = ArgumentProblem(
            location="", message=f"arguments are not valid JSON: {exc}", input=arguments_json
        )
        raise InvalidJsonError(tool, [problem]) from exc
    if not isinstance(value, dict):
        kind = _JSON_TYPE_NAMES.get(type(value), type(value).__name__)
        problem = ArgumentProblem(
            location="", message=f"arguments must be a JSON object, got {kind}", input=value
        )
        raise InvalidJsonError(tool, [problem])
    return value


def validate_arguments(tool: str, adapter: TypeAdapter[Any], arguments: dict[str, Any]) -> Any:
    """Validate and coerce decoded arguments with ``adapter``.

    Raises:
        ToolArgumentError: One problem per invalid, missing or unexpected field.
    """
    try:
        return adapter.validate_python(arguments)
    except ValidationError as exc:
        problems = [
            ArgumentProblem(
                location=".".join(str(part) for part in error["loc"]),
                message=error["msg"],
                # For a missing field pydantic reports the enclosing object; there is no
                # offending value to show.
                input=None if error["type"] == "missing" else error.get("input"),
            )
            for error in exc.errors(include_url=False)
        ]
        raise ToolArgumentError(tool, problems) from exc
