"""The replay model of ``toolrelay demo``: the refund-triage decisions, made again each run.

It is not a language model. It holds the decisions a model makes for the refund-triage task
(what to search for, which tool to call, with which arguments, what to answer) and takes
them one request at a time through the real client, tool search, index and tools. Each
decision is read off the conversation so far, the way a model reads it:

- a step whose tool the conversation has not shown yet (in the request's tools, or returned
  by a search of the turn, the reveal before the first model call included) is searched
  for, together with every later step's tool not shown yet, in one ``tool_search`` call (a
  query each, as its description asks); a step whose tool is shown calls it.
  When a search did not return it, the replay asks again for :data:`WIDER` hits
  (``max_results``); when that missed too, the replay says so in its message and calls the
  tool anyway, so
  the tool gate's "not available" answer shows; it then stops and says why, instead of
  pretending the task went on;
- arguments come from earlier tool results: the refunds to retry are the retryable ones the
  finder returned, incidents are opened for the refunds still failing after the retries,
  and the owner's message names the tickets that were opened;
- a tool that answers with an error ends the replay with that error quoted.

Each user message starts the triage again from whatever the back end holds by then. What the
replay says and writes comes in the demo's language (``_demo_language.py``).

Over any other catalog (``toolrelay chat --model replay --tools my_tools.py``) there are no
decisions to replay: :class:`SearchReplay` searches with each user message as the query and
answers with the names the search returned, calling none of them (it cannot choose arguments).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Callable, Sequence, Set
from dataclasses import dataclass, field
from typing import Any

from toolrelay._plural import plural
from toolrelay.cli._demo_language import ENGLISH_DEMO, DemoWords, ReplayWords
from toolrelay.cli._pipeline import search_queries
from toolrelay.exceptions import ConfigurationError
from toolrelay.messages import (
    AssistantMessage,
    ChatResponse,
    Generation,
    Message,
    ToolCall,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.prompt import Prompt
from toolrelay.tools._names import provider_safe_name
from toolrelay.toolsearch._texts import CALL_TOOL_NAME, TOOL_SEARCH_NAME

__all__ = [
    "REPLAY_NAME",
    "ReplayModel",
    "ReplayStep",
    "SearchReplay",
    "TurnSoFar",
    "triage_plan",
]

WIDER = 5
"""Hits the replay asks for when a search did not return the step's tool (``max_results``)."""

REPLAY_NAME = "replay"
"""The model's name, as given to ``--model``."""

_ERROR_SHOWN = 240

_SEARCH_PAIR = (TOOL_SEARCH_NAME, CALL_TOOL_NAME)


@dataclass(kw_only=True)
class TurnSoFar:
    """What the conversation since the last user message tells the replay.

    Attributes:
        searches: Each query searched, with the (provider-safe) names its last search
            returned.
        widened: The queries searched again asking for :data:`WIDER` hits.
        results: Decoded results of the successful calls, by provider-safe tool name.
        failures: ``(tool name, error text)`` of each failed call other than a search.
    """

    searches: dict[str, list[str]] = field(default_factory=dict)
    widened: set[str] = field(default_factory=set)
    results: dict[str, list[Any]] = field(default_factory=dict)
    failures: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def read(cls, messages: Sequence[Message]) -> TurnSoFar:
        """Read the turn: the messages after the last user message."""
        start = max((i for i, m in enumerate(messages) if isinstance(m, UserMessage)), default=-1)
        turn = cls()
        calls: dict[str, ToolCall] = {}
        for message in messages[start + 1 :]:
            if isinstance(message, AssistantMessage):
                calls.update((c.id, c) for c in message.tool_calls)
            elif isinstance(message, ToolResponseMessage):
                for response in message.responses:
                    call = calls.get(response.id)
                    name = provider_safe_name(call.name if call is not None else response.name)
                    if name == TOOL_SEARCH_NAME:
                        queries = search_queries(call) if call is not None else []
                        found = [] if response.is_error else _decoded(response.data)
                        # Answers carrying definitions (the proxy channel) give canonical
                        # names; the others provider-safe ones. One answer serves all the
                        # call's queries: each is taken to have returned it all.
                        names = (
                            [
                                provider_safe_name(str(hit.get("name")))
                                for hit in found
                                if isinstance(hit, dict)
                            ]
                            if isinstance(found, list)
                            else []
                        )
                        if call is not None and '"max_results"' in call.arguments:
                            turn.widened.update(queries)
                        # A call whose queries cannot be read still counts what it found.
                        for query in queries or [""]:
                            turn.searches[query] = names
                    elif response.is_error:
                        turn.failures.append((name, response.data))
                    else:
                        turn.results.setdefault(name, []).append(_decoded(response.data))
        return turn

    def found(self) -> set[str]:
        """The provider-safe names every search of the turn returned (a reveal's too)."""
        return {name for names in self.searches.values() for name in names}

    def result_of(self, tool: str) -> list[Any] | None:
        """The results of ``tool``'s calls, or ``None`` when it was not called successfully."""
        return self.results.get(provider_safe_name(tool))


Arguments = Callable[[TurnSoFar], list[dict[str, Any]]]
"""The arguments of each call a step makes, from what the turn returned so far."""


@dataclass(frozen=True, kw_only=True)
class ReplayStep:
    """One decision of the replay: search for a tool, then call it.

    Attributes:
        tool: The canonical name of the tool the step means to call.
        query: What it searches for.
        purpose: What the tool is for, in words ("find yesterday's failed refunds").
        arguments: The arguments of each call; no calls means the step has nothing to do
            (nothing to retry, say) and is skipped without a search.
    """

    tool: str
    query: str
    purpose: str
    arguments: Arguments


class ReplayModel:
    """A chat model that replays a fixed plan of :class:`ReplayStep` s (see the module docs).

    Args:
        steps: The plan, in order.
        summary: The final answer, from what the turn returned.
        name: For messages.
        words: What it says around its calls (English by default).
    """

    supports_tools: bool = True

    def __init__(
        self,
        steps: Sequence[ReplayStep],
        summary: Callable[[TurnSoFar], str],
        *,
        name: str = REPLAY_NAME,
        words: ReplayWords = ENGLISH_DEMO.replay,
    ) -> None:
        self.steps = tuple(steps)
        self.summary = summary
        self.name = name
        self.words = words
        self._ids = itertools.count(1)

    async def call(self, prompt: Prompt) -> ChatResponse:
        """The next decision for the conversation in ``prompt``."""
        shown = {provider_safe_name(t.definition.name) for t in prompt.options.tools}
        message = self.decide(TurnSoFar.read(prompt.messages), shown)
        reason = "tool_calls" if message.tool_calls else "stop"
        return ChatResponse(
            generations=(Generation(message=message, finish_reason=reason),),
            metadata={"model": self.name},
        )

    async def stream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        """The next decision as a one-chunk stream (a complete response is a valid chunk)."""
        yield await self.call(prompt)

    def decide(self, turn: TurnSoFar, shown: Set[str] = frozenset()) -> AssistantMessage:
        """The next message: a search, the calls of a step, or the final answer.

        Args:
            turn: The conversation since the user's message.
            shown: The provider-safe names of the tools the request shows.
        """
        if turn.failures:
            return AssistantMessage(text=self._stopped(turn))
        available = turn.found() | set(shown)
        pending = [step for step in self.steps if turn.result_of(step.tool) is None]
        for position, step in enumerate(pending):
            calls = step.arguments(turn)
            if not calls:
                continue
            if provider_safe_name(step.tool) not in available and step.query not in turn.searches:
                # As tool_search's description asks: every need not found yet, in one call.
                needs = [
                    later
                    for later in pending[position:]
                    if provider_safe_name(later.tool) not in available
                    and later.query not in turn.searches
                ]
                purposes = self.words.and_.join(later.purpose for later in needs)
                queries = [later.query for later in needs]
                return AssistantMessage(
                    text=self.words.searching.format(purpose=purposes),
                    tool_calls=(self._call(TOOL_SEARCH_NAME, {"queries": queries}),),
                )
            wanted = provider_safe_name(step.tool)
            if wanted not in available and step.query not in turn.widened:
                # Not among the answer's few hits: ask again for more, as a model would.
                return AssistantMessage(
                    text=self.words.widening.format(query=step.query, tool=step.tool),
                    tool_calls=(
                        self._call(
                            TOOL_SEARCH_NAME, {"queries": [step.query], "max_results": WIDER}
                        ),
                    ),
                )
            return self._act(step, calls, turn, shown)
        return AssistantMessage(text=self.summary(turn))

    def _act(
        self, step: ReplayStep, calls: list[dict[str, Any]], turn: TurnSoFar, shown: Set[str]
    ) -> AssistantMessage:
        wanted, words = provider_safe_name(step.tool), self.words
        times = "" if len(calls) == 1 else words.times.format(count=len(calls))
        if any(wanted in names for names in turn.searches.values()):
            text = words.found.format(tool=step.tool, times=times)
        elif wanted in shown:
            text = words.shown_earlier.format(query=step.query, tool=step.tool, times=times)
        else:
            returned = ", ".join(turn.searches.get(step.query, [])) or words.nothing
            text = words.missed.format(query=step.query, tool=step.tool, returned=returned)
        return AssistantMessage(
            text=text, tool_calls=tuple(self._call(wanted, arguments) for arguments in calls)
        )

    def _stopped(self, turn: TurnSoFar) -> str:
        name, error = turn.failures[0]
        step = next((s for s in self.steps if provider_safe_name(s.tool) == name), None)
        if step is not None and step.query in turn.searches and name not in turn.found():
            why = self.words.refused.format(tool=step.tool)
        else:
            why = self.words.failed.format(tool=step.tool if step is not None else name)
        shown = error if len(error) <= _ERROR_SHOWN else error[: _ERROR_SHOWN - 1] + "…"
        return self.words.stopped.format(why=why, error=shown)

    def _call(self, name: str, arguments: dict[str, Any]) -> ToolCall:
        # Unescaped, as models write them: a Chinese query stays readable in the live view.
        arguments_json = json.dumps(arguments, ensure_ascii=False)
        return ToolCall(id=f"replay_{next(self._ids)}", name=name, arguments=arguments_json)


class SearchReplay:
    """The replay over a catalog it has no decisions for: it only searches.

    Each user message is searched for as it is (``tool_search`` with the message as the
    query) unless the turn's reveal did it (a ``tool_search`` answer after the message, or, in
    the conversation's first turn, the tools its reveal pinned to the tool list); the answer
    names the tools the search returned, best first, and says that none was called. It shows
    what tool search finds in your catalog without a model or a key.

    Args:
        name: For messages.
    """

    supports_tools: bool = True

    def __init__(self, *, name: str = REPLAY_NAME) -> None:
        self.name = name
        self._ids = itertools.count(1)

    async def call(self, prompt: Prompt) -> ChatResponse:
        """The next decision for the conversation in ``prompt``."""
        listed = [t.definition.name for t in prompt.options.tools]
        message = self.decide(prompt.messages, listed)
        reason = "tool_calls" if message.tool_calls else "stop"
        return ChatResponse(
            generations=(Generation(message=message, finish_reason=reason),),
            metadata={"model": self.name},
        )

    async def stream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        """The next decision as a one-chunk stream (a complete response is a valid chunk)."""
        yield await self.call(prompt)

    def decide(self, messages: Sequence[Message], listed: Sequence[str] = ()) -> AssistantMessage:
        """A search for the last user message, then the answer naming what it returned.

        ``listed``: the tools the request lists (a catalog searched has no tools of its own,
        so beyond the search pair they are what the conversation's first reveal pinned).
        """
        asked = next((m.text for m in reversed(messages) if isinstance(m, UserMessage)), "")
        query = " ".join(asked.split())
        turn = TurnSoFar.read(messages)
        pinned = [provider_safe_name(n) for n in listed if n not in _SEARCH_PAIR]
        if not turn.searches and pinned and sum(isinstance(m, UserMessage) for m in messages) == 1:
            turn.searches[query] = pinned
        if not turn.searches:
            arguments = json.dumps({"queries": [query]}, ensure_ascii=False)
            call = ToolCall(
                id=f"replay_{next(self._ids)}", name=TOOL_SEARCH_NAME, arguments=arguments
            )
            return AssistantMessage(text=f"Searching the tools for: {query}", tool_calls=(call,))
        found = next(iter(turn.searches.values()))
        returned = (
            f"returned {plural(len(found), 'tool')}: {', '.join(found)}"
            if found
            else "returned no tools"
        )
        return AssistantMessage(
            text=f"The search for {query!r} {returned}. This replay has decisions only for the "
            "refund triage, so it calls none of your tools; use --model local, openai:NAME or "
            "anthropic:NAME for a model that acts with your tools."
        )


# --- the refund triage -----------------------------------------------------------------------


def triage_plan(required_tools: Sequence[str], *, words: DemoWords = ENGLISH_DEMO) -> ReplayModel:
    """The replay of the refund-triage task over its four tools, in the order they are used.

    Args:
        required_tools: The failed-refund finder, the retry tool, the incident tool and the
            owner notification tool (the refund desk's ``REQUIRED_TOOLS``).
        words: The language it searches, speaks and writes in.

    Raises:
        ConfigurationError: Not exactly four tools.
    """
    if len(required_tools) != 4:
        raise ConfigurationError(
            f"the replay knows the four-step refund triage; the catalog names "
            f"{plural(len(required_tools), 'required tool')}"
        )
    find, retry, incident, notify = required_tools
    says = words.triage

    def failed(turn: TurnSoFar) -> list[dict[str, Any]]:
        results = turn.result_of(find) or [[]]
        return (
            [f for f in results[-1] if isinstance(f, dict)] if isinstance(results[-1], list) else []
        )

    def retried(turn: TurnSoFar) -> dict[str, dict[str, Any]]:
        outcomes = turn.result_of(retry) or []
        return {str(o.get("refund_id")): o for o in outcomes if isinstance(o, dict)}

    def still_failing(turn: TurnSoFar) -> list[dict[str, Any]]:
        done = retried(turn)
        return [
            f
            for f in failed(turn)
            if not done.get(str(f.get("refund_id")), {}).get("succeeded", False)
        ]

    def tickets(turn: TurnSoFar) -> list[str]:
        return [
            str(t.get("ticket_id")) for t in turn.result_of(incident) or [] if isinstance(t, dict)
        ]

    def report(turn: TurnSoFar) -> str:
        recovered = [r for r, o in retried(turn).items() if o.get("succeeded")]
        opened = tickets(turn)
        return says.report.format(
            failed=len(failed(turn)),
            recovered=len(recovered),
            recovered_ids=says.ids(recovered),
            opened=len(opened),
            ticket_ids=says.ids(opened),
        )

    def incident_for(refund: dict[str, Any], turn: TurnSoFar) -> dict[str, Any]:
        refund_id, reason = refund.get("refund_id"), refund.get("failure_reason")
        tried = says.retried if refund_id in retried(turn) else says.not_retryable
        return {
            "title": says.incident_title.format(refund_id=refund_id, reason=reason),
            "description": says.incident_description.format(
                refund_id=refund_id,
                order_id=refund.get("order_id"),
                amount=refund.get("amount_cents"),
                currency=refund.get("currency"),
                channel=refund.get("channel"),
                reason=reason,
                tried=tried,
            ),
            "refund_ids": [refund_id],
            "severity": "sev3",
        }

    def summary(turn: TurnSoFar) -> str:
        sent = [m for m in turn.result_of(notify) or [] if isinstance(m, dict)]
        told = says.notified.format(message_id=sent[0].get("message_id")) if sent else ""
        return report(turn) + told

    arguments: tuple[Arguments, ...] = (
        lambda turn: [{}],
        lambda turn: [
            {"refund_id": f.get("refund_id")} for f in failed(turn) if f.get("retryable")
        ],
        lambda turn: [incident_for(f, turn) for f in still_failing(turn)],
        lambda turn: [
            {"message": report(turn), "subject": says.subject, "ticket_ids": tickets(turn)}
        ],
    )
    steps = [
        ReplayStep(tool=tool, query=query, purpose=purpose, arguments=call)
        for tool, query, purpose, call in zip(
            required_tools, says.queries, says.purposes, arguments, strict=True
        )
    ]
    return ReplayModel(steps, summary, words=words.replay)


def _decoded(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
