"""A call's arguments: read once from the model's text, validated once against the tool.

:func:`parse_arguments` reads the text (blank is ``{}``, anything else must be a JSON object;
the one decoder, :func:`~toolrelay.tools._arguments.load_json`, refuses what is not JSON, such
as ``NaN``). A call whose arguments are not text, as some providers and hand-built calls
deliver them, is read too (:func:`arguments_text`): ``None`` means no arguments, like blank
text; a mapping is the object already decoded; anything else is refused, naming what came.
:func:`validate_call_arguments` validates the result against the tool: with the
tool's own validation when it has one (:class:`~toolrelay.tools.ValidatingTool`, e.g. a
function tool's pydantic model, which also coerces ``"5"`` to ``5`` for an ``int``), else
against its JSON Schema. Every interceptor (authorization, approval, idempotency, audit) sees
the validated values, and the tool runs with them.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from toolrelay.exceptions import ArgumentProblem, InvalidJsonError
from toolrelay.execution._canonical import canonical_json
from toolrelay.tools._arguments import SchemaValidator, load_json, require_object
from toolrelay.tools._base import Tool, ValidatedArguments, ValidatingTool

__all__ = [
    "ParsedArguments",
    "arguments_text",
    "parse_arguments",
    "validate_call_arguments",
    "validates_itself",
]


@dataclass(frozen=True, kw_only=True)
class ParsedArguments:
    """Arguments that are a JSON object (not validated against the tool yet).

    Attributes:
        text: The JSON text of the object (``"{}"`` for blank input).
        values: The parsed object, read-only.
    """

    text: str
    values: Mapping[str, Any]


def arguments_text(tool_name: str, arguments: object) -> str:
    """A call's arguments as JSON text, whatever a provider or a caller put in the call.

    Text is kept as it is; ``None`` (a provider's way to say "no arguments") is blank text; a
    mapping (arguments already decoded) is written as JSON, to be read back like any text, so
    that its values are held to the same rules (no ``NaN``).

    Raises:
        InvalidJsonError: ``arguments`` is anything else (a list, a number...), or a mapping
            that cannot be written as JSON; the problem names what was received.
    """
    if isinstance(arguments, str):
        return str.__str__(arguments)  # a str subclass: its own methods may misbehave
    if arguments is None:
        return ""
    if isinstance(arguments, Mapping):
        error: Exception
        try:
            return json.dumps(dict(arguments), ensure_ascii=False)
        except RecursionError as exc:
            problem, error = "Arguments are nested too deeply.", exc
        except (TypeError, ValueError) as exc:  # a value JSON has no form for, a cycle
            problem, error = f"Arguments must hold JSON values only: {exc}.", exc
        raise InvalidJsonError(tool_name, [ArgumentProblem(location="", message=problem)]) from (
            error
        )
    require_object(tool_name, arguments)  # raises, naming what it is
    raise AssertionError("unreachable")  # pragma: no cover


def parse_arguments(tool_name: str, text: str | Mapping[str, Any] | None) -> ParsedArguments:
    """Parse a call's arguments.

    Blank text (or ``None``) means no arguments. Some models send the object JSON-encoded a
    second time (a JSON string holding the object); that is unwrapped. Arguments that are not
    text go through :func:`arguments_text` first.

    Raises:
        InvalidJsonError: The text is not JSON, or is JSON but not an object; or the
            arguments are neither text, ``None`` nor a mapping.
    """
    if not isinstance(text, str):
        text = arguments_text(tool_name, text)
    if not text or not text.strip():
        return ParsedArguments(text="{}", values=MappingProxyType({}))
    value = load_json(tool_name, text)
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            inner = load_json(tool_name, value)
        except InvalidJsonError:
            inner = None
        if isinstance(inner, dict):
            text, value = value, inner
    return ParsedArguments(text=text, values=MappingProxyType(require_object(tool_name, value)))


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
