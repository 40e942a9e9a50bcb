"""Turning the model's argument text into validated input, or into precise feedback.

Blank text means ``{}`` (models often send nothing for tools without parameters). Text that is
not JSON, or JSON that is not an object, raises :class:`~toolrelay.exceptions.InvalidJsonError`.
:func:`load_json` is the one decoder of the model's JSON in toolrelay: it holds the text to the
JSON standard, so ``NaN``, ``Infinity`` and numbers too large for a float (``1e999``), which
Python's ``json`` would accept, are errors (a policy such as ``amount > 10_000`` is false for
``nan``, so letting one through would approve any amount).

Values that break a function tool's schema raise
:class:`~toolrelay.exceptions.ToolArgumentError` with one
:class:`~toolrelay.exceptions.ArgumentProblem` per field problem, located by a dotted path such
as ``items.0.sku``, so the model can fix every mistake in one retry. An argument name the
schema does not list is one of those problems (``Extra inputs are not permitted``), unless the
tool's input type accepts unknown keys. :class:`SchemaValidator` checks arguments against a
JSON Schema instead (tools that are not Python functions: MCP tools, hand-written ones) with
``jsonschema_rs``, and reports problems in the same shape.

:func:`require_object` is the one place that words "the arguments must be a JSON object"; the
execution layer's parser uses it too, so the model reads the same sentence whichever layer
notices.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Collection, Mapping
from typing import Any

import jsonschema_rs
from pydantic import TypeAdapter, ValidationError

from toolrelay.exceptions import ArgumentProblem, InvalidJsonError, ToolArgumentError

__all__ = [
    "SchemaValidator",
    "decode_arguments",
    "json_kind",
    "load_json",
    "require_object",
    "validate_arguments",
]

_log = logging.getLogger("toolrelay.tools")

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
    """Decode the model's argument text (any JSON value), held to the JSON standard.

    Raises:
        InvalidJsonError: The text is not JSON; the problem names where it breaks, e.g.
            ``Arguments are not valid JSON: Expecting value at line 1, column 9.``, or what
            is not a JSON number (``NaN``, ``Infinity``, ``1e999``).
    """
    error: Exception
    try:
        return _DECODER.decode(text)
    except _NonFiniteNumberError as exc:
        problem, error = (
            f"Arguments are not valid JSON: {exc.text} is not a JSON number; "
            "send a finite number or null.",
            exc,
        )
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


class _NonFiniteNumberError(ValueError):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def _not_a_number(text: str) -> float:
    raise _NonFiniteNumberError(text)  # NaN, Infinity, -Infinity


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 overflows to inf
        raise _NonFiniteNumberError(text if len(text) <= 40 else text[:40] + "...")
    return value


_DECODER = json.JSONDecoder(parse_constant=_not_a_number, parse_float=_finite_float)


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
        message=f"Arguments must be a JSON object, not {json_kind(value)}.",
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


class SchemaValidator:
    """Validates decoded arguments against one tool's JSON Schema (with ``jsonschema_rs``).

    The draft is the one the schema's ``$schema`` names (2020-12 when it names none or one
    that is unknown). ``$ref`` is resolved only inside the schema itself: retrieval is off, so
    a schema from elsewhere (an MCP server) never makes toolrelay fetch anything, and one that
    refers outside itself is not checked against. A schema that is not valid JSON Schema is
    logged once and not checked against; everything else about the tool keeps working.

    Args:
        tool: The tool's name, for errors.
        schema: The input schema.
    """

    def __init__(self, tool: str, schema: Mapping[str, Any]) -> None:
        self.tool = tool
        self._validator: jsonschema_rs.Validator | None = None
        try:
            document = json.loads(json.dumps(dict(schema)))  # the JSON the model receives
            self._validator = jsonschema_rs.validator_cls_for(document)(document, offline=True)
        except (TypeError, ValueError) as exc:  # not JSON, or not valid JSON Schema
            reason = exc.message if isinstance(exc, jsonschema_rs.ValidationError) else exc
            _log.warning("tool %r: invalid input schema, not validated: %s", tool, reason)

    @property
    def active(self) -> bool:
        """Whether arguments are checked (the schema is valid)."""
        return self._validator is not None

    def validate(self, arguments: Mapping[str, Any]) -> None:
        """Raise when ``arguments`` break the schema.

        Raises:
            ToolArgumentError: One problem per violation, sorted by location.
        """
        if self._validator is None:
            return
        values = arguments if type(arguments) is dict else dict(arguments)
        errors = list(self._validator.iter_errors(values))
        if errors:
            unique = {(p.location, p.message): p for p in map(_schema_problem, errors)}
            raise ToolArgumentError(self.tool, [unique[key] for key in sorted(unique)])


def _schema_problem(error: jsonschema_rs.ValidationError) -> ArgumentProblem:
    path = [str(part) for part in error.instance_path]
    if isinstance(error.kind, jsonschema_rs.ValidationErrorKind.Required):
        # Reported at the object that lacks the field; name the field itself.
        return ArgumentProblem(
            location=".".join([*path, error.kind.property]), message="Field required"
        )
    return ArgumentProblem(location=".".join(path), message=error.message, input=error.instance)


def json_kind(value: Any) -> str:
    """What ``value`` is, as the model reads it: ``an array``, ``a string``, ``null``..."""
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):  # before numbers: bool is an int
        return "a boolean"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, Mapping):
        return "an object"
    return f"a value of type {type(value).__name__}"  # not JSON at all: named as Python does
