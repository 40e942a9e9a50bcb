"""Tools written for other frameworks, found in a module named on the command line.

LangChain tools (``BaseTool``: ``@tool`` functions, ``StructuredTool``), pydantic-ai tools
(``Tool``, ``FunctionToolset``) and OpenAI Agents SDK function tools (``FunctionTool``,
``@function_tool``) become toolrelay tools through their bridge's ``from_*`` conversion. A
framework is only looked at when the module has imported it already: a module holding its
tools has.
"""

from __future__ import annotations

import sys

from toolrelay.tools._base import Tool

__all__ = ["foreign_tools"]


def foreign_tools(value: object) -> list[Tool] | None:
    """``value`` converted, when it is one framework's tool (or toolset); else ``None``."""
    if "langchain_core" in sys.modules:
        from langchain_core.tools import BaseTool

        if isinstance(value, BaseTool):
            from toolrelay.bridges.langgraph import from_langchain

            return from_langchain(value)
    if "pydantic_ai" in sys.modules:
        from pydantic_ai import FunctionToolset
        from pydantic_ai import Tool as PydanticTool

        if isinstance(value, PydanticTool | FunctionToolset):
            from toolrelay.bridges.pydantic_ai import from_pydantic_ai

            return from_pydantic_ai(value)
    if "agents" in sys.modules:
        from agents import FunctionTool

        if isinstance(value, FunctionTool):
            from toolrelay.bridges.openai_agents import from_openai_agents

            return from_openai_agents(value)
    return None
