"""``toolrelay search CATALOG QUERY``: what a model would find with the tool-search tool."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from toolrelay._plural import plural
from toolrelay.cli._catalogs import load_catalog
from toolrelay.cli._indexes import BuiltIndex, IndexType, build_index, parse_index_type
from toolrelay.cli._output import JsonOption, emit_json, stdout_console
from toolrelay.cli._tools import CatalogArgument
from toolrelay.exceptions import ConfigurationError
from toolrelay.search._base import MAX_RESULTS_LIMIT, SearchHit, SearchRequest, SearchResponse
from toolrelay.search._documents import dotted_categories
from toolrelay.search._history import QueryHistory
from toolrelay.search._usage import load_usage
from toolrelay.tools._base import ToolDefinition

__all__ = ["IndexOption", "UsageLogOption", "hit_json", "read_history", "search_command"]

IndexOption = Annotated[
    IndexType,
    typer.Option(
        "--index",
        "-i",
        parser=parse_index_type,
        metavar="KIND",
        help=(
            "Kind of index: regex (pattern), bm25 (keywords), vector (embeddings), hybrid "
            "(both), auto (hybrid when the embeddings extra is installed, else bm25)."
        ),
    ),
]

UsageLogOption = Annotated[
    Path | None,
    typer.Option(
        "--usage-log",
        metavar="FILE",
        help=(
            "Rank with this usage history: JSONL of the log's export "
            '({"query", "tool", ...}) or of benchmark queries ({"query", "relevant": [...]}).'
        ),
    ),
]


def read_history(path: Path | None) -> QueryHistory | None:
    """The history in a ``--usage-log`` file (every scope in it), or ``None`` without one."""
    return None if path is None else QueryHistory.of(load_usage(path))


def search_command(
    catalog: CatalogArgument,
    query: Annotated[
        str,
        typer.Argument(
            metavar="QUERY", help="What the model would search for.", show_default=False
        ),
    ],
    index: IndexOption = IndexType.BM25,
    k: Annotated[
        int,
        typer.Option(
            "-k",
            "--max-results",
            min=1,
            max=MAX_RESULTS_LIMIT,
            help=f"How many tools to return (1-{MAX_RESULTS_LIMIT}).",
        ),
    ] = 5,
    min_score: Annotated[
        float | None,
        typer.Option("--min-score", help="Drop hits below this score (the index's own scale)."),
    ] = None,
    category: Annotated[
        str | None,
        typer.Option("--category", help="Only tools in this category (dotted-name prefix)."),
    ] = None,
    usage_log: UsageLogOption = None,
    as_json: JsonOption = False,
) -> None:
    """Rank the tools of a catalog for a query, best first, with their scores.

    With --usage-log, each hit also says what of its score came from history, and the past
    query that gave it.
    """
    if category is not None and not category.strip():
        raise typer.BadParameter("give a category name", param_hint="'--category'")
    loaded = load_catalog(catalog)
    definitions = loaded.unique_definitions()
    if category is not None:
        _check_category(category, definitions)
    history = read_history(usage_log)
    built = build_index(index, definitions)
    response = built.index.search(
        SearchRequest(
            query=query, max_results=k, min_score=min_score, category=category, history=history
        )
    )
    if as_json:
        emit_json(_as_json(catalog, len(definitions), built, response))
        return
    console = stdout_console()
    if not response.hits:
        console.print(Text(f"No tools matched {query!r} ({response.search_type})."))
        return
    table = Table(title=f"Search {query!r} ({response.search_type})", title_justify="left")
    table.add_column("#", justify="right", style="dim")
    table.add_column("Tool", style="bold", overflow="fold")
    table.add_column("Score", justify="right")
    table.add_column("Summary", overflow="fold")
    if history is not None:
        table.add_column("From", overflow="fold")
    for rank, hit in enumerate(response.hits, start=1):
        cells: list[str | Text] = [str(rank), Text(hit.name), f"{hit.score:.4g}", Text(hit.summary)]
        if history is not None:
            cells.append(Text(_source(hit)))
        table.add_row(*cells)
    console.print(table)
    if history is not None:
        console.print(
            f"ranked with {plural(len(history), 'past query', 'past queries')} from {usage_log}",
            markup=False,
            style="dim",
        )
    console.print(
        f"{response.total:,} of {plural(len(definitions), 'tool')} matched in "
        f"{response.time_ms:.1f} ms; {built.timings()}",
        markup=False,
        style="dim",
    )


def _source(hit: SearchHit) -> str:
    """Where a hit's score came from: its description, history, or both."""
    if hit.history_query is None:
        return "description"
    own = hit.score - hit.history_score
    where = f"history +{hit.history_score:.3g}: {hit.history_query!r}"
    return where if own <= 0 else f"description {own:.3g}, {where}"


def _check_category(category: str, definitions: list[ToolDefinition]) -> None:
    """Fail, listing the catalog's categories, when no tool is in ``category``.

    Raises:
        ConfigurationError: No tool's dotted name starts with ``category.``.
    """
    categories = {c for d in definitions for c in dotted_categories(d.name)}
    if category in categories:
        return
    top = sorted({c for c in categories if "." not in c})
    known = f"its categories are {', '.join(top)}" if top else "it has no dotted tool names"
    raise ConfigurationError(f"no tool is in category {category!r}; {known}")


def _as_json(
    catalog: str, tools: int, built: BuiltIndex, response: SearchResponse
) -> dict[str, Any]:
    return {
        "catalog": catalog,
        "query": response.query,
        "index": response.search_type,
        "tools": tools,
        "total": response.total,
        "time_ms": response.time_ms,
        "index_seconds": built.seconds,
        "load_seconds": built.load_seconds,
        "hits": [hit_json(rank, hit) for rank, hit in enumerate(response.hits, start=1)],
    }


def hit_json(rank: int, hit: SearchHit, **names: str) -> dict[str, Any]:
    """A search hit as the command line writes it in JSON (``names``: after its name)."""
    return {
        "rank": rank,
        "name": hit.name,
        **names,
        "score": hit.score,
        "summary": hit.summary,
        **(
            {"history_score": hit.history_score, "history_query": hit.history_query}
            if hit.history_query is not None
            else {}
        ),
    }
