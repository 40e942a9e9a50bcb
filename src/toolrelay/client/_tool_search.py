"""``ToolSearchAdvisor``: the tool loop with progressive tool disclosure.

The model is shown a ``tool_search`` tool (plus the request's own tools and any always-on
tools); the tools a search finds are shown in full from the next model call on::

    advisor = ToolSearchAdvisor(build_catalog(), always_on=["user.get"])
    client = ChatClient.builder(model).default_advisors(advisor).build()
    client.prompt(task).conversation("c1").call()

It is the :class:`~toolrelay.client.ToolCallingAdvisor` loop (same order, same options) over
the searching provider, :class:`ToolSearch`, so a client adds no default loop advisor next to
it, and any loop (a subclass of your own, say) gets tool search with
``ToolCallingAdvisor(tool_provider=ToolSearch(catalog))``. Each turn:

1. reads the conversation key (the ``conversation_id`` advisor parameter by default, scoped
   by the tool context's tenant: :mod:`~toolrelay.client._conversations`);
2. re-indexes when the catalog's tools changed (the index itself rebuilds only on a new
   fingerprint; one index serves every conversation, each searching its own permitted view)
   and drops stored names of tools that left the catalog;
3. shows each model call, in a stable order (so provider prompt caches keep hitting):
   ``tool_search``, request tools, always-on tools, then discovered tools in discovery order;
4. answers each search with its best hits (none below ``min_relative_score`` times the best
   one's score), leaving out tools the model already sees in full unless one is the best (in
   the proxy channel: tools whose unchanged definition an earlier answer in the request's
   history gave, as the loop holds it; the best of them is named only, so no definition is
   sent twice, while one the history no longer holds, such as an earlier turn's that memory
   inside the loop replays or that memory did not keep, comes whole again);
5. after each tool round, adds what its searches found to the conversation's entry in the
   :class:`~toolrelay.toolsearch._sessions.SessionStore`, so discoveries persist across turns;
   by default (``retention="used"``) the found tools the model passed over are retired,
   keeping those it called (``"used"``, ``"all"`` or ``"last_search"``);
6. with a ``usage_log``, ranks every search with the history of the tenant (or, with
   ``shared_usage=True``, of everyone), and after each round records each tool a search of
   the turn found that the model then called successfully, with the query that found it
   (a failing, denied or unsearched call is never recorded).

The catalog given to the advisor is what ``tool_search`` searches; request tools
(``.tools(...)``, ``default_tools``) are never searched, only always shown. ``tool_filter``
hides tools from a request entirely (prompts and search results, even for an exact name);
the client's ``authorize`` is asked before each call runs (never about ``tool_search``), and
its approval, idempotency and audit hold for found tools as for tools shown whole. A call of
a tool the model was not shown is answered with the unavailable text and never runs; a
forbidden or unknown name gets the very same answer as an undiscovered one, so nothing
reveals that a forbidden tool exists. A name close to the names of tools the model sees
(``get_wether`` beside ``get_weather``) is answered with those names instead, so a
misspelling costs no search; only shown names are ever suggested. Each turn's searches
(queries, hits, scores, timings) and the tools shown per model call are reported as the
response's ``tool_search`` (a :class:`~toolrelay.toolsearch.ToolSearchReport`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

from toolrelay.client._advisor import TOOL_CALLING_ADVISOR_ORDER
from toolrelay.client._conversations import scoped_key
from toolrelay.client._requests import ChatClientRequest, ChatClientResponse
from toolrelay.client._tool_calling import (
    DEFAULT_MAX_MODEL_CALLS,
    EligibilityChecker,
    ToolCallingAdvisor,
    has_tool_calls,
)
from toolrelay.client._tool_provider import RoundTools, TurnTools
from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import (
    Proceed,
    ToolCallingManager,
    ToolCallOutcome,
    ToolExecutionResult,
    ToolInvocation,
    answer,
    match_tool_name,
)
from toolrelay.execution._pipeline import META_TOOL, ContextNeeds
from toolrelay.memory import CONVERSATION_ID
from toolrelay.messages import ChatResponse, Message, ToolCall
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.search._base import DEFAULT_MAX_RESULTS, ToolIndex
from toolrelay.search._usage import UsageLog
from toolrelay.tools import FunctionTool, Tool, ToolCatalog, ToolContext, ToolMetadata, as_tools
from toolrelay.toolsearch import _texts as search_texts
from toolrelay.toolsearch._access import (
    CatalogSnapshot,
    CatalogView,
    HiddenTool,
    ToolFilter,
    calls_to_run,
    visibility_interceptor,
)
from toolrelay.toolsearch._learning import (
    UsageRecorder,
    check_usage_options,
    read_history,
    usage_scope,
)
from toolrelay.toolsearch._proxy import CallArguments, call_tool, resolve_called, unwrapped_call
from toolrelay.toolsearch._search_tool import (
    CALL_TOOL_NAME,
    DEFAULT_MIN_RELATIVE_SCORE,
    TOOL_SEARCH_NAME,
    SearchRunner,
    ToolSearcher,
    ToolSearchReport,
    ToolSearchRound,
    check_search_options,
    defined_in,
    with_system_suffix,
)
from toolrelay.toolsearch._sessions import (
    Discoveries,
    InMemorySessionStore,
    Retention,
    SessionStore,
)

__all__ = ["Channel", "ConversationKey", "ToolSearch", "ToolSearchAdvisor"]

ConversationKey = str | Callable[[ChatClientRequest], object]
"""An advisor parameter's name, or a function of the request returning the key."""

Channel = Literal["rewrite", "proxy"]
"""How found tools reach the model (the ``channel`` option).

- ``"rewrite"``: each model call's tool list shows the tools found so far, in full (the
  provider enforces their schemas; the list, which starts a request's cached prefix, changes
  with each discovery).
- ``"proxy"``: the tool list never changes: the request's own and always-on tools, then
  ``tool_search``, whose answers carry the found tools' definitions, and ``call_tool(name,
  arguments)``, which runs a found tool through the same round as any call (its arguments
  validated against that tool's schema, the guards, limits and permissions seeing that tool).
  The prompt cache's prefix survives every discovery.
"""


class ToolSearch:
    """The searching tool provider: progressive tool disclosure for any tool loop.

    Args:
        catalog: The searchable tools: a :class:`~toolrelay.tools.ToolCatalog` (read live)
            or anything :func:`~toolrelay.tools.as_tools` accepts.
        index: The search index; by default the search package's ``default_index()`` (hybrid
            BM25 + embeddings when installed, else BM25). Give each provider its own: an
            index holds one catalog.
        session_store: Where discovered tools are kept between turns; an
            :class:`~toolrelay.toolsearch.InMemorySessionStore` by default.
        always_on: Names of catalog tools shown from the first model call on.
        conversation_key: The advisor parameter naming the conversation (default
            ``"conversation_id"``, as set by ``.conversation(...)``), or a function of the
            request, e.g. ``lambda r: r.prompt.options.tool_context.get("tenant_id")``.
        tool_filter: Which tools a request may see and find (see the module docs).
        retention: Which discovered tools stay shown (``"used"``, ``"all"`` or ``"last_search"``):
            ``"used"`` (default) keeps the tools the model called and retires those it
            passed over: a lone search's other hits once it called one of them, the rest at
            its next search; ``"all"`` keeps every tool found (the
            list only grows, so a provider's prompt cache covers every earlier tool);
            ``"last_search"`` shows only what the last round of searches found. What each
            costs in tokens on three tasks: ``docs/benchmarks.md``.
        max_results: Hits per search when the model does not say (1-10).
        min_score: Drop hits scoring below this, on the index's own scale.
        min_relative_score: Drop hits scoring below this fraction of the best hit's score
            (0-1; ``None`` keeps them). At the default 0.5 answers in a 28-tool catalog
            shrink from 5 hits to 1-2, for at most 1.0 point of Complete@5 on BFCL,
            StableToolBench and RestBench with the hybrid index (2.3 with BM25); figures in
            :data:`~toolrelay.toolsearch.DEFAULT_MIN_RELATIVE_SCORE`.
        language: The texts' language: ``"auto"`` (the catalog's, decided again when it
            changes), ``"en"``, ``"zh"``, or a :class:`~toolrelay.toolsearch.SearchTexts`.
        search_description, system_suffix, unavailable_message: Replace the language's texts
            (:class:`~toolrelay.toolsearch.SearchTexts`); a ``None`` suffix: none.
        usage_log: Where past searches that led to successful calls are kept
            (:class:`~toolrelay.search.UsageLog`); searches rank with them. ``None``: no
            history is kept or used.
        shared_usage: One history for every tenant instead of one per tenant (the tool
            context's ``tenant_id``); only for tenants that may learn from each other.
        channel: How found tools reach the model: ``"rewrite"`` (default) or ``"proxy"``
            (see :data:`Channel`).

    Raises:
        ConfigurationError: An option is out of range (``channel`` among them), or the usage
            options cannot be honoured (``shared_usage`` without a log; a log with an index
            that does not rank with history, such as the PostgreSQL one). Per turn: the
            conversation key is missing, an always-on name is not in the catalog, or another
            tool is called ``tool_search`` (or, in the proxy channel, ``call_tool``).
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
        retention: Retention = "used",
        max_results: int = DEFAULT_MAX_RESULTS,
        min_score: float | None = None,
        min_relative_score: float | None = DEFAULT_MIN_RELATIVE_SCORE,
        language: search_texts.SearchLanguage | search_texts.SearchTexts = "auto",
        search_description: str | search_texts.FromLanguage = search_texts.FROM_LANGUAGE,
        system_suffix: str | search_texts.FromLanguage | None = search_texts.FROM_LANGUAGE,
        unavailable_message: str | search_texts.FromLanguage = search_texts.FROM_LANGUAGE,
        usage_log: UsageLog | None = None,
        shared_usage: bool = False,
        channel: Channel = "rewrite",
    ) -> None:
        check_search_options(max_results, min_relative_score)
        if channel not in get_args(Channel):
            raise ConfigurationError(f"channel must be 'rewrite' or 'proxy', not {channel!r}")
        if retention not in get_args(Retention):
            raise ConfigurationError(
                f"retention must be 'used', 'all' or 'last_search', not {retention!r}"
            )
        self.channel: Channel = channel
        self.usage_log = usage_log
        self.shared_usage = shared_usage
        self.catalog = (
            catalog if isinstance(catalog, ToolCatalog) else ToolCatalog(as_tools(catalog))
        )
        if index is None:
            # Imported here: indexes need numpy and more, which plain clients do not.
            from toolrelay.search._factory import default_index

            index = default_index()
        check_usage_options(index, usage_log, shared_usage)
        self.index = index
        self._runner = SearchRunner(index)
        self.session_store = session_store if session_store is not None else InMemorySessionStore()
        self.always_on = tuple(always_on)
        self.conversation_key = conversation_key
        self.tool_filter = tool_filter
        self.retention: Retention = retention
        self.max_results = max_results
        self.min_score = min_score
        self.min_relative_score = min_relative_score
        self.texts = search_texts.SearchTextSelector(
            language, search_description, system_suffix, unavailable_message
        )
        # The catalog as last indexed: shared by every conversation, like the index.
        self._snapshot: CatalogSnapshot | None = None
        self._needs: tuple[CatalogSnapshot, ContextNeeds] | None = None

    async def open(self, request: ChatClientRequest, *, owner: str) -> TurnTools:
        """Read the conversation's discovered tools and fix the tools every call shows."""
        key = self.conversation_key_of(request, owner=owner)
        snapshot, reindexed = await self._current_catalog()
        options = request.prompt.options
        context = ToolContext(options.tool_context)
        # A found tool must be able to run: what the catalog needs of the context is
        # checked before the first model call, not when the model calls the tool.
        if self._needs is None or self._needs[0] is not snapshot:
            self._needs = (snapshot, ContextNeeds(snapshot.members))
        self._needs[1].check(context)
        view = CatalogView(snapshot, context, self.tool_filter)
        scope = usage_scope(context, shared=self.shared_usage)
        history = await read_history(self.usage_log, scope)
        proxy = self.channel == "proxy"
        searcher = ToolSearcher(
            index=self.index,
            allowed=view.allowed(),
            max_results=self.max_results,
            min_score=self.min_score,
            min_relative_score=self.min_relative_score,
            history=history,
            runner=self._runner,
            definitions=snapshot.definitions_by_name if proxy else None,
        )
        texts = self.texts.for_catalog(snapshot.definitions)
        description = texts.proxy_description if proxy else texts.description
        search_tool = searcher.as_tool(description, parameters=texts.parameters)
        fixed = view.fixed_tools(search_tool, options.tools, self.always_on, owner=owner)
        if proxy:
            fixed = _proxy_tools(fixed, texts, owner=owner)
        return _SearchTurn(
            provider=self,
            key=key,
            snapshot=snapshot,
            reindexed=reindexed,
            view=view,
            searcher=searcher,
            search_tool=search_tool,
            fixed=fixed,
            texts=texts,
            discoveries=await self._stored(key, snapshot),
            usage=UsageRecorder(scope=scope),
        )

    def conversation_key_of(self, request: ChatClientRequest, *, owner: str = "tool_search") -> str:
        """The key the conversation's discovered tools are stored under.

        The conversation (the advisor parameter, or what the ``conversation_key`` function
        returns) scoped by :func:`~toolrelay.client.scoped_key`: by the tool context's
        tenant unless the client chose another scope.

        Raises:
            ConfigurationError: The request names no conversation.
        """
        source = self.conversation_key
        value = request.context.get(source) if isinstance(source, str) else source(request)
        if value is not None and value != "":
            return scoped_key(request, str(value))
        if not isinstance(source, str):
            raise ConfigurationError(f"{owner}: the conversation_key function gave no key")
        raise ConfigurationError(
            f"{owner}: missing advisor parameter {source!r}, which keys each conversation's "
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

    async def _stored(self, key: str, snapshot: CatalogSnapshot) -> Discoveries:
        """The conversation's discoveries, without tools that left the catalog."""
        stored = await self.session_store.get(key)
        kept = tuple(n for n in stored.names if n in snapshot.tools)
        if len(kept) != len(stored.names):
            await self.session_store.replace(key, kept)
        used = stored.used if self.retention == "used" else frozenset()
        # Each turn gives the model a round of calls before a search retires what it found.
        return Discoveries(names=kept, used=used, fresh=frozenset(kept))


def unwrapped_name(call: ToolCall) -> str:
    """The name a ``call_tool`` call gives (its own name when it gives none)."""
    inner = unwrapped_call(call)
    return call.name if inner is None else inner.name


def _proxy_tools(
    fixed: tuple[Tool, ...], texts: search_texts.SearchTexts, *, owner: str
) -> tuple[Tool, ...]:
    """The proxy channel's fixed list: the request's and always-on tools, then the pair.

    Raises:
        ConfigurationError: One of those tools is named ``call_tool``.
    """
    search, *others = fixed
    if any(t.definition.name == CALL_TOOL_NAME for t in others):
        raise ConfigurationError(
            f"{owner}: a request or always-on tool is named {CALL_TOOL_NAME!r}, the name of "
            "the proxy channel's tool that runs found tools; rename it"
        )
    parameters = tuple(sorted(texts.call_parameters.items()))
    return (*others, search, _call_tool_tool(texts.call_description, parameters))


@functools.lru_cache(maxsize=64)
def _call_tool_tool(description: str, parameters: tuple[tuple[str, str], ...]) -> FunctionTool:
    # Built once per texts: a turn asks for it, and tools are immutable.
    return call_tool(
        _call_tool,
        description,
        dict(parameters),
        # The library's own tool: the manager never asks ``authorize`` about it (the tool a
        # call of it names is what is asked about).
        metadata=ToolMetadata(extra={META_TOOL: True}),
    )


async def _call_tool(name: str, arguments: CallArguments = {}) -> str:  # noqa: B006
    """Run a tool found with tool_search.

    (Never runs: each round runs the call of the named tool instead, or answers it as
    unavailable.)

    Args:
        name: The tool's exact name, as tool_search returned it.
        arguments: The tool's arguments, following its input_schema.
    """
    return search_texts.ENGLISH.unavailable_answer(name, ())


@dataclass(kw_only=True)
class _SearchTurn:
    """One turn of :class:`ToolSearch`: what it shows, what it found, what it reports."""

    provider: ToolSearch
    key: str
    snapshot: CatalogSnapshot
    reindexed: bool
    view: CatalogView
    searcher: ToolSearcher
    search_tool: Tool
    fixed: tuple[Tool, ...]
    texts: search_texts.SearchTexts
    discoveries: Discoveries
    usage: UsageRecorder
    rounds: list[ToolSearchRound] = field(default_factory=list)
    hidden: Mapping[str, Tool] = field(default_factory=dict)
    refused: Mapping[str, str] = field(default_factory=dict)
    _shown: tuple[tuple[str, ...], tuple[Tool, ...], tuple[str, ...]] | None = None
    _options: tuple[ChatOptions, tuple[Tool, ...], ChatOptions] | None = None
    _scanned: tuple[int, Message, Mapping[str, str]] | None = None

    def prepare(self, request: ChatClientRequest, *, model_call: int) -> ChatClientRequest:
        """Show the fixed tools plus the discovered ones, and add the system suffix."""
        discovered = self.discoveries.names
        if self._shown is None or self._shown[0] is not discovered:
            # Most rounds find nothing new: the list is worked out again only when it changed.
            # In the proxy channel it never changes: found tools run through call_tool.
            tools = (
                self.fixed
                if self.provider.channel == "proxy"
                else tuple(self.view.shown_tools(self.fixed, discovered))
            )
            names = tuple(t.definition.name for t in tools)
            self._shown = (discovered, tools, names)
            # The round's search answers leave out what the model sees in full (but the best).
            self.searcher.shown = frozenset(names)
        _, tools, names = self._shown
        if self.provider.channel == "proxy":
            self.searcher.defined = self._defined_in(request.prompt.messages)
        self.rounds.append(ToolSearchRound(model_call=model_call, exposed=names))
        options = request.prompt.options
        # The loop passes the same options on every call: replaced once per list of tools.
        if (
            self._options is None
            or self._options[0] is not options
            or self._options[1] is not tools
        ):
            self._options = (options, tools, options.replace(tools=tools))
        suffix = (
            self.texts.proxy_system_suffix
            if self.provider.channel == "proxy"
            else self.texts.system_suffix
        )
        prompt = Prompt(
            messages=with_system_suffix(request.prompt.messages, suffix),
            options=self._options[2],
        )
        return request.with_prompt(prompt)

    def _defined_in(self, messages: Sequence[Message]) -> Mapping[str, str]:
        """The definitions earlier answers in ``messages`` gave (see ``defined_in``).

        Only the model's own history counts, as sent: earlier turns only as far as memory
        replays them. Each model call of a turn sends the previous one's messages and more,
        so only the new ones are read.
        """
        scanned = self._scanned
        if scanned is not None:
            count, last, defined = scanned
            if len(messages) >= count and messages[count - 1] is last:
                if len(messages) > count:
                    defined = defined_in(messages[count:], defined)
                    self._scanned = (len(messages), messages[-1], defined)
                return defined
        defined = defined_in(messages)
        self._scanned = (len(messages), messages[-1], defined) if messages else None
        return defined

    def round(self, request: ChatClientRequest, response: ChatResponse) -> RoundTools:
        """The shown tools; calls of tools the model was not shown are answered, never run.

        Each such call gets a stand-in tool, so the manager still answers every call in
        order and counts it against the limits, and the visibility interceptor denies it with the
        unavailable text, or, for a name close to names of shown tools (a misspelling), with
        those names (a name is never resolved anywhere else and only shown names are ever
        suggested, so nothing about other tools leaks into the answer). Each search runs
        bound to its call, so the report keeps every search by the call that made it.
        """
        if self.provider.channel == "proxy":
            return self._proxy_round(request, response)
        exposed = request.prompt.options.tools
        names = [t.definition.name for t in exposed]
        hidden: dict[str, Tool] = {}
        for call in calls_to_run(response):
            if call.name not in hidden and match_tool_name(call.name, names) is None:
                text = self.texts.unavailable_answer(call.name, names)
                hidden[call.name] = HiddenTool(call.name, text)
        self.hidden = hidden
        return RoundTools(
            tools=(*exposed, *hidden.values()),
            interceptors=(
                visibility_interceptor(exposed, self.texts.unavailable_message),
                self._bind_search,
            ),
        )

    def _proxy_round(self, request: ChatClientRequest, response: ChatResponse) -> RoundTools:
        """The proxy channel's round: each ``call_tool`` call runs as a call of its tool.

        The tools the model may call are the shown ones and those its searches found this
        conversation (as retention keeps them) that it may see. A ``call_tool`` call naming
        one of them is run in its place (``RoundTools.calls``), so validation, limits and
        the guards see that tool; one naming anything else is answered with the unavailable
        text, the same whether the name is undiscovered, forbidden or unknown, before any
        guard sees it. A found tool called directly by its name runs too.
        """
        exposed = request.prompt.options.tools
        callable_tools = self._callable(exposed)
        names = list(callable_tools)
        calls: dict[str, ToolCall] = {}
        refused: dict[str, str] = {}
        hidden: dict[str, Tool] = {}
        for call in calls_to_run(response):
            if call.name == CALL_TOOL_NAME:
                inner = unwrapped_call(call)
                if inner is None:
                    continue  # validated as a call of call_tool itself, whose feedback helps
                tool = resolve_called(inner.name, self._known(exposed), callable_tools.__contains__)
                if tool is None:
                    refused[call.id] = self.texts.unavailable_answer(inner.name, names)
                else:
                    calls[call.id] = dataclasses.replace(inner, name=tool.definition.name)
            elif (
                call.name not in hidden
                and match_tool_name(call.name, [t.definition.name for t in exposed] + names) is None
            ):
                hidden[call.name] = HiddenTool(
                    call.name, self.texts.unavailable_answer(call.name, names)
                )
        self.hidden = hidden
        self.refused = refused
        runnable = (*exposed, *(t for t in callable_tools.values() if t not in exposed))
        return RoundTools(
            tools=(*runnable, *hidden.values()),
            interceptors=(
                visibility_interceptor(runnable, self.texts.unavailable_message),
                self._refuse_unwrapped,
                self._bind_search,
            ),
            calls=calls,
        )

    def _callable(self, exposed: Sequence[Tool]) -> dict[str, Tool]:
        """What ``call_tool`` may run, by canonical name.

        The shown tools but the proxy pair, then the permitted discovered ones.
        """
        tools = {
            t.definition.name: t
            for t in exposed
            if t is not self.search_tool and t.definition.name != CALL_TOOL_NAME
        }
        for name in self.discoveries.names:
            tool = self.snapshot.tools.get(name)
            if tool is not None and name not in tools and self.view.permits(name):
                tools[name] = tool
        return tools

    def _known(self, exposed: Sequence[Tool]) -> Mapping[str, Tool]:
        """Every tool a name could mean: the catalog's, then the request's own."""
        extra = {
            t.definition.name: t for t in exposed if t.definition.name not in self.snapshot.tools
        }
        return {**self.snapshot.tools, **extra} if extra else self.snapshot.tools

    async def _refuse_unwrapped(
        self, invocation: ToolInvocation, proceed: Proceed, /
    ) -> ToolCallOutcome:
        if invocation.tool.definition.name != CALL_TOOL_NAME:
            return await proceed(invocation)
        # A call_tool call not run in its tool's place: its name is not one the model may call.
        text = self.refused.get(invocation.call.id)
        if text is None:
            name = invocation.arguments.get("name")
            text = self.texts.unavailable_answer(str(name), ())
        return answer(invocation, text)

    async def _bind_search(
        self, invocation: ToolInvocation, proceed: Proceed, /
    ) -> ToolCallOutcome:
        if invocation.tool is not self.search_tool:
            return await proceed(invocation)
        bound = self.searcher.as_tool(
            invocation.tool.definition.description,
            definition=invocation.tool.definition,
            call_id=invocation.call.id,
        )
        return await proceed(dataclasses.replace(invocation, tool=bound))

    async def after_round(self, result: ToolExecutionResult) -> None:
        """Store what the round's searches found and note the round in the report."""
        searches = self.searcher.take_records([o.call.id for o in result.outcomes])
        unavailable = tuple(
            unwrapped_name(o.call) if o.call.id in self.refused else o.call.name
            for o in result.outcomes
            if o.call.name in self.hidden or o.call.id in self.refused
        )
        if searches or unavailable:
            self.rounds[-1] = dataclasses.replace(
                self.rounds[-1], searches=searches, unavailable=unavailable
            )
        # This round's calls count against earlier rounds' searches: a tool is shown, and so
        # called, only from the model call after the search that found it.
        if self.provider.usage_log is not None:
            calls = [(o.tool_name, o.status) for o in result.outcomes]
            await self.usage.record(self.provider.usage_log, calls)
        for search in searches:
            self.usage.found(search.query, search.names)
        called = {
            o.tool_name
            for o in result.outcomes
            if o.tool_name
            and o.tool_name not in (TOOL_SEARCH_NAME, CALL_TOOL_NAME)
            and o.call.name not in self.hidden
        }
        before = self.discoveries
        after = before.after_round(
            found=[search.names for search in searches],
            called=called,
            retention=self.provider.retention,
        )
        if after is before:
            return
        self.discoveries = after
        store = self.provider.session_store
        used = after.used - before.used
        if after.names[: len(before.names)] == before.names:
            if len(after.names) > len(before.names) or used:
                # Appending keeps what a concurrent turn of the conversation added meanwhile.
                stored = await store.add(self.key, after.names[len(before.names) :], used=used)
                self.discoveries = dataclasses.replace(after, names=stored.names)
        else:
            if used:
                await store.add(self.key, used=used)
            await store.replace(self.key, after.names)

    def finish(self, response: ChatClientResponse) -> ChatClientResponse:
        """Leave the turn's :class:`~toolrelay.toolsearch.ToolSearchReport` in the response."""
        report = ToolSearchReport(
            conversation_key=self.key,
            catalog_fingerprint=self.snapshot.fingerprint,
            reindexed=self.reindexed,
            rounds=tuple(self.rounds),
            discovered=self.discoveries.names,
            channel=self.provider.channel,
            learned=tuple(self.usage.learned),
            history_entries=len(self.searcher.history or ()),
        )
        return dataclasses.replace(response, tool_search=report)


class ToolSearchAdvisor(ToolCallingAdvisor):
    """The tool loop over the searching provider, :class:`ToolSearch`.

    Args:
        catalog, index, session_store, always_on, conversation_key, tool_filter,
            retention, max_results, min_score, min_relative_score, language,
            search_description, system_suffix, unavailable_message, usage_log, shared_usage,
            channel: As for :class:`ToolSearch`.
        tool_calling_manager, order, eligibility_checker, max_model_calls,
            conversation_history, name: As for :class:`~toolrelay.client.ToolCallingAdvisor`;
            only tools shown to the model can run, whatever the manager's resolver knows.

    Raises:
        ConfigurationError: As :class:`ToolSearch` and the loop raise.
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
        retention: Retention = "used",
        max_results: int = DEFAULT_MAX_RESULTS,
        min_score: float | None = None,
        min_relative_score: float | None = DEFAULT_MIN_RELATIVE_SCORE,
        language: search_texts.SearchLanguage | search_texts.SearchTexts = "auto",
        search_description: str | search_texts.FromLanguage = search_texts.FROM_LANGUAGE,
        system_suffix: str | search_texts.FromLanguage | None = search_texts.FROM_LANGUAGE,
        unavailable_message: str | search_texts.FromLanguage = search_texts.FROM_LANGUAGE,
        usage_log: UsageLog | None = None,
        shared_usage: bool = False,
        channel: Channel = "rewrite",
        tool_calling_manager: ToolCallingManager | None = None,
        order: int = TOOL_CALLING_ADVISOR_ORDER,
        eligibility_checker: EligibilityChecker = has_tool_calls,
        max_model_calls: int = DEFAULT_MAX_MODEL_CALLS,
        conversation_history: bool | None = None,
        name: str = "tool_search",
    ) -> None:
        self.search = ToolSearch(
            catalog,
            index=index,
            session_store=session_store,
            always_on=always_on,
            conversation_key=conversation_key,
            tool_filter=tool_filter,
            retention=retention,
            max_results=max_results,
            min_score=min_score,
            min_relative_score=min_relative_score,
            language=language,
            search_description=search_description,
            system_suffix=system_suffix,
            unavailable_message=unavailable_message,
            usage_log=usage_log,
            shared_usage=shared_usage,
            channel=channel,
        )
        super().__init__(
            tool_provider=self.search,
            tool_calling_manager=tool_calling_manager,
            order=order,
            eligibility_checker=eligibility_checker,
            max_model_calls=max_model_calls,
            conversation_history=conversation_history,
            name=name,
        )

    @property
    def catalog(self) -> ToolCatalog:
        """The searchable tools (assignable: the next turn re-indexes)."""
        return self.search.catalog

    @catalog.setter
    def catalog(self, catalog: ToolCatalog) -> None:
        self.search.catalog = catalog

    @property
    def index(self) -> ToolIndex:
        """The search index."""
        return self.search.index

    @property
    def session_store(self) -> SessionStore:
        """Where discovered tools are kept between turns."""
        return self.search.session_store

    def conversation_key_of(self, request: ChatClientRequest) -> str:
        """The key the conversation's discovered tools are stored under (see ``ToolSearch``)."""
        return self.search.conversation_key_of(request, owner=self.name)
