"""Turning the model's argument text into validated input, or into precise feedback.

Blank text means ``{}`` (models often send nothing for tools without parameters). Text that is
not JSON, or JSON that is not an object, raises :class:`~toolrelay.exceptions.InvalidJsonError`;
values that break the schema raise :class:`~toolrelay.exceptions.ToolArgumentError` with one
:class:`~toolrelay.exceptions.ArgumentProblem` per field problem, located by a dotted path such
as ``items.0.sku``, so the model can fix every mistake in one retry. An argument name the
schema does not list is one of those problems (``Extra inputs are not permitted``), unless the
tool's input type accepts unknown keys.

:func:`require_object` is the one place that words "the arguments must be a JSON object"; the
execution layer's parser uses it too, so the model reads the same sentence whichever layer
notices.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from pydantic import TypeAdapter, ValidationError

from toolrelay.exceptions import ArgumentProblem, InvalidJsonError, ToolArgumentError

__all__ = ["decode_arguments", "load_json", "require_object", "validate_arguments"]

# pydantic's wording for a key that a model with extra="forbid" does not declare, so that
# every function tool reports an unknown argument the same way.
_EXTRA_ARGUMENT = "Extra inputs are not permitted"


def decode_arguments(tool: str, arguments_json: str) -> dict[str, Any]:
    """Parse the model's argument text into a JSON object.

    Raises:
        InvalidJsonError: The text is not JSON, or its value is not an object.
    """
    if not arguments_json or not arguments_json.strip():
        return {}
    return require_object(tool, load_json(tool, arguments_json))


def load_json(tool: str, text: str) -> Any:
    """Decode the model's argument text (any JSON value).

    Raises:
        InvalidJsonError: The text is not JSON; the problem names where it breaks, e.g.
            ``Arguments are not valid JSON: Expecting value at line 1, column 9.``
    """
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
        tool, [ArgumentProblem(location="", message=problem, input=text)]
    ) from error


def require_object(tool: str, value: Any) -> dict[str, Any]:
    """Return decoded JSON ``value`` if it is an object.

    Raises:
        InvalidJsonError: ``value`` is an array, a string, a number, a boolean or null; the
            problem reads ``Arguments must be a JSON object, not an array.``
    """
    if isinstance(value, dict):
        return value
    problem = ArgumentProblem(
        location="",
        message=f"Arguments must be a JSON object, not {_json_kind(value)}.",
        input=value,
    )
    raise InvalidJsonError(tool, [problem])


def validate_arguments(
    tool: str,
    adapter: TypeAdapter[Any],
    arguments: dict[str, Any],
    *,
    known: Collection[str] | None = None,
) -> Any:
    """Validate and coerce decoded arguments with ``adapter``.

    Args:
        tool: The tool's name, for the error.
        adapter: Validates and coerces the arguments object.
        arguments: The decoded arguments.
        known: The argument names the model may send, for an input type that would drop
            other keys silently: each other key is reported as a problem after the
            adapter's own. ``None`` leaves unknown keys to the adapter.

    Raises:
        ToolArgumentError: One problem per invalid, missing or unexpected field.
    """
    unknown = (
        []
        if known is None
        else [
            ArgumentProblem(location=key, message=_EXTRA_ARGUMENT, input=value)
            for key, value in arguments.items()
            if key not in known
        ]
    )
    try:
        validated = adapter.validate_python(arguments)
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
        raise ToolArgumentError(tool, problems + unknown) from exc
    if unknown:
        raise ToolArgumentError(tool, unknown)
    return validated


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):  # before numbers: bool is an int
        return "a boolean"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return "a number"
    return type(value).__name__
