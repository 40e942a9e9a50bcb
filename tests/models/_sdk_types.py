"""Request bodies checked against a provider SDK's own request types (its TypedDicts).

:func:`type_errors` walks a JSON value against an annotation of the SDK, recursively: every key
of an object must be a key of its ``TypedDict`` (an unknown key is an error, whatever
``total`` says), every required key must be there, and every value must match its annotation
(literals, unions, lists, nested TypedDicts). A union matches when one member does; for
an object with a ``type`` (or ``role``), the member whose literal names it explains a mismatch.

pydantic's ``TypeAdapter`` over the same types is no substitute: it ignores unknown keys of a
``TypedDict`` and validates an ``Iterable`` field lazily, so nested blocks are never checked.
An annotation the walker does not know is an error too, so nothing passes unchecked.
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin

import typing_extensions

_REQUIRED = {typing.Required, typing_extensions.Required}
_NOT_REQUIRED = {typing.NotRequired, typing_extensions.NotRequired}
_ANNOTATED = {typing.Annotated, typing_extensions.Annotated}
_SEQUENCES = {list, collections.abc.Iterable, collections.abc.Sequence}


def _strip(annotation: Any) -> Any:
    """``annotation`` without ``Required``, ``NotRequired`` and ``Annotated`` around it."""
    while True:
        origin = get_origin(annotation)
        if origin in _REQUIRED or origin in _NOT_REQUIRED or origin in _ANNOTATED:
            annotation = get_args(annotation)[0]
        else:
            return annotation


def _literal(annotation: Any, key: str) -> tuple[Any, ...]:
    """The values of a ``TypedDict``'s literal ``key`` (empty without one)."""
    if not typing_extensions.is_typeddict(annotation):
        return ()
    hint = typing.get_type_hints(annotation, include_extras=True).get(key)
    hint = _strip(hint)
    values: list[Any] = []
    for member in get_args(hint) if get_origin(hint) in (Union, types.UnionType) else (hint,):
        if get_origin(member) is Literal:
            values.extend(get_args(member))
    return tuple(values)


def _name(annotation: Any) -> str:
    return getattr(annotation, "__name__", None) or repr(annotation)


def type_errors(value: Any, annotation: Any, path: str = "body") -> list[str]:
    """What in ``value`` the SDK's ``annotation`` does not allow (empty when it fits)."""
    annotation = _strip(annotation)
    origin = get_origin(annotation)
    if annotation is Any or annotation is object:
        return []
    if typing_extensions.is_typeddict(annotation):
        return _typed_dict_errors(value, annotation, path)
    if origin in (Union, types.UnionType):
        return _union_errors(value, get_args(annotation), path)
    if origin is Literal:
        allowed = get_args(annotation)
        return [] if value in allowed else [f"{path}: {value!r} is not one of {allowed!r}"]
    if annotation is type(None):
        return [] if value is None else [f"{path}: {value!r} is not null"]
    if annotation in (dict, collections.abc.Mapping) or origin in (dict, collections.abc.Mapping):
        if not isinstance(value, dict):
            return [f"{path}: {value!r} is not an object"]
        arguments = get_args(annotation)
        if not arguments:
            return []
        return [e for k, v in value.items() for e in type_errors(v, arguments[1], f"{path}.{k}")]
    if origin in _SEQUENCES or getattr(origin, "__name__", "") == "SequenceNotStr":
        if not isinstance(value, list):
            return [f"{path}: {value!r} is not an array"]
        (item,) = get_args(annotation)
        return [e for i, v in enumerate(value) for e in type_errors(v, item, f"{path}[{i}]")]
    if annotation is bool:
        return [] if isinstance(value, bool) else [f"{path}: {value!r} is not a boolean"]
    if annotation is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{path}: {value!r} is not an integer"]
    if annotation is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return [] if ok else [f"{path}: {value!r} is not a number"]
    if annotation is str:
        return [] if isinstance(value, str) else [f"{path}: {value!r} is not a string"]
    if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
        # The SDK's response models (accepted in place of params when echoing a reply):
        # a request body built from plain JSON never is one.
        return [f"{path}: a JSON value is not a {annotation.__name__} object"]
    raise TypeError(f"{path}: the checker does not know the annotation {annotation!r}")


def _typed_dict_errors(value: Any, typed_dict: Any, path: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{path}: {value!r} is not an object ({typed_dict.__name__})"]
    hints = typing.get_type_hints(typed_dict, include_extras=True)
    name = typed_dict.__name__
    errors = [f"{path}: unknown key {key!r} for {name}" for key in value if key not in hints]
    for key, hint in hints.items():
        origin = get_origin(hint)
        # Each key is required as the class declaring it says (``__total__`` is the last
        # class's); the SDK's string annotations hide ``Required`` from ``__required_keys__``.
        required = origin in _REQUIRED or (
            origin not in _NOT_REQUIRED and key in typed_dict.__required_keys__
        )
        if key not in value:
            if required:
                errors.append(f"{path}: missing required key {key!r} of {typed_dict.__name__}")
            continue
        errors.extend(type_errors(value[key], hint, f"{path}.{key}"))
    return errors


def _union_errors(value: Any, members: tuple[Any, ...], path: str) -> list[str]:
    failures: list[tuple[Any, list[str]]] = []
    for member in members:
        errors = type_errors(value, member, path)
        if not errors:
            return []
        failures.append((member, errors))
    for key in ("type", "role"):  # the discriminators of the SDK's unions
        if isinstance(value, dict) and key in value:
            named = [e for m, e in failures if value[key] in _literal(_strip(m), key)]
            if named:
                return named[0]
    # A member whose shape fitted (an array for an Iterable) failed deeper: say where.
    deeper = [e for _, e in failures if any(not x.startswith(f"{path}:") for x in e)]
    if len(deeper) == 1:
        return deeper[0]
    names = ", ".join(_name(_strip(m)) for m, _ in failures)
    return [f"{path}: {value!r} matches none of {names}"]
