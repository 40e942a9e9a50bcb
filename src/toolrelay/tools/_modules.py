"""Loading the tools, or one attribute, of a Python module named by path or dotted name.

The one loader behind the command line's catalogs and ``--tools`` and the gateway file's
``[[modules]]`` and ``[approval] handler``. A module is named by dotted name (``pkg.module``,
imported with the working directory on the import path, as ``python -m`` does) or by path
(``path/to/file.py`` or a package folder; a file inside a package is imported as part of it,
so relative imports work). ``isolated=True`` imports a file under a module name of its own
instead, so two files called ``tools.py`` do not replace each other (the gateway's files).

With ``:attribute`` only that attribute is used; otherwise the module's tools are:

- whatever ``build_catalog()`` returns, when the module defines one;
- every module-level :class:`~toolrelay.tools.ToolCatalog`;
- its module-level ``@tool`` functions (:func:`~toolrelay.tools.tools_from`);
- what ``convert`` makes of its other module-level values (the command line converts other
  frameworks' tools).

The same tool reached twice (a decorated function that is also in a catalog) counts once.
An attribute may be a tool, a decorated function, a catalog, an object or class with ``@tool``
methods, a list of these, or a function without parameters that returns one of them.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TypeVar

from toolrelay.exceptions import LoadError, ToolRelayError
from toolrelay.tools._base import Tool
from toolrelay.tools._catalog import ToolCatalog, as_tools
from toolrelay.tools._decorator import get_tool_spec
from toolrelay.tools._discovery import has_tools, tools_from

__all__ = [
    "FACTORY_NAME",
    "Converter",
    "attribute_of",
    "call_factory",
    "import_target",
    "load_attribute",
    "module_tools",
    "split_attribute",
]

FACTORY_NAME = "build_catalog"
"""A module function of this name, called without arguments, supplies the module's tools."""

_T = TypeVar("_T")

Converter = Callable[[object], list[Tool] | None]
"""Tools of another kind as toolrelay tools: ``None`` when the value is none of them."""


def module_tools(
    spec: str, *, convert: Converter | None = None, isolated: bool = False
) -> list[tuple[Tool, str]]:
    """The tools of the module (or module attribute) named by ``spec``, with their origins.

    Raises:
        LoadError: The module cannot be found or imported, the attribute is missing, a
            factory fails, or no tools were found.
        ToolDefinitionError: The tools are declared wrongly (duplicate names included).
    """
    target, attribute = split_attribute(spec)
    module = import_target(target, isolated=isolated)
    if attribute:
        found = _tools_of(attribute_of(module, attribute, spec), spec, convert)
    else:
        found = _module_tools(module, spec, convert)
    if not found:
        raise LoadError(
            spec,
            f"no tools found; define @tool functions, a ToolCatalog or {FACTORY_NAME}()",
        )
    return found


def load_attribute(spec: str, *, isolated: bool = False) -> object:
    """The attribute ``spec`` names: ``path/to/file.py:name`` or ``package.module:name``.

    Raises:
        LoadError: ``spec`` has no ``:name``, the module cannot be found or imported, or it
            has no such attribute.
    """
    target, attribute = split_attribute(spec)
    if attribute is None:
        raise LoadError(spec, "name a module and one of its attributes: 'module:name'")
    return attribute_of(import_target(target, isolated=isolated), attribute, spec)


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
            # The module as the spec names it: an isolated file's module name is the loader's.
            raise LoadError(spec, f"{split_attribute(spec)[0]} has no attribute {attribute!r}")
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
    except Exception as exc:  # the user's code: any failure is a load failure
        raise LoadError(
            label, f"{function.__name__}() failed: {type(exc).__name__}: {exc}"
        ) from exc


def _module_tools(
    module: ModuleType, spec: str, convert: Converter | None
) -> list[tuple[Tool, str]]:
    found: list[tuple[Tool, str]] = []
    factory = getattr(module, FACTORY_NAME, None)
    if inspect.isfunction(factory) and get_tool_spec(factory) is None:
        found += _tools_of(factory, spec, convert)
    for value in list(vars(module).values()):
        if isinstance(value, ToolCatalog):
            found += _catalog_tools(value)
    if has_tools(module):
        found += [(t, t.source) for t in tools_from(module)]
    for name, value in list(vars(module).items()):
        converted = convert(value) if convert is not None else None
        if converted:
            found += [(t, f"{module.__name__}.{name}") for t in converted]
    # A decorated function that is also in a catalog is one tool, reached twice.
    unique: dict[tuple[str, str], tuple[Tool, str]] = {}
    for tool, origin in found:
        unique.setdefault((tool.definition.name, origin), (tool, origin))
    return list(unique.values())


def _tools_of(value: object, label: str, convert: Converter | None) -> list[tuple[Tool, str]]:
    if isinstance(value, ToolCatalog):
        return _catalog_tools(value)
    if inspect.isfunction(value) and get_tool_spec(value) is None:
        value = call_factory(value, label, builds="a catalog")
        if isinstance(value, ToolCatalog):
            return _catalog_tools(value)
    if convert is not None:
        converted = convert(value)
        if converted is not None:
            return [(t, label) for t in converted]
        if isinstance(value, list | tuple) and any(convert(item) for item in value):
            return [found for item in value for found in _tools_of(item, label, convert)]
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


def import_target(target: str, *, isolated: bool = False) -> ModuleType:
    """The module named by ``target``: a dotted name, a ``.py`` file or a package folder.

    Args:
        target: The module's dotted name or path.
        isolated: Import a file under a name of its own rather than as part of its package.

    Raises:
        LoadError: It cannot be found, or importing it failed.
    """
    path = Path(target)
    if path.suffix == ".py" or path.exists():
        if not path.exists():
            raise LoadError(target, "no such file")
        if isolated and path.is_file():
            return _import_isolated(path.resolve(), target)
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


def _import_isolated(path: Path, label: str) -> ModuleType:
    # A name of its own per file, so two files called tools.py do not replace each other.
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    name = f"toolrelay_gateway_{path.stem}_{digest}"
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise LoadError(label, "not an importable Python file")
    loader = module_spec.loader
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        _exec(label, lambda: loader.exec_module(module))
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _file_of(module: ModuleType) -> Path | None:
    file = getattr(module, "__file__", None)
    return Path(file).resolve() if file else None


def _exec(label: str, load: Callable[[], _T]) -> _T:
    try:
        return load()
    except Exception as exc:
        # The module is the user's code: any failure while importing it is a load failure.
        raise LoadError(label, f"importing failed: {type(exc).__name__}: {exc}") from exc
