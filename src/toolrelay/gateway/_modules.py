"""Loading the tools of the Python modules a gateway file names (``[[modules]]``).

A module is named by file path (``tools/notify.py``) or dotted name (``package.module``).
Its tools are, in order: what ``build_catalog()`` returns when the module defines it, then
its module-level :class:`~toolrelay.tools.ToolCatalog` objects, then its ``@tool``
functions; the same tool reached twice counts once.

:data:`ModuleLoader` is the seam: the command line passes its own loader (which also accepts
``module:attribute``) and everything else uses :func:`load_module_tools`.
:func:`load_attribute` loads one attribute the same way (an ``[approval] handler``).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

from toolrelay.exceptions import LoadError, ToolRelayError
from toolrelay.tools._base import Tool
from toolrelay.tools._catalog import ToolCatalog, as_tools
from toolrelay.tools._discovery import has_tools, tools_from

__all__ = ["FACTORY_NAME", "ModuleLoader", "load_attribute", "load_module_tools"]

FACTORY_NAME = "build_catalog"
"""A module function of this name, called without arguments, supplies the module's tools."""

ModuleLoader = Callable[[str], Sequence[Tool]]
"""Turns a ``[[modules]]`` entry (a path or a dotted name) into tools."""


def load_module_tools(spec: str) -> list[Tool]:
    """The tools of the module at path ``spec``, or with dotted name ``spec``.

    Raises:
        LoadError: The module cannot be found or imported, its factory fails, or it has no
            tools.
        ToolDefinitionError: Its tools are declared wrongly (duplicate names included).
    """
    module = _import(spec)
    found: list[Tool] = []
    factory = getattr(module, FACTORY_NAME, None)
    if inspect.isfunction(factory):
        try:
            found += as_tools(factory())
        except ToolRelayError:
            raise
        except Exception as exc:  # the user's code: any failure is a load failure
            raise LoadError(spec, f"{FACTORY_NAME}() failed: {type(exc).__name__}: {exc}") from exc
    for value in list(vars(module).values()):
        if isinstance(value, ToolCatalog):
            found += list(value)
    if has_tools(module):
        found += tools_from(module)
    unique = list({id(tool): tool for tool in found}.values())
    if not unique:
        raise LoadError(
            spec, f"no tools found; define @tool functions, a ToolCatalog or {FACTORY_NAME}()"
        )
    return unique


def load_attribute(spec: str) -> object:
    """The attribute ``spec`` names: ``path/to/file.py:name`` or ``package.module:name``.

    Raises:
        LoadError: ``spec`` has no ``:name``, the module cannot be found or imported, or it
            has no such attribute.
    """
    target, _, attribute = spec.rpartition(":")
    if not target or not attribute:
        raise LoadError(spec, "name a module and one of its attributes: 'module:name'")
    value: object = _import(target)
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise LoadError(spec, f"{target} has no attribute {attribute!r}")
        value = getattr(value, part)
    return value


def _import(spec: str) -> ModuleType:
    path = Path(spec)
    try:
        if path.suffix == ".py" or path.exists():
            return _import_file(path, spec)
        return importlib.import_module(spec)
    except LoadError:
        raise
    except Exception as exc:
        raise LoadError(spec, f"importing failed: {type(exc).__name__}: {exc}") from exc


def _import_file(path: Path, spec: str) -> ModuleType:
    path = path.resolve()
    if not path.is_file():
        raise LoadError(spec, "no such file")
    # A name of its own per file, so two files called tools.py do not replace each other.
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    name = f"toolrelay_gateway_{path.stem}_{digest}"
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise LoadError(spec, "not an importable Python file")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
