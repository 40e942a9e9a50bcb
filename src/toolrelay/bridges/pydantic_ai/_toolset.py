"""``ToolSearchToolset``: progressive tool disclosure for a pydantic-ai ``Agent``.

A toolset like any other (``Agent(model, toolsets=[toolset])``), whose tools change as the
conversation goes: at first only ``tool_search``; from the step after a search on, the tools
it found as well (pydantic-ai asks a toolset for its tools at every step). What a
conversation has found is kept in the :class:`~toolrelay.bridges.BridgeSearch`'s session
store under the run's ``conversation_id`` (scoped by the tool context's tenant), so the next
run of the same conversation starts with them.

Calls run through toolrelay's manager (:meth:`~toolrelay.bridges.BridgeSearch.call`): a tool
the caller may not see is never listed nor run, ``authorize`` is asked, and the manager's
guards apply (audit, your interceptors, idempotency, approval). A call that waits for a
person (the search's ``approval=ApprovalInterceptor()``) raises pydantic-ai's ``ApprovalRequired``:
the run ends with ``DeferredToolRequests`` (give the agent that output type), and the run
that resumes it with ``DeferredToolResults(approvals={call_id: True})`` runs the call approved.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

from pydantic_ai import RunContext, ToolDefinition
from pydantic_ai.exceptions import ApprovalRequired
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from toolrelay.bridges._convert import Listings
from toolrelay.bridges._search import BridgeSearch, conversation_key
from toolrelay.bridges.pydantic_ai._context import ContextOf, tool_context
from toolrelay.exceptions import ConfigurationError
from toolrelay.tools import Tool, provider_safe_name
from toolrelay.toolsearch import TOOL_SEARCH_NAME

__all__ = ["ConversationOf", "ToolSearchToolset"]

ConversationOf: TypeAlias = Callable[[RunContext[Any]], str | None]
"""The conversation a run belongs to, from its run context."""

# pydantic-ai validates the arguments first; toolrelay's manager validates them against the
# tool's JSON Schema and answers a mistake as feedback, so any object passes here.
_ANY_ARGUMENTS = SchemaValidator(
    core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema())
)


def _conversation_id(ctx: RunContext[Any]) -> str | None:
    return ctx.conversation_id


class ToolSearchToolset(AbstractToolset[Any]):
    """``tool_search`` and the tools it found, for a pydantic-ai agent (see the module docs).

    Args:
        search: The catalog, index, sessions and execution rules.
        context: The :class:`~toolrelay.tools.ToolContext` of a run (what ``tool_filter``,
            ``authorize`` and the tools see); by default the run's ``deps`` when they are a
            mapping.
        conversation: The conversation a run belongs to; by default the run's
            ``conversation_id``.
        id: The toolset's id among the agent's toolsets.
        max_retries: How often pydantic-ai lets the model retry a call it cannot parse.
    """

    def __init__(
        self,
        search: BridgeSearch,
        *,
        context: ContextOf | None = None,
        conversation: ConversationOf = _conversation_id,
        id: str | None = None,
        max_retries: int = 1,
    ) -> None:
        self.search = search
        self.context = context
        self.conversation = conversation
        self._id = id
        self.max_retries = max_retries
        self._listed = Listings(self._listing)

    @property
    def id(self) -> str | None:
        """The toolset's id, if one was given."""
        return self._id

    async def get_instructions(self, ctx: RunContext[Any]) -> str | None:
        """How to find tools (``SearchTexts.system_suffix``, in the catalog's language)."""
        await self.search.snapshot()
        return self.search.texts().system_suffix

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """``tool_search``, then the conversation's discovered tools the caller may see."""
        key, context = self._key(ctx)
        await self.search.snapshot()
        tools = {TOOL_SEARCH_NAME: self._listed(self.search.search_tool())}
        for tool in await self.search.shown(key, context):
            listed = self._listed(tool)
            tools[listed.tool_def.name] = listed
        return tools

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        """Search, or run a shown tool through toolrelay's manager."""
        key, context = self._key(ctx)
        if name == TOOL_SEARCH_NAME:
            return (await self.search.search(tool_args, key=key, context=context)).text
        result = await self.search.call(
            name,
            tool_args,
            key=key,
            context=context,
            call_id=ctx.tool_call_id,
            approved=True if ctx.tool_call_approved else None,
        )
        if result.pending_approval:
            raise ApprovalRequired(metadata={"tool": result.tool})
        return result.text

    def _key(self, ctx: RunContext[Any]) -> tuple[str, Any]:
        context = tool_context(ctx, self.context)
        conversation = self.conversation(ctx)
        if not conversation:
            raise ConfigurationError(
                "ToolSearchToolset: the run names no conversation; pass conversation_id= to "
                "Agent.run or give the toolset conversation="
            )
        return conversation_key(conversation, context), context

    def _listing(self, tool: Tool) -> ToolsetTool[Any]:
        definition = tool.definition
        return ToolsetTool(
            toolset=self,
            tool_def=ToolDefinition(
                name=provider_safe_name(definition.name),
                description=definition.description,
                parameters_json_schema=dict(definition.input_schema),
            ),
            max_retries=self.max_retries,
            args_validator=_ANY_ARGUMENTS,
        )
