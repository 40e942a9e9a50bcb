"""Reading a callable's parameters: which are inputs, which receives the ``ToolContext``.

Keywords bound by ``functools.partial`` are neither: the partial supplies them, and the model
never sees them (so it cannot override them).

Every problem of a declaration is collected (``*args``, ``**kwargs``, missing annotations, two
context parameters) so one error can list them all.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import typing_extensions
from pydantic import BaseModel, RootModel

from toolrelay.exceptions import ToolDefinitionError
from toolrelay.tools._base import ToolContext

__all__ = [
    "Parameters",
    "is_model_type",
    "is_receiver_parameter",
    "read_parameters",
    "resolve_type_hints",
    "strip_annotated",
    "type_name",
]

_RECEIVER_NAMES = frozenset({"self", "cls"})


@dataclass(frozen=True, kw_only=True)
class Parameters:
    """The parameters of a callable, sorted for tool use.

    Attributes:
        inputs: Parameters the model fills, in signature order.
        hints: Resolved type hints by parameter name (``Annotated`` kept).
        context: The parameter receiving the ``ToolContext``, if any.
        context_required: The context parameter has no default and does not accept ``None``.
        positional_only: Names of positional-only parameters, in order.
        problems: Everything wrong with the declaration.
    """

    inputs: tuple[inspect.Parameter, ...] = ()
    hints: Mapping[str, Any] = field(default_factory=dict)
    context: inspect.Parameter | None = None
    context_required: bool = False
    positional_only: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


def read_parameters(
    fn: Callable[..., Any], *, tool_name: str, skip_receiver: bool = False
) -> Parameters:
    """Sort the parameters of ``fn`` into inputs and the context, collecting problems.

    Args:
        fn: A function, bound method, ``functools.partial`` or callable object.
        tool_name: Used in error messages.
        skip_receiver: Ignore the first parameter (an unbound method's ``self``/``cls``).

    Raises:
        ToolDefinitionError: The signature or its type hints cannot be read at all; when a
            forward reference is not resolvable yet, ``__cause__`` is the ``NameError``.
    """
    try:
        params = list(inspect.signature(fn).parameters.values())
        hints = resolve_type_hints(fn)
    except (TypeError, ValueError, NameError) as exc:
        raise ToolDefinitionError(tool_name, [f"cannot read the signature: {exc}"]) from exc
    if skip_receiver and params:
        params = params[1:]
    # A keyword a partial binds is the developer's choice, not the model's: inspect keeps it
    # as an optional parameter, which would let a call override it.
    bound = _partial_keywords(fn)
    params = [p for p in params if p.name not in bound]
    problems: list[str] = []
    contexts: list[inspect.Parameter] = []
    inputs: list[inspect.Parameter] = []
    for param in params:
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            problems.append(
                f"parameter {param.name!r}: *{param.name} is not supported; "
                "declare each argument explicitly"
            )
        elif param.kind is inspect.Parameter.VAR_KEYWORD:
            problems.append(
                f"parameter {param.name!r}: **{param.name} is not supported; "
                "declare each argument explicitly"
            )
        elif param.name not in hints:
            problems.append(
                f"parameter {param.name!r} has no type annotation; "
                f"annotate it (for example '{param.name}: str')"
            )
        elif _is_context_type(hints[param.name]):
            contexts.append(param)
        else:
            inputs.append(param)
    if len(contexts) > 1:
        names = ", ".join(repr(p.name) for p in contexts)
        problems.append(f"only one ToolContext parameter is allowed, found {names}")
    context = contexts[0] if contexts else None
    return Parameters(
        inputs=tuple(inputs),
        hints=hints,
        context=context,
        context_required=context is not None
        and context.default is inspect.Parameter.empty
        and type(None) not in _union_members(hints[context.name]),
        positional_only=tuple(
            p.name for p in params if p.kind is inspect.Parameter.POSITIONAL_ONLY
        ),
        problems=tuple(problems),
    )


def _partial_keywords(fn: Callable[..., Any]) -> frozenset[str]:
    """The keyword arguments bound by ``functools.partial`` wrappers around ``fn``."""
    names: set[str] = set()
    while isinstance(fn, functools.partial):
        names.update(fn.keywords)
        fn = fn.func
    return frozenset(names)


def resolve_type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """Parameter type hints of ``fn`` (``Annotated`` kept), without the return annotation.

    Works for functions, methods, partials and callable objects. The return annotation is
    left out on purpose: it plays no part in the schema, and it often names something only
    imported under ``TYPE_CHECKING``.

    Raises:
        NameError: A forward reference cannot be resolved (yet).
    """
    target: Any = fn
    while isinstance(target, functools.partial):
        target = target.func
    target = getattr(target, "__func__", target)
    if not inspect.isfunction(target) and not inspect.isbuiltin(target) and callable(target):
        target = getattr(type(target).__call__, "__func__", type(target).__call__)
    annotations = dict(getattr(target, "__annotations__", None) or {})
    annotations.pop("return", None)
    namespace = inspect.unwrap(target) if inspect.isfunction(target) else target
    carrier = types.SimpleNamespace(__annotations__=annotations)
    return typing.get_type_hints(
        carrier, globalns=getattr(namespace, "__globals__", {}), include_extras=True
    )


def is_receiver_parameter(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` looks like a function defined in a class body taking ``self``/``cls``."""
    parts = getattr(fn, "__qualname__", "").split(".")
    if len(parts) < 2 or parts[-2] == "<locals>":
        return False
    try:
        first = next(iter(inspect.signature(fn).parameters.values()), None)
    except (TypeError, ValueError):
        return False
    return first is not None and first.name in _RECEIVER_NAMES


def is_model_type(hint: Any) -> bool:
    """Whether ``hint`` is a pydantic model class (not a root model), a dataclass or a TypedDict."""
    hint = strip_annotated(hint)
    if not isinstance(hint, type):
        return False
    if issubclass(hint, BaseModel):
        # A RootModel's schema is whatever its root is, not an object with properties.
        return not issubclass(hint, RootModel)
    return dataclasses.is_dataclass(hint) or typing_extensions.is_typeddict(hint)


def type_name(hint: Any) -> str:
    """A short readable name of a type hint, for messages."""
    return hint.__name__ if isinstance(hint, type) else repr(hint)


def strip_annotated(hint: Any) -> Any:
    """The type inside ``Annotated[...]`` wrappers (``hint`` itself when there are none)."""
    while typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    return hint


def _union_members(hint: Any) -> tuple[Any, ...]:
    hint = strip_annotated(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return tuple(strip_annotated(a) for a in typing.get_args(hint))
    return (hint,)


def _is_context_type(hint: Any) -> bool:
    members = [m for m in _union_members(hint) if m is not type(None)]
    if len(members) != 1 or not isinstance(members[0], type):
        return False
    return issubclass(members[0], ToolContext)
