"""Tools both ways between toolrelay and LangChain, schemas and descriptions intact.

- :func:`to_langchain`: a toolrelay tool as a LangChain ``StructuredTool`` (its JSON Schema
  as the ``args_schema``). Calls run through a :class:`~toolrelay.execution.ToolCallingManager`
  (validation, timeout, errors as feedback); the tool context comes from the call's
  ``RunnableConfig`` (:data:`ContextOf`): by default its ``configurable["tool_context"]``.
- :func:`from_langchain`: LangChain tools (``BaseTool``, ``StructuredTool``, ``@tool``
  functions) as toolrelay tools, for a catalog. Each call is ``tool.ainvoke(arguments,
  config)`` with the caller's tool context as ``configurable["tool_context"]``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeAlias, Unpack

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from toolrelay.bridges._convert import manager_for, result_text
from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import (
    GuardOptions,
    ToolCallingManager,
)
from toolrelay.messages import ToolCall
from toolrelay.tools import Tool, ToolContext, ToolDefinition, ToolMetadata, provider_safe_name
from toolrelay.tools._base import ToolBase

__all__ = ["TOOL_CONTEXT_KEY", "ContextOf", "from_langchain", "to_langchain", "tool_context"]

TOOL_CONTEXT_KEY = "tool_context"
"""The ``configurable`` entry that carries the caller's tool context (a mapping)."""

ContextOf: TypeAlias = Callable[[RunnableConfig], Mapping[str, Any]]
"""A call's :class:`~toolrelay.tools.ToolContext`, from LangChain's ``RunnableConfig``."""


def tool_context(config: RunnableConfig | None, context: ContextOf | None = None) -> ToolContext:
    """The tool context of a call: ``context(config)``, else ``configurable["tool_context"]``."""
    config = config or {}
    if context is not None:
        values = context(config)
    else:
        values = (config.get("configurable") or {}).get(TOOL_CONTEXT_KEY) or {}
    if isinstance(values, ToolContext):
        return values
    if not isinstance(values, Mapping):
        raise ConfigurationError(
            f"the tool context must be a mapping, not {type(values).__name__}: set "
            f'configurable["{TOOL_CONTEXT_KEY}"] to a dict'
        )
    return ToolContext(values)


def to_langchain(
    tool: Tool,
    *,
    context: ContextOf | None = None,
    tool_calling_manager: ToolCallingManager | None = None,
    **guards: Unpack[GuardOptions],
) -> StructuredTool:
    """``tool`` as a LangChain tool: same description and JSON Schema, provider-safe name.

    Args:
        tool: The toolrelay tool.
        context: Its tool context from the call's ``RunnableConfig``; by default the
            ``configurable["tool_context"]`` mapping.
        tool_calling_manager: Runs each call; by default one built from the guard options
            (giving both is an error).
        guards: The guard options (:class:`~toolrelay.execution.GuardOptions`), as every door takes
            them; ``approval=`` decides when ``tool`` requires approval (a LangChain tool cannot
            pause a run: with ``ApprovalInterceptor()`` the call waits for a person and does not
            run; give a handler, or use :class:`ToolRelayNode`, which interrupts the graph). Without
            ``idempotency=``, keys are recorded in the process's store, shared by every conversion
            of the tool.

    Raises:
        ConfigurationError: A manager is given with guard options, or ``tool`` requires
            approval and no approval is configured.
    """
    definition = tool.definition
    manager = manager_for(
        tool, owner="to_langchain", tool_calling_manager=tool_calling_manager, **guards
    )

    async def run(config: RunnableConfig, **arguments: Any) -> str:
        call = ToolCall(
            id=str((config.get("metadata") or {}).get("tool_call_id", "")),
            name=definition.name,
            arguments=arguments,  # type: ignore[arg-type]  # the manager reads a mapping too
        )
        outcome = await manager.run_call(call, (tool,), tool_context(config, context))
        return outcome.response.data

    return StructuredTool(
        name=provider_safe_name(definition.name),
        description=definition.description,
        args_schema=dict(definition.input_schema),
        coroutine=run,
        metadata={"toolrelay": definition.name},
    )


def from_langchain(tools: BaseTool | Iterable[BaseTool | Callable[..., Any]]) -> list[Tool]:
    """LangChain tools as toolrelay tools, for a catalog.

    Name, description and JSON Schema as the model would see them (LangChain's own
    conversion; injected arguments stay out).

    Args:
        tools: A ``BaseTool`` or several; plain functions become ``StructuredTool`` first.

    Raises:
        ConfigurationError: Something given is neither a LangChain tool nor a function.
    """
    items: Iterable[object] = [tools] if isinstance(tools, BaseTool) else tools
    converted: list[Tool] = []
    for item in items:
        if isinstance(item, BaseTool):
            converted.append(LangChainTool(item))
        elif callable(item):
            converted.append(LangChainTool(StructuredTool.from_function(item)))
        else:
            raise ConfigurationError(f"from_langchain takes LangChain tools, not {item!r}")
    return converted


class LangChainTool(ToolBase):
    """A LangChain tool behind the toolrelay :class:`~toolrelay.tools.Tool` contract.

    Its definition is the LangChain tool's name, description and JSON Schema; its metadata,
    ``return_direct`` as the LangChain tool says.
    """

    def __init__(self, tool: BaseTool) -> None:
        self.tool = tool
        function = convert_to_openai_tool(tool)["function"]
        super().__init__(
            ToolDefinition(
                name=tool.name,
                description=tool.description or function.get("description", ""),
                input_schema=function.get("parameters") or {"type": "object", "properties": {}},
            ),
            ToolMetadata(return_direct=bool(tool.return_direct)),
        )

    async def call(self, arguments_json: str, context: ToolContext | None = None) -> str:
        """``ainvoke`` the tool, the tool context as ``configurable["tool_context"]``."""
        arguments = json.loads(arguments_json or "{}")
        config: RunnableConfig = {"configurable": {TOOL_CONTEXT_KEY: dict(context or {})}}
        value = await self.tool.ainvoke(arguments, config)
        return result_text(value.content if isinstance(value, ToolMessage) else value)
