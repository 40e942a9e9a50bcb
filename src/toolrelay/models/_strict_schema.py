"""Strict tool schemas (OpenAI ``strict: true``) and undoing what strictness adds to a call.

In strict mode the provider guarantees arguments that match the schema, but only accepts a
subset of JSON Schema: every object lists all its properties as required and forbids others,
and ``default`` is not allowed. :func:`to_strict_schema` rewrites a tool's schema that way;
a property that was optional becomes *nullable* instead, so the model can still leave it out
by sending ``null``.

A tool never asked for that ``null``: ``unit: Literal["c", "f"] = "c"`` rejects it.
:func:`drop_added_nulls` removes, from the arguments of a call, every ``null`` whose property
was optional and not nullable in the original schema, so the tool's default applies.

Some schemas cannot be made strict without changing what they accept. A free-form map
(``dict[str, int]``, ``Mapping``, an object with ``additionalProperties`` and no properties)
would become an object that holds nothing, a tool the model could never call right; such a
schema, and one nested deeper than :data:`MAX_DEPTH`, raises
:class:`~toolrelay.exceptions.ConfigurationError` naming where, rather than being sent broken.
An object schema with properties but no ``type`` gets ``"type": "object"``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolrelay.exceptions import ConfigurationError, InvalidJsonError
from toolrelay.tools._arguments import load_json

__all__ = ["MAX_DEPTH", "drop_added_nulls", "to_strict_schema"]

MAX_DEPTH = 64
"""How many subschemas deep a schema made strict may nest (``$ref`` targets count apart)."""

_NULL = {"type": "null"}
_SUBSCHEMA_LISTS = ("anyOf", "allOf", "oneOf", "prefixItems")
_SUBSCHEMA_MAPS = ("$defs", "definitions")


def to_strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` that OpenAI's strict mode accepts (see the module docs).

    Raises:
        ConfigurationError: The schema's top level is a union, it holds a free-form map, or
            it nests deeper than :data:`MAX_DEPTH`; the message names the place
            (``properties.tags``).
    """
    root = {k: v for k, v in schema.items() if k != "$schema"}
    if {"anyOf", "oneOf", "allOf"} & root.keys() and "properties" not in root:
        raise ConfigurationError(
            "the root of a strict JSON schema must be an object with properties, not a "
            "union; give the tool one object of arguments, or send it without strict_tools"
        )
    return _strict(root, ())


def _strict(schema: Mapping[str, Any], path: tuple[str, ...], depth: int = 0) -> dict[str, Any]:
    if depth > MAX_DEPTH:
        raise ConfigurationError(
            f"the schema is nested too deeply for strict mode (over {MAX_DEPTH} levels); "
            "flatten it, or send the tools without strict_tools"
        )
    if _is_open_map(schema, at_root=not path):
        raise ConfigurationError(
            f"strict mode cannot express the free-form map at {_where(path)} (every object "
            "must list its properties); use a model with named fields, or send the tools "
            "without strict_tools"
        )
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "default":
            continue
        if key == "properties" and isinstance(value, Mapping):
            required = set(schema.get("required", ()))
            out[key] = {
                name: (
                    _strict(sub, (*path, key, name), depth + 1)
                    if name in required
                    else _nullable(_strict(sub, (*path, key, name), depth + 1))
                )
                for name, sub in value.items()
            }
        elif key in _SUBSCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {
                name: _strict(sub, (*path, key, name), depth + 1) for name, sub in value.items()
            }
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            out[key] = [
                _strict(sub, (*path, key, str(i)), depth + 1) if isinstance(sub, Mapping) else sub
                for i, sub in enumerate(value)
            ]
        elif key in ("items", "additionalProperties", "not") and isinstance(value, Mapping):
            out[key] = _strict(value, (*path, key), depth + 1)
        else:
            out[key] = value
    if "properties" in out and "type" not in out and not _COMBINERS & out.keys():
        out = {"type": "object", **out}
    if _is_object(out.get("type")) or "properties" in out:
        properties = out.get("properties", {})
        out["properties"] = properties
        out["required"] = list(properties)
        out["additionalProperties"] = False
    return out


_COMBINERS = frozenset({"$ref", "anyOf", "oneOf", "allOf"})


def _is_object(kind: object) -> bool:
    return kind == "object" or (isinstance(kind, list) and "object" in kind)


def _is_open_map(schema: Mapping[str, Any], *, at_root: bool) -> bool:
    """An object schema that takes keys it does not name: strict mode would empty it.

    A bare ``{"type": "object"}`` at the top level is a tool without arguments, not a map.
    """
    if schema.get("patternProperties"):
        return True
    if "properties" in schema:
        return False
    extra = schema.get("additionalProperties")
    if extra is not None:
        return extra is not False  # true, or a schema of the values
    return not at_root and _is_object(schema.get("type")) and not _COMBINERS & schema.keys()


def _where(path: tuple[str, ...]) -> str:
    return ".".join(path) if path else "the top level"


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if _allows_null(schema, {}):
        return schema
    kind = schema.get("type")
    if isinstance(kind, str) and "$ref" not in schema:
        widened = {**schema, "type": [kind, "null"]}
        if "enum" in schema:
            widened["enum"] = [*schema["enum"], None]
        return widened
    if isinstance(kind, list) and "enum" not in schema:
        return {**schema, "type": [*kind, "null"]}
    if isinstance(schema.get("anyOf"), list) and len(schema) == 1:
        return {"anyOf": [*schema["anyOf"], _NULL]}
    return {"anyOf": [schema, _NULL]}


def _allows_null(schema: Any, root: Mapping[str, Any], depth: int = 0) -> bool:
    if not isinstance(schema, Mapping) or depth > 20:
        return False
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return "enum" not in schema or None in schema["enum"]
    if "enum" in schema and None in schema["enum"]:
        return True
    if "const" in schema and schema["const"] is None:
        return True
    for key in ("anyOf", "oneOf"):
        if any(_allows_null(sub, root, depth + 1) for sub in schema.get(key, ())):
            return True
    ref = _resolve(schema, root)
    return ref is not None and _allows_null(ref, root, depth + 1)


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any] | None:
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return None
    node: Any = root
    for part in ref[2:].split("/"):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node if isinstance(node, Mapping) else None


def drop_added_nulls(arguments: str, original_schema: Mapping[str, Any]) -> str:
    """``arguments`` without the ``null`` values strict mode added (see the module docs).

    Args:
        arguments: The call's arguments as JSON text.
        original_schema: The tool's schema before :func:`to_strict_schema`.

    Returns:
        The cleaned JSON text, or ``arguments`` unchanged when nothing was dropped or the
        text is not a JSON object (the execution layer reports that).
    """
    try:
        value = load_json("", arguments)
    except InvalidJsonError:
        return arguments
    if not isinstance(value, dict):
        return arguments
    return json.dumps(value) if _drop(value, original_schema, original_schema, 0) else arguments


def _drop(value: Any, schema: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> bool:
    if depth > 20:
        return False
    resolved = _resolve(schema, root)
    if resolved is not None:
        schema = resolved
    changed = False
    if isinstance(value, dict):
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            required = set(schema.get("required", ()))
            for name in list(value):
                sub = properties.get(name)
                if not isinstance(sub, Mapping):
                    continue
                if value[name] is None and name not in required and not _allows_null(sub, root):
                    del value[name]
                    changed = True
                else:
                    changed |= _drop(value[name], sub, root, depth + 1)
    elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for item in value:
            changed |= _drop(item, schema["items"], root, depth + 1)
    return changed
