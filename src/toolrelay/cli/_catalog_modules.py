"""Collecting the tools of a Python module named on the command line.

The module is named by dotted name (``pkg.module``, imported with the working directory on
the import path, as ``python -m`` does) or by path (``path/to/file.py`` or a package folder;
a file inside a package is imported as part of it, so relative imports work). With
``:attribute`` only that attribute is used; otherwise the module's tools are:

- whatever ``build_catalog()`` returns, when the module defines one;
- every module-level :class:`~toolrelay.tools.ToolCatalog`;
- its module-level ``@tool`` functions (:func:`~toolrelay.tools.tools_from`);
- its module-level tools of LangChain, pydantic-ai and the OpenAI Agents SDK, converted by
  their bridges (:mod:`toolrelay.cli._foreign_tools`).

The same tool reached twice (a decorated function that is also in a catalog) counts once.
An attribute may be a tool, a decorated function, a catalog, an object or class with ``@tool``
methods, another framework's tool or toolset, a list of these, or a function without
parameters that returns one of them.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from toolrelay.cli._foreign_tools import foreign_tools
from toolrelay.exceptions import LoadError, ToolRelayError
from toolrelay.tools._base import Tool
from toolrelay.tools._catalog import ToolCatalog, as_tools
from toolrelay.tools._decorator import get_tool_spec
from toolrelay.tools._discovery import has_tools, tools_from

__all__ = [
    "FACTORY_NAME",
    "attribute_of",
    "call_factory",
    "import_target",
    "load_module_tools",
    "split_attribute",
]

FACTORY_NAME = "build_catalog"
"""A module function of this name, called without arguments, supplies the module's catalog."""


def load_module_tools(spec: str) -> list[tuple[Tool, str]]:
    """The tools of the module (or module attribute) named by ``spec``, with their origins.

    Raises:
        LoadError: The module cannot be found or imported, the attribute is missing, a
            factory fails, or no tools were found.
        ToolDefinitionError: The tools are declared wrongly (duplicate names included).
    """
    target, attribute = split_attribute(spec)
    module = import_target(target)
    if attribute:
        found = _tools_of(attribute_of(module, attribute, spec), spec)
    else:
        found = _module_tools(module, spec)
    if not found:
        raise LoadError(
            spec,
            f"no tools found; define @tool functions, a ToolCatalog or {FACTORY_NAME}()",
        )
    return found


def split_attribute(spec: str) -> tuple[str, str | None]:
    """Split ``"pkg.module:attr"`` into ``("pkg.module", "attr")``; no attribute gives ``None``."""
    head, colon, tail = spec.rpartition(":")
    if colon and head and tail and all(p.isidentifier() for p in tail.split(".")):
        return head, tail
    return spec, None


def attribute_of(module: ModuleType, attribute: str, spec: str) -> object:
    """``module``'s (dotted) ``attribute``.

    Raises:
        LoadError: The module has no such attribute.
    """
    value: object = module
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise LoadError(spec, f"{module.__name__} has no attribute {attribute!r}")
        value = getattr(value, part)
    return value


def call_factory(function: Callable[[], object], label: str, *, builds: str) -> object:
    """What the user's function without parameters returns.

    Raises:
        LoadError: It needs arguments (name ``builds`` instead), or it failed.
    """
    if any(
        p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        for p in inspect.signature(function).parameters.values()
    ):
        raise LoadError(label, f"{function.__name__}() needs arguments; name {builds} instead")
    try:
        return function()
    except ToolRelayError:
        raise
    except Exception as exc:
        raise LoadError(label, f"calling it failed: {type(exc).__name__}: {exc}") from exc


def _module_tools(module: ModuleType, spec: str) -> list[tuple[Tool, str]]:
    found: list[tuple[Tool, str]] = []
    factory = getattr(module, FACTORY_NAME, None)
    if inspect.isfunction(factory) and get_tool_spec(factory) is None:
        found += _tools_of(factory, f"{spec}:{FACTORY_NAME}")
    for value in list(vars(module).values()):
        if isinstance(value, ToolCatalog):
            found += _catalog_tools(value)
    if has_tools(module):
        found += [(t, t.source) for t in tools_from(module)]
    for name, value in list(vars(module).items()):
        converted = foreign_tools(value)
        if converted:
            found += [(t, f"{module.__name__}.{name}") for t in converted]
    # A decorated function that is also in a catalog is one tool, reached twice.
    unique: dict[tuple[str, str], tuple[Tool, str]] = {}
    for tool, origin in found:
        unique.setdefault((tool.definition.name, origin), (tool, origin))
    return list(unique.values())


def _tools_of(value: object, label: str) -> list[tuple[Tool, str]]:
    if isinstance(value, ToolCatalog):
        return _catalog_tools(value)
    if inspect.isfunction(value) and get_tool_spec(value) is None:
        value = call_factory(value, label, builds="a catalog")
        if isinstance(value, ToolCatalog):
            return _catalog_tools(value)
    converted = foreign_tools(value)
    if converted is not None:
        return [(t, label) for t in converted]
    if isinstance(value, list | tuple) and any(foreign_tools(item) for item in value):
        return [found for item in value for found in _tools_of(item, label)]
    return [(t, _origin(t)) for t in as_tools(value)]


def _catalog_tools(catalog: ToolCatalog) -> list[tuple[Tool, str]]:
    return [(t, _origin(t, catalog)) for t in catalog]


def _origin(tool: Tool, catalog: ToolCatalog | None = None) -> str:
    source = getattr(tool, "source", None)
    if isinstance(source, str) and source:
        return source
    if catalog is not None:
        return catalog.source(tool.definition.name) or type(tool).__qualname__
    return f"{type(tool).__module__}.{type(tool).__qualname__}"


# --- importing -------------------------------------------------------------------------------


def import_target(target: str) -> ModuleType:
    """The module named by ``target``: a dotted name, a ``.py`` file or a package folder.

    Raises:
        LoadError: It cannot be found, or importing it failed.
    """
    path = Path(target)
    if path.exists():
        return _import_path(path, target)
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        found = importlib.util.find_spec(target)
    except (ImportError, ValueError):
        found = None
    if found is None:
        raise LoadError(target, "no such file or module")
    return _exec(target, lambda: importlib.import_module(target))


def _import_path(path: Path, label: str) -> ModuleType:
    path = path.resolve()
    if path.is_dir():
        if not (path / "__init__.py").is_file():
            raise LoadError(
                label, "a folder must be a package (with __init__.py) or hold tools.jsonl"
            )
        parts: list[str] = []
        folder = path
        expected = path / "__init__.py"
    else:
        parts = [] if path.name == "__init__.py" else [path.stem]
        folder = path.parent
        expected = path
    # A file inside a package is imported as part of it, so its relative imports work.
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    name = ".".join(parts)
    if not all(p.isidentifier() for p in parts):
        raise LoadError(label, f"{name!r} is not an importable module name; rename the file")
    loaded = sys.modules.get(name)
    if loaded is not None:
        if _file_of(loaded) == expected:
            return loaded
        raise LoadError(
            label, f"the module name {name!r} is already taken by {_file_of(loaded)}; rename it"
        )
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return _exec(label, lambda: importlib.import_module(name))


def _file_of(module: ModuleType) -> Path | None:
    file = getattr(module, "__file__", None)
    return Path(file).resolve() if file else None


def _exec(label: str, load: Callable[[], ModuleType]) -> ModuleType:
    try:
        return load()
    except Exception as exc:
        # The module is the user's code: any failure while importing it is a load failure.
        raise LoadError(label, f"importing failed: {type(exc).__name__}: {exc}") from exc
