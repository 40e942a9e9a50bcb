"""``toolrelay eval tokens``: what tool definitions cost per request, with and without search.

Without tool search every request carries the whole catalog. With progressive disclosure a
request carries the search tool and the few tools the model asked for. Both are counted with
cl100k_base (see ``tools/_tokens.py``); a conversation of ``--rounds`` model requests
pays the per-request cost each time. Each way is also billed on claude-sonnet-4-5 and gpt-5
(``_billed.py``): ``--rounds`` requests carrying those tools and one user turn, each
answered with ``--output`` tokens, under the provider's prompt cache. A row of tools "of
mean size" is billed with the tools whose sizes are nearest the mean. The search calls a
model makes before it can act are not counted here; ``toolrelay demo`` and the token
benchmark count them.

``--channel`` is how the found tools travel (``docs/tool-search.md``): on ``proxy`` (what
``auto`` takes for the billed models) each request carries ``tool_search`` and ``call_tool``,
and the found tools' definitions in a search answer of its history; on ``rewrite``, the search
tool and the found tools in its tool list. The billed models, ``claude-sonnet-4-5`` and
``gpt-5`` on Chat Completions, render no native channel, so ``native`` is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import typer
from rich.table import Table

from toolrelay._plural import plural
from toolrelay.cli._billed import bill_conversation
from toolrelay.cli._catalogs import load_catalog
from toolrelay.cli._chat_models import ChannelOption, parse_channel
from toolrelay.cli._output import JsonOption, emit_json, stdout_console
from toolrelay.cli._tokens import call_tool_definition, search_tool_definition
from toolrelay.exceptions import ConfigurationError
from toolrelay.models._billing import HEADLINE_MODELS
from toolrelay.search._base import MAX_RESULTS_LIMIT
from toolrelay.tools._base import ToolDefinition
from toolrelay.tools._tokens import TokenSummary, count_tokens, summarize_tokens, tool_tokens
from toolrelay.toolsearch._search_tool import definition_hit, definitions_answer

__all__ = ["DEFAULT_OUTPUT", "CostRow", "cost_rows", "search_answer_text", "tokens_command"]

DEFAULT_OUTPUT = 50
"""Output tokens per request when ``--output`` is not given: about one tool call."""


@dataclass(frozen=True, kw_only=True)
class CostRow:
    """One way of sending tools, and what it costs.

    Attributes:
        label: What is sent, in words.
        kind: ``"all"``, ``"search"``, ``"search+mean"`` or ``"search+largest"``.
        tools_sent: How many tool definitions each request carries.
        per_request: Tokens of tool definitions in one request (on the proxy channel, the
            search answer carrying the found tools' too).
        definitions: The definitions of the request's tool list (for billing).
        answered: The found tools a search answer in the history carries (the proxy
            channel; for billing).
    """

    label: str
    kind: str
    tools_sent: int
    per_request: int
    definitions: tuple[ToolDefinition, ...] = ()
    answered: tuple[ToolDefinition, ...] = ()


def search_answer_text(definitions: Sequence[ToolDefinition]) -> str:
    """The proxy channel's answer of a search that found ``definitions``."""
    return definitions_answer([definition_hit(d) for d in definitions])[0]


def cost_rows(
    sizes: TokenSummary,
    search_tokens: int,
    retrieved: list[int],
    definitions: Sequence[ToolDefinition] = (),
    search_tool: ToolDefinition | None = None,
    call_tool: ToolDefinition | None = None,
) -> list[CostRow]:
    """The whole catalog, the search tool alone, and the search tool with ``k`` tools.

    ``definitions`` (the catalog, in the order of ``sizes``) and ``search_tool`` give each
    row the definitions it sends, for billing. With ``call_tool`` (the proxy channel) the
    tool list holds both and a search answer carries the ``k`` tools.
    """
    count = len(sizes.sizes)
    proxy = call_tool is not None
    # What every request carries: the search tool, and on the proxy channel call_tool too.
    fixed = (*((search_tool,) if search_tool is not None else ()), *((call_tool,) if proxy else ()))
    fixed_tokens = search_tokens + (tool_tokens(call_tool) if call_tool is not None else 0)
    name = "search pair" if proxy else "search tool"
    by_size = sorted(range(len(definitions)), key=lambda i: -sizes.sizes[i])
    by_mean = sorted(range(len(definitions)), key=lambda i: abs(sizes.sizes[i] - sizes.mean))
    rows = [
        CostRow(
            label=f"all {plural(count, 'tool')}",
            kind="all",
            tools_sent=count,
            per_request=sizes.total,
            definitions=tuple(definitions),
        ),
        CostRow(
            label=f"{name} only",
            kind="search",
            tools_sent=max(len(fixed), 1),
            per_request=fixed_tokens,
            definitions=fixed,
        ),
    ]
    for wanted in retrieved:
        k = min(wanted, count)
        for kind, order, label, listed in (
            ("search+mean", by_mean, f"{plural(k, 'tool')} of mean size", round(k * sizes.mean)),
            (
                "search+largest",
                by_size,
                "the largest tool" if k == 1 else f"the {k:,} largest tools",
                sizes.largest_k(k),
            ),
        ):
            found = tuple(definitions[i] for i in order[:k])
            rows.append(
                CostRow(
                    label=f"{name} + {label}",
                    kind=kind,
                    tools_sent=max(len(fixed), 1) + k,
                    # Proxy: the found tools travel in a search answer; else in the tool list.
                    per_request=fixed_tokens
                    + (count_tokens(search_answer_text(found)) if proxy else listed),
                    definitions=fixed if proxy else fixed + found,
                    answered=found if proxy else (),
                )
            )
    return rows


def billed_channel(channel: str) -> str:
    """The channel the billed requests take: ``auto`` is the billed models' best, the proxy.

    Raises:
        ConfigurationError: ``native``, which none of the billed models renders.
    """
    if channel == "native":
        names = " and ".join(m.name for m in HEADLINE_MODELS)
        raise ConfigurationError(
            f"--channel native: eval tokens bills {names} (on Chat Completions), and neither "
            "renders the native channel; use --channel auto, proxy or rewrite"
        )
    return "proxy" if channel == "auto" else channel


def tokens_command(
    catalog: Annotated[
        str,
        typer.Option(
            "--catalog",
            "-c",
            help="The catalog: a JSONL/JSON file or a Python module.",
            show_default=False,
        ),
    ],
    rounds: Annotated[
        int, typer.Option("--rounds", "-r", min=1, help="Model requests in a conversation.")
    ] = 1,
    retrieved: Annotated[
        list[int] | None,
        typer.Option(
            "--retrieved",
            "-k",
            min=1,
            max=MAX_RESULTS_LIMIT,
            help="Tools a search adds to a request; repeatable. Default: 3 and 5.",
        ),
    ] = None,
    output: Annotated[
        int,
        typer.Option(
            "--output",
            "-o",
            min=0,
            help="Output tokens each request gets back (billed at the output price; "
            "about one tool call by default).",
        ),
    ] = DEFAULT_OUTPUT,
    channel: ChannelOption = "auto",
    as_json: JsonOption = False,
) -> None:
    """Compare the tokens and billed cost of the whole catalog with the search tool's."""
    taken = billed_channel(parse_channel(channel))
    definitions = load_catalog(catalog).unique_definitions()
    sizes = summarize_tokens(definitions)
    proxy = taken == "proxy"
    search_tool = search_tool_definition(definitions, proxy=proxy)
    search_tokens = tool_tokens(search_tool)
    call_tool = call_tool_definition(definitions) if proxy else None
    rows = cost_rows(
        sizes, search_tokens, sorted(set(retrieved or [3, 5])), definitions, search_tool, call_tool
    )
    billed = [
        bill_conversation(
            row.definitions,
            rounds=rounds,
            output=output,
            answer=search_answer_text(row.answered) if row.answered else None,
        )
        for row in rows
    ]
    everything = rows[0].per_request
    if as_json:
        data = _as_json(catalog, sizes, search_tool.name, search_tokens, rows, rounds)
        data["channel"] = taken
        data["output_tokens_per_request"] = output
        for row, costs in zip(data["rows"], billed, strict=True):
            row["billed"] = {
                name: {
                    "cost_usd": round(cost, 6),
                    "saved_percent": None
                    if row["kind"] == "all"
                    else round(_saved(cost, billed[0][name]), 2),
                }
                for name, cost in costs.items()
            }
        emit_json(data)
        return
    console = stdout_console()
    table = Table(
        title=f"Tool-definition tokens for {catalog} (cl100k_base, {taken} channel)",
        title_justify="left",
    )
    table.add_column("Sent with each request")
    table.add_column("Tools", justify="right")
    table.add_column("Per request", justify="right")
    table.add_column(plural(rounds, "request"), justify="right")
    table.add_column("Saved", justify="right")
    for row in rows:
        table.add_row(
            row.label,
            f"{row.tools_sent:,}",
            f"{row.per_request:,}",
            f"{row.per_request * rounds:,}",
            "-" if row.kind == "all" else f"{_saved(row.per_request, everything):.1f}%",
        )
    console.print(table)
    pair = (
        f"; search pair: {search_tool.name!r} and {call_tool.name!r}, the found tools in a "
        "search answer"
        if call_tool is not None
        else ""
    )
    console.print(
        f"mean tool {sizes.mean:,.0f} tokens, largest {sizes.largest:,}; "
        f"search tool {search_tool.name!r} {search_tokens:,}{pair}",
        markup=False,
        style="dim",
    )
    console.print(_billed_table(rows, billed, rounds, output))


def _billed_table(
    rows: list[CostRow], billed: list[dict[str, float]], rounds: int, output: int
) -> Table:
    table = Table(
        title=f"Billed for {plural(rounds, 'request')}, {output:,} output tokens each "
        "(prompt cache, adapters' defaults)",
        title_justify="left",
    )
    table.add_column("Sent with each request")
    for name in billed[0]:
        table.add_column(name, justify="right")
        table.add_column("Saved", justify="right")
    for row, costs in zip(rows, billed, strict=True):
        cells = []
        for name, cost in costs.items():
            saved = "-" if row.kind == "all" else f"{_saved(cost, billed[0][name]):.1f}%"
            cells += [f"${cost:.4f}", saved]
        table.add_row(row.label, *cells)
    return table


def _saved(tokens: float, everything: float) -> float:
    return 100.0 * (1.0 - tokens / everything) if everything else 0.0


def _as_json(
    catalog: str,
    sizes: TokenSummary,
    search_name: str,
    search_tokens: int,
    rows: list[CostRow],
    rounds: int,
) -> dict[str, Any]:
    everything = rows[0].per_request
    return {
        "catalog": catalog,
        "encoding": "cl100k_base",
        "tools": len(sizes.sizes),
        "rounds": rounds,
        "catalog_tokens": {
            "total": sizes.total,
            "mean": round(sizes.mean, 1),
            "largest": sizes.largest,
        },
        "search_tool": {"name": search_name, "tokens": search_tokens},
        "rows": [
            {
                "label": row.label,
                "kind": row.kind,
                "tools_sent": row.tools_sent,
                "per_request": row.per_request,
                "total": row.per_request * rounds,
                "saved_percent": None
                if row.kind == "all"
                else round(_saved(row.per_request, everything), 2),
            }
            for row in rows
        ],
    }
