"""Checking input schemas: valid JSON Schema with an object schema at the top.

Every :class:`~toolrelay.tools.ToolDefinition` checks its ``input_schema`` when it is built,
so a catalog with a broken schema is refused where it is declared or loaded, not by a
provider in the middle of a conversation. A schema is checked as the JSON the model receives
(a tuple is an array, a number key a string; a set or ``NaN`` is not JSON) against the
meta-schema of its dialect: draft 2020-12, or the draft its ``$schema`` names (a server's
draft-07 schema is checked as draft 7), formats included, so a ``pattern`` is a regular
expression the argument validator can compile. Its top level must be
``{"type": "object", ...}``: a tool's arguments are one JSON object. Each problem names its
place as a JSON pointer and says how to fix it:

    >>> problems = input_schema_problems(
    ...     {"type": "object", "properties": {"city": {"type": "objekt"}}, "required": "city"}
    ... )
    >>> [problem.pointer for problem in problems]
    ['/properties/city/type', '/required']
    >>> print(problems[1].message)
    "required" must be an array of property names, not "city"; write "required": ["city"]

``jsonschema_rs`` decides (one validator per dialect's meta-schema, built once, which checks
a schema in microseconds); this module words its errors.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema_rs

from toolrelay.exceptions import ToolDefinitionError

__all__ = [
    "JSON_SCHEMA_DIALECT",
    "SIMPLE_TYPES",
    "SchemaProblem",
    "check_input_schema",
    "input_schema_problems",
]

SIMPLE_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
"""The dialect of the schemas toolrelay generates, and of schemas that declare none."""
_SHOWN_VALUE = 60
_Kind = jsonschema_rs.ValidationErrorKind

# The meta-schema of each draft jsonschema_rs picks for a schema's "$schema" (an unknown
# dialect is checked as 2020-12, as it is validated).
_META_SCHEMAS = {
    jsonschema_rs.Draft4Validator: "http://json-schema.org/draft-04/schema#",
    jsonschema_rs.Draft6Validator: "http://json-schema.org/draft-06/schema#",
    jsonschema_rs.Draft7Validator: "http://json-schema.org/draft-07/schema#",
    jsonschema_rs.Draft201909Validator: "https://json-schema.org/draft/2019-09/schema",
    jsonschema_rs.Draft202012Validator: JSON_SCHEMA_DIALECT,
}


@dataclass(frozen=True, kw_only=True)
class SchemaProblem:
    """One thing wrong with an input schema.

    Attributes:
        pointer: Where, as a JSON pointer into the schema (``"/properties/city/type"``);
            ``""`` for the schema as a whole.
        message: What is wrong and how to fix it.
    """

    pointer: str
    message: str

    def __str__(self) -> str:
        return f"at {self.pointer}: {self.message}" if self.pointer else self.message


def check_input_schema(tool: str, schema: object) -> None:
    """Raise when ``schema`` cannot be a tool's input schema.

    Args:
        tool: The tool's name, for the error.
        schema: The input schema.

    Raises:
        ToolDefinitionError: Every problem, each as ``input schema at <pointer>: <fix>``
            (``input schema: <fix>`` for the schema as a whole).
    """
    problems = input_schema_problems(schema)
    if problems:
        raise ToolDefinitionError(
            tool, [f"input schema {p}" if p.pointer else f"input schema: {p}" for p in problems]
        )


def input_schema_problems(schema: object) -> tuple[SchemaProblem, ...]:
    """Everything wrong with ``schema`` as a tool's input schema, in pointer order.

    Empty when the schema is valid JSON Schema (of the draft its ``$schema`` names, 2020-12
    by default) whose top level is an object schema.
    """
    if not isinstance(schema, Mapping):
        return (
            SchemaProblem(
                pointer="",
                message=f'must be a JSON object such as {{"type": "object", '
                f'"properties": {{...}}}}, not {_kind(schema)}',
            ),
        )
    document = schema if type(schema) is dict else dict(schema)
    problems = (*_top_level_problems(document), *_meta_schema_problems(document))
    unique = {str(p): p for p in problems}.values()
    return tuple(sorted(unique, key=lambda p: (p.pointer, p.message)))


def _top_level_problems(schema: dict[Any, Any]) -> tuple[SchemaProblem, ...]:
    kind = schema.get("type")
    if kind == "object" or (isinstance(kind, str) and kind not in SIMPLE_TYPES):
        return ()  # an object schema, or a misspelled type, which the meta-schema check reports
    if "type" not in schema:
        return (
            SchemaProblem(
                pointer="",
                message='the top level needs "type": "object" (a tool\'s arguments are one '
                "JSON object); add it",
            ),
        )
    return (
        SchemaProblem(
            pointer="/type",
            message=f"the top level must be an object schema, not {_json(kind)}: a tool's "
            'arguments are one JSON object; write {"type": "object", "properties": '
            '{"<name>": <this schema>}}',
        ),
    )


def _meta_schema_problems(schema: dict[Any, Any]) -> list[SchemaProblem]:
    declared = schema.get("$schema")
    draft = jsonschema_rs.validator_cls_for(
        {"$schema": declared} if isinstance(declared, str) else {}
    )
    validator = _meta_validator(_META_SCHEMAS.get(draft, JSON_SCHEMA_DIALECT))
    try:
        if _JSON.is_valid(schema) and validator.is_valid(schema):  # the usual answer
            return []
    except ValueError:  # a value jsonschema_rs cannot read: a set, an object, a str subclass...
        pass
    try:  # the JSON the model receives (a tuple is an array, a str subclass a string)
        document = json.loads(json.dumps(schema, allow_nan=False))
    except (TypeError, ValueError) as exc:
        return [_not_json(schema, exc)]
    return [problem for error in validator.iter_errors(document) for problem in _problems(error)]


_JSON = jsonschema_rs.validator_for(
    {
        "type": ["array", "boolean", "null", "number", "object", "string"],
        "items": {"$ref": "#"},
        "additionalProperties": {"$ref": "#"},
    }
)
"""Visits every value of a schema (the meta-schema leaves ``default``, ``examples``... alone),
so a value JSON has no form for fails it: NaN and infinities, or a set, which raise."""


@functools.cache
def _meta_validator(dialect: str) -> jsonschema_rs.Validator:
    """The validator of ``dialect``'s meta-schema; formats are checked (a pattern compiles)."""
    return jsonschema_rs.validator_for(
        {"$schema": dialect, "$ref": dialect}, validate_formats=True, offline=True
    )


def _not_json(value: Any, error: Exception, path: tuple[Any, ...] = ()) -> SchemaProblem:
    """Where ``json`` fails to write ``value`` (with ``error``): the innermost part it cannot."""
    if isinstance(value, dict):
        parts: Any = value.items()
    else:
        parts = enumerate(value) if isinstance(value, list | tuple) else ()
    for part, item in parts:
        try:
            json.dumps(item, allow_nan=False)
        except (TypeError, ValueError) as exc:
            return _not_json(item, exc, (*path, part))
    return SchemaProblem(pointer=_pointer(list(path)), message=f"is not JSON: {error}")


# --- wording the meta-schema's errors ----------------------------------------------------------


def _problems(error: jsonschema_rs.ValidationError) -> list[SchemaProblem]:
    """The problems an error names; for "none of these fit", the closest alternative's.

    The closest is the one that got furthest into the value (draft 7's ``items`` is a schema
    or an array of them: an array with a misspelled type is reported at that type).
    """
    if isinstance(error.kind, _Kind.AnyOf | _Kind.OneOfNotValid) and error.kind.context:
        depth = len(error.instance_path)
        closest = max(error.kind.context, key=lambda errors: max(_depths(errors)))
        if max(_depths(closest)) > depth:
            return [problem for inner in closest for problem in _problems(inner)]
    return [_problem(error)]


def _depths(errors: list[jsonschema_rs.ValidationError]) -> list[int]:
    return [len(error.instance_path) for error in errors] or [0]


def _problem(error: jsonschema_rs.ValidationError) -> SchemaProblem:
    path = list(error.instance_path)
    if isinstance(error.kind, _Kind.PropertyNames):  # a pattern of "patternProperties"
        error = error.kind.error
    keyword, at_keyword = _locate(path)
    if keyword is not None:
        message = _keyword_problem(keyword, at_keyword, error)
    elif isinstance(error.kind, _Kind.Type):
        message = _not_a_schema(path, error.instance)
    elif isinstance(error.kind, _Kind.Required):  # draft 4: "exclusiveMinimum" needs "minimum"
        message = (
            f'the schema here needs "{error.kind.property}" (another of its keywords depends on it)'
        )
    else:
        message = f"the schema here is invalid: {error.message}"
    return SchemaProblem(pointer=_pointer(path), message=message)


def _locate(path: list[Any]) -> tuple[str | None, bool]:
    """Which keyword's value a place in the schema is in, and whether it is that value itself.

    ``(None, False)`` for a place that must hold a schema (the value of ``items``, one entry
    of ``properties``...). Read from the path alone, so it holds for every dialect.
    """
    keyword: str | None = None
    at_keyword = False
    role = "schema"
    for part in path:
        if role == "schema" and isinstance(part, int):  # draft 7's "items": [schemas]
            keyword, at_keyword = None, False
        elif role == "schema":
            keyword, at_keyword = str(part), True
            role = _ROLES.get(keyword, "value")
        elif role in ("map", "array"):
            keyword, at_keyword, role = None, False, "schema"
        else:
            at_keyword = False
    return (None, False) if role == "schema" else (keyword, at_keyword)


_SCHEMA_MAPS = {
    "properties": "property name",
    "patternProperties": "pattern",
    "dependentSchemas": "property name",
    "dependencies": "property name",
    "$defs": "name",
    "definitions": "name",
}
_ROLES = {
    **dict.fromkeys(
        (
            "items",
            "additionalItems",
            "contains",
            "additionalProperties",
            "propertyNames",
            "if",
            "then",
            "else",
            "not",
            "unevaluatedItems",
            "unevaluatedProperties",
            "contentSchema",
        ),
        "schema",
    ),
    **dict.fromkeys(_SCHEMA_MAPS, "map"),
    **dict.fromkeys(("prefixItems", "allOf", "anyOf", "oneOf"), "array"),
}
"""What a keyword's value holds: a schema, schemas by name, an array of schemas (else a value)."""


def _not_a_schema(path: list[Any], value: object) -> str:
    message = (
        f'must be a schema (an object such as {{"type": "string"}}, or true or false), '
        f"not {_json(value)}"
    )
    if isinstance(value, str) and value in SIMPLE_TYPES:
        return f'{message}; write {{"type": {_json(value)}}}'
    if path and path[-1] == "items" and isinstance(value, list):
        return f'{message}; for one schema per position use "prefixItems"'
    return message


def _keyword_problem(keyword: str, at_keyword: bool, error: jsonschema_rs.ValidationError) -> str:
    """The problem with ``keyword``'s value (``at_keyword``) or with an item of it."""
    value, kind = error.instance, error.kind
    if keyword == "type":
        return _type_problem(value)
    if isinstance(kind, _Kind.Format) and kind.format == "regex":
        return f'"{keyword}" must be a valid regular expression, not {_json(value)}'
    if keyword == "required":
        if at_keyword and not isinstance(value, list):
            fix = f'; write "required": [{_json(value)}]' if isinstance(value, str) else ""
            return f'"required" must be an array of property names, not {_json(value)}{fix}'
        if isinstance(kind, _Kind.UniqueItems):
            return '"required" names a property twice; list each once'
        if isinstance(kind, _Kind.Type) and not at_keyword:
            return f'"required" lists property names (strings), not {_json(value)}'
    if keyword in _SCHEMA_MAPS and at_keyword and not isinstance(value, dict):
        return (
            f'"{keyword}" must be an object mapping each {_SCHEMA_MAPS[keyword]} to its '
            f'schema, not {_kind(value)}; write {{"<{_SCHEMA_MAPS[keyword]}>": '
            '{"type": ...}, ...}'
        )
    return f'"{keyword}" {_expectation(error)}'


def _type_problem(value: object) -> str:
    listed = ", ".join(SIMPLE_TYPES)
    if isinstance(value, str):
        close = difflib.get_close_matches(value.lower(), SIMPLE_TYPES, n=1)
        if close:
            return (
                f'{_json(value)} is not a JSON Schema type; did you mean "{close[0]}"? '
                f"(the types are {listed})"
            )
        return f"{_json(value)} is not a JSON Schema type; use one of {listed}"
    if isinstance(value, list):
        if not value:
            return f'"type" must name at least one type (the types are {listed})'
        unknown = [t for t in value if t not in SIMPLE_TYPES]
        if unknown:
            shown = ", ".join(_json(t) for t in unknown)
            return f'{shown} in "type" is not a JSON Schema type (the types are {listed})'
        return '"type" names a type twice; list each once'
    return (
        f'"type" must be a type name or an array of them, not {_json(value)} '
        f"(the types are {listed})"
    )


def _expectation(error: jsonschema_rs.ValidationError) -> str:
    """What the meta-schema asked of the value, in words."""
    value = _json(error.instance)
    match error.kind:
        case _Kind.Type(types):
            return f"must be {' or '.join(map(_article, types))}, not {value}"
        case _Kind.Minimum(limit):
            return f"must be at least {limit}, not {value}"
        case _Kind.ExclusiveMinimum(limit):
            return f"must be greater than {limit}, not {value}"
        case _Kind.MinItems():
            return "must not be empty"
        case _Kind.UniqueItems():
            return "must not list an item twice"
        case _Kind.Format(format_name):
            return f"must be a valid {format_name}, not {value}"
        case _Kind.Pattern(pattern):
            return f"must match {pattern}, not {value}"
    return f"is invalid: {error.message}"


def _article(kind: str) -> str:
    return {"object": "an object", "array": "an array", "integer": "an integer"}.get(
        kind, f"a {kind}"
    )


def _pointer(path: list[Any]) -> str:
    """A JSON pointer (RFC 6901): ``~`` and ``/`` in names are escaped."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _json(value: object) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= _SHOWN_VALUE else text[: _SHOWN_VALUE - 3] + "..."


def _kind(value: object) -> str:
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, str):
        return f"a string ({_json(value)})"
    if value is None:
        return "null"
    if isinstance(value, bool | int | float):
        return f"a {'boolean' if isinstance(value, bool) else 'number'} ({_json(value)})"
    return f"a {type(value).__name__}"
