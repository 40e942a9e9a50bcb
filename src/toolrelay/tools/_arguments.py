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
JSON Schema instead (tools that are not Python functions: MCP tools, hand-written ones) and
reports problems in the same shape; arguments that plainly fit a plain schema (the usual
object of typed properties) are accepted by a quick check first, and only the rest go through
``jsonschema``, which costs a cheap call's whole run.

:func:`require_object` is the one place that words "the arguments must be a JSON object"; the
execution layer's parser uses it too, so the model reads the same sentence whichever layer
notices.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Collection, Mapping
from typing import Any, TypeAlias

import jsonschema
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from pydantic import TypeAdapter, ValidationError
from referencing import Registry

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
    """Validates decoded arguments against one tool's JSON Schema.

    ``$ref`` is resolved only inside the schema itself: a schema from elsewhere (an MCP
    server) never makes toolrelay fetch anything. A schema that is not valid JSON Schema is
    logged once and not checked against; everything else about the tool keeps working.

    Args:
        tool: The tool's name, for errors.
        schema: The input schema.
    """

    def __init__(self, tool: str, schema: Mapping[str, Any]) -> None:
        self.tool = tool
        self._validator: Validator | None = None
        self._fits: _Check | None = None
        try:
            document = dict(schema)
            cls = validator_for(document)
            cls.check_schema(document)
            if not _accepts_any_object(document):
                self._validator = cls(document, registry=Registry())
                self._fits = _quick_check(document)
        except jsonschema.SchemaError as exc:
            _log.warning("tool %r: invalid input schema, not validated: %s", tool, exc.message)

    @property
    def active(self) -> bool:
        """Whether arguments are checked (the schema is valid and can reject an object)."""
        return self._validator is not None

    def validate(self, arguments: Mapping[str, Any]) -> None:
        """Raise when ``arguments`` break the schema.

        Raises:
            ToolArgumentError: One problem per violation, sorted by location.
        """
        if self._validator is None:
            return
        values = arguments if type(arguments) is dict else dict(arguments)
        if self._fits is not None and self._fits(values):
            return
        try:
            errors = list(self._validator.iter_errors(values))
        except Exception as exc:  # an unresolvable $ref is found only while validating
            _log.warning("tool %r: cannot validate against its schema: %s", self.tool, exc)
            return
        if not errors:
            return
        unique = {(p.location, p.message): p for p in map(_schema_problem, errors)}
        raise ToolArgumentError(self.tool, [unique[key] for key in sorted(unique)])


_Check: TypeAlias = Callable[[object], bool]

# What a quick check may rely on: any other keyword (a pattern, a bound, a $ref, a
# combinator, a format) leaves the schema to jsonschema alone.
_QUICK_KEYWORDS = frozenset(
    {"type", "properties", "required", "additionalProperties", "items", "enum"}
    | {"description", "title", "default", "examples", "$schema", "$comment"}
)


def _quick_type(name: object) -> _Check | None:
    # Exact types only: jsonschema also takes 1.0 as an integer, which the full check
    # then accepts; a bool is never a number for either.
    if name == "string":
        return lambda v: type(v) is str
    if name == "integer":
        return lambda v: type(v) is int
    if name == "number":
        return lambda v: type(v) is int or type(v) is float
    if name == "boolean":
        return lambda v: type(v) is bool
    if name == "null":
        return lambda v: v is None
    if name == "array":
        return lambda v: type(v) is list
    if name == "object":
        return lambda v: type(v) is dict
    return None


def _quick_check(schema: object) -> _Check | None:
    """A check that accepts only values ``schema`` accepts, or ``None`` when it cannot.

    It answers ``True`` exactly when it can see the value fits; ``False`` means "not sure",
    and jsonschema decides (and words the problems). Built for the plain schemas of most
    tools: typed properties, ``required``, ``enum``, ``items``, ``additionalProperties``.
    """
    if not isinstance(schema, Mapping) or not set(schema) <= _QUICK_KEYWORDS:
        return None
    checks: list[_Check] = []
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        kinds = [kind for kind in map(_quick_type, names) if kind is not None]
        if not kinds or len(kinds) < len(names):
            return None
        checks.append(kinds[0] if len(kinds) == 1 else lambda v: any(k(v) for k in kinds))
    if "enum" in schema:
        options = schema["enum"]
        # Strings and integers only, each equal only to values of its own type (jsonschema
        # also finds 1.0 equal to 1, and the full check then accepts it).
        if not isinstance(options, list) or not all(type(o) in (str, int) for o in options):
            return None
        allowed = frozenset((type(o), o) for o in options)
        checks.append(lambda v: (type(v), v) in allowed if type(v) in (str, int) else False)
    if "items" in schema:
        item = _quick_check(schema["items"])
        if item is None:
            return None
        checks.append(lambda v: type(v) is not list or all(item(x) for x in v))
    if {"properties", "required", "additionalProperties"} & set(schema):
        fields = _quick_properties(schema)
        if fields is None:
            return None
        checks.append(fields)
    return lambda v: all(check(v) for check in checks)


def _quick_properties(schema: Mapping[str, Any]) -> _Check | None:
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if (
        not isinstance(properties, Mapping)
        or not isinstance(required, list)
        or not all(isinstance(name, str) for name in required)
        or type(extra) is not bool
    ):
        return None
    fields: dict[str, _Check] = {}
    for name, sub in properties.items():
        check = _quick_check(sub)
        if check is None:
            return None
        fields[name] = check
    needed = tuple(required)

    def fits(value: object) -> bool:
        if type(value) is not dict:
            return True  # not an object: the type check (or none) decides
        if not all(name in value for name in needed):
            return False
        for key, item in value.items():
            check = fields.get(key)
            if check is None:
                if not extra:
                    return False
            elif not check(item):
                return False
        return True

    return fits


def _accepts_any_object(schema: Mapping[str, Any]) -> bool:
    """Whether ``schema`` is ``{"type": "object"}`` with no property it could reject.

    The schema of a tool without parameters; arguments are an object already, so there is
    nothing to check.
    """
    rest = {k: v for k, v in schema.items() if k not in ("$schema", "description", "title")}
    return (
        rest.get("type") == "object"
        and set(rest) <= {"type", "properties"}
        and (not rest.get("properties"))
    )


def _schema_problem(error: jsonschema.ValidationError) -> ArgumentProblem:
    path = [str(part) for part in error.absolute_path]
    if error.validator == "required":
        # jsonschema reports a missing field at its parent; name the field itself.
        missing = _missing_field(error)
        if missing is not None:
            return ArgumentProblem(location=".".join([*path, missing]), message="Field required")
    return ArgumentProblem(location=".".join(path), message=error.message, input=error.instance)


def _missing_field(error: jsonschema.ValidationError) -> str | None:
    instance, required = error.instance, error.validator_value
    if not isinstance(instance, Mapping) or not isinstance(required, list):
        return None
    for name in required:
        if isinstance(name, str) and name not in instance and repr(name) in error.message:
            return name
    return None


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
