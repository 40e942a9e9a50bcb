"""``toolrelay eval tokens``: what tool definitions cost per request, with and without search.

Without tool search every request carries the whole catalog. With progressive disclosure a
request carries the search tool and the few tools the model asked for. Both are counted with
cl100k_base (see ``tools/_tokens.py``); a conversation of ``--rounds`` model requests
pays the per-request cost each time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import typer
from rich.table import Table

from toolrelay._plural import plural
from toolrelay.cli._catalogs import load_catalog
from toolrelay.cli._output import JsonOption, emit_json, stdout_console
from toolrelay.cli._tokens import search_tool_definition
from toolrelay.search._base import MAX_RESULTS_LIMIT
from toolrelay.tools._tokens import TokenSummary, summarize_tokens, tool_tokens

__all__ = ["CostRow", "cost_rows", "tokens_command"]


@dataclass(frozen=True, kw_only=True)
class CostRow:
    """One way of sending tools, and what it costs.

    Attributes:
        label: What is sent, in words.
        kind: ``"all"``, ``"search"``, ``"search+mean"`` or ``"search+largest"``.
        tools_sent: How many tool definitions each request carries.
        per_request: Tokens of tool definitions in one request.
    """

    label: str
    kind: str
    tools_sent: int
    per_request: int


def cost_rows(sizes: TokenSummary, search_tokens: int, retrieved: list[int]) -> list[CostRow]:
    """The whole catalog, the search tool alone, and the search tool with ``k`` tools."""
    count = len(sizes.sizes)
    rows = [
        CostRow(
            label=f"all {plural(count, 'tool')}",
            kind="all",
            tools_sent=count,
            per_request=sizes.total,
        ),
        CostRow(label="search tool only", kind="search", tools_sent=1, per_request=search_tokens),
    ]
    for wanted in retrieved:
        k = min(wanted, count)
        rows.append(
            CostRow(
                label=f"search tool + {plural(k, 'tool')} of mean size",
                kind="search+mean",
                tools_sent=1 + k,
                per_request=search_tokens + round(k * sizes.mean),
            )
        )
        rows.append(
            CostRow(
                label="search tool + the largest tool"
                if k == 1
                else f"search tool + the {k:,} largest tools",
                kind="search+largest",
                tools_sent=1 + k,
                per_request=search_tokens + sizes.largest_k(k),
            )
        )
    return rows


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
    as_json: JsonOption = False,
) -> None:
    """Compare the tokens of sending the whole catalog with sending the search tool."""
    definitions = load_catalog(catalog).unique_definitions()
    sizes = summarize_tokens(definitions)
    search_tool = search_tool_definition(definitions)
    search_tokens = tool_tokens(search_tool)
    rows = cost_rows(sizes, search_tokens, sorted(set(retrieved or [3, 5])))
    everything = rows[0].per_request
    if as_json:
        emit_json(_as_json(catalog, sizes, search_tool.name, search_tokens, rows, rounds))
        return
    console = stdout_console()
    table = Table(title=f"Tool-definition tokens for {catalog} (cl100k_base)", title_justify="left")
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
    console.print(
        f"mean tool {sizes.mean:,.0f} tokens, largest {sizes.largest:,}; "
        f"search tool {search_tool.name!r} {search_tokens:,}",
        markup=False,
        style="dim",
    )


def _saved(tokens: int, everything: int) -> float:
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
