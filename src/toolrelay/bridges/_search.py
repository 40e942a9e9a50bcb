"""``BridgeSearch``: progressive disclosure and guarded calls, for another framework's loop.

The framework runs its own agent loop; each bridge adapts three operations to it:

1. :meth:`BridgeSearch.search` answers the ``tool_search`` tool within what the caller may
   see (the ``tool_filter`` applied while ranking, as in every toolrelay search) and adds
   what it found to the conversation's entry in the :class:`~toolrelay.toolsearch.SessionStore`;
2. :meth:`BridgeSearch.shown` gives the tools the framework offers its model on the next
   step: the conversation's discovered tools the caller may see, in discovery order;
3. :meth:`BridgeSearch.call` runs one call through a
   :class:`~toolrelay.execution.ToolCallingManager` (its ``run_call``), on the one path every
   call takes: a name that is not shown (undiscovered, forbidden or unknown) gets the
   unavailable text and never runs, the tool's context is checked, then the manager's guards
   (``authorize``, audit, your interceptors, idempotency, approval) decide.

The search is the tool-search core every front end shares
(:class:`~toolrelay.toolsearch._core.CatalogSearch`, under one
:class:`~toolrelay.toolsearch.SearchOptions`). Discoveries accumulate for the conversation
(the tool loop's ``retention="all"``): the frameworks' loops keep their own history, and a
tool found once stays callable.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Unpack
from urllib.parse import quote

from toolrelay.bridges._convert import decided, person_decides
from toolrelay.execution import (
    Approve,
    Deny,
    GuardOptions,
    ToolCallingManager,
    ToolCallInterceptor,
    ToolCallOutcome,
    ToolCallStatus,
)
from toolrelay.execution._manager import configured_manager
from toolrelay.execution._resolution import match_tool_name
from toolrelay.messages import ToolCall
from toolrelay.search._base import ToolIndex
from toolrelay.tools import Tool, ToolCatalog, ToolContext
from toolrelay.toolsearch._access import CatalogSnapshot, CatalogView
from toolrelay.toolsearch._core import CatalogSearch
from toolrelay.toolsearch._learning import CallerRecorders, UsageRecorder, usage_scope
from toolrelay.toolsearch._options import SearchOptions
from toolrelay.toolsearch._reveal import refuse_turn_options
from toolrelay.toolsearch._search_tool import ToolSearcher
from toolrelay.toolsearch._sessions import InMemorySessionStore, SessionStore
from toolrelay.toolsearch._texts import TOOL_SEARCH_NAME, SearchTexts

__all__ = ["BridgeCallResult", "BridgeSearch", "conversation_key"]

PENDING_APPROVAL_TEXT = (
    "The call to tool {name!r} needs approval and has not run: nobody has approved it yet."
)


def conversation_key(conversation_id: str, context: Mapping[str, object]) -> str:
    """The session key of ``conversation_id``, scoped by the context's ``tenant_id``.

    The tool loop's default scope: ``"tenant:acme:c1"`` for ``c1`` of tenant ``acme``; the id
    itself without a tenant (escaped when it starts with ``tenant:``), so distinct (tenant, id)
    pairs never share discoveries.
    """
    tenant = context.get("tenant_id")
    if tenant is not None and tenant != "":
        return f"tenant:{quote(str(tenant), safe='')}:{conversation_id}"
    if conversation_id.startswith("tenant:"):
        return f"tenant::{conversation_id}"
    return conversation_id


@dataclass(frozen=True, kw_only=True)
class BridgeCallResult:
    """The answer to one call made through a bridge.

    Attributes:
        text: What the model reads: the tool's result, or the error or refusal text.
        status: How the call ended (:class:`~toolrelay.execution.ToolCallStatus`);
            ``PENDING_APPROVAL`` when it waits for a person and has not run.
        tool: The canonical name of the tool, when the name was one the caller is shown.
        is_error: Whether ``text`` reports a failure or a refusal.
        found: What a search found, best first (canonical names); empty for other calls.
    """

    text: str
    status: ToolCallStatus
    tool: str | None = None
    is_error: bool = False
    found: tuple[str, ...] = ()

    @property
    def pending_approval(self) -> bool:
        """Whether the call waits for approval (the framework pauses the run)."""
        return self.status is ToolCallStatus.PENDING_APPROVAL


class BridgeSearch:
    """Tool search, sessions and guarded execution over one catalog, for any agent framework.

    One instance serves every conversation and every bridge (the index holds the catalog
    once); each conversation's discoveries live in ``session_store`` under its key. A
    :class:`~toolrelay.tools.ToolCatalog` is read live: a change of its tools is indexed
    before the next search.

    Args:
        catalog: The searchable tools: a :class:`~toolrelay.tools.ToolCatalog` (read live)
            or anything :func:`~toolrelay.tools.as_tools` accepts.
        options: How it searches and answers (:class:`~toolrelay.toolsearch.SearchOptions`,
            as for every front end: hits, cut-offs, ``tool_filter``, language, usage history:
            a successful call of a tool a search of the same conversation found is recorded).
        index: The search index; ``default_index()`` when omitted. Give each instance its own.
        session_store: Where discovered tools are kept per conversation; an
            :class:`~toolrelay.toolsearch.InMemorySessionStore` by default.
        tool_calling_manager: Runs the calls; by default one built from the guard options
            (giving both is an error).
        guards: The guard options (:class:`~toolrelay.execution.GuardOptions`), as every door
            takes them: ``approval=`` (``ApprovalInterceptor()``: the call waits for a person,
            through the framework's own way of pausing a run; without approval, a catalog
            with a tool that requires it is refused at build), ``idempotency=`` (the
            process's store when omitted), ``audit=``, ``authorize=``, ``interceptors=``.

    Raises:
        ConfigurationError: A manager is given with guard options, a guard option is
            unknown, the options cannot be honoured with the index, a catalog tool
            requires approval and no approval is configured, or an option of the chat
            client's turn start is given (``reveal=``, ``reveal_min_relative_score=``,
            ``fill_cache_minimum=``, ``send_all_below=``): a bridge never sees a request's
            text.
    """

    def __init__(
        self,
        catalog: ToolCatalog | Iterable[object],
        *,
        options: SearchOptions | None = None,
        index: ToolIndex | None = None,
        session_store: SessionStore | None = None,
        tool_calling_manager: ToolCallingManager | None = None,
        **guards: Unpack[GuardOptions],
    ) -> None:
        self.core = CatalogSearch(catalog, index=index, options=options)
        self.session_store = session_store if session_store is not None else InMemorySessionStore()
        refuse_turn_options(guards, owner="BridgeSearch")
        self.manager = configured_manager(tool_calling_manager, owner="BridgeSearch", **guards)
        self.manager.check_tools(self.core.tools(), owner=type(self).__name__)
        self._call_ids = itertools.count(1)
        self._recorders = CallerRecorders()
        self._listed: tuple[SearchTexts, Tool] | None = None  # the search tool as listed
        # Searches are validated and answered as calls, without the calls' guards: a search
        # changes nothing and is never approved, replayed or audited.
        self._searches = ToolCallingManager()

    @property
    def catalog(self) -> ToolCatalog:
        """The searchable tools."""
        return self.core.catalog

    @property
    def options(self) -> SearchOptions:
        """How it searches and answers."""
        return self.core.options

    async def snapshot(self) -> CatalogSnapshot:
        """The catalog as indexed now, re-indexed first when its tools changed.

        Raises:
            ConfigurationError: A tool is named ``tool_search``.
        """
        return await self.core.snapshot()

    def search_tool(self) -> Tool:
        """The ``tool_search`` tool as the model is shown it, in the catalog's language.

        Its definition is what a framework lists; its calls go through :meth:`search`.
        """
        texts = self.texts()
        if self._listed is None or self._listed[0] is not texts:
            searcher = ToolSearcher(index=self.core.index, allowed=frozenset())
            tool = searcher.as_tool(texts.description, parameters=texts.parameters)
            self._listed = (texts, tool)
        return self._listed[1]

    def texts(self) -> SearchTexts:
        """What the model reads besides the catalog, in the catalog's language (as indexed)."""
        return self.core.texts()

    async def search(
        self,
        arguments: str | Mapping[str, object] | None,
        *,
        key: str | None,
        context: ToolContext | None = None,
        discovered: Sequence[str] = (),
    ) -> BridgeCallResult:
        """Run ``tool_search`` with the model's arguments for the conversation ``key``.

        The tools it finds (:attr:`BridgeCallResult.found`) are added to the conversation's
        discoveries in the session store, shown from the next step on; with ``key=None`` the
        framework keeps them itself (``discovered``: what it has so far). The arguments are
        JSON text or a mapping already decoded, as for :meth:`call`; invalid ones (no
        ``queries``, a query too long, nested too deeply) are answered as such.
        """
        context = context or ToolContext()
        snapshot = await self.core.snapshot()
        view = self.core.view(snapshot, context)
        searcher = await self.core.searcher(view, max_chars=self._searches.max_result_chars)
        searcher.shown = frozenset(await self._discovered(key, discovered, view))
        call_id = f"search_{next(self._call_ids)}"
        texts = self.core.texts(snapshot)
        tool = searcher.as_tool(texts.description, parameters=texts.parameters, call_id=call_id)
        call = ToolCall(
            id=call_id,
            name=TOOL_SEARCH_NAME,
            arguments=arguments,  # type: ignore[arg-type]  # the manager reads a mapping too
        )
        outcome = await self._searches.run_call(call, (tool,), context)
        records = searcher.take_records([call_id])
        found = tuple(dict.fromkeys(name for record in records for name in record.names))
        if found and key is not None:
            await self.session_store.add(key, found)
        recorder = self._recorder(key, context)
        for record in records:
            recorder.found(record.query, record.names)
        return dataclasses.replace(_result(outcome, outcome.response.data), found=found)

    async def shown(
        self,
        key: str | None,
        context: ToolContext | None = None,
        *,
        discovered: Sequence[str] = (),
    ) -> list[Tool]:
        """The tools conversation ``key`` shows that the caller may see: pinned, then found.

        With ``key=None``: those of ``discovered`` (names the framework kept itself).
        """
        snapshot = await self.core.snapshot()
        view = self.core.view(snapshot, context or ToolContext())
        return [snapshot.tools[name] for name in await self._discovered(key, discovered, view)]

    async def permitted(self, context: ToolContext | None = None) -> list[Tool]:
        """The catalog tools the caller may see, in catalog order.

        For a framework that lists every tool hidden until its own search reveals it.
        """
        snapshot = await self.core.snapshot()
        view = self.core.view(snapshot, context or ToolContext())
        return [tool for tool in snapshot.members if view.permits(tool.definition.name)]

    async def resolve(
        self,
        name: str,
        *,
        key: str | None,
        context: ToolContext | None = None,
        discovered: Sequence[str] = (),
    ) -> Tool | None:
        """The shown tool a call of ``name`` (canonical or provider-safe) means, if any."""
        snapshot = await self.core.snapshot()
        view = self.core.view(snapshot, context or ToolContext())
        matched = match_tool_name(name, await self._discovered(key, discovered, view))
        return None if matched is None else snapshot.tools[matched]

    async def call(
        self,
        name: str,
        arguments: str | Mapping[str, object] | None,
        *,
        key: str | None,
        context: ToolContext | None = None,
        discovered: Sequence[str] = (),
        call_id: str | None = None,
        approved: bool | None = None,
    ) -> BridgeCallResult:
        """Run the tool ``name`` (as the model called it) for the conversation ``key``.

        Args:
            name: The tool's name, canonical or provider-safe.
            arguments: The model's arguments: JSON text, or a mapping already decoded.
            key: The conversation's session key; ``None`` when the framework keeps the
                discoveries itself (``discovered``).
            context: The caller's tool context.
            discovered: With ``key=None``: the names found so far.
            call_id: The framework's id of the call (kept in audit records).
            approved: A person decided about this very call through the framework (a
                resumed run): the approval interceptor gets ``Approve()`` for ``True`` and
                ``Deny()`` for ``False``.
        """
        context = context or ToolContext()
        snapshot = await self.core.snapshot()
        view = self.core.view(snapshot, context)
        names = await self._discovered(key, discovered, view)
        texts = self.core.texts(snapshot)
        call = ToolCall(
            id=call_id or f"call_{next(self._call_ids)}",
            name=name,
            arguments=arguments,  # type: ignore[arg-type]  # the manager reads a mapping too
        )
        checks: list[ToolCallInterceptor] = []
        if approved is not None:
            checks.append(decided(Approve() if approved else Deny()))
        outcome = await self.manager.run_call(
            call,
            [snapshot.tools[n] for n in names],
            context,
            interceptors=checks,
            unavailable=functools.partial(texts.unavailable_answer, shown=names),
        )
        if self.options.usage_log is not None:
            recorder = self._recorder(key, context)
            await recorder.record(self.options.usage_log, [(outcome.tool_name, outcome.status)])
        text = outcome.response.data
        if outcome.status is ToolCallStatus.PENDING_APPROVAL:
            text = PENDING_APPROVAL_TEXT.format(name=outcome.tool_name)
        return _result(outcome, text)

    def needs_approval(self, tool: Tool) -> bool:
        """Whether a call of ``tool`` waits for a person.

        It does when an approval interceptor of the manager asks about it and has no handler
        to decide.
        """
        return person_decides(self.manager, tool)

    # --- helpers ----------------------------------------------------------------------------

    def _recorder(self, key: str | None, context: ToolContext) -> UsageRecorder:
        scope = usage_scope(context, shared=self.options.shared_usage)
        caller = (scope, key, str(context.user_id or ""), str(context.session_id or ""))
        return self._recorders.of(caller, scope)

    async def _discovered(
        self, key: str | None, discovered: Sequence[str], view: CatalogView
    ) -> list[str]:
        if key is None:
            names: Sequence[str] = discovered
        else:
            # A conversation a client's tool search served first shows its pinned tools too.
            stored = await self.session_store.get(key)
            names = (*(stored.pinned or ()), *stored.names)
        return [name for name in dict.fromkeys(names) if view.permits(name)]


def _result(outcome: ToolCallOutcome, text: str) -> BridgeCallResult:
    return BridgeCallResult(
        text=text,
        status=outcome.status,
        tool=outcome.tool_name,
        is_error=outcome.response.is_error,
    )
