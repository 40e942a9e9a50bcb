"""``BridgeSearch``: progressive disclosure and guarded calls, for another framework's loop.

The framework runs its own agent loop; each bridge adapts three operations to it:

1. :meth:`BridgeSearch.search` answers the ``tool_search`` tool within what the caller may
   see (the ``tool_filter`` applied while ranking, as in every toolrelay search) and adds
   what it found to the conversation's entry in the :class:`~toolrelay.toolsearch.SessionStore`;
2. :meth:`BridgeSearch.shown` gives the tools the framework offers its model on the next
   step: the conversation's discovered tools the caller may see, in discovery order;
3. :meth:`BridgeSearch.call` runs one call through a
   :class:`~toolrelay.execution.ToolCallingManager` (its ``run_call``),
   after the same checks as the tool loop's: a name that is not shown (undiscovered,
   forbidden or unknown) gets the unavailable text and never runs, ``authorize`` is asked,
   then the manager's guards (audit, your interceptors, idempotency, approval) decide.

Discoveries accumulate for the conversation (the tool loop's ``retention="all"``): the
frameworks' loops keep their own history, and a tool found once stays callable.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from toolrelay.bridges._convert import decided, person_decides
from toolrelay.execution import (
    ApprovalHandler,
    ApprovalInterceptor,
    Approve,
    AuditInterceptor,
    AuditSink,
    AuthorizationInterceptor,
    Deny,
    IdempotencyInterceptor,
    IdempotencyStore,
    ToolCallingManager,
    ToolCallInterceptor,
    ToolCallOutcome,
    ToolCallStatus,
    match_tool_name,
)
from toolrelay.execution._manager import configured_manager
from toolrelay.messages import ToolCall
from toolrelay.search._base import DEFAULT_MAX_RESULTS, ToolIndex
from toolrelay.tools import Tool, ToolCatalog, ToolContext, ToolDefinition, as_tools
from toolrelay.toolsearch import _texts as search_texts
from toolrelay.toolsearch._access import Authorizer, CatalogSnapshot, CatalogView, ToolFilter
from toolrelay.toolsearch._search_tool import (
    DEFAULT_MIN_RELATIVE_SCORE,
    SearchRunner,
    ToolSearcher,
    check_search_options,
)
from toolrelay.toolsearch._sessions import InMemorySessionStore, SessionStore

__all__ = ["CATALOG_CHECK_SECONDS", "BridgeCallResult", "BridgeSearch", "conversation_key"]

CATALOG_CHECK_SECONDS = 1.0
"""How often, at most, a bridge looks whether a live catalog's tools changed.

A framework asks for its tools at every step, and comparing a catalog of thousands of tools
with the indexed one costs more than the rest of a step: a change shows within a second.
"""

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
    within :data:`CATALOG_CHECK_SECONDS`.

    Args:
        catalog: The searchable tools: a :class:`~toolrelay.tools.ToolCatalog` (read live)
            or anything :func:`~toolrelay.tools.as_tools` accepts.
        index: The search index; BM25 when omitted. Give each instance its own.
        session_store: Where discovered tools are kept per conversation; an
            :class:`~toolrelay.toolsearch.InMemorySessionStore` by default.
        tool_filter: Which tools a caller may see and find at all: a forbidden tool is never
            returned by a search, never shown and never run.
        authorize: Whether a call may run (``True``, or ``False``/a reason to deny it).
        tool_calling_manager: Runs the calls; by default one built from the guard options
            below (giving both is an error).
        approval: Decides about calls of tools that need approval: an async handler, or an
            :class:`~toolrelay.execution.ApprovalInterceptor` (``ApprovalInterceptor()``: the
            call waits for a person, through the framework's own way of pausing a run).
            Without it, a catalog with a tool that requires approval is refused at build.
        idempotency: Where results of tools with an idempotency key are recorded; in memory
            (per process) by default.
        audit: Where a record of every call goes.
        interceptors: Steps of your own around each call.
        max_results: Hits per search when the model does not say (1-10).
        min_score: Drop hits scoring below this, on the index's own scale.
        min_relative_score: Drop hits scoring below this fraction of the best hit's score.
        language: The language of what the model reads besides the catalog (``"auto"``,
            ``"en"``, ``"zh"`` or :class:`~toolrelay.toolsearch.SearchTexts`).

    Raises:
        ConfigurationError: ``max_results`` or ``min_relative_score`` is out of range, a
            manager is given with guard options, or a catalog tool requires approval and
            no approval is configured.
    """

    def __init__(
        self,
        catalog: ToolCatalog | Iterable[object],
        *,
        index: ToolIndex | None = None,
        session_store: SessionStore | None = None,
        tool_filter: ToolFilter | None = None,
        authorize: Authorizer | None = None,
        tool_calling_manager: ToolCallingManager | None = None,
        approval: ApprovalHandler | ApprovalInterceptor | None = None,
        idempotency: IdempotencyStore | IdempotencyInterceptor | None = None,
        audit: AuditSink | AuditInterceptor | None = None,
        interceptors: Sequence[ToolCallInterceptor] = (),
        max_results: int = DEFAULT_MAX_RESULTS,
        min_score: float | None = None,
        min_relative_score: float | None = DEFAULT_MIN_RELATIVE_SCORE,
        language: search_texts.SearchLanguage | search_texts.SearchTexts = "auto",
    ) -> None:
        check_search_options(max_results, min_relative_score)
        self.catalog = (
            catalog if isinstance(catalog, ToolCatalog) else ToolCatalog(as_tools(catalog))
        )
        if index is None:
            from toolrelay.search._factory import lexical_index

            index = lexical_index()
        self.index = index
        self._runner = SearchRunner(index)
        self.session_store = session_store if session_store is not None else InMemorySessionStore()
        self.tool_filter = tool_filter
        self.authorize = authorize
        self.manager = configured_manager(
            tool_calling_manager,
            owner="bridge",
            approval=approval,
            idempotency=idempotency,
            audit=audit,
            interceptors=interceptors,
        )
        self.manager.check_tools(self.catalog, owner=type(self).__name__)
        self.max_results = max_results
        self.min_score = min_score
        self.min_relative_score = min_relative_score
        self._texts = search_texts.SearchTextSelector(
            language,
            search_texts.FROM_LANGUAGE,
            search_texts.FROM_LANGUAGE,
            search_texts.FROM_LANGUAGE,
        )
        self._snapshot: CatalogSnapshot | None = None
        self._checked = 0.0  # when the catalog was last compared with the snapshot
        self._listed: tuple[search_texts.SearchTexts, Tool] | None = None
        self._call_ids = itertools.count(1)
        # Searches are validated and answered as calls, without the calls' interceptors: a
        # search changes nothing and is never approved, replayed or audited.
        self._searches = ToolCallingManager()

    async def snapshot(self) -> CatalogSnapshot:
        """The catalog as indexed now, re-indexed first when its tools changed.

        Raises:
            ConfigurationError: A tool is named ``tool_search``.
        """
        now = time.monotonic()
        if self._snapshot is not None and now - self._checked < CATALOG_CHECK_SECONDS:
            return self._snapshot
        tools = tuple(self.catalog)
        if self._snapshot is None or not self._snapshot.holds(tools):
            self._snapshot, _ = await CatalogSnapshot.indexed(tools, self.index, ())
        self._checked = time.monotonic()
        return self._snapshot

    def search_tool(self) -> Tool:
        """The ``tool_search`` tool as the model is shown it, in the catalog's language.

        Its definition is what a framework lists; its calls go through :meth:`search`.
        """
        texts = self._texts.for_catalog(self._snapshot_or_catalog())
        if self._listed is None or self._listed[0] is not texts:
            self._listed = (texts, self._search_tool(self._snapshot_or_catalog(), None))
        return self._listed[1]

    def texts(self) -> search_texts.SearchTexts:
        """What the model reads besides the catalog, in the catalog's language (as indexed)."""
        return self._texts.for_catalog(self._snapshot_or_catalog())

    async def search(
        self,
        arguments_json: str,
        *,
        key: str | None,
        context: ToolContext | None = None,
        discovered: Sequence[str] = (),
    ) -> BridgeCallResult:
        """Run ``tool_search`` with the model's arguments for the conversation ``key``.

        The tools it finds (:attr:`BridgeCallResult.found`) are added to the conversation's
        discoveries in the session store, shown from the next step on; with ``key=None`` the
        framework keeps them itself (``discovered``: what it has so far). Invalid arguments
        (a missing query, one too long) are answered as such.
        """
        context = context or ToolContext()
        snapshot = await self.snapshot()
        view = CatalogView(snapshot, context, self.tool_filter)
        shown = await self._discovered(key, discovered, view)
        searcher = ToolSearcher(
            index=self.index,
            allowed=view.allowed(),
            max_results=self.max_results,
            min_score=self.min_score,
            min_relative_score=self.min_relative_score,
            runner=self._runner,
        )
        searcher.shown = frozenset(shown)
        call_id = f"search_{next(self._call_ids)}"
        tool = self._search_tool(snapshot.definitions, searcher, call_id)
        call = ToolCall(id=call_id, name=tool.definition.name, arguments=arguments_json)
        outcome = await self._searches.run_call(call, (tool,), context)
        records = searcher.take_records([call_id])
        found = tuple(dict.fromkeys(name for record in records for name in record.names))
        if found and key is not None:
            await self.session_store.add(key, found)
        return dataclasses.replace(_result(outcome, outcome.response.data), found=found)

    async def shown(
        self,
        key: str | None,
        context: ToolContext | None = None,
        *,
        discovered: Sequence[str] = (),
    ) -> list[Tool]:
        """The discovered tools of conversation ``key`` the caller may see, in discovery order.

        With ``key=None``: those of ``discovered`` (names the framework kept itself).
        """
        snapshot = await self.snapshot()
        view = CatalogView(snapshot, context or ToolContext(), self.tool_filter)
        return [snapshot.tools[name] for name in await self._discovered(key, discovered, view)]

    async def resolve(
        self,
        name: str,
        *,
        key: str | None,
        context: ToolContext | None = None,
        discovered: Sequence[str] = (),
    ) -> Tool | None:
        """The shown tool a call of ``name`` (canonical or provider-safe) means, if any."""
        snapshot = await self.snapshot()
        view = CatalogView(snapshot, context or ToolContext(), self.tool_filter)
        matched = match_tool_name(name, await self._discovered(key, discovered, view))
        return None if matched is None else snapshot.tools[matched]

    async def call(
        self,
        name: str,
        arguments_json: str,
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
            arguments_json: The model's arguments, as JSON text.
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
        snapshot = await self.snapshot()
        view = CatalogView(snapshot, context, self.tool_filter)
        names = await self._discovered(key, discovered, view)
        matched = match_tool_name(name, names)
        if matched is None:
            text = self.texts().unavailable_answer(name, names)
            return BridgeCallResult(text=text, status=ToolCallStatus.DENIED, is_error=True)
        tool = snapshot.tools[matched]
        call = ToolCall(
            id=call_id or f"call_{next(self._call_ids)}", name=matched, arguments=arguments_json
        )
        checks: list[ToolCallInterceptor] = []
        if self.authorize is not None:
            checks.append(AuthorizationInterceptor(self.authorize))
        if approved is not None:
            checks.append(decided(Approve() if approved else Deny()))
        outcome = await self.manager.run_call(call, (tool,), context, interceptors=checks)
        text = outcome.response.data
        if outcome.status is ToolCallStatus.PENDING_APPROVAL:
            text = PENDING_APPROVAL_TEXT.format(name=matched)
        return _result(outcome, text)

    def needs_approval(self, tool: Tool) -> bool:
        """Whether a call of ``tool`` waits for a person.

        It does when an approval interceptor of the manager asks about it and has no handler
        to decide.
        """
        return person_decides(self.manager, tool)

    # --- helpers ----------------------------------------------------------------------------

    def _snapshot_or_catalog(self) -> Sequence[ToolDefinition]:
        snapshot = self._snapshot
        if snapshot is not None:
            return snapshot.definitions
        return [t.definition for t in self.catalog]

    def _search_tool(
        self,
        definitions: Sequence[ToolDefinition],
        searcher: ToolSearcher | None,
        call_id: str | None = None,
    ) -> Tool:
        texts = self._texts.for_catalog(definitions)
        if searcher is None:
            searcher = ToolSearcher(index=self.index, allowed=frozenset(), max_results=1)
        return searcher.as_tool(texts.description, parameters=texts.parameters, call_id=call_id)

    async def _discovered(
        self, key: str | None, discovered: Sequence[str], view: CatalogView
    ) -> list[str]:
        stored = discovered if key is None else (await self.session_store.get(key)).names
        return [name for name in dict.fromkeys(stored) if view.permits(name)]


def _result(outcome: ToolCallOutcome, text: str) -> BridgeCallResult:
    return BridgeCallResult(
        text=text,
        status=outcome.status,
        tool=outcome.tool_name,
        is_error=outcome.response.is_error,
    )
