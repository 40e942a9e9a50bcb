"""``tools_from``: the ``@tool`` methods of an object, a class or a module as tools."""

from __future__ import annotations

import inspect
import types
from collections.abc import Iterator
from typing import Any

from toolrelay.exceptions import DuplicateToolError, ToolDefinitionError
from toolrelay.tools._decorator import get_tool_spec
from toolrelay.tools._function import FunctionTool

__all__ = ["has_tools", "tools_from"]


def tools_from(obj: object) -> list[FunctionTool]:
    """Make tools of the ``@tool``-decorated methods of an instance, class or module.

    - An instance: its decorated methods, bound to it (so they see its state), plus decorated
      static and class methods.
    - A class: its decorated static and class methods; decorated instance methods need an
      instance, so they are an error.
    - A module: its decorated functions.

    Tools come in definition order (base classes first).

    Raises:
        ToolDefinitionError: Nothing is decorated, or a class has decorated instance methods.
        DuplicateToolError: Two decorated methods declare the same tool name.
    """
    label = _label(obj)
    found = list(_decorated(obj))
    if not found:
        raise ToolDefinitionError(
            label,
            [
                "no methods decorated with @tool were found; decorate methods with @tool "
                "(from toolrelay.tools import tool), or pass functions directly"
            ],
        )
    if inspect.isclass(obj):
        instance_methods = [name for name, raw in found if inspect.isfunction(raw)]
        if instance_methods:
            names = ", ".join(repr(n) for n in instance_methods)
            raise ToolDefinitionError(
                label,
                [
                    f"decorated instance methods need an instance ({names}): "
                    f"pass an instance, e.g. tools_from({obj.__name__}(...)), not the class"
                ],
            )
    tools: list[FunctionTool] = []
    seen: dict[str, FunctionTool] = {}
    for attribute, _ in found:
        made = FunctionTool.from_function(getattr(obj, attribute))
        if made.name in seen:
            raise DuplicateToolError(made.name, seen[made.name].source, made.source)
        seen[made.name] = made
        tools.append(made)
    return tools


def has_tools(obj: object) -> bool:
    """Whether :func:`tools_from` would find decorated methods on ``obj``."""
    return next(iter(_decorated(obj)), None) is not None


def _decorated(obj: object) -> Iterator[tuple[str, Any]]:
    """Yield ``(attribute name, raw class attribute)`` of each decorated member, in order."""
    if isinstance(obj, types.ModuleType):
        for name, value in vars(obj).items():
            if (
                inspect.isfunction(value)
                and value.__module__ == obj.__name__
                and get_tool_spec(value) is not None
            ):
                yield name, value
        return
    cls = obj if inspect.isclass(obj) else type(obj)
    seen: set[str] = set()
    for klass in reversed(cls.__mro__):
        for name in vars(klass):
            if name in seen:
                continue
            # The attribute as the most derived class defines it (overrides count).
            raw = inspect.getattr_static(cls, name)
            is_method = isinstance(raw, staticmethod | classmethod) or inspect.isfunction(raw)
            if is_method and get_tool_spec(raw) is not None:
                seen.add(name)
                yield name, raw


def _label(obj: object) -> str:
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    if inspect.isclass(obj):
        return obj.__qualname__
    return f"{type(obj).__qualname__} instance"
