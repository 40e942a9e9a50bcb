"""The ``tool_search`` tool, the texts that introduce it, and the record of its searches.

The tool the model calls to find tools: ``tool_search(queries, max_results?, category?)``
takes one query per need, so a task's every need is searched in one call (one call's output
costs a fraction of a call per need, and output is the dearest token), and answers with one
JSON list of ``{"name"}`` objects, each query's best match first, a tool named once, e.g.::

    [{"name":"orders__cancel"},{"name":"orders__refund"}]

The name is the provider-safe form the model calls the tool by. The answer names the tools
and nothing more: from the next model call on each one is shown in full (description and
schema) among the tools (the rewrite channel) or in the tool change that follows the answer
in the history (the native channel), so a description in the answer would be read twice,
and would stay in the history of every later request. By default an answer shows the best
two hits less those scoring under 0.9 of the best one's score (the measured rule of
:data:`~toolrelay.toolsearch._options.DEFAULT_MIN_RELATIVE_SCORE`), and leaves out hits the
model is already shown, but the best.

Everything here travels with many requests (the tool's definition and the suffix with every
one, each answer in the history of every later one), so it is kept short: the schema the
model is shown has plain optional parameters (the schema that validates the arguments still
accepts ``null``), the answer is compact JSON. The texts here are the English ones;
:class:`~toolrelay.toolsearch.SearchTexts` has them in other languages.

A :class:`ToolSearcher` exists per turn: it searches the shared index through that turn's
permitted view (``SearchRequest.allowed``), so a search can only ever return tools the user
may use, and it keeps a :class:`ToolSearchRecord` of every search for the turn's report.
Searches run in the event loop's default executor, never in the threads of synchronous tools
(:func:`~toolrelay.tools.sync_tool_workers`), so tools stuck in theirs never stop a search,
unless the index answers faster than the hop to a thread costs (:class:`SearchRunner`); a query
longer than :data:`MAX_QUERY_LENGTH` characters, or more than :data:`MAX_QUERIES` queries, is
refused as an invalid argument before the index sees it.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Final

from pydantic import AfterValidator, BeforeValidator, Field

from toolrelay._storable import valid_unicode
from toolrelay.execution._pipeline import META_TOOL
from toolrelay.messages import Message, SystemMessage, ToolResponseMessage
from toolrelay.models._schemas import provider_schema
from toolrelay.search._base import AllowedTools, SearchRequest, SearchResponse, ToolIndex
from toolrelay.search._usage import UsageEntry
from toolrelay.tools import FunctionTool, ToolDefinition, ToolMetadata, provider_safe_name
from toolrelay.tools._language import replace_texts
from toolrelay.tools._schema import cached_function_schema
from toolrelay.toolsearch._options import SearchOptions
from toolrelay.toolsearch._texts import ENGLISH, TOOL_SEARCH_NAME

if TYPE_CHECKING:
    from toolrelay.search._history import QueryHistory

__all__ = [
    "INLINE_SEARCH_BELOW",
    "MAX_QUERIES",
    "MAX_QUERY_LENGTH",
    "SearchQueries",
    "SearchQuery",
    "SearchRunner",
    "ToolSearchRecord",
    "ToolSearchReport",
    "ToolSearchRound",
    "ToolSearcher",
    "defined_in",
    "definition_hit",
    "definitions_answer",
    "search_answer",
    "search_tool_schema",
    "with_system_suffix",
]

MAX_QUERY_LENGTH: Final = 1_000
"""Characters of a ``tool_search`` query beyond which it is refused (a query is a few words;
tokenizing or embedding a runaway one would hold up the search)."""


def _bounded_query(query: str) -> str:
    # A validator, not Field(max_length=...): pydantic's length constraint refuses a string
    # holding a lone surrogate, which the search turns into U+FFFD instead.
    if len(query) > MAX_QUERY_LENGTH:
        raise ValueError(f"String should have at most {MAX_QUERY_LENGTH} characters")
    return query


SearchQuery = Annotated[str, AfterValidator(_bounded_query)]
"""A ``tool_search`` query as its arguments are validated."""

MAX_QUERIES: Final = 10
"""Queries one ``tool_search`` call may make (a task's needs; each query is a search)."""


def _listed_queries(value: object) -> object:
    # One query sent bare is one need: answered, not refused for its missing brackets.
    return [value] if isinstance(value, str) else value


SearchQueries = Annotated[
    list[SearchQuery],
    BeforeValidator(_listed_queries),
    Field(min_length=1, max_length=MAX_QUERIES),
]
"""The ``queries`` of a ``tool_search`` call as they are validated: 1 to :data:`MAX_QUERIES`
queries (a single string is one query)."""


def search_tool_schema(parameters: Mapping[str, str]) -> dict[str, Any]:
    """The input schema of ``tool_search`` as the model is shown it.

    Plain types with no ``null`` unions, defaults or closing keywords: the function's own
    schema (``max_results: int | None = None``) would render each optional parameter as an
    ``anyOf`` with ``null``, which costs tokens in every request. Strict-mode providers get
    their form from it as from any schema.

    Args:
        parameters: The description of each parameter, by name.
    """
    return {
        "type": "object",
        "properties": {
            "queries": {
                "type": "array",
                "items": {"type": "string"},
                "description": parameters["queries"],
            },
            "max_results": {"type": "integer", "description": parameters["max_results"]},
            "category": {"type": "string", "description": parameters["category"]},
        },
        "required": ["queries"],
    }


@functools.lru_cache(maxsize=64)
def _search_definition(description: str, parameters: tuple[tuple[str, str], ...]) -> ToolDefinition:
    # Built once per texts: a turn asks for it, and definitions are immutable.
    definition = ToolDefinition(
        name=TOOL_SEARCH_NAME,
        description=description,
        input_schema=search_tool_schema(ENGLISH.parameters),
    )
    return replace_texts(definition, parameters=dict(parameters)) if parameters else definition


def search_answer(
    responses: Sequence[SearchResponse],
    shown: frozenset[str] = frozenset(),
    max_chars: int | None = None,
) -> tuple[str, tuple[tuple[str, ...], ...]]:
    """The text the model reads for one call's ``responses`` (one per query), and each one's names.

    A compact JSON list of ``{"name"}`` objects: each query's hits in turn, best first, a tool
    named once. Hits named in ``shown`` (tools the model already sees in full) are left out,
    except each query's best: the answer lists the best matches and what is new. It stays in
    the history of every later request, so the JSON has no spaces between items (the wire
    form escapes each of its quotes as well). Names that would take it past ``max_chars`` are
    left out, and are not found. The names of each response are those it found, best first.
    """
    entries: dict[str, str] = {}
    for response in responses:
        for i, h in enumerate(response.hits):
            if (i == 0 or h.name not in shown) and h.name not in entries:
                entries[h.name] = _compact({"name": provider_safe_name(h.name)})
    parts = list(entries.values())
    kept = _fitting(parts, max_chars)
    given = set(list(entries)[:kept]) | shown
    return _listed(parts[:kept]), tuple(
        tuple(h.name for h in response.hits if h.name in given) for response in responses
    )


def definition_hit(definition: ToolDefinition) -> dict[str, Any]:
    """One hit of an answer that carries definitions: what the model needs to call the tool.

    ``name`` is the canonical name, which ``call_tool`` takes (as it takes the provider-safe
    form); ``description`` and ``input_schema`` are the tool's own, as a provider is sent
    them (without the ``$schema`` dialect marker) and without what says nothing: an empty
    description, an empty ``required`` list. The hit stays in the history of every later
    request, so nothing in it is there for nothing.
    """
    hit: dict[str, Any] = {"name": definition.name}
    if definition.description:
        hit["description"] = definition.description
    schema = provider_schema(definition.input_schema)
    if schema.get("required") == []:
        del schema["required"]
    hit["input_schema"] = schema
    return hit


def defined_in(
    messages: Sequence[Message], known: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The definitions earlier search answers in ``messages`` gave, as their compact JSON, by name.

    What the model can read of the definitions it was given: each hit carrying an
    ``input_schema`` in an answer of ``tool_search`` among ``messages`` (the request's own
    history, so only what memory replayed of earlier turns counts). A later answer leaves such
    a tool out, or names it only, while its definition is unchanged (see
    :meth:`ToolSearcher.search`).

    Args:
        messages: The request's messages.
        known: What an earlier scan of the first messages found, to extend with the rest.
    """
    defined = dict(known or {})
    for message in messages:
        if not isinstance(message, ToolResponseMessage):
            continue
        for response in message.responses:
            if response.name != TOOL_SEARCH_NAME or response.is_error:
                continue
            try:
                hits = json.loads(response.data)
            except ValueError:
                continue
            if not isinstance(hits, list):
                continue
            for hit in hits:
                if not isinstance(hit, dict) or "input_schema" not in hit:
                    continue
                if isinstance(hit.get("name"), str):
                    defined[hit["name"]] = _compact(hit)
    return defined


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def definitions_answer(
    hits: Sequence[Mapping[str, Any]], max_chars: int | None = None, left_out: str = ""
) -> tuple[str, int]:
    """An answer carrying definitions, best first, as compact JSON; and how many are whole.

    Each hit is a :func:`definition_hit` (plus what a caller adds) or a name alone. The answer
    fits ``max_chars`` by whole hits: as many as fit, best first, are given whole (the best
    one always), and the rest by name with ``left_out`` saying why (the model searches for
    one alone to see it); nothing is ever cut inside a definition, so the answer is always
    valid JSON. It stays in
    the history of every later request, so it has no spaces between items.
    """
    whole = [_compact(hit) for hit in hits]
    named = [_compact({"name": hit["name"], "note": left_out}) for hit in hits]
    # The best hit is always whole, even alone past the bound: a tool searched for by itself
    # must be reachable, whatever the length of its definition.
    for count in range(len(hits), 0, -1):
        parts = whole[:count] + named[count:]
        fits = _fitting(parts, max_chars)
        if fits == len(parts) or count == 1:
            return _listed(parts[: max(fits, 1)]), max(min(count, fits), 1)
    return "[]", 0


def _listed(parts: Sequence[str]) -> str:
    return "[" + ",".join(parts) + "]"


def _fitting(parts: Sequence[str], max_chars: int | None) -> int:
    """How many of ``parts``, from the first, fit in a JSON list of at most ``max_chars``."""
    if max_chars is None:
        return len(parts)
    total = 2  # the brackets
    for count, part in enumerate(parts):
        total += len(part) + (1 if count else 0)
        if total > max_chars:
            return count
    return len(parts)


def with_system_suffix(messages: Sequence[Message], suffix: str | None) -> tuple[Message, ...]:
    """``messages`` with ``suffix`` appended to the first system message (or as one)."""
    if not suffix:
        return tuple(messages)
    for position, message in enumerate(messages):
        if isinstance(message, SystemMessage):
            extended = SystemMessage(text=f"{message.text}\n\n{suffix}")
            return (*messages[:position], extended, *messages[position + 1 :])
    return (SystemMessage(text=suffix), *messages)


INLINE_SEARCH_BELOW: Final = 0.0005
"""Seconds under which an in-process index's search runs in the event loop (see
:class:`SearchRunner`): a hop to a worker thread and back costs about 0.1 ms."""


class SearchRunner:
    """Runs one index's searches: in a worker thread, or inline while they are quick.

    A search in a worker thread never blocks the event loop, but the hop costs more than a
    keyword index over a small catalog takes to answer. So each search of an in-process
    index (a :class:`~toolrelay.search.ScoringToolIndex`, which does no I/O) is timed: one
    under :data:`INLINE_SEARCH_BELOW` lets the next run inline, and a slower one (a query
    embedding, a large catalog) sends the next back to a thread. Other indexes (PostgreSQL,
    wrappers) always search in a thread. Keep one per index, beside it.
    """

    def __init__(self, index: ToolIndex) -> None:
        # Imported here: the scoring indexes need numpy and more, which plain clients do not.
        from toolrelay.search._scoring import ScoringToolIndex

        self.index = index
        self.inline = False
        self._timed = isinstance(index, ScoringToolIndex)

    async def search(self, request: SearchRequest) -> SearchResponse:
        """``index.search(request)``, inline or in a worker thread as above."""
        if self.inline:
            return self._search(request)
        return await asyncio.to_thread(self._search, request)

    def _search(self, request: SearchRequest) -> SearchResponse:
        start = time.perf_counter()
        response = self.index.search(request)
        if self._timed:
            self.inline = time.perf_counter() - start < INLINE_SEARCH_BELOW
        return response


@dataclass(frozen=True, kw_only=True)
class ToolSearchRecord:
    """One search: one query of a ``tool_search`` call (or the reveal's).

    Attributes:
        query: The query as the model wrote it.
        max_results: How many hits were asked for (after defaults and clamping).
        category: The category the search was limited to, if any.
        response: What the index answered: hits with scores, total matches, time in ms.
        names: The canonical names it found, best first: its hits the call's answer gave
            (whole, or named as already known), never one left out because the answer was
            full.
    """

    query: str
    max_results: int
    category: str | None
    response: SearchResponse
    names: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class ToolSearchRound:
    """What one model call of a turn was shown and what its tool round searched.

    Attributes:
        model_call: The model call's number in the turn, from 1.
        exposed: The canonical names of the tools the model was shown, in the order sent.
        searches: The searches of the tool round that followed, in the order of the calls.
        unavailable: Names the model called without being shown them (answered with the
            unavailable text; nothing ran).
    """

    model_call: int
    exposed: tuple[str, ...]
    searches: tuple[ToolSearchRecord, ...] = ()
    unavailable: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class ToolSearchReport:
    """What the tool search advisor did in one turn (a response's ``tool_search``).

    Attributes:
        conversation_key: The key the discovered tools are stored under.
        channel: How found tools reached the model (the channel the turn took, never
            ``"auto"``): ``"native"`` (a tool change in the history made them available),
            ``"proxy"`` (``tool_search`` answered with their definitions and they ran through
            ``call_tool``) or ``"rewrite"`` (the request's tool list showed them).
        catalog_fingerprint: The fingerprint of the indexed catalog.
        reindexed: Whether this turn found the catalog changed and rebuilt the index.
        rounds: One entry per model call, in order.
        discovered: The conversation's discovered tools at the end of the turn, in order.
        learned: What the turn added to the usage log: each tool a search of the turn found
            and the model then called successfully, with the query that found it.
        history_entries: How many usage-log entries the turn's searches ranked with.
        revealed: The search before the first model call (the reveal), ``None`` when none
            ran (turned off, a small catalog sent whole, or no user text): its ``query`` is
            the request's text, its ``response`` the hits with their scores, its ``names``
            the tools revealed (shown from the first model call on: the conversation's first
            reveal pins them, later ones show them through the channel; in the proxy channel a
            ``tool_search`` call and its answer follow the user's message).
        pinned: The conversation's pinned tools: the hits of the reveal before its first
            model call, which every model call of the conversation lists after the request's
            own tools, unchanged so the prompt cache keeps its prefix (their order).
        sent_all_tools: Why every permitted tool was sent, with no search (the small-catalog
            rule: the catalog's tokens against ``send_all_below``); ``None`` when searched.
    """

    conversation_key: str
    catalog_fingerprint: str | None
    reindexed: bool
    rounds: tuple[ToolSearchRound, ...]
    discovered: tuple[str, ...]
    channel: str = "rewrite"
    learned: tuple[UsageEntry, ...] = ()
    history_entries: int = 0
    revealed: ToolSearchRecord | None = None
    pinned: tuple[str, ...] = ()
    sent_all_tools: str | None = None

    @property
    def searches(self) -> tuple[ToolSearchRecord, ...]:
        """Every search of the turn, in order."""
        return tuple(s for r in self.rounds for s in r.searches)


class ToolSearcher:
    """Runs the searches of one turn over a shared index, within one permitted view.

    Args:
        index: The catalog's index (shared by every conversation).
        allowed: The tools this turn may find (see ``SearchRequest.allowed``).
        options: How it searches (``max_results``, ``min_score``, ``min_relative_score``).
        history: The past queries of this turn's scope, which every search ranks with
            (``SearchRequest.history``); ``None``: none.
        runner: Runs the searches (default: a new :class:`SearchRunner` of ``index``); give
            the one kept with the index so its timings outlive the turn.
        hits: For answers that carry definitions (the proxy channel, the gateway), each
            tool's hit by canonical name (:func:`definition_hit`, plus what a front end adds);
            ``None``: answers name the tools only (:func:`search_answer`).
        max_chars: The characters an answer may take (the result bound of the manager that
            runs the search); it fits by whole hits (:func:`definitions_answer`).
        left_out: Said of a hit whose definition did not fit (the texts' ``left_out``).

    Attributes:
        shown: Names of the tools the current model call shows; the advisor sets it before
            each call. Answers leave them out, but the best hit (see :func:`search_answer`).
        defined: For answers that carry definitions: the definitions the current model
            call's history already holds (:func:`defined_in`); the advisor sets it before
            each call. Answers leave those tools out, but name the best hit.
        records: The searches of tools bound to a call (``as_tool(call_id=...)``), one per
            query, by call id, until :meth:`take_records` takes them.
    """

    def __init__(
        self,
        *,
        index: ToolIndex,
        allowed: AllowedTools,
        options: SearchOptions | None = None,
        history: QueryHistory | None = None,
        runner: SearchRunner | None = None,
        hits: Mapping[str, Mapping[str, Any]] | None = None,
        max_chars: int | None = None,
        left_out: str = ENGLISH.left_out,
    ) -> None:
        self.options = options if options is not None else SearchOptions()
        self.index = index
        self.runner = runner if runner is not None else SearchRunner(index)
        self.history = history
        self.allowed = allowed
        self.hits = hits
        self.max_chars = max_chars
        self.left_out = left_out
        self.shown: frozenset[str] = frozenset()
        self.defined: Mapping[str, str] = {}
        self.records: dict[str, tuple[ToolSearchRecord, ...]] = {}

    def as_tool(
        self,
        description: str = ENGLISH.description,
        *,
        parameters: Mapping[str, str] | None = None,
        definition: ToolDefinition | None = None,
        call_id: str | None = None,
    ) -> FunctionTool:
        """This searcher as the ``tool_search`` tool the model calls.

        The model is shown :func:`search_tool_schema`; the arguments are validated against
        the schema of :meth:`tool_search`, which also accepts ``null`` for the optional ones.

        Args:
            description: What the model reads about the tool.
            parameters: What it reads about each parameter (``queries``, ``max_results``,
                ``category``), by name; parameters not named keep the English text.
            definition: The whole definition instead (``description`` and ``parameters``
                are then not read).
            call_id: Bind the tool to one call: its search is kept in :attr:`records` under
                this id, for the turn's report.

        Raises:
            ToolDefinitionError: ``parameters`` names a parameter the tool does not have.
        """
        if definition is None:
            texts = tuple(sorted((parameters or {}).items()))
            definition = _search_definition(description, texts)
        function = self.tool_search
        if call_id is not None:
            key = call_id

            async def bound(
                queries: SearchQueries, max_results: int | None = None, category: str | None = None
            ) -> str:
                answer, self.records[key] = await self.search(queries, max_results, category)
                return answer

            function = bound
        return FunctionTool(
            function=function,
            definition=definition,
            # The library's own tool: the manager never asks ``authorize`` about it, and
            # leaves its answer whole (it fits the bound by whole hits).
            metadata=ToolMetadata(read_only=True, extra={META_TOOL: True}),
            schema=cached_function_schema(self.tool_search, tool_name=TOOL_SEARCH_NAME),
            source=TOOL_SEARCH_NAME,
        )

    async def tool_search(
        self, queries: SearchQueries, max_results: int | None = None, category: str | None = None
    ) -> str:
        """Search the tool catalog.

        (The index searches in the event loop's default executor: an index that embeds the
        query never blocks the loop, and synchronous tools stuck in their own threads never
        hold up a search.)

        Args:
            queries: One per need: the action and its object, e.g. 'cancel order'.
            max_results: How many tools per query (1-10).
            category: Only this category, e.g. 'refund' for refund.* tools.
        """
        return (await self.search(queries, max_results, category))[0]

    async def search(
        self,
        queries: Sequence[str],
        max_results: int | None = None,
        category: str | None = None,
    ) -> tuple[str, tuple[ToolSearchRecord, ...]]:
        """One call's searches within this turn's view: the answer, and a record per query."""
        options = self.options
        return await self._answered(
            queries,
            max_results=max_results if max_results is not None else options.max_results,
            min_relative_score=options.min_relative_score,
            category=category,
        )

    async def reveal(
        self, query: str, *, max_results: int, min_relative_score: float | None
    ) -> tuple[str, ToolSearchRecord]:
        """The search a turn makes before its first model call, with the request's text.

        As :meth:`search` of one query, with its own hit count and cut-off (the reveal's);
        the answer is what the proxy channel's history gives the model.
        """
        answer, (record,) = await self._answered(
            [query], max_results=max_results, min_relative_score=min_relative_score
        )
        return answer, record

    async def _answered(
        self,
        queries: Sequence[str],
        *,
        max_results: int,
        min_relative_score: float | None,
        category: str | None = None,
    ) -> tuple[str, tuple[ToolSearchRecord, ...]]:
        requests = [
            SearchRequest(
                # Embedders and tokenizers need valid Unicode: a lone surrogate becomes U+FFFD.
                query=valid_unicode(query),
                max_results=max_results,
                min_score=self.options.min_score,
                min_relative_score=min_relative_score,
                allowed=self.allowed,
                category=category or None,
                history=self.history,
            )
            for query in queries
        ]
        responses = [await self.runner.search(request) for request in requests]
        if self.hits is None:
            text, names = search_answer(responses, self.shown, self.max_chars)
        else:
            text, names = self._definitions(responses, self.hits)
        return text, tuple(
            ToolSearchRecord(
                query=query,
                max_results=request.max_results,
                category=request.category,
                response=response,
                names=found,
            )
            for query, request, response, found in zip(
                queries, requests, responses, names, strict=True
            )
        )

    def _definitions(
        self, responses: Sequence[SearchResponse], hits: Mapping[str, Mapping[str, Any]]
    ) -> tuple[str, tuple[tuple[str, ...], ...]]:
        """An answer carrying definitions: each new hit whole, as many as fit, a tool once.

        Each query's hits in turn. A hit the model already has (a shown tool, or one whose
        unchanged definition an earlier answer in the request's history gave:
        :attr:`defined`) is left out, but a query's best, which is named only; such hits
        count as found.
        """
        entries: dict[str, Mapping[str, Any]] = {}
        known: set[str] = set()
        for response in responses:
            for position, found in enumerate(response.hits):
                hit = hits[found.name]
                if found.name not in self.shown and self.defined.get(found.name) != _compact(hit):
                    entries.setdefault(found.name, hit)
                    continue
                known.add(found.name)
                if position == 0:
                    entries.setdefault(found.name, {"name": found.name})
        ordered = list(entries.values())
        text, whole = definitions_answer(ordered, self.max_chars, self.left_out)
        given = {entry["name"] for entry in ordered[:whole]} | known
        return text, tuple(
            tuple(h.name for h in response.hits if h.name in given) for response in responses
        )

    def take_records(self, call_ids: Sequence[str]) -> tuple[ToolSearchRecord, ...]:
        """Remove and return the searches of the calls ``call_ids`` that searched, in that order."""
        return tuple(
            record for i in call_ids if i in self.records for record in self.records.pop(i)
        )
