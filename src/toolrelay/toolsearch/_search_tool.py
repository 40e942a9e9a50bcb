"""The ``tool_search`` tool, the texts that introduce it, and the record of its searches.

The tool the model calls to find tools: ``tool_search(query, max_results?, category?)``
answers with a JSON list of ``{"name"}`` objects, best match first, e.g.::

    [{"name":"orders__cancel"},{"name":"orders__refund"}]

The name is the provider-safe form the model calls the tool by. The answer names the tools
and nothing more: from the next model call on each one is shown in full (description and
schema) among the tools, so a description in the answer would be read twice, and would stay
in the history of every later request. By default hits scoring below half the best one's
score are left out (:data:`DEFAULT_MIN_RELATIVE_SCORE`), and so are hits the model is
already shown, but the best.

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
longer than :data:`MAX_QUERY_LENGTH` characters is refused as an invalid argument before the
index sees it.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Annotated, Any, Final

from pydantic import AfterValidator

from toolrelay._storable import valid_unicode
from toolrelay.exceptions import ConfigurationError
from toolrelay.execution._pipeline import META_TOOL
from toolrelay.messages import Message, SystemMessage, ToolResponseMessage
from toolrelay.models._schemas import provider_schema
from toolrelay.search._base import (
    MAX_RESULTS_LIMIT,
    AllowedTools,
    SearchRequest,
    SearchResponse,
    ToolIndex,
)
from toolrelay.search._usage import UsageEntry
from toolrelay.tools import FunctionTool, ToolDefinition, ToolMetadata, provider_safe_name
from toolrelay.tools._language import replace_texts
from toolrelay.tools._schema import cached_function_schema

if TYPE_CHECKING:
    from toolrelay.search._history import QueryHistory

__all__ = [
    "CALL_TOOL_NAME",
    "DEFAULT_MIN_RELATIVE_SCORE",
    "DEFAULT_PARAMETER_DESCRIPTIONS",
    "DEFAULT_SEARCH_DESCRIPTION",
    "DEFAULT_SYSTEM_SUFFIX",
    "INLINE_SEARCH_BELOW",
    "MAX_QUERY_LENGTH",
    "TOOL_SEARCH_NAME",
    "SearchQuery",
    "SearchRunner",
    "ToolSearchRecord",
    "ToolSearchReport",
    "ToolSearchRound",
    "ToolSearcher",
    "check_search_options",
    "defined_in",
    "definition_hit",
    "definitions_answer",
    "search_answer",
    "search_tool_schema",
    "with_system_suffix",
]

TOOL_SEARCH_NAME = "tool_search"
"""The name of the search tool (provider-safe as it is)."""

CALL_TOOL_NAME = "call_tool"
"""The name of the tool that runs a found tool by name, in the proxy channel and the gateway."""

DEFAULT_SEARCH_DESCRIPTION = (
    "Find hidden tools by what they do; call them from your next step by the exact names returned."
)
"""What the model reads about ``tool_search``."""

DEFAULT_PARAMETER_DESCRIPTIONS: Mapping[str, str] = MappingProxyType(
    {
        "query": "The action and its object, e.g. 'cancel order'.",
        "max_results": "How many tools (1-10).",
        "category": "Only this category, e.g. 'refund' for refund.* tools.",
    }
)
"""What the model reads about each parameter of ``tool_search`` (as its docstring says)."""

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

DEFAULT_SYSTEM_SUFFIX = f"Most tools are hidden; find them with {TOOL_SEARCH_NAME}."
"""Appended to the system message of every round, telling the model how to find tools."""

DEFAULT_MIN_RELATIVE_SCORE = 0.5
"""Hits scoring below this fraction of the best hit's score are left out of an answer.

In a small catalog one tool often answers a query clearly and the rest only share a word
with it; every hit returned is shown with every later request, so those cost tokens for
nothing. Measured with ``max_results=5`` on the dev queries of ``benchmarks/data`` (hits per
answer, Complete@5 against no cut-off), hybrid index: BFCL 4.64 hits, 85.2 (-0.1);
StableToolBench 4.72, 56.4 (-0.6); RestBench 4.80, 32.7 (-1.0). BM25: BFCL 4.37, 80.9
(-0.5); StableToolBench 4.48, 48.1 (-2.3); RestBench 4.50, 28.6 (-2.0). In the 28-tool
catalog of ``benchmarks/tokens.py`` it cuts 5 hits to 1-2 per search.
"""


def check_search_options(max_results: int, min_relative_score: float | None) -> None:
    """Refuse search options out of range.

    Raises:
        ConfigurationError: ``max_results`` is not 1-10 or ``min_relative_score`` not 0-1.
    """
    if not 1 <= max_results <= MAX_RESULTS_LIMIT:
        raise ConfigurationError(
            f"max_results must be between 1 and {MAX_RESULTS_LIMIT}, not {max_results}"
        )
    if min_relative_score is not None and not 0.0 <= min_relative_score <= 1.0:
        raise ConfigurationError(
            f"min_relative_score must be between 0 and 1, not {min_relative_score}"
        )


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
            "query": {"type": "string", "description": parameters["query"]},
            "max_results": {"type": "integer", "description": parameters["max_results"]},
            "category": {"type": "string", "description": parameters["category"]},
        },
        "required": ["query"],
    }


@functools.lru_cache(maxsize=64)
def _search_definition(description: str, parameters: tuple[tuple[str, str], ...]) -> ToolDefinition:
    # Built once per texts: a turn asks for it, and definitions are immutable.
    definition = ToolDefinition(
        name=TOOL_SEARCH_NAME,
        description=description,
        input_schema=search_tool_schema(DEFAULT_PARAMETER_DESCRIPTIONS),
    )
    return replace_texts(definition, parameters=dict(parameters)) if parameters else definition


def search_answer(response: SearchResponse, shown: frozenset[str] = frozenset()) -> str:
    """The text the model reads for ``response``: a compact JSON list, best hit first.

    Hits named in ``shown`` (tools the model already sees in full) are left out, except the
    best one: the answer lists the best match and what is new. It stays in the history of
    every later request, so the JSON has no spaces between items (the wire form escapes each
    of its quotes as well).
    """
    return json.dumps(
        [
            {"name": provider_safe_name(h.name)}
            for i, h in enumerate(response.hits)
            if i == 0 or h.name not in shown
        ],
        ensure_ascii=False,
        separators=(",", ":"),
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


def definitions_answer(hits: Sequence[Mapping[str, Any]]) -> str:
    """An answer carrying definitions, best first, as compact JSON.

    Each hit is a :func:`definition_hit`, plus what a caller adds; the answer stays in the
    history of every later request, so it has no spaces between items.
    """
    return _compact(list(hits))


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
    """One call of ``tool_search``.

    Attributes:
        query: The query as the model wrote it.
        max_results: How many hits were asked for (after defaults and clamping).
        category: The category the search was limited to, if any.
        response: What the index answered: hits with scores, total matches, time in ms.
        answer: The text the model read.
    """

    query: str
    max_results: int
    category: str | None
    response: SearchResponse
    answer: str

    @property
    def names(self) -> list[str]:
        """The canonical names found, best first."""
        return self.response.names


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
        channel: How found tools reached the model: ``"rewrite"`` (the request's tool list
            showed them) or ``"proxy"`` (``tool_search`` answered with their definitions and
            they ran through ``call_tool``).
        catalog_fingerprint: The fingerprint of the indexed catalog.
        reindexed: Whether this turn found the catalog changed and rebuilt the index.
        rounds: One entry per model call, in order.
        discovered: The conversation's discovered tools at the end of the turn, in order.
        learned: What the turn added to the usage log: each tool a search of the turn found
            and the model then called successfully, with the query that found it.
        history_entries: How many usage-log entries the turn's searches ranked with.
    """

    conversation_key: str
    catalog_fingerprint: str | None
    reindexed: bool
    rounds: tuple[ToolSearchRound, ...]
    discovered: tuple[str, ...]
    channel: str = "rewrite"
    learned: tuple[UsageEntry, ...] = ()
    history_entries: int = 0

    @property
    def searches(self) -> tuple[ToolSearchRecord, ...]:
        """Every search of the turn, in order."""
        return tuple(s for r in self.rounds for s in r.searches)


class ToolSearcher:
    """Runs the searches of one turn over a shared index, within one permitted view.

    Args:
        index: The catalog's index (shared by every conversation).
        allowed: The tools this turn may find (see ``SearchRequest.allowed``).
        max_results: Hits returned when the model does not say (1-10).
        min_score: Hits scoring below this are dropped (on the index's own scale).
        min_relative_score: Hits scoring below this fraction of the best hit's score are
            dropped, whatever ``max_results`` the model asked for; ``None`` keeps them (see
            :data:`DEFAULT_MIN_RELATIVE_SCORE`).
        history: The past queries of this turn's scope, which every search ranks with
            (``SearchRequest.history``); ``None``: none.
        runner: Runs the searches (default: a new :class:`SearchRunner` of ``index``); give
            the one kept with the index so its timings outlive the turn.
        definitions: The catalog's definitions by canonical name, for answers that carry
            them (the proxy channel: :func:`definitions_answer`); ``None``: answers name the
            tools only (:func:`search_answer`).

    Attributes:
        shown: Names of the tools the current model call shows; the advisor sets it before
            each call. Answers leave them out, but the best hit (see :func:`search_answer`).
        defined: For answers that carry definitions: the definitions the current model
            call's history already holds (:func:`defined_in`); the advisor sets it before
            each call. Answers leave those tools out, but name the best hit.
        records: The searches of tools bound to a call (``as_tool(call_id=...)``), by call id,
            until :meth:`take_records` takes them.

    Raises:
        ConfigurationError: ``max_results`` or ``min_relative_score`` is out of range.
    """

    def __init__(
        self,
        *,
        index: ToolIndex,
        allowed: AllowedTools,
        max_results: int,
        min_score: float | None = None,
        min_relative_score: float | None = DEFAULT_MIN_RELATIVE_SCORE,
        history: QueryHistory | None = None,
        runner: SearchRunner | None = None,
        definitions: Mapping[str, ToolDefinition] | None = None,
    ) -> None:
        check_search_options(max_results, min_relative_score)
        self.definitions = definitions
        self.index = index
        self.runner = runner if runner is not None else SearchRunner(index)
        self.history = history
        self.allowed = allowed
        self.max_results = max_results
        self.min_score = min_score
        self.min_relative_score = min_relative_score
        self.shown: frozenset[str] = frozenset()
        self.defined: Mapping[str, str] = {}
        self.records: dict[str, ToolSearchRecord] = {}

    def as_tool(
        self,
        description: str = DEFAULT_SEARCH_DESCRIPTION,
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
            parameters: What it reads about each parameter (``query``, ``max_results``,
                ``category``), by name; parameters not named keep the English text of
                :data:`DEFAULT_PARAMETER_DESCRIPTIONS`.
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
                query: SearchQuery, max_results: int | None = None, category: str | None = None
            ) -> str:
                record = await self.search(query, max_results, category)
                self.records[key] = record
                return record.answer

            function = bound
        return FunctionTool(
            function=function,
            definition=definition,
            # The library's own tool: the manager never asks ``authorize`` about it.
            metadata=ToolMetadata(read_only=True, extra={META_TOOL: True}),
            schema=cached_function_schema(self.tool_search, tool_name=TOOL_SEARCH_NAME),
            source=TOOL_SEARCH_NAME,
        )

    async def tool_search(
        self, query: SearchQuery, max_results: int | None = None, category: str | None = None
    ) -> str:
        """Search the tool catalog.

        (The index searches in the event loop's default executor: an index that embeds the
        query never blocks the loop, and synchronous tools stuck in their own threads never
        hold up a search.)

        Args:
            query: The action and its object, e.g. 'cancel order'.
            max_results: How many tools (1-10).
            category: Only this category, e.g. 'refund' for refund.* tools.
        """
        return (await self.search(query, max_results, category)).answer

    async def search(
        self, query: str, max_results: int | None = None, category: str | None = None
    ) -> ToolSearchRecord:
        """One search within this turn's view, as the tool answers it, with its record."""
        request = SearchRequest(
            # Embedders and tokenizers need valid Unicode: a lone surrogate becomes U+FFFD.
            query=valid_unicode(query),
            max_results=max_results if max_results is not None else self.max_results,
            min_score=self.min_score,
            min_relative_score=self.min_relative_score,
            allowed=self.allowed,
            category=category or None,
            history=self.history,
        )
        response = await self.runner.search(request)
        definitions = self.definitions
        if definitions is None:
            text = search_answer(response, shown=self.shown)
        else:
            text = definitions_answer(self._definition_hits(response, definitions))
        return ToolSearchRecord(
            query=query,
            max_results=request.max_results,
            category=request.category,
            response=response,
            answer=text,
        )

    def _definition_hits(
        self, response: SearchResponse, definitions: Mapping[str, ToolDefinition]
    ) -> list[dict[str, Any]]:
        """The hits of an answer carrying definitions: each new one in full.

        A hit the model already has (a shown tool, or one whose unchanged definition an
        earlier answer in the request's history gave: :attr:`defined`) is left out, but the
        best, which is named only.
        """
        hits: list[dict[str, Any]] = []
        for position, found in enumerate(response.hits):
            hit = definition_hit(definitions[found.name])
            if found.name not in self.shown and self.defined.get(found.name) != _compact(hit):
                hits.append(hit)
            elif position == 0:
                hits.append({"name": found.name})
        return hits

    def take_records(self, call_ids: Sequence[str]) -> tuple[ToolSearchRecord, ...]:
        """Remove and return the records of the calls ``call_ids`` that searched, in that order."""
        return tuple(self.records.pop(i) for i in call_ids if i in self.records)
