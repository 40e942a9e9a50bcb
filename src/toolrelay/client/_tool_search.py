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
2. re-indexes when the catalog's tools changed (through the tool-search core,
   :class:`~toolrelay.toolsearch._core.CatalogSearch`, shared with the gateway and the
   bridges; the index itself rebuilds only on a new fingerprint; one index serves every
   conversation, each searching its own permitted view) and drops stored names of tools that
   left the catalog;
3. sends every permitted tool, and searches nothing, when the catalog is too small for
   search to pay (``send_all_below``); otherwise searches with the request's own text before
   the first model call (``reveal``; both: :mod:`~toolrelay.toolsearch._reveal`) and shows
   the best hits: the conversation's first reveal pins them to its tool list (nothing of it
   is cached yet; the list then stays the same for the conversation, and the session store
   keeps them), a later turn's makes them discoveries;
4. takes the channel (:data:`Channel`; by default the best the client's model declares) and
   shows each model call, in a stable order (so provider prompt caches keep hitting):
   ``tool_search``, request tools, always-on tools, pinned tools, then discovered tools in
   discovery order (in the rewrite channel, in the tool list; in the native channel, through
   tool changes in the history, the tool list holding the rest; the proxy channel's list is
   fixed);
5. answers each search with its best hits (none below ``min_relative_score`` times the best
   one's score), leaving out tools the model already sees in full unless one is the best (in
   the proxy channel: tools whose unchanged definition an earlier answer in the request's
   history gave, as the loop holds it; the best of them is named only, so no definition is
   sent twice, while one the history no longer holds, such as an earlier turn's that memory
   inside the loop replays or that memory did not keep, comes whole again);
6. after each tool round, adds what its searches found to the conversation's entry in the
   :class:`~toolrelay.toolsearch._sessions.SessionStore`, so discoveries persist across turns;
   by default (``retention="used"``) the found tools the model passed over are retired,
   keeping those it called (``"used"``, ``"all"`` or ``"last_search"``);
7. with a ``usage_log``, ranks every search with the history of the tenant (or, with
   ``shared_usage=True``, of everyone), and after each round records each tool a search of
   the turn found that the model then called successfully, with the query that found it
   (a failing, denied or unsearched call is never recorded).

The catalog given to the advisor is what ``tool_search`` searches; request tools
(``.tools(...)``, ``default_tools``) are never searched, only always shown. The options
(:class:`~toolrelay.toolsearch.SearchOptions`: hits, cut-offs, ``tool_filter``, language,
usage history) are the gateway's and the bridges' too. ``tool_filter`` hides tools from a
request entirely (prompts and search results, even for an exact name); the client's
``authorize`` is asked before each call runs (never about ``tool_search``), and its approval,
idempotency and audit hold for found tools as for tools shown whole. Every call goes through
the manager's one path: a call of a tool the model was not shown (whatever its name, text or
not) is answered with the unavailable text and never runs; a forbidden or unknown name gets
the very same answer as an undiscovered one, so nothing reveals that a forbidden tool exists.
A name close to the names of tools the model sees (``get_wether`` beside ``get_weather``) is
answered with those names instead, so a misspelling costs no search; only shown names are
ever suggested. Each turn's searches (queries, hits, scores, timings) and the tools shown per
model call are reported as the response's ``tool_search`` (a
:class:`~toolrelay.toolsearch.ToolSearchReport`).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

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
    ToolCallStatus,
    ToolExecutionResult,
    ToolInvocation,
)
from toolrelay.execution._pipeline import ContextNeeds
from toolrelay.memory import CONVERSATION_ID
from toolrelay.messages import ChatResponse, Message, ToolChangeMessage, UserMessage
from toolrelay.models import ChatModel, ToolChannel
from toolrelay.models._base import (
    DEFAULT_TOOL_CHANNELS,
    cache_shortfall,
    model_name,
    tool_channels,
)
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.search._base import MAX_RESULTS_LIMIT, ToolIndex
from toolrelay.tools import Tool, ToolCatalog, ToolContext
from toolrelay.tools._tokens import tool_tokens
from toolrelay.toolsearch._access import CatalogSnapshot, CatalogView
from toolrelay.toolsearch._core import CatalogSearch
from toolrelay.toolsearch._learning import UsageRecorder, usage_scope
from toolrelay.toolsearch._options import SearchOptions
from toolrelay.toolsearch._proxy import call_tool, resolve_called
from toolrelay.toolsearch._reveal import (
    DEFAULT_FILL_CACHE_MINIMUM,
    DEFAULT_REVEAL,
    DEFAULT_REVEAL_MIN_RELATIVE_SCORE,
    DEFAULT_SEND_ALL_BELOW,
    catalog_tokens_below,
    check_turn_options,
    filled_count,
    request_text,
    revealed_pair,
)
from toolrelay.toolsearch._search_tool import (
    ToolSearcher,
    ToolSearchRecord,
    ToolSearchReport,
    ToolSearchRound,
    defined_in,
    definition_hit,
    with_system_suffix,
)
from toolrelay.toolsearch._sessions import (
    Discoveries,
    InMemorySessionStore,
    Retention,
    SessionStore,
)
from toolrelay.toolsearch._texts import CALL_TOOL_NAME, TOOL_SEARCH_NAME, SearchTexts

__all__ = ["Channel", "ConversationKey", "ToolSearch", "ToolSearchAdvisor"]

_log = logging.getLogger("toolrelay.client")

ConversationKey = str | Callable[[ChatClientRequest], object]
"""An advisor parameter's name, or a function of the request returning the key."""

Channel = Literal["auto", "native", "proxy", "rewrite"]
"""How found tools reach the model (the ``channel`` option).

- ``"auto"`` (the default): the best channel the model declares (its adapter's
  ``tool_channels``), never ``"rewrite"`` unless it declares nothing else: ``"native"`` for
  an Anthropic model that accepts mid-conversation tool changes, ``"proxy"`` for every other
  model (OpenAI Chat Completions and compatible servers, llama.cpp, your own).
- ``"native"``: the tool list never changes (``tool_search``, the request's own, always-on
  and pinned tools); ``tool_search`` answers with the names of the tools it found, and a
  :class:`~toolrelay.messages.ToolChangeMessage` in the history before the next model call
  makes them available there (and retires those retention drops), which the adapter renders
  through the provider's own channel (Anthropic: a system message of ``tool_addition`` and
  ``tool_removal`` blocks). The model calls found tools by name. The prompt cache's prefix
  survives every discovery.
- ``"proxy"``: the tool list never changes: the request's own, always-on and pinned tools
  (called by name), then ``tool_search``, whose answers carry the found tools' definitions,
  and ``call_tool(name, arguments)``, which runs a found tool through the same round as any
  call (its arguments validated against that tool's schema, the guards, limits and
  permissions seeing that tool). The prompt cache's prefix survives every discovery.
- ``"rewrite"``: each model call's tool list shows the tools found so far, in full (the
  provider enforces their schemas; the list, which starts a request's cached prefix, changes
  with each discovery). Only when asked for.

On every channel the conversation's pinned tools (its first reveal's hits) are in the tool
list from its first model call on. A channel given by name must be one the model declares, or
the turn is refused.
"""


class ToolSearch:
    """The searching tool provider: progressive tool disclosure for any tool loop.

    Args:
        catalog: The searchable tools: a :class:`~toolrelay.tools.ToolCatalog` (read live)
            or anything :func:`~toolrelay.tools.as_tools` accepts.
        options: How it searches and answers (:class:`~toolrelay.toolsearch.SearchOptions`:
            hits per search, cut-offs, ``tool_filter``, the texts' language, usage history).
        index: The search index; by default the search package's ``default_index()`` (hybrid
            BM25 + embeddings when installed, else BM25). Give each provider its own: an
            index holds one catalog.
        session_store: Where discovered tools are kept between turns; an
            :class:`~toolrelay.toolsearch.InMemorySessionStore` by default.
        always_on: Names of catalog tools shown from the first model call on.
        conversation_key: The advisor parameter naming the conversation (default
            ``"conversation_id"``, as set by ``.conversation(...)``), or a function of the
            request, e.g. ``lambda r: r.prompt.options.tool_context.get("tenant_id")``.
        retention: Which discovered tools stay shown (``"used"``, ``"all"`` or ``"last_search"``):
            ``"used"`` (default) keeps the tools the model called and retires those it
            passed over: a lone search's other hits once it called one of them, the rest at
            its next search (the hits of several needs searched at once, and a later
            turn's reveal's, stay through the turn; pinned tools are never retired);
            ``"all"`` keeps every tool found (the list only grows, so a provider's prompt
            cache covers every earlier tool);
            ``"last_search"`` shows only what the last round of searches found. What each
            costs in tokens on three tasks: ``docs/benchmarks.md``.
        channel: How found tools reach the model: ``"auto"`` (default: the best the model
            declares), ``"native"``, ``"proxy"`` or ``"rewrite"`` (see :data:`Channel`).
        reveal: Hits revealed before the first model call (0: none). The permitted view is
            searched with the text of the request's last user message, and its best hits
            are shown from the first model call on, so a task whose tools are found up front
            makes no ``tool_search`` call (``tool_search`` stays for the rest). Before a
            conversation's first model call nothing of it is cached, so its reveal's hits are
            pinned: in the tool list on every channel, called by name, and kept there,
            unchanged, for the whole conversation (the session store's ``pinned``; the
            report's too); a later turn's are discoveries, shown through the channel:
            native, a :class:`~toolrelay.messages.ToolChangeMessage` after the user's
            message; rewrite, in the tool list from the first call; proxy, a ``tool_search``
            call with the request's text and its answer (the definitions) after the user's
            message, the tool list unchanged. The default, 2 hits at
            ``reveal_min_relative_score=0.9``, is the rule ``benchmarks/reveal.py`` decided
            on billed cost (docs/benchmarks.md, "Revealing tools before the first model
            call"; figures on
            :data:`~toolrelay.toolsearch._reveal.DEFAULT_REVEAL_MIN_RELATIVE_SCORE`).
        reveal_min_relative_score: Revealed hits scoring below this fraction of the best
            hit's score are left out (0-1; ``None`` keeps them).
        fill_cache_minimum: When the first request, the reveal's hits shown, is shorter
            than the shortest prompt the model's provider caches (the adapter's
            ``cache_shortfall``: 1,024 tokens on OpenAI's API and on Claude Sonnet 4.5,
            say), reveal the next best hits too, in rank order, until it reaches it (and
            none when the catalog's ten best cannot): every later request then reads the
            prompt from the cache instead of paying it in full, and the task's other tools
            are likelier to be shown without a search round. Derivation and figures:
            :data:`~toolrelay.toolsearch._reveal.DEFAULT_FILL_CACHE_MINIMUM`. Needs
            ``reveal`` above 0.
        send_all_below: The small-catalog rule: when the permitted catalog's definitions
            total fewer tokens than this, every tool is sent and nothing is searched or
            revealed (reported as ``sent_all_tools`` and logged at INFO on the
            ``toolrelay.client`` logger); ``None``: always search. The default, 310 tokens,
            is where search cannot pay as billed (derivation:
            :data:`~toolrelay.toolsearch._reveal.DEFAULT_SEND_ALL_BELOW`).

    Raises:
        ConfigurationError: An option is out of range (``channel``, ``retention``,
            ``reveal``, ``reveal_min_relative_score``, ``fill_cache_minimum``,
            ``send_all_below`` among them), or
            the options cannot be honoured with the index (a usage log with an index that
            does not rank with history, such as the PostgreSQL one). Per turn: the
            conversation key is missing, an always-on name is not in the catalog, another
            tool is called ``tool_search`` (or, in the proxy channel, ``call_tool``), or the
            channel given is not one the model renders.
    """

    def __init__(
        self,
        catalog: ToolCatalog | Iterable[object],
        *,
        options: SearchOptions | None = None,
        index: ToolIndex | None = None,
        session_store: SessionStore | None = None,
        always_on: Sequence[str] = (),
        conversation_key: ConversationKey = CONVERSATION_ID,
        retention: Retention = "used",
        channel: Channel = "auto",
        reveal: int = DEFAULT_REVEAL,
        reveal_min_relative_score: float | None = DEFAULT_REVEAL_MIN_RELATIVE_SCORE,
        fill_cache_minimum: bool = DEFAULT_FILL_CACHE_MINIMUM,
        send_all_below: int | None = DEFAULT_SEND_ALL_BELOW,
    ) -> None:
        check_turn_options(reveal, reveal_min_relative_score, fill_cache_minimum, send_all_below)
        if channel not in get_args(Channel):
            raise ConfigurationError(
                "channel must be 'auto', 'native', 'proxy' or 'rewrite', not " + repr(channel)
            )
        if retention not in ("used", "all", "last_search"):
            raise ConfigurationError(
                f"retention must be 'used', 'all' or 'last_search', not {retention!r}"
            )
        self.core = CatalogSearch(catalog, index=index, options=options, always_on=always_on)
        self.channel: Channel = channel
        self.session_store = session_store if session_store is not None else InMemorySessionStore()
        self.conversation_key = conversation_key
        self.retention: Retention = retention
        self.reveal = reveal
        self.reveal_min_relative_score = reveal_min_relative_score
        self.fill_cache_minimum = fill_cache_minimum
        self.send_all_below = send_all_below
        # The tokens of the catalog's definitions, by name, per snapshot (counted as needed).
        self._tokens: tuple[CatalogSnapshot, dict[str, int]] | None = None
        # What the catalog needs of a context, and its hits, per snapshot (made once each).
        self._needs: tuple[CatalogSnapshot, ContextNeeds] | None = None
        self._hits: tuple[CatalogSnapshot, Mapping[str, Mapping[str, Any]]] | None = None

    @property
    def catalog(self) -> ToolCatalog:
        """The searchable tools (assignable: the next turn re-indexes)."""
        return self.core.catalog

    @catalog.setter
    def catalog(self, catalog: ToolCatalog | Iterable[object]) -> None:
        self.core.catalog = catalog

    @property
    def index(self) -> ToolIndex:
        """The search index."""
        return self.core.index

    @property
    def options(self) -> SearchOptions:
        """How it searches and answers."""
        return self.core.options

    @property
    def always_on(self) -> tuple[str, ...]:
        """The catalog tools every request shows."""
        return self.core.always_on

    def channel_for(
        self, model: ChatModel | None, requested: str | None = None, *, owner: str = "tool_search"
    ) -> ToolChannel:
        """The channel a turn takes with ``model`` (its requests to model ``requested``).

        ``"auto"``: the first channel the model declares other than ``"rewrite"``; a channel
        given by name: that one, which the model must declare. A loop without a model (a
        chain of your own) renders what any model taking tools does.

        Raises:
            ConfigurationError: The channel given is not one the model declares.
        """
        declared = tool_channels(model, requested) if model is not None else DEFAULT_TOOL_CHANNELS
        if self.channel == "auto":
            return next((c for c in declared if c != "rewrite"), "rewrite")
        if self.channel in declared:
            return self.channel
        shown = model_name(model) if model is not None else "of this loop (none is known)"
        raise ConfigurationError(
            f"{owner}: channel={self.channel!r}, but the model {shown} renders only "
            f"{', '.join(repr(c) for c in declared)}: choose one of those, or channel='auto' "
            "for the best of them"
        )

    async def open(
        self,
        request: ChatClientRequest,
        *,
        owner: str,
        manager: ToolCallingManager,
        model: ChatModel | None = None,
    ) -> TurnTools:
        """Read the conversation's discovered tools and fix the tools every call shows."""
        channel = self.channel_for(model, request.prompt.options.model, owner=owner)
        key = self.conversation_key_of(request, owner=owner)
        before = self.core.last_snapshot
        snapshot = await self.core.snapshot()
        options = request.prompt.options
        context = ToolContext(options.tool_context)
        # A found tool must be able to run: what the catalog needs of the context is
        # checked before the first model call, not when the model calls the tool.
        if self._needs is None or self._needs[0] is not snapshot:
            self._needs = (snapshot, ContextNeeds(snapshot.members))
        self._needs[1].check(context)
        view = self.core.view(snapshot, context)
        reindexed = snapshot is not before and snapshot.rebuilt
        small = self._sent_all(snapshot, view)
        if small is not None:
            _log.info("%s: %s", owner, small)
            texts = self.core.texts(snapshot)
            visible = [t for t in options.tools if view.sees(t.definition)]
            every = view.shown_tools(visible, [t.definition.name for t in snapshot.members])
            return _AllToolsTurn(
                report=ToolSearchReport(
                    conversation_key=key,
                    catalog_fingerprint=snapshot.fingerprint,
                    reindexed=reindexed,
                    rounds=(),
                    discovered=(),
                    channel=channel,
                    sent_all_tools=small,
                ),
                tools=tuple(every),
                texts=texts,
            )
        proxy = channel == "proxy"
        searcher = await self.core.searcher(
            view,
            hits=self._definition_hits(snapshot) if proxy else None,
            max_chars=manager.max_result_chars,
        )
        texts = self.core.texts(snapshot)
        description = texts.proxy_description if proxy else texts.description
        search_tool = searcher.as_tool(description, parameters=texts.parameters)
        base = view.fixed_tools(search_tool, options.tools, self.always_on, owner=owner)
        discoveries, pinned = await self._stored(key, snapshot)
        turn = _SearchTurn(
            provider=self,
            channel=channel,
            key=key,
            snapshot=snapshot,
            reindexed=reindexed,
            view=view,
            searcher=searcher,
            search_tool=search_tool,
            base=base,
            fixed=base,
            texts=texts,
            discoveries=discoveries,
            usage=UsageRecorder(scope=usage_scope(context, shared=self.options.shared_usage)),
        )
        if proxy:
            _check_proxy_names(base, owner=owner)
            turn.call = call_tool(texts, turn.forward)
        turn.pin(pinned)
        # A resumed turn (after approval) had its start: it reveals nothing again.
        if self.reveal and request.resume is None:
            await turn.reveal(request, model if self.fill_cache_minimum else None)
        return turn

    def _sent_all(self, snapshot: CatalogSnapshot, view: CatalogView) -> str | None:
        """Why every tool is sent (the small-catalog rule), or ``None``: search."""
        limit = self.send_all_below
        if limit is None:
            return None
        if self._tokens is None or self._tokens[0] is not snapshot:
            self._tokens = (snapshot, {})
        permitted = (t.definition for t in snapshot.members if view.permits(t.definition.name))
        tokens = catalog_tokens_below(permitted, limit, self._tokens[1])
        if tokens is None:
            return None
        return (
            f"every tool sent: the permitted catalog's definitions total {tokens} tokens, "
            f"fewer than send_all_below={limit}, where a search cannot pay"
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

    def _definition_hits(self, snapshot: CatalogSnapshot) -> Mapping[str, Mapping[str, Any]]:
        """Each catalog tool's hit in answers that carry definitions (made once per snapshot)."""
        if self._hits is None or self._hits[0] is not snapshot:
            hits = {t.definition.name: definition_hit(t.definition) for t in snapshot.members}
            self._hits = (snapshot, hits)
        return self._hits[1]

    async def _stored(
        self, key: str, snapshot: CatalogSnapshot
    ) -> tuple[Discoveries, tuple[str, ...] | None]:
        """The conversation's discoveries and its pinned tools.

        The discoveries without tools that left the catalog; the pinned tools ``None`` when
        its first reveal has not run.
        """
        stored = await self.session_store.get(key)
        kept = tuple(n for n in stored.names if n in snapshot.tools)
        if len(kept) != len(stored.names):
            await self.session_store.replace(key, kept)
        used = stored.used if self.retention == "used" else frozenset()
        # Each turn gives the model a round of calls before a search retires what it found.
        return Discoveries(names=kept, used=used, fresh=frozenset(kept)), stored.pinned


def _available_in(messages: Sequence[Message]) -> dict[str, str]:
    """What the tool changes among ``messages`` make available: definitions by name, in order."""
    available: dict[str, str] = {}
    for message in messages:
        if isinstance(message, ToolChangeMessage):
            for name in message.removed:
                available.pop(name, None)
            for definition in message.added:
                available[definition["name"]] = _compact(dict(definition))
    return available


def _compact(value: Mapping[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _check_proxy_names(fixed: Sequence[Tool], *, owner: str) -> None:
    """Refuse a request or always-on tool named like the proxy channel's ``call_tool``.

    Raises:
        ConfigurationError: One of those tools is named ``call_tool``.
    """
    if any(t.definition.name == CALL_TOOL_NAME for t in fixed):
        raise ConfigurationError(
            f"{owner}: a request or always-on tool is named {CALL_TOOL_NAME!r}, the name of "
            "the proxy channel's tool that runs found tools; rename it"
        )


@dataclass(kw_only=True)
class _SearchTurn:
    """One turn of :class:`ToolSearch`: what it shows, what it found, what it reports."""

    provider: ToolSearch
    channel: ToolChannel
    key: str
    snapshot: CatalogSnapshot
    reindexed: bool
    view: CatalogView
    searcher: ToolSearcher
    search_tool: Tool
    # What every model call shows: ``base`` (tool_search, the request's own and always-on
    # tools), the conversation's pinned tools, and, in the proxy channel, ``call`` (the
    # search tool then moves next to it: the pair ends the list).
    base: tuple[Tool, ...]
    fixed: tuple[Tool, ...]
    texts: SearchTexts
    discoveries: Discoveries
    usage: UsageRecorder
    call: Tool | None = None
    pinned: tuple[str, ...] | None = None
    rounds: list[ToolSearchRound] = field(default_factory=list)
    # The round's names the model may call, and the names call_tool was refused, in order.
    callable: Mapping[str, Tool] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)
    _shown: tuple[tuple[str, ...], tuple[Tool, ...], tuple[str, ...]] | None = None
    _options: tuple[ChatOptions, tuple[Tool, ...], ChatOptions] | None = None
    _scanned: tuple[int, Message, Mapping[str, str]] | None = None
    # The native channel: the tool changes this turn wrote, each after the message it
    # followed; what the history makes available (name -> definition as compact JSON); and
    # the found tools that makes callable.
    _changes: list[tuple[Message, ToolChangeMessage]] = field(default_factory=list)
    _available: dict[str, str] | None = None
    _found: tuple[Tool, ...] = ()
    # The reveal before the first model call; in the proxy channel, its tool_search call
    # and answer, placed after the user's message they followed on every call of the turn.
    revealed: ToolSearchRecord | None = None
    _pair: tuple[Message, tuple[Message, ...]] | None = None

    def pin(self, names: Sequence[str] | None) -> None:
        """Make ``names`` the conversation's pinned tools, in every model call's tool list.

        ``None``: the conversation's first reveal has not run; nothing is pinned yet.
        """
        self.pinned = None if names is None else tuple(names)
        self.fixed = self._listed(self.pinned or ())

    def _listed(self, pinned: Sequence[str]) -> tuple[Tool, ...]:
        """The fixed tools with the permitted ``pinned`` ones after the request's own."""
        if self.call is None:
            return tuple(self.view.shown_tools(self.base, pinned))
        # A catalog tool named call_tool cannot share the list with the proxy's own.
        search, *others = self.view.shown_tools(
            self.base, [n for n in pinned if n != CALL_TOOL_NAME]
        )
        return (*others, search, self.call)

    async def _pin(self, names: Sequence[str]) -> None:
        """Store ``names`` as the conversation's pinned tools and show them.

        Unless a concurrent first turn stored its own first: then those are shown.
        """
        stored = await self.provider.session_store.pin(self.key, names)
        self.pin(stored.pinned or ())

    async def reveal(self, request: ChatClientRequest, model: ChatModel | None) -> None:
        """Search with the request's text and show its best hits from the first model call on.

        Before the conversation's first model call nothing of it is cached yet, so its
        reveal's hits are pinned: they join the tool list, which every later model call of
        the conversation shows unchanged (the cache's prefix with it), and the model calls
        them by name on every channel. A later turn's hits become discoveries, shown through
        the turn's channel, and count as a search's hits for retention (see
        ``ToolSearch(reveal=...)``). With a ``model``, hits are added until the first request
        reaches its cache minimum (``ToolSearch(fill_cache_minimum=...)``).
        """
        messages = request.prompt.messages
        query = request_text(messages)
        opening = self.pinned is None
        if query is None:
            if opening:
                await self._pin(())
            return
        provider = self.provider
        self.searcher.shown = frozenset(t.definition.name for t in self.fixed)
        if self.channel == "proxy":
            self.searcher.defined = self._defined_in(messages)
        answer, record = await self.searcher.reveal(
            query,
            max_results=provider.reveal,
            min_relative_score=provider.reveal_min_relative_score,
        )
        if model is not None:
            answer, record = await self._filled(request.prompt, query, model, answer, record)
        self.revealed = record
        if opening:
            await self._pin([n for n in record.names if n not in self.searcher.shown])
            self.searcher.shown = frozenset(t.definition.name for t in self.fixed)
        new = [n for n in record.names if n not in self.searcher.shown]
        if self.channel == "proxy" and any(n not in self.searcher.defined for n in new):
            anchor = next(m for m in reversed(messages) if isinstance(m, UserMessage))
            self._pair = (anchor, revealed_pair(query, answer))
        if not record.names:
            return
        self.usage.found(query, record.names)
        found = [n for n in record.names if n not in (self.pinned or ())]
        if not found:
            return
        # A search of the whole request, not of one need: calling one of its hits passes
        # none of the others over (retention keeps them through the turn).
        await self._save(
            self.discoveries.after_round(
                found=[found], called=(), retention=provider.retention, whole_task=True
            )
        )

    async def _filled(
        self,
        prompt: Prompt,
        query: str,
        model: ChatModel,
        answer: str,
        record: ToolSearchRecord,
    ) -> tuple[str, ToolSearchRecord]:
        """The reveal, and the next best hits until the first request reaches the cache minimum.

        As it was when the request reaches the minimum of ``model`` already, or when the ten
        best hits cannot make it.
        """
        shortfall = cache_shortfall(model, self._first_prompt(prompt, query, answer, record))
        if not shortfall:
            return answer, record
        _, ranked = await self.searcher.reveal(
            query, max_results=MAX_RESULTS_LIMIT, min_relative_score=None
        )
        count = filled_count(
            ranked, shortfall, start=len(record.response.hits), tokens=self._added_tokens
        )
        # The count is estimated from the definitions' own tokens; each channel wraps them a
        # little differently, so the request itself is checked, one hit more while short.
        while count is not None:
            filled = await self.searcher.reveal(query, max_results=count, min_relative_score=None)
            short = cache_shortfall(model, self._first_prompt(prompt, query, *filled))
            if not short:
                return filled
            if short >= shortfall:
                # The hits land past what the cache keeps (an Anthropic request cached up to
                # its system text only, say): no number of them reaches the minimum.
                break
            count = count + 1 if count < len(ranked.response.hits) else None
        return answer, record

    def _first_prompt(
        self, prompt: Prompt, query: str, answer: str, record: ToolSearchRecord
    ) -> Prompt:
        """``prompt`` as the first model call gets it with ``record``'s hits revealed.

        Without changing the turn: what :meth:`prepare` will send once they are saved.
        """
        fixed = {t.definition.name for t in self.fixed}
        new = [n for n in record.names if n not in fixed and n in self.snapshot.tools]
        messages: Sequence[Message] = prompt.messages
        tools = self.fixed
        if self.pinned is None:
            tools = self._listed(new)  # the conversation's first reveal: its hits are pinned
        elif self.channel == "proxy":
            if any(n not in self.searcher.defined for n in new):
                position = max(i for i, m in enumerate(messages) if isinstance(m, UserMessage))
                pair = revealed_pair(query, answer)
                messages = (*messages[: position + 1], *pair, *messages[position + 1 :])
        elif self.channel == "native":
            hits = self.provider._definition_hits(self.snapshot)
            if new:
                messages = (*messages, ToolChangeMessage(added=tuple(hits[n] for n in new)))
        else:
            names = (*self.discoveries.names, *(n for n in new if n not in self.discoveries.names))
            tools = tuple(self.view.shown_tools(self.fixed, names))
        proxy = self.channel == "proxy"
        suffix = self.texts.proxy_system_suffix if proxy else self.texts.system_suffix
        return Prompt(
            messages=with_system_suffix(messages, suffix),
            options=prompt.options.replace(tools=tools),
        )

    def _added_tokens(self, name: str) -> int:
        """The tokens revealing ``name`` adds: its definition, unless the model has it."""
        if name in self.searcher.shown or name in self.searcher.defined:
            return 0
        tool = self.snapshot.tools.get(name)
        return 0 if tool is None else tool_tokens(tool.definition)

    def prepare(self, request: ChatClientRequest, *, model_call: int) -> ChatClientRequest:
        """Show the fixed tools plus the discovered ones, and add the system suffix."""
        if self.channel == "native":
            return self._prepare_native(request, model_call=model_call)
        proxy = self.channel == "proxy"
        discovered = self.discoveries.names
        if self._shown is None or self._shown[0] is not discovered:
            # Most rounds find nothing new: the list is worked out again only when it changed.
            # In the proxy channel it never changes: found tools run through call_tool.
            tools = self.fixed if proxy else tuple(self.view.shown_tools(self.fixed, discovered))
            names = tuple(t.definition.name for t in tools)
            self._shown = (discovered, tools, names)
            # The round's search answers leave out what the model sees in full (but the best).
            self.searcher.shown = frozenset(names)
        _, tools, names = self._shown
        messages: Sequence[Message] = request.prompt.messages
        if proxy:
            messages = self._with_pair(messages)
            self.searcher.defined = self._defined_in(messages)
        self.rounds.append(ToolSearchRound(model_call=model_call, exposed=names))
        options = request.prompt.options
        # The loop passes the same options on every call: replaced once per list of tools.
        if (
            self._options is None
            or self._options[0] is not options
            or self._options[1] is not tools
        ):
            self._options = (options, tools, options.replace(tools=tools))
        suffix = self.texts.proxy_system_suffix if proxy else self.texts.system_suffix
        prompt = Prompt(messages=with_system_suffix(messages, suffix), options=self._options[2])
        return request.with_prompt(prompt)

    def _with_pair(self, messages: Sequence[Message]) -> Sequence[Message]:
        """``messages`` with the reveal's call and answer after the user's message.

        Unless they hold it already (a history advisor inside the loop keeps it itself), or
        no longer hold that message (such an advisor sends only new ones).
        """
        if self._pair is None:
            return messages
        anchor, pair = self._pair
        position = next((i for i, m in enumerate(messages) if m is anchor), None)
        if position is None or any(m is pair[0] for m in messages):
            return messages
        return (*messages[: position + 1], *pair, *messages[position + 1 :])

    def _prepare_native(self, request: ChatClientRequest, *, model_call: int) -> ChatClientRequest:
        """The native channel: fixed tools, and the history's tool changes brought up to date.

        This turn's earlier changes go back after the messages they followed (a history
        advisor inside the loop keeps them itself); a new change follows the last message
        when the discovered tools differ from what the history makes available.
        """
        messages = list(request.prompt.messages)
        for anchor, change in self._changes:
            position = next((i for i, m in enumerate(messages) if m is anchor), None)
            if position is not None:
                messages.insert(position + 1, change)
        if self._available is None:
            self._available = _available_in(messages)
        hits = self.provider._definition_hits(self.snapshot)
        fixed = {t.definition.name for t in self.fixed}
        wanted = [
            n
            for n in self.discoveries.names
            if n not in fixed and n in self.snapshot.tools and self.view.permits(n)
        ]
        compact = {name: _compact(hits[name]) for name in wanted}
        added = [hits[n] for n in wanted if self._available.get(n) != compact[n]]
        removed = [n for n in self._available if n not in compact and n in self.snapshot.tools]
        if (added or removed) and messages:
            change = ToolChangeMessage(added=tuple(added), removed=tuple(removed))
            self._changes.append((messages[-1], change))
            messages.append(change)
            for name in removed:
                del self._available[name]
            self._available.update((n, compact[n]) for n in wanted)
        self._found = tuple(self.snapshot.tools[n] for n in wanted if n in self._available)
        names = tuple(t.definition.name for t in (*self.fixed, *self._found))
        self.searcher.shown = frozenset(names)
        self.rounds.append(ToolSearchRound(model_call=model_call, exposed=names))
        options = request.prompt.options
        if self._options is None or self._options[0] is not options:
            self._options = (options, self.fixed, options.replace(tools=self.fixed))
        prompt = Prompt(
            messages=with_system_suffix(messages, self.texts.system_suffix),
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
        """The tools the round's calls may run; any other name gets the unavailable text.

        The manager resolves every call among them (a name that is not text included) and
        answers one it cannot resolve with the unavailable text, or, for a name close to
        names the model may call (a misspelling), with those names (only names the model may
        call are ever suggested, so nothing about other tools leaks into the answer). In the
        proxy channel a call of ``call_tool`` runs the found tool it names in its place (its
        :meth:`forward`); a found tool called directly by its name runs too. Each search runs
        bound to its call, so the report keeps every search by the call that made it.
        """
        exposed = request.prompt.options.tools
        tools: tuple[Tool, ...] = exposed
        if self.channel == "proxy":
            self.callable = self._callable(exposed)
            tools = (*exposed, *(t for t in self.callable.values() if t not in exposed))
        elif self.channel == "native":
            # Found tools are called by name, as the tool changes made them available.
            tools = (*exposed, *(t for t in self._found if t not in exposed))
        names = [t.definition.name for t in tools]
        self.refused = []
        return RoundTools(
            tools=tools,
            interceptors=(self._bind_search,),
            unavailable=functools.partial(self.texts.unavailable_answer, shown=names),
        )

    async def forward(self, name: str, context: ToolContext) -> Tool | str:
        """The found tool a ``call_tool`` call names, or the unavailable text.

        The same text whether the name is undiscovered, forbidden or unknown.
        """
        tool = resolve_called(name, self._known(), self.callable.__contains__)
        if tool is not None:
            return tool
        self.refused.append(name)
        return self.texts.unavailable_answer(name, list(self.callable))

    def _callable(self, exposed: Sequence[Tool]) -> dict[str, Tool]:
        """What ``call_tool`` may run, by canonical name.

        The shown tools but the proxy pair, then the permitted discovered ones and those
        whose definitions the request's history still holds (a search answer or the reveal):
        the model reads them there, so retention retiring one must not make it a trap.
        """
        tools = {
            t.definition.name: t
            for t in exposed
            if t is not self.search_tool and t.definition.name != CALL_TOOL_NAME
        }
        for name in (*self.discoveries.names, *self.searcher.defined):
            tool = self.snapshot.tools.get(name)
            if tool is not None and name not in tools and self.view.permits(name):
                tools[name] = tool
        return tools

    def _known(self) -> Mapping[str, Tool]:
        """Every tool a name could mean: the catalog's, then the request's own."""
        extra = {n: t for n, t in self.callable.items() if n not in self.snapshot.tools}
        return {**self.snapshot.tools, **extra} if extra else self.snapshot.tools

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
        refused = iter(self.refused)
        unavailable = tuple(
            next(refused, o.call.name) if o.call.name == CALL_TOOL_NAME else o.call.name
            for o in result.outcomes
            if o.status is ToolCallStatus.UNKNOWN_TOOL
        )
        if searches or unavailable:
            self.rounds[-1] = dataclasses.replace(
                self.rounds[-1], searches=searches, unavailable=unavailable
            )
        # This round's calls count against earlier rounds' searches: a tool is shown, and so
        # called, only from the model call after the search that found it.
        usage_log = self.provider.options.usage_log
        if usage_log is not None:
            calls = [(o.tool_name, o.status) for o in result.outcomes]
            await self.usage.record(usage_log, calls)
        for search in searches:
            self.usage.found(search.query, search.names)
        called = {
            o.tool_name
            for o in result.outcomes
            if o.tool_name and o.tool_name not in (TOOL_SEARCH_NAME, CALL_TOOL_NAME)
        }
        after = self.discoveries.after_round(
            found=[search.names for search in searches],
            called=called,
            retention=self.provider.retention,
        )
        await self._save(after)

    async def _save(self, after: Discoveries) -> None:
        """Make ``after`` the turn's discoveries, and store what changed."""
        before = self.discoveries
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
            channel=self.channel,
            learned=tuple(self.usage.learned),
            history_entries=len(self.searcher.history or ()),
            revealed=self.revealed,
            pinned=self.pinned or (),
        )
        return dataclasses.replace(response, tool_search=report)


@dataclass(kw_only=True)
class _AllToolsTurn:
    """A turn of a catalog too small to search (``send_all_below``): every tool, always."""

    report: ToolSearchReport
    tools: tuple[Tool, ...]
    texts: SearchTexts
    rounds: list[ToolSearchRound] = field(default_factory=list)
    _options: tuple[ChatOptions, ChatOptions] | None = None

    def prepare(self, request: ChatClientRequest, *, model_call: int) -> ChatClientRequest:
        names = tuple(t.definition.name for t in self.tools)
        self.rounds.append(ToolSearchRound(model_call=model_call, exposed=names))
        options = request.prompt.options
        if self._options is None or self._options[0] is not options:
            self._options = (options, options.replace(tools=self.tools))
        return request.with_prompt(
            Prompt(messages=request.prompt.messages, options=self._options[1])
        )

    def round(self, request: ChatClientRequest, response: ChatResponse) -> RoundTools:
        names = [t.definition.name for t in self.tools]
        return RoundTools(
            tools=self.tools,
            unavailable=functools.partial(self.texts.unavailable_answer, shown=names),
        )

    async def after_round(self, result: ToolExecutionResult) -> None:
        unavailable = tuple(
            o.call.name for o in result.outcomes if o.status is ToolCallStatus.UNKNOWN_TOOL
        )
        if unavailable:
            self.rounds[-1] = dataclasses.replace(self.rounds[-1], unavailable=unavailable)

    def finish(self, response: ChatClientResponse) -> ChatClientResponse:
        report = dataclasses.replace(self.report, rounds=tuple(self.rounds))
        return dataclasses.replace(response, tool_search=report)


class ToolSearchAdvisor(ToolCallingAdvisor):
    """The tool loop over the searching provider, :class:`ToolSearch`.

    Args:
        catalog, options, index, session_store, always_on, conversation_key, retention,
            channel, reveal, reveal_min_relative_score, fill_cache_minimum, send_all_below: As for
            :class:`ToolSearch`.
        tool_calling_manager, order, eligibility_checker, max_model_calls,
            conversation_history, name: As for :class:`~toolrelay.client.ToolCallingAdvisor`;
            only tools shown to the model can run, whatever the manager's resolver knows.

    Attributes:
        search: The provider (its ``options``, ``catalog``, ``index``, ``session_store``...).

    Raises:
        ConfigurationError: As :class:`ToolSearch` and the loop raise.
    """

    def __init__(
        self,
        catalog: ToolCatalog | Iterable[object],
        *,
        options: SearchOptions | None = None,
        index: ToolIndex | None = None,
        session_store: SessionStore | None = None,
        always_on: Sequence[str] = (),
        conversation_key: ConversationKey = CONVERSATION_ID,
        retention: Retention = "used",
        channel: Channel = "auto",
        reveal: int = DEFAULT_REVEAL,
        reveal_min_relative_score: float | None = DEFAULT_REVEAL_MIN_RELATIVE_SCORE,
        fill_cache_minimum: bool = DEFAULT_FILL_CACHE_MINIMUM,
        send_all_below: int | None = DEFAULT_SEND_ALL_BELOW,
        tool_calling_manager: ToolCallingManager | None = None,
        order: int = TOOL_CALLING_ADVISOR_ORDER,
        eligibility_checker: EligibilityChecker = has_tool_calls,
        max_model_calls: int = DEFAULT_MAX_MODEL_CALLS,
        conversation_history: bool | None = None,
        name: str = "tool_search",
    ) -> None:
        self.search = ToolSearch(
            catalog,
            options=options,
            index=index,
            session_store=session_store,
            always_on=always_on,
            conversation_key=conversation_key,
            retention=retention,
            channel=channel,
            reveal=reveal,
            reveal_min_relative_score=reveal_min_relative_score,
            fill_cache_minimum=fill_cache_minimum,
            send_all_below=send_all_below,
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

    def conversation_key_of(self, request: ChatClientRequest) -> str:
        """The key the conversation's discovered tools are stored under (see ``ToolSearch``)."""
        return self.search.conversation_key_of(request, owner=self.name)
