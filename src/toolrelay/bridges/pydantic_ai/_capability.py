"""``ToolSearchCapability``: toolrelay's tool search as pydantic-ai's own, for an ``Agent``.

pydantic-ai's ``ToolSearch`` capability with toolrelay's search as its ``strategy``
(``Agent(model, capabilities=[capability])``). Every catalog tool the caller may see is listed
deferred (``defer_loading``): hidden from the model until a search finds it. The model searches
with pydantic-ai's search tool; the strategy answers with toolrelay's search
(:meth:`~toolrelay.bridges.BridgeSearch.search`: ``tool_filter`` applied while ranking, usage
history, the conversation's session store), and
pydantic-ai reveals what it found the provider's own way: Anthropic ``tool_reference`` blocks
and the Responses API's client-executed ``tool_search`` append to the history and leave the
request's tools as they were (its prompt cache kept); on a model without either, pydantic-ai's
``search_tools`` function answers and the found tools join the tool list from the next step.

pydantic-ai keeps the discoveries in the run's message history; toolrelay keeps them in the
session store under the run's ``conversation_id`` (scoped by the tool context's tenant), which
the calls are checked against. The two are kept in step: a run whose history does not hold a
stored discovery (the next run of the conversation, without its history) lists that tool as an
ordinary one from its first step, and a permitted tool the history reveals that the store lacks
is added to the store.

Calls run through toolrelay's manager (:meth:`~toolrelay.bridges.BridgeSearch.call`): a tool
the caller may not see is never listed nor run, ``authorize`` is asked, and the manager's
guards apply (audit, your interceptors, idempotency, approval). A call that waits for a
person (the search's ``approval=ApprovalInterceptor()``) raises pydantic-ai's ``ApprovalRequired``:
the run ends with ``DeferredToolRequests`` (give the agent that output type), and the run
that resumes it with ``DeferredToolResults(approvals={call_id: True})`` runs the call approved.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from pydantic_ai import ModelRetry, RunContext, ToolDefinition
from pydantic_ai.capabilities import ToolSearch
from pydantic_ai.exceptions import ApprovalRequired
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from toolrelay.bridges._convert import Listings
from toolrelay.bridges._search import BridgeSearch, conversation_key
from toolrelay.bridges.pydantic_ai._context import ContextOf, tool_context
from toolrelay.exceptions import ConfigurationError
from toolrelay.tools import Tool, ToolContext, provider_safe_name
from toolrelay.toolsearch import TOOL_SEARCH_NAME

__all__ = ["ConversationOf", "ToolSearchCapability"]

ConversationOf: TypeAlias = Callable[[RunContext[Any]], str | None]
"""The conversation a run belongs to, from its run context."""

# pydantic-ai validates the arguments first; toolrelay's manager validates them against the
# tool's JSON Schema and answers a mistake as feedback, so any object passes here.
_ANY_ARGUMENTS = SchemaValidator(
    core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema())
)


def _conversation_id(ctx: RunContext[Any]) -> str | None:
    return ctx.conversation_id


class ToolSearchCapability(ToolSearch[Any]):
    """pydantic-ai's ``ToolSearch`` over a toolrelay catalog (see the module docs).

    It takes the place of the ``ToolSearch`` pydantic-ai gives every agent (an agent has one;
    pydantic-ai refuses a second under the same id). Its search tool is pydantic-ai's
    (``queries``: a list of strings, each searched as toolrelay's ``tool_search`` searches
    its ``queries``) with toolrelay's texts in the
    catalog's language; it finds only catalog tools, so an agent's own tools marked
    ``defer_loading`` are refused at the first search (give them to the catalog instead).

    Args:
        search: The catalog, index, sessions and execution rules.
        context: The :class:`~toolrelay.tools.ToolContext` of a run (what ``tool_filter``,
            ``authorize`` and the tools see); by default the run's ``deps`` when they are a
            mapping.
        conversation: The conversation a run belongs to; by default the run's
            ``conversation_id``.
        max_retries: How often pydantic-ai lets the model retry a call it cannot parse.
    """

    def __init__(
        self,
        search: BridgeSearch,
        *,
        context: ContextOf | None = None,
        conversation: ConversationOf = _conversation_id,
        max_retries: int = 1,
    ) -> None:
        # Every tool toolrelay's search finds is revealed: its options decide how many.
        super().__init__(strategy=self._strategy, max_results=sys.maxsize)
        self.search = search
        self.toolset = CatalogToolset(
            search, context=context, conversation=conversation, max_retries=max_retries
        )

    async def for_run(self, ctx: RunContext[Any]) -> ToolSearch[Any]:
        """Indexes the catalog when it changed, so the search tool's texts are its language's."""
        await self.search.snapshot()
        return self

    def get_toolset(self) -> CatalogToolset:
        """The catalog tools the caller may see, deferred."""
        return self.toolset

    def get_wrapper_toolset(self, toolset: AbstractToolset[Any]) -> AbstractToolset[Any]:
        """pydantic-ai's tool search over the agent's tools, described in toolrelay's texts."""
        texts = self.search.texts()
        return dataclasses.replace(  # type: ignore[type-var]  # pydantic-ai's ToolSearchToolset
            super().get_wrapper_toolset(toolset),
            tool_description=texts.description,
            parameter_description=texts.parameters.get("queries"),
        )

    async def _strategy(
        self, ctx: RunContext[Any], queries: Sequence[str], tools: Sequence[ToolDefinition]
    ) -> list[str]:
        key, context = self.toolset.key(ctx)
        snapshot = await self.search.snapshot()
        ours = {provider_safe_name(name) for name in snapshot.tools}
        foreign = sorted(t.name for t in tools if t.name not in ours)
        if foreign:
            raise ConfigurationError(
                f"ToolSearchCapability searches its catalog only; the agent's tools {foreign} "
                "are marked defer_loading and could never be found: give them to the catalog or "
                "drop defer_loading"
            )
        result = await self.search.search({"queries": list(queries)}, key=key, context=context)
        if result.is_error:
            # Worded for the model's own search tool: pydantic-ai's name, not toolrelay's.
            raise ModelRetry(result.text.replace(TOOL_SEARCH_NAME, ToolSearch.function_tool_name))
        return [provider_safe_name(name) for name in result.found]


class CatalogToolset(AbstractToolset[Any]):
    """The catalog tools the caller may see, for :class:`ToolSearchCapability`.

    Deferred, but for the conversation's stored discoveries its run's history does not hold,
    listed as ordinary tools; calls run through :meth:`~toolrelay.bridges.BridgeSearch.call`.
    """

    def __init__(
        self,
        search: BridgeSearch,
        *,
        context: ContextOf | None,
        conversation: ConversationOf,
        max_retries: int,
    ) -> None:
        self.search = search
        self.context = context
        self.conversation = conversation
        self.max_retries = max_retries
        self._deferred = Listings(functools.partial(self._listing, deferred=True))
        self._shown = Listings(functools.partial(self._listing, deferred=False))

    @property
    def id(self) -> str | None:
        """No id: the capability holds one such toolset."""
        return None

    async def get_instructions(self, ctx: RunContext[Any]) -> str | None:
        """How to find tools (``SearchTexts.system_suffix``, naming pydantic-ai's search tool)."""
        await self.search.snapshot()
        suffix = self.search.texts().system_suffix
        if suffix is None:
            return None
        return suffix.replace(TOOL_SEARCH_NAME, ToolSearch.function_tool_name)

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """Every permitted catalog tool; deferred unless found before the run's history."""
        key, context = self.key(ctx)
        revealed = ctx.discovered_tool_names
        stored = {tool.definition.name for tool in await self.search.shown(key, context)}
        tools: dict[str, ToolsetTool[Any]] = {}
        missing: list[str] = []
        for tool in await self.search.permitted(context):
            listed = self._deferred(tool)
            name = listed.tool_def.name
            if tool.definition.name in stored:
                if name not in revealed:
                    listed = self._shown(tool)
            elif name in revealed:
                missing.append(tool.definition.name)
            tools[name] = listed
        if missing:
            await self.search.session_store.add(key, missing)
        return tools

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        """Run a catalog tool through toolrelay's manager."""
        key, context = self.key(ctx)
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

    def key(self, ctx: RunContext[Any]) -> tuple[str, ToolContext]:
        """The run's session key and tool context."""
        context = tool_context(ctx, self.context)
        conversation = self.conversation(ctx)
        if not conversation:
            raise ConfigurationError(
                "ToolSearchCapability: the run names no conversation; pass conversation_id= to "
                "Agent.run or give the capability conversation="
            )
        return conversation_key(conversation, context), context

    def _listing(self, tool: Tool, *, deferred: bool) -> ToolsetTool[Any]:
        definition = tool.definition
        return ToolsetTool(
            toolset=self,
            tool_def=ToolDefinition(
                name=provider_safe_name(definition.name),
                description=definition.description,
                parameters_json_schema=dict(definition.input_schema),
                defer_loading=deferred,
            ),
            max_retries=self.max_retries,
            args_validator=_ANY_ARGUMENTS,
        )
