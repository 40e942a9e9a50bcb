"""Showing a tool-search conversation round by round, its token table, and its JSON form.

Each round is printed as it happens: a rule with the model call's number, the tools shown
and the request's size; the model's text; then, once the tools ran, each call with its
arguments and (shortened) result, and for each ``tool_search`` the tools the index returned
with their scores. A failed call shows its status and the feedback the model got.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from toolrelay._plural import plural
from toolrelay.cli._pipeline import RequestTokens, RoundRecord
from toolrelay.cli._search import hit_json
from toolrelay.execution import ToolCallOutcome
from toolrelay.search._base import SearchResponse
from toolrelay.tools._names import provider_safe_name
from toolrelay.toolsearch import TOOL_SEARCH_NAME

__all__ = ["LiveView", "rounds_json", "shorten", "token_line", "token_table"]

_RESULT_CHARS = 160
_ARGUMENT_CHARS = 240


def shorten(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with the full length noted."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return f"{flat[: limit - 1]}… [{len(text):,} chars]"


class LiveView:
    """Prints each round of a turn as it happens (a :class:`RoundListener`).

    Args:
        console: Where to print.
        speaker: How the model's text is labelled (``"model"``, ``"replay"``).
        catalog_size: How many tools the catalog has.
    """

    def __init__(self, console: Console, *, speaker: str, catalog_size: int) -> None:
        self.console = console
        self.speaker = speaker
        self.catalog_size = catalog_size

    def on_response(self, record: RoundRecord) -> None:
        """Print the round's heading and the model's text."""
        shown = len(record.shown)
        tokens = record.tokens
        heading = (
            f"Round {record.model_call} · {plural(shown, 'tool')} shown · "
            f"request {plural(tokens.sent, 'token')} "
            f"(with all {plural(self.catalog_size, 'tool')}: {tokens.without_search:,})"
        )
        self.console.rule(Text(heading, style="bold"), align="left")
        if record.calls and record.text:
            self.console.print(Text(f"{self.speaker}: {record.text}", style="italic"))
        elif not record.calls:
            self.console.print(Text(f"{self.speaker} answers (below).", style="italic"))

    def on_results(self, record: RoundRecord) -> None:
        """Print each call with its result, and each search's hits with their scores."""
        searches = iter(record.searches)
        for outcome in record.outcomes:
            self.console.print(Text(f"  {_call_text(outcome)}", style="cyan"))
            if outcome.tool_name == TOOL_SEARCH_NAME and outcome.ok:
                for response in next(searches, ()):
                    self._hits(response)
                continue
            if outcome.tool_name == TOOL_SEARCH_NAME:
                next(searches, ())
            self.console.print(_result_text(outcome))

    def _hits(self, response: SearchResponse | None) -> None:
        if response is None:
            self.console.print(Text("    (no search record)", style="dim"))
            return
        query = shorten(response.query, _ARGUMENT_CHARS)
        if not response.hits:
            self.console.print(
                Text(f"    {query!r}: {response.search_type}: no tool matched", style="yellow")
            )
            return
        self.console.print(
            Text(
                f"    {query!r}: {response.search_type} matched {response.total:,} of "
                f"{plural(self.catalog_size, 'tool')} in {response.time_ms:.1f} ms; returned:",
                style="dim",
            )
        )
        width = max(len(hit.name) for hit in response.hits)
        for rank, hit in enumerate(response.hits, start=1):
            line = Text(f"      {rank:>2}. ")
            line.append(hit.name.ljust(width), style="bold")
            line.append(f"  {hit.score:7.3f}  ")
            if hit.history_query is not None:
                line.append(f"history {hit.history_query!r}  ", style="magenta")
            line.append(hit.summary, style="dim")
            self.console.print(line, no_wrap=True, overflow="ellipsis", crop=True)


def _call_text(outcome: ToolCallOutcome) -> str:
    name = outcome.tool_name or outcome.call.name
    arguments = outcome.call.arguments.strip() or "{}"
    return f"{name}({shorten(arguments, _ARGUMENT_CHARS)})"


def _result_text(outcome: ToolCallOutcome) -> Text:
    data = outcome.response.data
    if not outcome.ok:
        return Text(f"    ✗ {outcome.status.value}: {shorten(data, _RESULT_CHARS)}", style="red")
    count = ""
    try:
        decoded = json.loads(data)
    except json.JSONDecodeError:
        decoded = None
    if isinstance(decoded, list):
        count = f"{plural(len(decoded), 'item')}: "
    return Text(f"    → {count}{shorten(data, _RESULT_CHARS)}")


# --- tokens --------------------------------------------------------------------------------


def token_line(rounds: Sequence[RoundRecord]) -> str:
    """One line: requests, tokens sent, with every tool, saved."""
    total = RequestTokens.total(rounds)
    return (
        f"{plural(len(rounds), 'request')}: {plural(total.sent, 'token')} sent; "
        f"{total.without_search:,} with every tool; {total.saved_percent:.1f}% saved"
    )


def token_table(rounds: Sequence[RoundRecord], catalog_size: int) -> Table:
    """Per request and in total: the request as sent against the same with every tool."""
    table = Table(
        title="Tokens per model request (cl100k_base, OpenAI wire format: messages + tools)",
        title_justify="left",
        caption=(
            "Tool search sends its own tools and those found so far (in the tool list, search "
            "answers or tool changes, by channel); the comparison sends the same messages "
            f"with all {plural(catalog_size, 'catalog tool')}."
        ),
        caption_justify="left",
    )
    table.add_column("Round", justify="right")
    table.add_column("Tools shown", justify="right")
    table.add_column("Messages", justify="right")
    table.add_column("Tools", justify="right")
    table.add_column("Request", justify="right", style="bold")
    table.add_column(f"With all {plural(catalog_size, 'tool')}", justify="right")
    table.add_column("Saved", justify="right")

    def cells(tokens: RequestTokens) -> list[str]:
        counts = (tokens.messages, tokens.tools, tokens.sent, tokens.without_search)
        saved = f"{tokens.saved_percent:.1f}%" if tokens.without_search else "-"
        return [*(f"{n:,}" for n in counts), saved]

    for record in rounds:
        table.add_row(str(record.model_call), str(len(record.shown)), *cells(record.tokens))
    table.add_section()
    table.add_row("Total", "", *cells(RequestTokens.total(rounds)), style="bold")
    return table


# --- JSON ----------------------------------------------------------------------------------


def rounds_json(rounds: Sequence[RoundRecord]) -> list[dict[str, Any]]:
    """The rounds as JSON-ready data (results in full)."""
    return [_round_json(r) for r in rounds]


def _round_json(record: RoundRecord) -> dict[str, Any]:
    tokens = record.tokens
    searches = iter(record.searches)
    results = []
    for outcome in record.outcomes:
        entry: dict[str, Any] = {
            "call_id": outcome.call.id,
            "name": outcome.call.name,
            "tool": outcome.tool_name,
            "arguments": _decoded(outcome.call.arguments),
            "status": outcome.status.value,
            "result": outcome.response.data,
        }
        if outcome.tool_name == TOOL_SEARCH_NAME:
            entry["searches"] = [_search_json(response) for response in next(searches, ())]
        results.append(entry)
    return {
        "model_call": record.model_call,
        "shown": list(record.shown),
        "text": record.text,
        "calls": [
            {"id": c.id, "name": c.name, "arguments": _decoded(c.arguments)} for c in record.calls
        ],
        "results": results,
        "tokens": {
            "messages": tokens.messages,
            "tools": tokens.tools,
            "sent": tokens.sent,
            "with_all_tools": tokens.without_search,
            "saved_percent": round(tokens.saved_percent, 2),
        },
        "usage": {
            "prompt_tokens": record.usage.prompt_tokens,
            "completion_tokens": record.usage.completion_tokens,
        },
    }


def _search_json(response: SearchResponse | None) -> dict[str, Any] | None:
    if response is None:
        return None
    return {
        "query": response.query,
        "index": response.search_type,
        "total": response.total,
        "time_ms": round(response.time_ms, 3),
        "hits": [
            hit_json(rank, hit, provider_name=provider_safe_name(hit.name))
            for rank, hit in enumerate(response.hits, start=1)
        ],
    }


def _decoded(text: str) -> Any:
    try:
        return json.loads(text or "{}")
    except json.JSONDecodeError:
        return text
