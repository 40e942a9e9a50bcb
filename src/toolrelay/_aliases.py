"""Deprecated import paths of the previous release, kept working for one release.

Implementation modules are private (``toolrelay.client._tool_calling``); each package's
``__init__`` is its API. The old public paths (``toolrelay.client.tool_calling``) still import,
as the very same module object, with a :class:`DeprecationWarning` naming the package to import
from instead; so do names a package no longer exports because they moved (see
:func:`moved_names`).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Callable, Mapping
from types import ModuleType

__all__ = ["install", "moved_names"]

# Modules that moved to another package (all others only gained a leading underscore).
_MOVED: Mapping[str, str] = {
    "toolrelay.client.search_texts": "toolrelay.toolsearch._texts",
    "toolrelay.client.search_tool": "toolrelay.toolsearch._search_tool",
    "toolrelay.client.sessions": "toolrelay.toolsearch._sessions",
    "toolrelay.client.tool_search_access": "toolrelay.toolsearch._access",
}


def _current(fullname: str) -> str | None:
    """The module an old ``toolrelay.<package>.<module>[...]`` path now names, if any."""
    if fullname in _MOVED:
        return _MOVED[fullname]
    parts = fullname.split(".")
    if len(parts) < 3 or parts[0] != "toolrelay" or parts[2].startswith("_"):
        return None
    candidate = ".".join([*parts[:2], "_" + parts[2], *parts[3:]])
    try:
        found = importlib.util.find_spec(candidate)
    except ModuleNotFoundError:
        return None
    return candidate if found is not None else None


class _Alias(importlib.abc.Loader):
    def __init__(self, current: str) -> None:
        self._current = current

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        home = self._current.split("._", 1)[0]
        warnings.warn(
            f"{module.__name__} is deprecated; import its names from {home}",
            DeprecationWarning,
            stacklevel=2,
        )
        # The import system returns what sys.modules holds once this returns: the real module,
        # so the old path and the new one are one object (one class, one registry).
        sys.modules[module.__name__] = importlib.import_module(self._current)


class _RenamedModules(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        current = _current(fullname)
        return (
            None if current is None else importlib.util.spec_from_loader(fullname, _Alias(current))
        )


def install() -> None:
    """Put the finder of old module paths first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _RenamedModules) for f in sys.meta_path):
        sys.meta_path.insert(0, _RenamedModules())


def moved_names(package: str, homes: Mapping[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` serving names that moved from ``package`` to ``homes[name]``.

    A home is a module the name moved to, or ``"module:Name"`` for a deprecated name served
    by ``module.Name``: the name that replaces it (``"toolrelay.execution._interception:
    ToolInvocation"``), or itself in a module of deprecated shims.
    """

    def __getattr__(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, current = home.partition(":")
        if current == name:
            message = f"{package}.{name} is deprecated and will be removed; see its docstring"
        elif current:
            public = module.split("._", 1)[0]
            message = f"{package}.{name} is deprecated; use {current} from {public}"
        else:
            message = f"{package}.{name} moved; import it from {module}"
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(module), current or name)

    return __getattr__
