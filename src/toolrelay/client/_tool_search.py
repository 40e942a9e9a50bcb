"""``ToolSearchAdvisor``: the tool loop with progressive tool disclosure.

The model is shown a ``tool_search`` tool (plus the request's own tools and any always-on
tools); the tools a search finds are shown in full from the next model call on::

    advisor = ToolSearchAdvisor(build_catalog(), always_on=["user.get"])
    client = ChatClient.builder(model).default_advisors(advisor).build()
    client.prompt(task).conversation("c1").call()

It subclasses :class:`~toolrelay.client.ToolCallingAdvisor` (same order, same loop), so a
client adds no default loop advisor next to it. Each turn:

1. reads the conversation key (the ``conversation_id`` advisor parameter by default, scoped
   by the tool context's tenant: :mod:`~toolrelay.client._conversations`);
2. re-indexes when the catalog's tools changed (the index itself rebuilds only on a new
   fingerprint; one index serves every conversation, each searching its own permitted view)
   and drops stored names of tools that left the catalog;
3. shows each model call, in a stable order that only ever grows (so provider prompt caches
   keep hitting): ``tool_search``, request tools, always-on tools, then discovered tools in
   discovery order;
4. answers each search with its best hits (none below ``min_relative_score`` times the best
   one's score), leaving out tools the model already sees in full unless one is the best;
5. after each tool round, adds what its searches found to the conversation's entry in the
   :class:`~toolrelay.toolsearch._sessions.SessionStore` (``last_search_only=True``: replaces it),
   so discoveries persist across turns.

The catalog given to the advisor is what ``tool_search`` searches; request tools
(``.tools(...)``, ``default_tools``) are never searched, only always shown. ``tool_filter``
hides tools from a request entirely (prompts and search results, even for an exact name);
``authorize`` is asked before each call runs. A call of a tool the model was not shown is
answered with the unavailable text and never runs; a forbidden or unknown name gets the
very same answer as an undiscovered one, so nothing reveals that a forbidden tool exists. A
name close to the names of tools the model sees (``get_wether`` beside ``get_weather``) is
answered with those names instead, so a misspelling costs no search; only shown names are
ever suggested.
Each turn's searches (queries, hits, scores, timings) and the tools shown per model call are
reported under :data:`~toolrelay.toolsearch.TOOL_SEARCH_KEY` (:func:`tool_search_report`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolrelay.client._advisor import TOOL_CALLING_ADVISOR_ORDER
from toolrelay.client._conversations import scoped_key
from toolrelay.client._requests import ChatClientRequest, ChatClientResponse
from toolrelay.client._responses import CallResponse
from toolrelay.client._tool_calling import (
    DEFAULT_MAX_MODEL_CALLS,
    EligibilityChecker,
    ToolCallingAdvisor,
    has_tool_calls,
)
from toolrelay.client._tool_loop import ToolLoopState
from toolrelay.exceptions import ConfigurationError, ToolCallLimitError
from toolrelay.execution import (
    AuthorizationInterceptor,
    ToolCallingManager,
    ToolExecutionResult,
    match_tool_name,
)
from toolrelay.execution._guards import ToolCallGuard
from toolrelay.memory import CONVERSATION_ID
from toolrelay.prompt import Prompt
from toolrelay.search._base import DEFAULT_MAX_RESULTS, ToolIndex
from toolrelay.tools import Tool, ToolCatalog, ToolContext, as_tools
from toolrelay.toolsearch import _texts as search_texts
from toolrelay.toolsearch._access import (
    Authorizer,
    CatalogSnapshot,
    CatalogView,
    HiddenTool,
    ToolFilter,
    calls_to_run,
    visibility_interceptor,
)
from toolrelay.toolsearch._search_tool import (
    DEFAULT_MIN_RELATIVE_SCORE,
    TOOL_SEARCH_KEY,
    TOOL_SEARCH_NAME,
    ToolSearcher,
    ToolSearchReport,
    ToolSearchRound,
    check_search_options,
    with_system_suffix,
)
from toolrelay.toolsearch._sessions import InMemorySessionStore, SessionStore

__all__ = ["ConversationKey", "ToolSearchAdvisor", "tool_search_report"]

ConversationKey = str | Callable[[ChatClientRequest], object]
"""An advisor parameter's name, or a function of the request returning the key."""

_TURN = "toolrelay.tool_search.turn"


class ToolSearchAdvisor(ToolCallingAdvisor):
    """The tool loop with progressive tool disclosure (see the module docs).

    Args:
        catalog: The searchable tools: a :class:`~toolrelay.tools.ToolCatalog` (read live)
            or anything :func:`~toolrelay.tools.as_tools` accepts.
        index: The search index; by default the search package's ``default_index()`` (hybrid
            BM25 + embeddings when installed, else BM25). Give each advisor its own: an index
            holds one catalog.
        session_store: Where discovered tools are kept between turns; an
            :class:`~toolrelay.toolsearch._sessions.InMemorySessionStore` by default.
        always_on: Names of catalog tools shown from the first model call on.
        conversation_key: The advisor parameter naming the conversation (default
            ``"conversation_id"``, as set by ``.conversation(...)``), or a function of the
            request, e.g. ``lambda r: r.prompt.options.tool_context.get("tenant_id")``.
        tool_filter: Which tools a request may see and find (see the module docs).
        authorize: Whether a call may run (see the module docs); not asked for
            ``tool_search``.
        last_search_only: Keep only what the last round of searches found (every search of
            that round) instead of accumulating.
        max_results: Hits per search when the model does not say (1-10).
        min_score: Drop hits scoring below this, on the index's own scale.
        min_relative_score: Drop hits scoring below this fraction of the best hit's score
            (0-1; ``None`` keeps them). At the default 0.5 answers in a 28-tool catalog
            shrink from 5 hits to 1-2, for at most 1.0 point of Complete@5 on BFCL,
            StableToolBench and RestBench with the hybrid index (2.3 with BM25); figures in
            :data:`~toolrelay.toolsearch._search_tool.DEFAULT_MIN_RELATIVE_SCORE`.
        language: The texts' language: ``"auto"`` (the catalog's, decided again when it
            changes), ``"en"``, ``"zh"``, or a :class:`~toolrelay.toolsearch._texts.SearchTexts`.
        search_description, system_suffix, unavailable_message: Replace the language's texts
            (:class:`~toolrelay.toolsearch._texts.SearchTexts`); a ``None`` suffix: none.
        guards: Deprecated: guards for every call, after the visibility and authorize checks
            (with a :class:`DeprecationWarning`); give the manager interceptors instead.
        tool_calling_manager, order, eligibility_checker, max_model_calls,
            conversation_history, name: As for :class:`~toolrelay.client.ToolCallingAdvisor`;
            only tools shown to the model can run, whatever the manager's resolver knows.

    Raises:
        ConfigurationError: An option is out of range. Per turn: the conversation key is
            missing, an always-on name is not in the catalog, or another tool is called
            ``tool_search``.
    """

    def __init__(
        self,
        catalog: ToolCatalog | Iterable[object],
        *,
        index: ToolIndex | None = None,
        session_store: SessionStore | None = None,
        always_on: Sequence[str] = (),
        conversation_key: ConversationKey = CONVERSATION_ID,
        tool_filter: ToolFilter | None = None,
        authorize: Authorizer | None = None,
        last_search_only: bool = False,
        max_results: int = DEFAULT_MAX_RESULTS,
        min_score: float | None = None,
        min_relative_score: float | None = DEFAULT_MIN_RELATIVE_SCORE,
        language: search_texts.SearchLanguage | search_texts.SearchTexts = "auto",
        search_description: str | search_texts.FromLanguage = search_texts.FROM_LANGUAGE,
        system_suffix: str | search_texts.FromLanguage | None = search_texts.FROM_LANGUAGE,
        unavailable_message: str | search_texts.FromLanguage = search_texts.FROM_LANGUAGE,
        tool_calling_manager: ToolCallingManager | None = None,
        order: int = TOOL_CALLING_ADVISOR_ORDER,
        eligibility_checker: EligibilityChecker = has_tool_calls,
        max_model_calls: int = DEFAULT_MAX_MODEL_CALLS,
        conversation_history: bool | None = None,
        guards: Sequence[ToolCallGuard] = (),
        name: str = "tool_search",
    ) -> None:
        super().__init__(
            tool_calling_manager=tool_calling_manager,
            order=order,
            eligibility_checker=eligibility_checker,
            max_model_calls=max_model_calls,
            conversation_history=conversation_history,
            guards=guards,
            name=name,
        )
        check_search_options(max_results, min_relative_score)
        self.catalog = (
            catalog if isinstance(catalog, ToolCatalog) else ToolCatalog(as_tools(catalog))
        )
        if index is None:
            # Imported here: indexes need numpy and more, which plain clients do not.
            from toolrelay.search._factory import default_index

            index = default_index()
        self.index = index
        self.session_store = session_store if session_store is not None else InMemorySessionStore()
        self.always_on = tuple(always_on)
        self.conversation_key = conversation_key
        self.tool_filter = tool_filter
        self.authorize = authorize
        self.last_search_only = last_search_only
        self.max_results = max_results
        self.min_score = min_score
        self.min_relative_score = min_relative_score
        self.texts = search_texts.SearchTextSelector(
            language, search_description, system_suffix, unavailable_message
        )
        self._snapshot: CatalogSnapshot | None = None

    # --- hooks ----------------------------------------------------------------------------

    async def init_loop(
        self, request: ChatClientRequest, state: ToolLoopState
    ) -> ChatClientRequest:
        """Read the conversation's discovered tools and fix the tools every call shows."""
        key = self.conversation_key_of(request)
        snapshot, reindexed = await self._current_catalog()
        request = self._with_named_tools(request)
        options = request.prompt.options
        view = CatalogView(snapshot, ToolContext(options.tool_context), self.tool_filter)
        searcher = ToolSearcher(
            index=self.index,
            allowed=view.allowed(),
            max_results=self.max_results,
            min_score=self.min_score,
            min_relative_score=self.min_relative_score,
        )
        texts = self.texts.for_catalog(snapshot.definitions)
        search_tool = searcher.as_tool(texts.description, parameters=texts.parameters)
        fixed = view.fixed_tools(search_tool, options.tools, self.always_on, owner=self.name)
        state.data[_TURN] = _Turn(
            key=key,
            snapshot=snapshot,
            reindexed=reindexed,
            view=view,
            searcher=searcher,
            search_tool=search_tool,
            fixed=fixed,
            texts=texts,
            discovered=await self._stored_names(key, snapshot),
        )
        return request.with_options(options.replace(tools=fixed, tool_names=()))

    async def before_call(
        self, request: ChatClientRequest, state: ToolLoopState
    ) -> ChatClientRequest:
        """Show the fixed tools plus the discovered ones, and add the system suffix."""
        turn = _turn_of(state)
        tools = turn.view.shown_tools(turn.fixed, turn.discovered)
        names = tuple(t.definition.name for t in tools)
        # The round's search answers leave out what the model sees in full (but the best hit).
        turn.searcher.shown = frozenset(names)
        turn.rounds.append(ToolSearchRound(model_call=state.model_calls + 1, exposed=names))
        prompt = Prompt(
            messages=with_system_suffix(request.prompt.messages, turn.texts.system_suffix),
            options=request.prompt.options.replace(tools=tuple(tools)),
        )
        return request.with_prompt(prompt)

    async def execute_tools(
        self, request: ChatClientRequest, response: ChatClientResponse, state: ToolLoopState
    ) -> ToolExecutionResult:
        """Run the round; calls of tools the model was not shown are answered, never run.

        Each such call gets a stand-in tool, so the manager still answers every call in
        order and counts it against the limits, and the visibility interceptor denies it with the
        unavailable text, or, for a name close to names of shown tools (a misspelling), with
        those names (a name is never resolved anywhere else and only shown names are ever
        suggested, so nothing about other tools leaks into the answer).
        """
        turn = _turn_of(state)
        exposed = request.prompt.options.tools
        names = [t.definition.name for t in exposed]
        hidden: dict[str, Tool] = {}
        for call in calls_to_run(response.chat_response):
            if call.name not in hidden and match_tool_name(call.name, names) is None:
                text = turn.texts.unavailable_answer(call.name, names)
                hidden[call.name] = HiddenTool(call.name, text)
        checks = [visibility_interceptor(exposed, turn.texts.unavailable_message)]
        if self.authorize is not None:
            checks.append(AuthorizationInterceptor(self.authorize, exempt=[turn.search_tool]))
        prompt = Prompt(
            messages=tuple(state.history),
            options=request.prompt.options.replace(tools=(*exposed, *hidden.values())),
        )
        try:
            result = await self.tool_calling_manager.execute_tool_calls(
                prompt,
                response.chat_response,
                interceptors=(*checks, *self.round_interceptors),
                resumed=state.resumed,
            )
        except ToolCallLimitError as exc:
            if isinstance(exc.partial, ToolExecutionResult):
                await self._record_round(turn, exc.partial, hidden)
            raise
        await self._record_round(turn, result, hidden)
        return result

    async def finalize_loop(
        self, response: ChatClientResponse, state: ToolLoopState
    ) -> ChatClientResponse:
        """Leave the turn's :class:`ToolSearchReport` in the response context."""
        turn = _turn_of(state)
        report = ToolSearchReport(
            conversation_key=turn.key,
            catalog_fingerprint=turn.snapshot.fingerprint,
            reindexed=turn.reindexed,
            rounds=tuple(turn.rounds),
            discovered=turn.discovered,
        )
        return response.with_context(**{TOOL_SEARCH_KEY: report})

    # --- parts ----------------------------------------------------------------------------

    def conversation_key_of(self, request: ChatClientRequest) -> str:
        """The key the conversation's discovered tools are stored under.

        The conversation (the advisor parameter, or what the ``conversation_key`` function
        returns) scoped by :func:`~toolrelay.client._conversations.scoped_key`: by the
        tool context's tenant unless the client chose another scope.

        Raises:
            ConfigurationError: The request names no conversation.
        """
        source = self.conversation_key
        value = request.context.get(source) if isinstance(source, str) else source(request)
        if value is not None and value != "":
            return scoped_key(request, str(value))
        if not isinstance(source, str):
            raise ConfigurationError(f"{self.name}: the conversation_key function gave no key")
        raise ConfigurationError(
            f"{self.name}: missing advisor parameter {source!r}, which keys each conversation's "
            f'discovered tools; pass it with .advisor_params({source}="...") (.conversation() '
            f"sets {CONVERSATION_ID!r}) or choose another key with conversation_key="
        )

    async def _current_catalog(self) -> tuple[CatalogSnapshot, bool]:
        """The catalog as indexed, re-indexed first when its tools changed."""
        tools = tuple(self.catalog)
        if self._snapshot is not None and self._snapshot.holds(tools):
            return self._snapshot, False
        snapshot, rebuilt = await CatalogSnapshot.indexed(tools, self.index, self.always_on)
        self._snapshot = snapshot
        return snapshot, rebuilt

    async def _stored_names(self, key: str, snapshot: CatalogSnapshot) -> tuple[str, ...]:
        """The conversation's discovered names, without tools that left the catalog."""
        stored = await self.session_store.get(key)
        kept = tuple(n for n in stored if n in snapshot.tools)
        if len(kept) != len(stored):
            await self.session_store.replace(key, kept)
        return kept

    async def _record_round(
        self, turn: _Turn, result: ToolExecutionResult, hidden: Mapping[str, Tool]
    ) -> None:
        """Store what the round's searches found and note the round in the report."""
        answers = [
            o.response.data for o in result.outcomes if o.ok and o.tool_name == TOOL_SEARCH_NAME
        ]
        searches = turn.searcher.take_records(answers)
        turn.rounds[-1] = dataclasses.replace(
            turn.rounds[-1],
            searches=searches,
            unavailable=tuple(o.call.name for o in result.outcomes if o.call.name in hidden),
        )
        found = [name for search in searches for name in search.names]
        if self.last_search_only:
            # The last round that searched replaces what earlier rounds found; the searches
            # of one round (a model may send several at once) all count.
            if searches:
                names = tuple(dict.fromkeys(found))
                await self.session_store.replace(turn.key, names)
                turn.discovered = names
            return
        if found:
            turn.discovered = await self.session_store.add(turn.key, found)


# --- helpers -------------------------------------------------------------------------------


@dataclass(kw_only=True)
class _Turn:
    """Per-turn data of the advisor (kept in ``ToolLoopState.data``)."""

    key: str
    snapshot: CatalogSnapshot
    reindexed: bool
    view: CatalogView
    searcher: ToolSearcher
    search_tool: Tool
    fixed: tuple[Tool, ...]
    texts: search_texts.SearchTexts
    discovered: tuple[str, ...]
    rounds: list[ToolSearchRound] = field(default_factory=list)


def _turn_of(state: ToolLoopState) -> _Turn:
    turn = state.data[_TURN]
    assert isinstance(turn, _Turn)  # init_loop always puts it there
    return turn


def tool_search_report(response: ChatClientResponse | CallResponse) -> ToolSearchReport | None:
    """The tool search advisor's report in ``response``'s context, or ``None``."""
    context: Mapping[str, Any] = response.context
    report = context.get(TOOL_SEARCH_KEY)
    return report if isinstance(report, ToolSearchReport) else None
