"""Tools both ways between toolrelay and pydantic-ai, schemas and descriptions intact.

- :func:`to_pydantic_ai`: a toolrelay tool as a ``pydantic_ai.Tool``. Its calls run through a
  :class:`~toolrelay.execution.ToolCallingManager` (argument validation, timeout, errors as
  feedback to the model); the tool context comes from the run context (:data:`ContextOf`).
  A tool that requires approval needs ``approval=``: with ``ApprovalInterceptor()`` it is
  marked so for pydantic-ai, which defers its calls until a person approves them.
- :func:`from_pydantic_ai`: pydantic-ai tools (a ``Tool``, a ``FunctionToolset`` or a list of
  them) as toolrelay tools, for a catalog. A tool that takes the run context gets one whose
  ``deps`` are the caller's tool context (or what ``deps`` makes of it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Unpack

from pydantic_ai import FunctionToolset, RunContext
from pydantic_ai import Tool as PydanticTool
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage

from toolrelay.bridges._convert import decided, manager_for, person_decides, result_text
from toolrelay.bridges.pydantic_ai._context import ContextOf, DepsOf, tool_context
from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import (
    Approve,
    GuardOptions,
    ToolCallingManager,
)
from toolrelay.messages import ToolCall
from toolrelay.tools import Tool, ToolContext, ToolDefinition, ToolMetadata, provider_safe_name
from toolrelay.tools._base import ToolBase

__all__ = ["from_pydantic_ai", "to_pydantic_ai"]


def to_pydantic_ai(
    tool: Tool,
    *,
    context: ContextOf | None = None,
    tool_calling_manager: ToolCallingManager | None = None,
    **guards: Unpack[GuardOptions],
) -> PydanticTool[Any]:
    """``tool`` as a pydantic-ai tool: same description and JSON Schema, provider-safe name.

    Args:
        tool: The toolrelay tool.
        context: Its :class:`~toolrelay.tools.ToolContext` from the run context; by default
            the run's ``deps`` when they are a mapping.
        tool_calling_manager: Runs each call; by default one built from the guard options
            (giving both is an error).
        guards: The guard options (:class:`~toolrelay.execution.GuardOptions`), as every door takes
            them; ``approval=`` decides when ``tool`` requires approval (``ApprovalInterceptor()``:
            pydantic-ai defers the call until a person approves it). Without ``idempotency=``, keys
            are recorded in the process's store, shared by every conversion of the tool.

    Raises:
        ConfigurationError: A manager is given with guard options, or ``tool`` requires
            approval and no approval is configured.
    """
    definition = tool.definition
    manager = manager_for(
        tool, owner="to_pydantic_ai", tool_calling_manager=tool_calling_manager, **guards
    )
    # A person decides through pydantic-ai: it runs the call only once they approved it.
    deferred = person_decides(manager, tool)

    async def run(ctx: RunContext[Any], **arguments: Any) -> str:
        call = ToolCall(
            id=ctx.tool_call_id or "",
            name=definition.name,
            arguments=arguments,  # type: ignore[arg-type]  # the manager reads a mapping too
        )
        approved = [decided(Approve())] if deferred and ctx.tool_call_approved else []
        outcome = await manager.run_call(
            call, (tool,), tool_context(ctx, context), interceptors=approved
        )
        return outcome.response.data

    converted: PydanticTool[Any] = PydanticTool.from_schema(
        run,
        name=provider_safe_name(definition.name),
        description=definition.description,
        json_schema=dict(definition.input_schema),
        takes_ctx=True,
    )
    converted.requires_approval = deferred
    converted.timeout = tool.metadata.timeout
    return converted


def from_pydantic_ai(
    tools: PydanticTool[Any]
    | FunctionToolset[Any]
    | Iterable[PydanticTool[Any] | FunctionToolset[Any]],
    *,
    deps: DepsOf | None = None,
) -> list[Tool]:
    """pydantic-ai tools as toolrelay tools: name, description and JSON Schema as they are.

    Args:
        tools: A ``pydantic_ai.Tool``, a ``FunctionToolset`` (its tools), or several.
        deps: The ``deps`` of the run context a tool that takes one is given, from the
            caller's tool context; the tool context itself by default.

    Raises:
        ConfigurationError: Something given is neither a pydantic-ai tool nor a function
            toolset (another toolset lists its tools only within a run).
    """
    items: Iterable[object] = (
        [tools] if isinstance(tools, PydanticTool | FunctionToolset) else tools
    )
    converted: list[Tool] = []
    for item in items:
        if isinstance(item, FunctionToolset):
            converted.extend(PydanticAiTool(t, deps=deps) for t in item.tools.values())
        elif isinstance(item, PydanticTool):
            converted.append(PydanticAiTool(item, deps=deps))
        else:
            raise ConfigurationError(
                f"from_pydantic_ai takes pydantic_ai.Tool or FunctionToolset objects, not {item!r}"
            )
    return converted


class PydanticAiTool(ToolBase):
    """A pydantic-ai tool behind the toolrelay :class:`~toolrelay.tools.Tool` contract.

    Its definition is the pydantic-ai tool's name, description and JSON Schema; its metadata,
    the tool's approval requirement and timeout.
    """

    def __init__(self, tool: PydanticTool[Any], *, deps: DepsOf | None = None) -> None:
        self.tool = tool
        self._deps = deps
        tool_def = tool.tool_def
        super().__init__(
            ToolDefinition(
                name=tool_def.name,
                description=tool_def.description or "",
                input_schema=tool_def.parameters_json_schema,
            ),
            ToolMetadata(requires_approval=tool.requires_approval, timeout=tool.timeout),
        )

    async def call(self, arguments_json: str, context: ToolContext | None = None) -> str:
        """Validate the arguments with the tool's own validator and run it."""
        context = context or ToolContext()
        schema = self.tool.function_schema
        arguments = schema.validator.validate_json(arguments_json or "{}")
        deps = self._deps(context) if self._deps is not None else context
        ctx = RunContext(
            deps=deps,
            model=TestModel(),  # never asked: a run context needs a model
            usage=RunUsage(),
            tool_name=self.tool.name,
        )
        value = await schema.call(arguments, ctx)
        return result_text(value)
