"""Collecting the tools of a Python module named on the command line.

The library's module loader (:mod:`toolrelay.tools._modules`: dotted names, files, package
folders, ``:attribute``, ``build_catalog()``, catalogs and ``@tool`` functions), with one
addition: a module's tools of LangChain, pydantic-ai and the OpenAI Agents SDK, converted by
their bridges (:mod:`toolrelay.cli._foreign_tools`), also as an attribute or in a list.
"""

from __future__ import annotations

from toolrelay.cli._foreign_tools import foreign_tools
from toolrelay.tools._base import Tool
from toolrelay.tools._modules import module_tools

__all__ = ["load_module_tools"]


def load_module_tools(spec: str) -> list[tuple[Tool, str]]:
    """The tools of the module (or module attribute) named by ``spec``, with their origins.

    Raises:
        LoadError: The module cannot be found or imported, the attribute is missing, a
            factory fails, or no tools were found.
        ToolDefinitionError: The tools are declared wrongly (duplicate names included).
    """
    return module_tools(spec, convert=foreign_tools)
