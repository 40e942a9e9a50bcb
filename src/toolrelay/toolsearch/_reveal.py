"""A turn's start: reveal the request's best hits, or send every tool of a small catalog.

Two measured defaults of :class:`~toolrelay.client.ToolSearch`, applied before the first
model call, where only a door that reads the request's text can apply them:

- **The reveal** (``reveal=``, ``reveal_min_relative_score=``): the caller's permitted view
  is searched with the text of the request's last user message, and its best hits are shown
  before the first model call (a conversation's first reveal pins them to its tool list, a
  later turn's goes through the turn's channel), so a task whose tools are found up front
  makes no ``tool_search`` call. The default, the top :data:`DEFAULT_REVEAL` hits less
  those scoring under :data:`DEFAULT_REVEAL_MIN_RELATIVE_SCORE` of the best one, is the
  decision of ``benchmarks/reveal.py`` (docs/benchmarks.md, "Revealing tools before the first
  model call"; ``benchmarks/results/reveal.json``, ``decision``): the cheapest rule as billed
  on ``claude-sonnet-4-5`` and ``gpt-5`` over the dev queries of five retrieval benchmarks,
  checked on a kept-out part of them (every needed tool revealed for 53.9% of those, at least
  one for 77.4%, 1.48 tools or 233 tokens revealed).
- **The fill** (``fill_cache_minimum=``): when the first request, the reveal's hits shown, is
  shorter than the shortest prompt the model's provider caches (the adapter's
  ``cache_shortfall``), the next best hits are revealed too until it reaches it; derivation
  on :data:`DEFAULT_FILL_CACHE_MINIMUM`.
- **The small-catalog rule** (``send_all_below=``): a catalog whose permitted definitions
  total fewer tokens than :data:`DEFAULT_SEND_ALL_BELOW` is sent whole, with no
  ``tool_search`` at all (its derivation is there).

The gateway and the bridges never see a request's text, so they refuse these options
(:func:`refuse_turn_options`) rather than ignore them.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterable, Sequence
from typing import Final

from toolrelay.exceptions import ConfigurationError
from toolrelay.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.search._base import MAX_RESULTS_LIMIT
from toolrelay.tools import ToolDefinition
from toolrelay.tools._tokens import tool_tokens
from toolrelay.toolsearch._search_tool import MAX_QUERY_LENGTH, ToolSearchRecord
from toolrelay.toolsearch._texts import TOOL_SEARCH_NAME

__all__ = [
    "DEFAULT_FILL_CACHE_MINIMUM",
    "DEFAULT_REVEAL",
    "DEFAULT_REVEAL_MIN_RELATIVE_SCORE",
    "DEFAULT_SEND_ALL_BELOW",
    "REVEAL_CALL_ID",
    "TURN_OPTIONS",
    "catalog_tokens_below",
    "check_turn_options",
    "filled_count",
    "refuse_turn_options",
    "request_text",
    "revealed_pair",
]

DEFAULT_REVEAL: Final = 2
"""Hits revealed before the first model call (``benchmarks/results/reveal.json``, ``decision``)."""

DEFAULT_REVEAL_MIN_RELATIVE_SCORE: Final = 0.9
"""Revealed hits scoring below this fraction of the best hit's score are left out.

With :data:`DEFAULT_REVEAL`, the rule ``benchmarks/reveal.py`` decided (docs/benchmarks.md):
on its tuning queries, with the default index, every needed tool was revealed for 54.5% of
the queries and at least one for 82.5%, 1.49 tools (232 tokens) revealed on average, saving
$1.63 (Anthropic) and $0.72 (OpenAI) per 1,000 tasks against revealing nothing.
"""

DEFAULT_FILL_CACHE_MINIMUM: Final = True
"""Reveal further hits until the first request reaches the model's cache minimum.

A prompt shorter than the provider's minimum (1,024 tokens on OpenAI's API and on Claude
Sonnet 4.5; the adapter's ``cache_shortfall``) is never cached: each request of the task pays
it in full until the conversation grows past the minimum. Filling a first prompt of ``P``
tokens to the minimum ``M`` with the next best hits costs ``M`` once at the write price ``w``
(1.25 on Anthropic, 1 on OpenAI, in input prices) and ``0.1 M`` in each later request, against
``P`` in every request unfilled: over ``n`` requests filling costs less when
``n P > w M + 0.1 (n - 1) M``, for a prompt of half the minimum from the third request on
(``1.5 M > 1.45 M`` on Anthropic). A task that calls tools takes two requests at least, and
the added hits show more of its tools, so a search round (a request, and its output at 5x to
8x the input price) is saved more often. A fill the catalog's ten best hits cannot complete
is not made: it would cost without reaching the cache. Nothing is fitted: the rule is the
providers' published minimum. Measured in the token benchmark (docs/benchmarks.md, "Tool
search with every default"): the weather task's prompt is under the minimum.
"""

DEFAULT_SEND_ALL_BELOW: Final = 310
"""Tokens of permitted catalog definitions under which every tool is sent and nothing searched.

The break-even of the cost as billed (``toolrelay.models._billing``'s headline models), in
input-token prices, for the task shape of the reveal benchmark (a first request and 5 later
ones within the cache's lifetime). Sending every tool costs the catalog's ``T`` tokens in
each request: written once and read 5 times, ``T * (w + 5 r)`` (``w``, ``r``: the cache
write and read prices over the input price; 1.25 and 0.1 on ``claude-sonnet-4-5``, 1 and 0.1
on ``gpt-5``). Search costs at least its own tools and text in each request instead
(``tool_search`` and ``call_tool`` with the proxy suffix: 259 tokens, cl100k_base) and, when
the reveal did not show every needed tool (45.5% of the reveal benchmark's tuning queries),
a search round: one more model request, whose output alone (a 40-token ``tool_search`` call,
at 5x the input price on ``claude-sonnet-4-5`` and 8x on ``gpt-5``) is 200 or 320
input-token prices. The needed tools are shown either way. So search cannot pay while
``T < 259 + 0.455 * 40 * o / (w + 5 r)``: 311 tokens on ``claude-sonnet-4-5`` (``o = 5``),
356 on ``gpt-5`` (``o = 8``); 310, about two tools of 150 tokens, is the rule. Everything
left out (the search round's re-read prefix, its answer in later requests, its latency)
only adds to search's side, so below the rule search surely loses, and above it the
searched default is kept: the 28-tool weather catalog (4,515 tokens) and the 78-tool refund
desk (14,429 tokens) are searched.
"""

REVEAL_CALL_ID: Final = "tool_search_reveal"
"""How the call id of the proxy channel's revealed answer starts (a random suffix follows)."""

TURN_OPTIONS: Final = frozenset(
    {"reveal", "reveal_min_relative_score", "fill_cache_minimum", "send_all_below"}
)
"""The options a door takes only when it reads the request's text (the chat client's)."""


def check_turn_options(
    reveal: object,
    reveal_min_relative_score: object,
    fill_cache_minimum: object,
    send_all_below: object,
) -> None:
    """Validate the turn-start options as :class:`~toolrelay.client.ToolSearch` takes them.

    Raises:
        ConfigurationError: One is of the wrong type or out of range, naming the fix.
    """
    if isinstance(reveal, bool) or not isinstance(reveal, int):
        raise ConfigurationError(f"reveal must be an integer (0 turns it off), not {reveal!r}")
    if not 0 <= reveal <= MAX_RESULTS_LIMIT:
        raise ConfigurationError(
            f"reveal must be between 0 (off) and {MAX_RESULTS_LIMIT} hits, not {reveal}"
        )
    ratio = reveal_min_relative_score
    if ratio is not None and (
        isinstance(ratio, bool) or not isinstance(ratio, int | float) or not 0.0 <= ratio <= 1.0
    ):
        raise ConfigurationError(
            "reveal_min_relative_score must be a number between 0 and 1 (a fraction of the "
            f"best hit's score) or None, not {ratio!r}"
        )
    if not isinstance(fill_cache_minimum, bool):
        raise ConfigurationError(
            f"fill_cache_minimum must be True or False, not {fill_cache_minimum!r}"
        )
    below = send_all_below
    if below is not None and (isinstance(below, bool) or not isinstance(below, int) or below < 0):
        raise ConfigurationError(
            "send_all_below must be a number of tokens (0 or more) or None (always search), "
            f"not {below!r}"
        )


def refuse_turn_options(keywords: Iterable[str], *, owner: str) -> None:
    """Refuse a turn-start option given to a door that never sees a request's text.

    Raises:
        ConfigurationError: A keyword is one of :data:`TURN_OPTIONS`.
    """
    for name in keywords:
        if name in TURN_OPTIONS:
            raise ConfigurationError(
                f"{owner} never sees a request's text, so it cannot take {name}= (the best "
                "hits shown before the first model call, or every tool of a small catalog "
                "sent): leave it out; ToolSearchAdvisor(catalog, " + name + "=...) in the chat "
                "client applies it"
            )


def request_text(messages: Sequence[Message]) -> str | None:
    """The request's own text, as the reveal searches with it: its last user message's.

    Cut to :data:`~toolrelay.toolsearch._search_tool.MAX_QUERY_LENGTH` characters (the
    task is stated first); ``None`` when no user message has text.
    """
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            text = message.text.strip()
            return text[:MAX_QUERY_LENGTH] if text else None
    return None


def catalog_tokens_below(
    definitions: Iterable[ToolDefinition], limit: int, counted: dict[str, int]
) -> int | None:
    """The tokens of ``definitions`` when they total fewer than ``limit``; else ``None``.

    Counting stops once ``limit`` is reached, so a large catalog costs a few counts.
    ``counted`` keeps each definition's tokens by name across calls (one per snapshot).
    """
    total = 0
    for definition in definitions:
        tokens = counted.get(definition.name)
        if tokens is None:
            tokens = counted[definition.name] = tool_tokens(definition)
        total += tokens
        if total >= limit:
            return None
    return total


def filled_count(
    ranked: ToolSearchRecord, shortfall: int, *, start: int, tokens: Callable[[str], int]
) -> int | None:
    """How many of ``ranked``'s hits to reveal so that those past ``start`` add ``shortfall``.

    The hits past the first ``start`` (those the reveal shows already) are taken in turn, the
    one that makes up the shortfall included; ``tokens(name)`` is what revealing one adds.
    ``None`` when all of them fall short: filling would then only cost.
    """
    hits = ranked.response.hits
    added = 0
    for position in range(start, len(hits)):
        added += tokens(hits[position].name)
        if added >= shortfall:
            return position + 1
    return None


def revealed_pair(query: str, answer: str) -> tuple[AssistantMessage, ToolResponseMessage]:
    """The proxy channel's reveal: a ``tool_search`` call with ``query`` and its ``answer``.

    The search did run (before the first model call, with the request's text); the pair
    records it in the history as any search is recorded, so its definitions reach the model
    with the tool list unchanged, ``call_tool`` runs them, and later answers do not repeat
    them. Its call id is :data:`REVEAL_CALL_ID` and a random 8-digit suffix: a memory inside
    the loop replays earlier turns' reveals where the turn cannot see them, and ids must stay
    unique.
    """
    # Random for uniqueness, but always 8 decimal digits: tokenizers split digits into runs
    # of up to three, so every id counts the same tokens and identical runs cost the same.
    call_id = f"{REVEAL_CALL_ID}_{secrets.randbelow(10**8):08d}"
    arguments = json.dumps({"queries": [query]}, ensure_ascii=False)
    call = ToolCall(id=call_id, name=TOOL_SEARCH_NAME, arguments=arguments)
    response = ToolResponse(id=call_id, name=TOOL_SEARCH_NAME, data=answer)
    return AssistantMessage(tool_calls=(call,)), ToolResponseMessage(responses=(response,))
