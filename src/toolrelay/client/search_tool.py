"""The ``tool_search`` tool, the texts that introduce it, and the record of its searches.

The tool the model calls to find tools: ``tool_search(query, max_results?, category?)``
answers with a JSON list of ``{"name", "description"}`` objects, best match first, e.g.::

    [{"name": "orders__cancel", "description": "Cancel an order that has not shipped yet."}]

The name is the provider-safe form the model calls the tool by; the description is the first
sentence of the tool's description (the whole definition is shown once the tool is exposed).
The texts here are the English ones; :mod:`~toolrelay.client.search_texts` has them in other
languages.

A :class:`ToolSearcher` exists per turn: it searches the shared index through that turn's
permitted view (``SearchRequest.allowed``), so a search can only ever return tools the user
may use, and it keeps a :class:`ToolSearchRecord` of every search for the turn's report.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from toolrelay.messages import Message, SystemMessage
from toolrelay.search.base import AllowedTools, SearchRequest, SearchResponse, ToolIndex
from toolrelay.tools import FunctionTool, ToolMetadata, provider_safe_name
from toolrelay.tools.language import replace_texts
from toolrelay.tools.schema import cached_function_schema

if TYPE_CHECKING:
    from toolrelay.client.requests import ChatClientResponse
    from toolrelay.client.responses import CallResponse

__all__ = [
    "DEFAULT_PARAMETER_DESCRIPTIONS",
    "DEFAULT_SEARCH_DESCRIPTION",
    "DEFAULT_SYSTEM_SUFFIX",
    "TOOL_SEARCH_KEY",
    "TOOL_SEARCH_NAME",
    "ToolSearchRecord",
    "ToolSearchReport",
    "ToolSearchRound",
    "ToolSearcher",
    "tool_search_report",
    "with_system_suffix",
]

TOOL_SEARCH_NAME = "tool_search"
"""The name of the search tool (provider-safe as it is)."""

TOOL_SEARCH_KEY = "toolrelay.tool_search"
"""Response context key of the :class:`ToolSearchReport` the tool search advisor leaves."""

DEFAULT_SEARCH_DESCRIPTION = (
    "Search the tool catalog for tools that can do what you need. Most tools are hidden until "
    "a search finds them; the tools found can be called from your next step on, by the exact "
    "name returned. Answers with a JSON list of {name, description}, best match first. Use a "
    "few specific words for the action and its object, e.g. 'cancel order'."
)
"""What the model reads about ``tool_search``."""

DEFAULT_PARAMETER_DESCRIPTIONS: Mapping[str, str] = MappingProxyType(
    {
        "query": "A few words for the action you need and its object, e.g. 'cancel order'.",
        "max_results": "How many tools to return (1-10).",
        "category": "Only tools of this category, e.g. 'refund' for 'refund.*' tools.",
    }
)
"""What the model reads about each parameter of ``tool_search`` (as its docstring says)."""

DEFAULT_SYSTEM_SUFFIX = (
    "Only some of your tools are shown to you. When you need a tool you cannot see, call "
    f"{TOOL_SEARCH_NAME} with a few words describing the action; the tools it finds become "
    "callable in your next step. Call tools only by names you were shown."
)
"""Appended to the system message of every round, telling the model how to find tools."""


def with_system_suffix(messages: Sequence[Message], suffix: str | None) -> tuple[Message, ...]:
    """``messages`` with ``suffix`` appended to the first system message (or as one)."""
    if not suffix:
        return tuple(messages)
    for position, message in enumerate(messages):
        if isinstance(message, SystemMessage):
            extended = SystemMessage(text=f"{message.text}\n\n{suffix}")
            return (*messages[:position], extended, *messages[position + 1 :])
    return (SystemMessage(text=suffix), *messages)


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
    """What the tool search advisor did in one turn (at :data:`TOOL_SEARCH_KEY`).

    Attributes:
        conversation_key: The key the discovered tools are stored under.
        catalog_fingerprint: The fingerprint of the indexed catalog.
        reindexed: Whether this turn found the catalog changed and rebuilt the index.
        rounds: One entry per model call, in order.
        discovered: The conversation's discovered tools at the end of the turn, in order.
    """

    conversation_key: str
    catalog_fingerprint: str | None
    reindexed: bool
    rounds: tuple[ToolSearchRound, ...]
    discovered: tuple[str, ...]

    @property
    def searches(self) -> tuple[ToolSearchRecord, ...]:
        """Every search of the turn, in order."""
        return tuple(s for r in self.rounds for s in r.searches)


def tool_search_report(response: ChatClientResponse | CallResponse) -> ToolSearchReport | None:
    """The tool search advisor's report in ``response``'s context, or ``None``."""
    context: Mapping[str, Any] = response.context
    report = context.get(TOOL_SEARCH_KEY)
    return report if isinstance(report, ToolSearchReport) else None


class ToolSearcher:
    """Runs the searches of one turn over a shared index, within one permitted view.

    Args:
        index: The catalog's index (shared by every conversation).
        allowed: The tools this turn may find (see ``SearchRequest.allowed``).
        max_results: Hits returned when the model does not say.
        min_score: Hits scoring below this are dropped (on the index's own scale).

    Attributes:
        records: Every search made so far, in the order they finished.
    """

    def __init__(
        self,
        *,
        index: ToolIndex,
        allowed: AllowedTools,
        max_results: int,
        min_score: float | None = None,
    ) -> None:
        self.index = index
        self.allowed = allowed
        self.max_results = max_results
        self.min_score = min_score
        self.records: list[ToolSearchRecord] = []

    def as_tool(
        self,
        description: str = DEFAULT_SEARCH_DESCRIPTION,
        *,
        parameters: Mapping[str, str] | None = None,
    ) -> FunctionTool:
        """This searcher as the ``tool_search`` tool the model calls.

        Args:
            description: What the model reads about the tool.
            parameters: What it reads about each parameter (``query``, ``max_results``,
                ``category``), by name; parameters not named keep the English text of
                :data:`DEFAULT_PARAMETER_DESCRIPTIONS`.

        Raises:
            ToolDefinitionError: ``parameters`` names a parameter the tool does not have.
        """
        tool = FunctionTool.from_function(
            self.tool_search,
            name=TOOL_SEARCH_NAME,
            description=description,
            metadata=ToolMetadata(read_only=True),
        )
        if not parameters:
            return tool
        return FunctionTool(
            function=tool.function,
            definition=replace_texts(tool.definition, parameters=parameters),
            metadata=tool.metadata,
            # The schema that validates the arguments; texts shown to the model are not in it.
            schema=cached_function_schema(self.tool_search, tool_name=TOOL_SEARCH_NAME),
        )

    def tool_search(
        self, query: str, max_results: int | None = None, category: str | None = None
    ) -> str:
        """Search the tool catalog.

        (Synchronous on purpose: the function tool runs it in a worker thread, so an index
        that embeds the query never blocks the event loop.)

        Args:
            query: A few words for the action you need and its object, e.g. 'cancel order'.
            max_results: How many tools to return (1-10).
            category: Only tools of this category, e.g. 'refund' for 'refund.*' tools.
        """
        request = SearchRequest(
            query=query,
            max_results=max_results if max_results is not None else self.max_results,
            min_score=self.min_score,
            allowed=self.allowed,
            category=category or None,
        )
        response = self.index.search(request)
        answer = json.dumps(
            [{"name": provider_safe_name(h.name), "description": h.summary} for h in response.hits],
            ensure_ascii=False,
        )
        self.records.append(
            ToolSearchRecord(
                query=query,
                max_results=request.max_results,
                category=request.category,
                response=response,
                answer=answer,
            )
        )
        return answer

    def take_records(self, answers: Sequence[str]) -> tuple[ToolSearchRecord, ...]:
        """Remove and return the records whose answers are ``answers``, in that order.

        Searches of one round run concurrently and finish in any order; the tool responses
        are in the order of the calls. Matching each response to the record that produced
        it gives the calls' order back (equal answers come from equal searches, so which of
        them matches does not matter).
        """
        taken = []
        for answer in answers:
            for position, record in enumerate(self.records):
                if record.answer == answer:
                    taken.append(self.records.pop(position))
                    break
        return tuple(taken)
