"""Tools both ways between toolrelay and the OpenAI Agents SDK, schemas and descriptions intact.

- :func:`to_openai_agents`: a toolrelay tool as an SDK ``FunctionTool`` (its JSON Schema as
  it is: not rewritten for strict mode). Calls run through a
  :class:`~toolrelay.execution.ToolCallingManager` (validation, timeout, errors as feedback);
  the tool context comes from the run's context object (:data:`ContextOf`): by default the
  object itself when it is a mapping. A tool that requires approval needs ``approval=``:
  with ``ApprovalInterceptor()`` it needs approval in the SDK, which asks a person.
- :func:`from_openai_agents`: SDK function tools as toolrelay tools, for a catalog. Each call
  is the tool's ``on_invoke_tool`` with the caller's tool context as the run's context object
  (or what ``run_context`` makes of it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, TypeAlias, Unpack

from agents import FunctionTool, RunContextWrapper
from agents.tool_context import ToolContext as SdkToolContext

from toolrelay.bridges._convert import (
    decided,
    manager_for,
    mapping_context,
    person_decides,
    result_text,
)
from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import (
    Approve,
    GuardOptions,
    ToolCallingManager,
)
from toolrelay.messages import ToolCall
from toolrelay.tools import Tool, ToolContext, ToolDefinition, ToolMetadata, provider_safe_name
from toolrelay.tools._base import ToolBase

__all__ = [
    "ContextOf",
    "RunContextOf",
    "from_openai_agents",
    "sdk_tool",
    "to_openai_agents",
    "tool_context",
]

ContextOf: TypeAlias = Callable[[RunContextWrapper[Any]], Mapping[str, Any]]
"""A call's :class:`~toolrelay.tools.ToolContext`, from the SDK's run context."""

RunContextOf: TypeAlias = Callable[[ToolContext], Any]
"""The context object an SDK tool is run with, from the caller's tool context."""


def tool_context(wrapper: RunContextWrapper[Any], context: ContextOf | None) -> ToolContext:
    """The tool context of a call.

    ``context(wrapper)``, else the run's context object when it is a mapping (a
    :class:`~toolrelay.tools.ToolContext`, a ``dict``), else an empty one.
    """
    return mapping_context(context(wrapper) if context is not None else wrapper.context)


def sdk_tool(
    tool: Tool,
    invoke: Callable[[SdkToolContext[Any], str], Awaitable[str]],
    *,
    name: str | None = None,
    **options: Any,
) -> FunctionTool:
    """An SDK ``FunctionTool`` showing ``tool``'s definition, its calls going to ``invoke``.

    Its JSON Schema as it is (not rewritten for strict mode), its name provider-safe unless
    ``name`` is given, its timeout the tool's; ``options`` are the ``FunctionTool``'s others.
    """
    definition = tool.definition
    return FunctionTool(
        name=name or provider_safe_name(definition.name),
        description=definition.description,
        params_json_schema=dict(definition.input_schema),
        on_invoke_tool=invoke,
        strict_json_schema=False,
        timeout_seconds=tool.metadata.timeout,
        **options,
    )


def to_openai_agents(
    tool: Tool,
    *,
    context: ContextOf | None = None,
    tool_calling_manager: ToolCallingManager | None = None,
    **guards: Unpack[GuardOptions],
) -> FunctionTool:
    """``tool`` as an SDK ``FunctionTool``: same description and JSON Schema, provider-safe name.

    Args:
        tool: The toolrelay tool.
        context: Its tool context from the SDK's run context; by default the run's context
            object when it is a mapping.
        tool_calling_manager: Runs each call; by default one built from the guard options
            (giving both is an error).
        guards: The guard options (:class:`~toolrelay.execution.GuardOptions`), as every door takes
            them; ``approval=`` decides when ``tool`` requires approval (``ApprovalInterceptor()``:
            the SDK stops the run until a person approves the call). Without ``idempotency=``, keys
            are recorded in the process's store, shared by every conversion of the tool.

    Raises:
        ConfigurationError: A manager is given with guard options, or ``tool`` requires
            approval and no approval is configured.
    """
    definition = tool.definition
    manager = manager_for(
        tool, owner="to_openai_agents", tool_calling_manager=tool_calling_manager, **guards
    )
    # A person decides through the SDK: it runs the call only once they approved it.
    needs_approval = person_decides(manager, tool)
    approved = [decided(Approve())] if needs_approval else []

    async def invoke(ctx: SdkToolContext[Any], arguments_json: str) -> str:
        call = ToolCall(id=ctx.tool_call_id, name=definition.name, arguments=arguments_json)
        outcome = await manager.run_call(
            call, (tool,), tool_context(ctx, context), interceptors=approved
        )
        return outcome.response.data

    return sdk_tool(tool, invoke, needs_approval=needs_approval)


def from_openai_agents(
    tools: FunctionTool | Iterable[FunctionTool], *, run_context: RunContextOf | None = None
) -> list[Tool]:
    """SDK function tools as toolrelay tools: name, description and JSON Schema as they are.

    Args:
        tools: A ``FunctionTool`` (``@function_tool`` makes one) or several.
        run_context: The context object a tool is run with, from the caller's tool context;
            the tool context itself by default.

    Raises:
        ConfigurationError: Something given is not a function tool (hosted tools run at the
            provider, not here).
    """
    items: Iterable[object] = [tools] if isinstance(tools, FunctionTool) else tools
    converted: list[Tool] = []
    for item in items:
        if not isinstance(item, FunctionTool):
            raise ConfigurationError(f"from_openai_agents takes FunctionTool objects, not {item!r}")
        converted.append(AgentsTool(item, run_context=run_context))
    return converted


class AgentsTool(ToolBase):
    """An SDK function tool behind the toolrelay :class:`~toolrelay.tools.Tool` contract.

    Its definition is the SDK tool's name, description and JSON Schema; its metadata, the
    tool's approval requirement and timeout.
    """

    def __init__(self, tool: FunctionTool, *, run_context: RunContextOf | None = None) -> None:
        self.tool = tool
        self._run_context = run_context
        super().__init__(
            ToolDefinition(
                name=tool.name, description=tool.description, input_schema=tool.params_json_schema
            ),
            ToolMetadata(
                requires_approval=tool.needs_approval is not False, timeout=tool.timeout_seconds
            ),
        )

    async def call(self, arguments_json: str, context: ToolContext | None = None) -> str:
        """``on_invoke_tool`` with the tool context as the run's context object."""
        context = context or ToolContext()
        arguments = arguments_json or "{}"
        ctx: SdkToolContext[Any] = SdkToolContext(
            context=self._run_context(context) if self._run_context is not None else context,
            tool_name=self.tool.name,
            tool_call_id="",
            tool_arguments=arguments,
        )
        value = await self.tool.on_invoke_tool(ctx, arguments)
        return result_text(value)
