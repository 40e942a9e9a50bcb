"""The tools of the Python modules a gateway file names (``[[modules]]``).

A module is named by file path (``tools/notify.py``) or dotted name (``package.module``),
and loaded by the library's one module loader (:mod:`toolrelay.tools._modules`): its tools
are what ``build_catalog()`` returns, its module-level catalogs and its ``@tool`` functions.
Each file is imported under a name of its own, so two files called ``tools.py`` both load.

:data:`ModuleLoader` is the seam: the command line passes its own loader (which also converts
other frameworks' tools) and everything else uses :func:`load_module_tools`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from toolrelay.tools._base import Tool
from toolrelay.tools._modules import module_tools

__all__ = ["ModuleLoader", "load_module_tools"]

ModuleLoader = Callable[[str], Sequence[Tool]]
"""Turns a ``[[modules]]`` entry (a path or a dotted name) into tools."""


def load_module_tools(spec: str) -> list[Tool]:
    """The tools of the module at path ``spec``, or with dotted name ``spec``.

    Raises:
        LoadError: The module cannot be found or imported, its factory fails, or it has no
            tools.
        ToolDefinitionError: Its tools are declared wrongly (duplicate names included).
    """
    return [tool for tool, _ in module_tools(spec, isolated=True)]
