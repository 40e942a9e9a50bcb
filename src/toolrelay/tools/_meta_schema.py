"""Checking input schemas: valid JSON Schema with an object schema at the top.

Every :class:`~toolrelay.tools.ToolDefinition` checks its ``input_schema`` when it is built,
so a catalog with a broken schema is refused where it is declared or loaded, not by a
provider in the middle of a conversation. A schema is checked as the JSON the model receives
(a tuple is an array) against the meta-schema of its dialect: draft 2020-12, or the draft its
``$schema`` names (a server's draft-07 schema is checked as draft 7). Its top level must be
``{"type": "object", ...}``: a tool's arguments are one JSON object. Each problem names its
place as a JSON pointer and says how to fix it:

    >>> problems = input_schema_problems(
    ...     {"type": "object", "properties": {"city": {"type": "objekt"}}, "required": "city"}
    ... )
    >>> [problem.pointer for problem in problems]
    ['/properties/city/type', '/required']
    >>> print(problems[1].message)
    "required" must be an array of property names, not "city"; write "required": ["city"]

Definitions are built by the thousand (a catalog) and on every request (function tools), so
the check is fast where it can be. Nearly every schema uses a small part of the vocabulary
(``type``, ``properties``, ``required``, ``items``, ``enum``, ``$ref``...): a first pass proves
such a schema valid by checking each keyword's value against exactly what the meta-schema
demands of it, in microseconds. A schema it cannot prove valid, because it is invalid, names
another dialect or uses a keyword the pass leaves alone (``$id``, ``$anchor``, ``$vocabulary``,
``dependencies``...), goes to ``jsonschema``'s validator of its dialect's meta-schema (built
once per dialect); its verdict is kept per canonical JSON text of the schema, and its errors
are the problems reported.
``tests/tools/test_meta_schema.py`` holds the first pass to the validator's verdicts.
"""

from __future__ import annotations

import difflib
import functools
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard

from toolrelay.exceptions import ToolDefinitionError

if TYPE_CHECKING:
    from jsonschema import ValidationError
    from jsonschema.protocols import Validator

__all__ = [
    "JSON_SCHEMA_DIALECT",
    "LEFT_TO_VALIDATOR",
    "SIMPLE_TYPES",
    "SchemaProblem",
    "check_input_schema",
    "input_schema_problems",
]

SIMPLE_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")
_SIMPLE_TYPES = frozenset(SIMPLE_TYPES)
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
"""The dialect of the schemas toolrelay generates, and of schemas that declare none."""
_SHOWN_VALUE = 60
_VERDICTS = 1024


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
    top = _top_level_problems(document)
    if _is_schema(document):
        return top
    problems = (*top, *_validator_problems(document))
    return tuple(sorted(problems, key=lambda p: (p.pointer, p.message)))


# --- the top level -----------------------------------------------------------------------------


def _top_level_problems(schema: dict[Any, Any]) -> tuple[SchemaProblem, ...]:
    kind = schema.get("type")
    if kind == "object" or (isinstance(kind, str) and kind not in _SIMPLE_TYPES):
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


# --- the first pass: proving a schema valid ----------------------------------------------------
#
# Each check below accepts a keyword's value only when the meta-schema would accept it; when
# in doubt it answers False, and the validator decides. Objects must be dicts and arrays lists
# or tuples with string keys and finite numbers: the JSON a schema becomes.


def _is_schema(node: object) -> bool:
    if type(node) is dict:
        for key, value in node.items():
            check = _KEYWORDS.get(key)
            if check is not None:
                if not check(value):
                    return False
            elif key in LEFT_TO_VALIDATOR or type(key) is not str or not _is_json(value):
                return False
        return True
    return node is True or node is False


def _is_json(value: object) -> bool:
    if type(value) is str or type(value) is bool or type(value) is int or value is None:
        return True
    if type(value) is float:
        return math.isfinite(value)
    if type(value) is list or type(value) is tuple:
        return all(map(_is_json, value))
    if type(value) is dict:
        return all(type(k) is str and _is_json(v) for k, v in value.items())
    return False


def _is_array(value: object) -> TypeGuard[list[Any] | tuple[Any, ...]]:
    return type(value) is list or type(value) is tuple


def _schemas(value: object) -> bool:
    if type(value) is not dict:
        return False
    for key, schema in value.items():
        if type(key) is not str or not _is_schema(schema):
            return False
    return True


def _schema_array(value: object) -> bool:
    return _is_array(value) and len(value) > 0 and all(map(_is_schema, value))


def _type(value: object) -> bool:
    if type(value) is str:
        return value in _SIMPLE_TYPES
    return (
        _is_array(value)
        and len(value) > 0
        and all(type(t) is str and t in _SIMPLE_TYPES for t in value)
        and len(set(value)) == len(value)
    )


def _string_array(value: object) -> bool:
    if not _is_array(value):
        return False
    for item in value:
        if type(item) is not str:
            return False
    return len(set(value)) == len(value)


def _dependent_required(value: object) -> bool:
    return type(value) is dict and all(
        type(k) is str and _string_array(v) for k, v in value.items()
    )


def _number(value: object) -> TypeGuard[int | float]:
    return type(value) is int or (type(value) is float and math.isfinite(value))


def _positive(value: object) -> bool:
    return _number(value) and value > 0


def _count(value: object) -> bool:
    return type(value) is int and value >= 0


def _boolean(value: object) -> bool:
    return type(value) is bool


def _string(value: object) -> bool:
    return type(value) is str


def _json_array(value: object) -> bool:
    return _is_array(value) and all(map(_is_json, value))


def _regex(value: object) -> bool:
    return type(value) is str and _compiles(value)


def _pattern_properties(value: object) -> bool:
    return type(value) is dict and _schemas(value) and all(map(_compiles, value))


def _reference(value: object) -> bool:
    return type(value) is str and _conforms(value, "uri-reference")


def _dialect(value: object) -> bool:
    # Any other dialect is checked against its own meta-schema, by the validator.
    return type(value) is str and value in _DIALECTS


_DIALECTS = frozenset({JSON_SCHEMA_DIALECT, JSON_SCHEMA_DIALECT + "#"})


@functools.lru_cache(maxsize=_VERDICTS)
def _conforms(value: str, format_name: str) -> bool:
    # The meta-schema's URI format, checked by jsonschema's own format checker (which checks
    # it only when a URI library is installed, exactly as its validator would).
    return bool(_format_checker().conforms(value, format_name))


@functools.lru_cache(maxsize=_VERDICTS)
def _compiles(pattern: str) -> bool:
    # The meta-schema's "regex" format, as jsonschema checks it: Python's re accepts it.
    try:
        re.compile(pattern)
    except Exception:
        return False
    return True


_KEYWORDS: dict[str, Callable[[object], bool]] = {
    # core
    "$schema": _dialect,
    "$ref": _reference,
    "$dynamicRef": _reference,
    "$recursiveRef": _reference,
    "$comment": _string,
    "$defs": _schemas,
    "definitions": _schemas,
    # applicator
    "prefixItems": _schema_array,
    "items": _is_schema,
    "contains": _is_schema,
    "additionalProperties": _is_schema,
    "properties": _schemas,
    "patternProperties": _pattern_properties,
    "dependentSchemas": _schemas,
    "propertyNames": _is_schema,
    "if": _is_schema,
    "then": _is_schema,
    "else": _is_schema,
    "allOf": _schema_array,
    "anyOf": _schema_array,
    "oneOf": _schema_array,
    "not": _is_schema,
    # unevaluated
    "unevaluatedItems": _is_schema,
    "unevaluatedProperties": _is_schema,
    # validation
    "type": _type,
    "const": _is_json,
    "enum": _json_array,
    "multipleOf": _positive,
    "maximum": _number,
    "exclusiveMaximum": _number,
    "minimum": _number,
    "exclusiveMinimum": _number,
    "maxLength": _count,
    "minLength": _count,
    "pattern": _regex,
    "maxItems": _count,
    "minItems": _count,
    "uniqueItems": _boolean,
    "maxContains": _count,
    "minContains": _count,
    "maxProperties": _count,
    "minProperties": _count,
    "required": _string_array,
    "dependentRequired": _dependent_required,
    # meta-data
    "title": _string,
    "description": _string,
    "default": _is_json,
    "deprecated": _boolean,
    "readOnly": _boolean,
    "writeOnly": _boolean,
    "examples": _json_array,
    # format-annotation and content
    "format": _string,
    "contentEncoding": _string,
    "contentMediaType": _string,
    "contentSchema": _is_schema,
}

LEFT_TO_VALIDATOR = frozenset(
    {
        "$id",
        "$anchor",
        "$dynamicAnchor",
        "$recursiveAnchor",
        "$vocabulary",
        "dependencies",
    }
)
"""Keywords the meta-schema constrains that the first pass leaves to the validator."""


# --- the validator: deciding, and saying what is wrong -----------------------------------------


@functools.lru_cache(maxsize=8)
def _meta_validator(dialect: str | None) -> Validator:
    """The validator of the meta-schema of ``dialect`` (a ``$schema``; 2020-12 when unknown)."""
    from jsonschema import Draft202012Validator
    from jsonschema.validators import validator_for

    cls: type[Validator] = Draft202012Validator
    if dialect is not None:
        cls = validator_for({"$schema": dialect}, default=Draft202012Validator)
    return cls(cls.META_SCHEMA, format_checker=cls.FORMAT_CHECKER)


@functools.cache
def _format_checker() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator.FORMAT_CHECKER


def _validator_problems(schema: dict[Any, Any]) -> tuple[SchemaProblem, ...]:
    try:
        text = json.dumps(schema, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return (_not_json(schema, exc),)
    return _problems_of_text(text)


@functools.lru_cache(maxsize=_VERDICTS)
def _problems_of_text(text: str) -> tuple[SchemaProblem, ...]:
    schema = json.loads(text)
    dialect = schema.get("$schema")
    try:
        validator = _meta_validator(dialect if isinstance(dialect, str) else None)
        errors = list(validator.iter_errors(schema))
    except Exception as exc:  # a pattern re cannot even parse without raising re.error
        return (SchemaProblem(pointer="", message=f"cannot be checked: {exc}"),)
    problems = {str(p): p for p in map(_problem, errors)}
    return tuple(sorted(problems.values(), key=lambda p: (p.pointer, p.message)))


def _problem(error: ValidationError) -> SchemaProblem:
    path = list(error.absolute_path)
    keyword, at_keyword = _locate(path)
    if keyword is not None:
        message = _keyword_problem(keyword, at_keyword, error)
    elif error.validator == "type":
        message = _not_a_schema(path, error.instance)
    else:  # a rule between keywords of one schema (draft 4: exclusiveMinimum needs minimum)
        message = f"the schema here {_expectation(error)}"
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
        if role == "schema":
            keyword, at_keyword = str(part), True
            role = _ROLES.get(keyword, "value")
        elif role in ("map", "array"):
            keyword, at_keyword, role = None, False, "schema"
        else:
            at_keyword = False
    return (None, False) if role == "schema" else (keyword, at_keyword)


_ROLES = {
    **{k: "schema" for k, check in _KEYWORDS.items() if check is _is_schema},
    **{k: "map" for k, check in _KEYWORDS.items() if check in (_schemas, _pattern_properties)},
    **{k: "array" for k, check in _KEYWORDS.items() if check is _schema_array},
    "additionalItems": "schema",  # draft 7 and before
    "dependencies": "map",
}
"""What a keyword's value holds: a schema, schemas by name, an array of schemas, or a value."""


def _not_a_schema(path: list[Any], value: object) -> str:
    message = (
        f'must be a schema (an object such as {{"type": "string"}}, or true or false), '
        f"not {_json(value)}"
    )
    if isinstance(value, str) and value in _SIMPLE_TYPES:
        return f'{message}; write {{"type": {_json(value)}}}'
    if path and path[-1] == "items" and _is_array(value):
        return f'{message}; for one schema per position use "prefixItems"'
    return message


def _keyword_problem(keyword: str, at_keyword: bool, error: ValidationError) -> str:
    """The problem with ``keyword``'s value (``at_keyword``) or with an item of it."""
    value = error.instance
    if keyword == "type":
        return _type_problem(value)
    if keyword == "required":
        if at_keyword and not isinstance(value, list):
            fix = f'; write "required": [{_json(value)}]' if isinstance(value, str) else ""
            return f'"required" must be an array of property names, not {_json(value)}{fix}'
        if error.validator == "uniqueItems":
            return '"required" names a property twice; list each once'
        if error.validator == "type" and not at_keyword:
            return f'"required" lists property names (strings), not {_json(value)}'
    if keyword in _SCHEMA_MAPS and at_keyword and not isinstance(value, dict):
        return (
            f'"{keyword}" must be an object mapping each {_SCHEMA_MAPS[keyword]} to its '
            f'schema, not {_kind(value)}; write {{"<{_SCHEMA_MAPS[keyword]}>": '
            '{"type": ...}, ...}'
        )
    if error.validator == "format" and error.validator_value == "regex":
        return f'"{keyword}" must be a valid regular expression, not {_json(value)}'
    return f'"{keyword}" {_expectation(error)}'


_SCHEMA_MAPS = {
    "properties": "property name",
    "patternProperties": "pattern",
    "dependentSchemas": "property name",
    "$defs": "name",
    "definitions": "name",
}


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
    if _is_array(value):
        if not value:
            return f'"type" must name at least one type (the types are {listed})'
        unknown = [t for t in value if not (isinstance(t, str) and t in _SIMPLE_TYPES)]
        if unknown:
            shown = ", ".join(_json(t) for t in unknown)
            return f'{shown} in "type" is not a JSON Schema type (the types are {listed})'
        return '"type" names a type twice; list each once'
    return (
        f'"type" must be a type name or an array of them, not {_json(value)} '
        f"(the types are {listed})"
    )


def _expectation(error: ValidationError) -> str:
    """What the meta-schema asked of the value, in words."""
    kind, expected, value = error.validator, error.validator_value, error.instance
    if kind == "type":
        wanted = expected if isinstance(expected, list) else [expected]
        return f"must be {' or '.join(_article(w) for w in wanted)}, not {_json(value)}"
    if kind == "minimum":
        return f"must be at least {expected}, not {_json(value)}"
    if kind == "exclusiveMinimum":
        return f"must be greater than {expected}, not {_json(value)}"
    if kind == "minItems":
        return "must not be empty"
    if kind == "uniqueItems":
        return "must not list an item twice"
    if kind == "format":
        return f"must be a valid {expected}, not {_json(value)}"
    if kind == "pattern":
        return f"must match {expected}, not {_json(value)}"
    return f"is invalid: {error.message}"


def _article(kind: object) -> str:
    name = {"object": "an object", "array": "an array", "integer": "an integer"}.get(str(kind))
    return name or f"a {kind}"


def _not_json(schema: object, exc: Exception) -> SchemaProblem:
    pointer = _first_non_json(schema, [])
    where = _pointer(pointer) if pointer is not None else ""
    return SchemaProblem(pointer=where, message=f"is not JSON: {exc}")


def _first_non_json(value: object, path: list[Any]) -> list[Any] | None:
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return path
            found = _first_non_json(item, [*path, key])
            if found is not None:
                return found
        return None
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found = _first_non_json(item, [*path, i])
            if found is not None:
                return found
        return None
    return None if _is_json(value) else path


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
