"""``ToolSearchTools``: progressive tool disclosure for an OpenAI Agents SDK ``Agent``.

Two ways to give an agent the tools, with the same behaviour:

- :meth:`ToolSearchTools.agent` makes the ``Agent`` (any of its options) whose tools, listed
  by the SDK every turn (``Agent.get_all_tools``), are ``tool_search``, the agent's own tools
  and the tools the conversation has discovered: the SDK's work per turn grows with the tools
  shown, not with the catalog;
- :meth:`ToolSearchTools.tools` gives ``tool_search`` and one ``FunctionTool`` per catalog
  tool for any ``Agent(tools=...)``, each enabled (the SDK's ``is_enabled``, asked every
  turn) only while discovered. The SDK checks every one of them every turn, so this suits
  catalogs of a few hundred tools.

Either way the model is shown ``tool_search`` alone at first and, from the turn after a
search on, the tools it found, among those the caller may see. What a conversation has found
is kept in the :class:`~toolrelay.bridges.BridgeSearch`'s session
store under its key: by default the tool context's ``session_id`` (scoped by its tenant).

Calls run through toolrelay's manager (:meth:`~toolrelay.bridges.BridgeSearch.call`): a tool
that is not enabled is never run (the SDK refuses a call of a tool it did not list; run with
:meth:`ToolSearchTools.run_config` and the model reads toolrelay's answer instead: the tool
is unavailable, with the listed tools of similar names), ``authorize`` is asked, then the
manager's guards (audit, your interceptors, idempotency, approval). A tool whose calls wait
for a person (the search's ``approval=ApprovalInterceptor()``) needs approval in the SDK:
the run stops with ``interruptions``, and the run resumed with ``state.approve(item)`` runs
the call approved.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

from agents import Agent, AgentBase, FunctionTool, RunConfig, RunContextWrapper
from agents import Tool as SdkTool
from agents.run_config import ToolErrorFormatter, ToolErrorFormatterArgs
from agents.tool_context import ToolContext as SdkToolContext

from toolrelay.bridges._convert import Listings
from toolrelay.bridges._search import BridgeSearch, conversation_key
from toolrelay.bridges.openai_agents._convert import ContextOf, sdk_tool, tool_context
from toolrelay.exceptions import ConfigurationError
from toolrelay.tools import Tool, ToolContext, provider_safe_name
from toolrelay.toolsearch import TOOL_SEARCH_NAME

__all__ = ["ConversationOf", "ToolSearchTools"]

ConversationOf: TypeAlias = Callable[[RunContextWrapper[Any], ToolContext], str | None]
"""The conversation a run belongs to, from its run context and tool context."""

_TURNS_KEPT = 256  # runs whose enabled tools are remembered


def _session_id(wrapper: RunContextWrapper[Any], context: ToolContext) -> str | None:
    session = context.session_id
    return None if session is None else str(session)


class ToolSearchTools:
    """``tool_search`` and the catalog's tools, enabled as discovered (see the module docs).

    Args:
        search: The catalog, index, sessions and execution rules.
        context: A run's :class:`~toolrelay.tools.ToolContext`; by default the run's context
            object when it is a mapping.
        conversation: The conversation a run belongs to; by default the tool context's
            ``session_id``.
    """

    def __init__(
        self,
        search: BridgeSearch,
        *,
        context: ContextOf | None = None,
        conversation: ConversationOf = _session_id,
    ) -> None:
        self.search = search
        self.context = context
        self.conversation = conversation
        self._listings = Listings(functools.partial(self._catalog_tool, gated=False))
        # The names enabled for a run, by (run context, searches so far): the is_enabled of
        # every tool shares one read of the session store until a search may have changed it.
        self._searches = 0
        self._turns: OrderedDict[
            tuple[int, int], tuple[weakref.ref[Any], asyncio.Future[frozenset[str]]]
        ] = OrderedDict()

    def agent(self, **options: Any) -> Agent[Any]:
        """An ``Agent`` shown ``tool_search``, its own tools and the discovered ones.

        Text instructions get the line telling the model how to find tools
        (``SearchTexts.system_suffix``); instructions of a function are left as they are.

        Args:
            options: What ``Agent`` takes (``name``, ``model``, ``instructions``, ``tools``...).
        """
        own = list(options.pop("tools", []))
        suffix = self.search.texts().system_suffix
        instructions = options.get("instructions")
        if suffix and instructions is None:
            options["instructions"] = suffix
        elif suffix and isinstance(instructions, str):
            options["instructions"] = f"{instructions}\n\n{suffix}"
        return _SearchingAgent(tools=[self._search_tool(), *own], searching=self, **options)

    async def discovered(self, wrapper: RunContextWrapper[Any]) -> list[FunctionTool]:
        """The run's discovered tools the caller may see, as SDK tools, in discovery order."""
        key, context = self._key(wrapper)
        return [self._listings(tool) for tool in await self.search.shown(key, context)]

    def run_config(self, **options: Any) -> RunConfig:
        """A ``RunConfig`` under which a call of a tool not listed is answered, not raised.

        The SDK raises ``ModelBehaviorError`` when the model calls a tool it was not given
        (one not found yet, a forbidden one, a made-up name). This config has the SDK answer
        the model instead, with toolrelay's text: the tool is unavailable, with the shown
        tools of similar names, the same whether the tool is undiscovered, forbidden or
        unknown. The model searches or corrects itself and the run goes on.

        Args:
            options: What ``RunConfig`` takes; a ``tool_error_formatter`` given here still
                formats the other errors (refused approvals, tool exceptions).

        Raises:
            ConfigurationError: ``tool_not_found_behavior`` is given: this config sets it.
        """
        if "tool_not_found_behavior" in options:
            raise ConfigurationError(
                "ToolSearchTools.run_config sets tool_not_found_behavior itself; build the "
                "RunConfig yourself to choose another"
            )
        others: ToolErrorFormatter | None = options.pop("tool_error_formatter", None)

        async def formatter(args: ToolErrorFormatterArgs[Any]) -> str | None:
            if args.kind != "tool_not_found":
                if others is None:
                    return None
                message = others(args)
                text: str | None = await message if inspect.isawaitable(message) else message
                return text
            key, context = self._key(args.run_context)
            # The names the SDK lists, so a suggested one is callable as written.
            shown = await self.search.shown(key, context)
            listed = [provider_safe_name(t.definition.name) for t in shown]
            return self.search.texts().unavailable_answer(args.tool_name, listed)

        return RunConfig(
            tool_not_found_behavior="return_error_to_model",
            tool_error_formatter=formatter,
            **options,
        )

    def tools(self) -> list[FunctionTool]:
        """The agent's tools: ``tool_search`` first, then every catalog tool (enabled as found).

        Built from the catalog as it is now; call again when it changes.
        """
        listed = [self._search_tool()]
        listed.extend(self._catalog_tool(tool) for tool in self.search.catalog)
        return listed

    def _key(self, wrapper: RunContextWrapper[Any]) -> tuple[str, ToolContext]:
        context = tool_context(wrapper, self.context)
        conversation = self.conversation(wrapper, context)
        if not conversation:
            raise ConfigurationError(
                "ToolSearchTools: the run names no conversation; give the run a context with a "
                "session_id (Runner.run(agent, input, context={'session_id': ...})) or the "
                "bridge conversation="
            )
        return conversation_key(conversation, context), context

    def _search_tool(self) -> FunctionTool:
        async def invoke(ctx: SdkToolContext[Any], arguments_json: str) -> str:
            key, context = self._key(ctx)
            try:
                result = await self.search.search(arguments_json, key=key, context=context)
            finally:
                self._searches += 1
            return result.text

        return sdk_tool(self.search.search_tool(), invoke, name=TOOL_SEARCH_NAME)

    def _catalog_tool(self, tool: Tool, *, gated: bool = True) -> FunctionTool:
        definition = tool.definition
        needs_approval = self.search.needs_approval(tool)

        async def invoke(ctx: SdkToolContext[Any], arguments_json: str) -> str:
            key, context = self._key(ctx)
            result = await self.search.call(
                definition.name,
                arguments_json,
                key=key,
                context=context,
                call_id=ctx.tool_call_id,
                # The SDK runs a tool that needs approval only once a person approved it.
                approved=True if needs_approval else None,
            )
            return result.text

        async def enabled(wrapper: RunContextWrapper[Any], agent: AgentBase[Any]) -> bool:
            return definition.name in await self._enabled(wrapper)

        return sdk_tool(
            tool, invoke, is_enabled=enabled if gated else True, needs_approval=needs_approval
        )

    async def _enabled(self, wrapper: RunContextWrapper[Any]) -> frozenset[str]:
        """The discovered tools the run may see (read again after each search)."""
        turn = (id(wrapper), self._searches)
        entry = self._turns.get(turn)
        if entry is not None and entry[0]() is wrapper:
            return await asyncio.shield(entry[1])
        future: asyncio.Future[frozenset[str]] = asyncio.get_running_loop().create_future()
        self._turns[turn] = (weakref.ref(wrapper), future)
        while len(self._turns) > _TURNS_KEPT:
            self._turns.popitem(last=False)
        try:
            key, context = self._key(wrapper)
            names = frozenset(t.definition.name for t in await self.search.shown(key, context))
        except BaseException as exc:
            self._turns.pop(turn, None)
            future.set_exception(exc)
            future.exception()  # retrieved here: the other waiters re-raise it
            raise
        future.set_result(names)
        return names


@dataclass
class _SearchingAgent(Agent[Any]):
    """An ``Agent`` whose tools each turn include the conversation's discovered ones."""

    searching: ToolSearchTools | None = None

    async def get_all_tools(self, run_context: RunContextWrapper[Any]) -> list[SdkTool]:
        tools = await super().get_all_tools(run_context)
        if self.searching is None:
            return tools
        return [*tools, *await self.searching.discovered(run_context)]
