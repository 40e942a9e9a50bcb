"""A call's arguments: read once from whatever the model sent, validated once against the tool.

:func:`parse_arguments` is the one reader of a call's arguments, whichever door the call came
through (a model's round, ``call_tool``, the gateway, an MCP server, a bridge): text is read as
JSON (blank is ``{}``; the one decoder, :func:`~toolrelay.tools._arguments.load_json`, refuses
what is not JSON, such as ``NaN``); a JSON string holding the object (sent encoded twice) is
unwrapped; ``None`` means no arguments; a mapping is the object already decoded, held to the
same rules. Anything else (a list, a number), text longer than the caller's bound, or values
nested deeper than :data:`MAX_ARGUMENTS_DEPTH` levels is refused with one problem naming what
came, never an exception of another kind. :func:`validate_call_arguments` validates the result
against the tool: with the tool's own validation when it has one
(:class:`~toolrelay.tools.ValidatingTool`, e.g. a function tool's pydantic model, which also
coerces ``"5"`` to ``5`` for an ``int``), else against its JSON Schema. Every interceptor
(authorization, approval, idempotency, audit) sees the validated values, and the tool runs
with them.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from toolrelay.exceptions import ArgumentProblem, InvalidJsonError
from toolrelay.execution import _feedback as feedback
from toolrelay.execution._canonical import canonical_json
from toolrelay.tools._arguments import SchemaValidator, load_json, require_object
from toolrelay.tools._base import Tool, ValidatedArguments, ValidatingTool

__all__ = [
    "MAX_ARGUMENTS_DEPTH",
    "ParsedArguments",
    "parse_arguments",
    "validate_call_arguments",
    "validates_itself",
]

MAX_ARGUMENTS_DEPTH: Final = 100
"""Levels of nested objects and arrays a call's arguments may have (the object itself is 1).

No tool's parameters go that deep; what does is refused as feedback before anything recurses
over it (validation, digests, logging), so no later step can fail on its depth.
"""

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, kw_only=True)
class ParsedArguments:
    """Arguments that are a JSON object (not validated against the tool yet).

    Attributes:
        text: The JSON text of the object (``"{}"`` for none); what the call's history keeps.
        values: The parsed object, read-only.
    """

    text: str
    values: Mapping[str, Any]


_NONE = ParsedArguments(text="{}", values=_EMPTY)


def parse_arguments(
    tool_name: str,
    arguments: object,
    *,
    max_length: int | None = None,
    max_depth: int = MAX_ARGUMENTS_DEPTH,
) -> ParsedArguments:
    """Read a call's arguments, whatever shape they came in (see the module docs).

    Args:
        tool_name: The tool's name, for the problem.
        arguments: JSON text, ``None``, or a mapping already decoded.
        max_length: Characters of text beyond which it is refused unread; ``None``: no bound.
        max_depth: Levels of nesting allowed (a forwarding call's wrapper takes one more).

    Raises:
        InvalidJsonError: The arguments are not JSON, not an object, too long or nested too
            deeply; the problem names what came.
    """
    if isinstance(arguments, str):
        text = str.__str__(arguments)  # a str subclass: its own methods may misbehave
    elif arguments is None:
        return _NONE
    elif isinstance(arguments, Mapping):
        text = _written(tool_name, arguments)
    else:
        require_object(tool_name, arguments)  # raises, naming what it is
        raise AssertionError("unreachable")  # pragma: no cover
    if max_length is not None and len(text) > max_length:
        raise InvalidJsonError(tool_name, [feedback.arguments_too_long(len(text), max_length)])
    if not text.strip():
        return _NONE
    value = _decoded(tool_name, text)
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            inner = _decoded(tool_name, value)
        except InvalidJsonError as exc:
            if isinstance(exc.__cause__, RecursionError):
                raise
            inner = None
        if isinstance(inner, dict):
            text, value = value, inner
    values = require_object(tool_name, value)
    # Every level takes two characters of text at least ("[]"): short text is never too deep.
    if len(text) > 2 * max_depth and _deeper_than(values, max_depth):
        raise _too_deep(tool_name)
    return ParsedArguments(text=text, values=MappingProxyType(values))


def _decoded(tool_name: str, text: str) -> Any:
    """``text`` decoded; nested past what the decoder reads: the depth problem, worded once."""
    try:
        return load_json(tool_name, text)
    except InvalidJsonError as exc:
        if isinstance(exc.__cause__, RecursionError):
            raise _too_deep(tool_name) from exc.__cause__
        raise


def _written(tool_name: str, arguments: Mapping[Any, Any]) -> str:
    """A mapping's JSON text, to be read back like any text (so ``NaN`` is refused alike)."""
    error: Exception
    try:
        return json.dumps(dict(arguments), ensure_ascii=False)
    except RecursionError as exc:
        raise _too_deep(tool_name) from exc
    except (TypeError, ValueError) as exc:  # a value JSON has no form for, a cycle
        problem, error = f"Arguments must hold JSON values only: {exc}.", exc
    raise InvalidJsonError(tool_name, [ArgumentProblem(location="", message=problem)]) from error


def _too_deep(tool_name: str) -> InvalidJsonError:
    return InvalidJsonError(tool_name, [feedback.arguments_too_deep(MAX_ARGUMENTS_DEPTH)])


def _deeper_than(value: dict[str, Any], limit: int) -> bool:
    """Whether ``value`` nests more than ``limit`` levels (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values() if _nests(child))
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item if _nests(child))
    return False


def _nests(value: object) -> bool:
    return isinstance(value, dict | list)


def validate_call_arguments(
    tool: Tool, values: Mapping[str, Any], text: str | None = None
) -> ValidatedArguments:
    """Validate decoded arguments against ``tool``.

    Args:
        tool: The tool the call resolved to.
        values: The decoded arguments object.
        text: Its JSON text, when known (kept for a tool validated by JSON Schema, which
            runs with the text as the model wrote it).

    Raises:
        ToolArgumentError: One problem per violation.
    """
    if validates_itself(tool):
        return tool.validate_arguments(values)  # type: ignore[attr-defined, no-any-return]
    _schema_validator(tool).validate(values)
    if text is None:
        text = canonical_json(dict(values))
    return ValidatedArguments(values=values, text=text)


def validates_itself(tool: Tool) -> bool:
    """Whether ``tool`` is a :class:`~toolrelay.tools.ValidatingTool` (answer kept per type)."""
    kind = type(tool)
    known = _SELF_VALIDATING.get(kind)
    if known is None:
        known = _SELF_VALIDATING[kind] = isinstance(tool, ValidatingTool)
    return known


# A protocol check looks up every member; tools of one class answer alike.
_SELF_VALIDATING: dict[type, bool] = {}

# Building a validator compiles the schema (its patterns and references) and tools are
# long-lived: one per schema object, the most recently used kept.
_VALIDATORS: OrderedDict[int, tuple[Mapping[str, Any], SchemaValidator]] = OrderedDict()
_VALIDATORS_KEPT = 1024
_validators_lock = threading.Lock()


def _schema_validator(tool: Tool) -> SchemaValidator:
    definition = tool.definition
    schema = definition.input_schema
    with _validators_lock:
        entry = _VALIDATORS.get(id(schema))
        if entry is not None and entry[0] is schema:
            _VALIDATORS.move_to_end(id(schema))
            return entry[1]
    validator = SchemaValidator(definition.name, schema)
    with _validators_lock:
        _VALIDATORS[id(schema)] = (schema, validator)  # the schema is kept, so its id is too
        while len(_VALIDATORS) > _VALIDATORS_KEPT:
            _VALIDATORS.popitem(last=False)
    return validator
