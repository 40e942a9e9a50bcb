"""``toolrelay eval retrieval``: is the right tool found, and how high? (R@k, NDCG, MRR).

The metrics are the search package's (``search/_evaluation.py``); this command loads the inputs
with precise error messages, shows progress, and prints or writes the report. A benchmark is
a catalog and a queries file (``{"id", "query", "relevant": [names]}`` per line), optionally
with a name map for lenient scoring; ``--dataset NAME`` takes all three from
``benchmarks/data/NAME/`` of the checkout it is run in.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from toolrelay._plural import plural
from toolrelay.cli._catalogs import load_catalog, read_json, read_jsonl
from toolrelay.cli._indexes import IndexType, IndexWrapper, build_index
from toolrelay.cli._output import JsonOption, emit_json, progress, stdout_console, write_json
from toolrelay.cli._search import IndexOption, UsageLogOption, read_history
from toolrelay.exceptions import LoadError
from toolrelay.search._base import SearchRequest, SearchResponse, ToolIndex
from toolrelay.search._evaluation import (
    DEPTH,
    EvalQuery,
    EvalReport,
    evaluate,
    unknown_relevant,
)
from toolrelay.search._history import QueryHistory
from toolrelay.tools._base import ToolDefinition

__all__ = ["DATASETS_FOLDER", "find_dataset", "load_name_map", "load_queries", "retrieval_command"]

DATASETS_FOLDER = Path("benchmarks") / "data"
"""Where ``--dataset NAME`` looks, in the working directory and each folder above it."""


def retrieval_command(
    catalog: Annotated[
        str | None,
        typer.Option("--catalog", "-c", help="The catalog: a JSONL/JSON file or a Python module."),
    ] = None,
    queries: Annotated[
        Path | None,
        typer.Option("--queries", "-q", help='JSONL of {"id", "query", "relevant": [names]}.'),
    ] = None,
    dataset: Annotated[
        str | None,
        typer.Option(
            "--dataset",
            "-d",
            help=f"A dataset folder, or a NAME under {DATASETS_FOLDER}/ (bfcl, restbench, ...).",
        ),
    ] = None,
    split: Annotated[
        str, typer.Option("--split", help="Queries of a dataset: queries.SPLIT.jsonl.")
    ] = "dev",
    index: IndexOption = IndexType.BM25,
    name_map: Annotated[
        Path | None,
        typer.Option("--name-map", help="JSON {variant name: original name}: lenient scoring."),
    ] = None,
    cutoffs: Annotated[
        list[int] | None,
        typer.Option(
            "-k", min=1, max=DEPTH, help=f"Also report R@k for this k (1-{DEPTH}); repeatable."
        ),
    ] = None,
    subsets: Annotated[
        list[str] | None,
        typer.Option("--subset", help="Also report the queries whose id starts with this."),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Also write the report here (JSON).")
    ] = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict", help="Fail when a query names a relevant tool the catalog does not hold."
        ),
    ] = False,
    usage_log: UsageLogOption = None,
    as_json: JsonOption = False,
) -> None:
    """Score an index on a benchmark: R@1/3/5/10, NDCG@10, MRR and Complete@5 (x100).

    With --usage-log the index ranks with that history (past queries and the tools they led
    to); a benchmark's queries file serves as one, e.g. one split as the log of another.

    A query whose relevant tool is not in the catalog can never be found: it is named in a
    warning (an error with --strict) before anything runs.
    """
    folder = find_dataset(dataset) if dataset else None
    if folder is not None:
        catalog = catalog or str(folder / "tools.jsonl")
        queries = queries or folder / f"queries.{split}.jsonl"
        if name_map is None and (folder / "name_map.json").is_file():
            name_map = folder / "name_map.json"
    if catalog is None:
        raise typer.BadParameter("give --catalog, or --dataset", param_hint="'--catalog'")
    if queries is None:
        raise typer.BadParameter("give --queries, or --dataset", param_hint="'--queries'")
    definitions = load_catalog(catalog).unique_definitions()
    query_list = load_queries(queries)
    mapping = load_name_map(name_map) if name_map is not None else None
    unknown = _check_relevant(query_list, definitions, mapping, queries, strict=strict)
    history = read_history(usage_log)
    built = build_index(index, definitions)
    with progress("Searching", total=len(query_list), unit="queries") as bar:
        counting = _Counting(built.index, bar.advance, history)
        report = evaluate(counting, definitions, query_list, mapping)
    result = {
        "dataset": folder.name if folder is not None else None,
        "catalog": catalog,
        "queries_file": str(queries),
        "name_map": str(name_map) if name_map is not None else None,
        "index": built.index.search_type,
        "tools": len(definitions),
        "index_seconds": built.seconds,
        "load_seconds": built.load_seconds,
        "unknown_relevant": unknown,
        **(
            {"usage_log": str(usage_log), "history_entries": len(history)}
            if history is not None
            else {}
        ),
        **_report_json(report, sorted(set(cutoffs or ())), subsets or []),
    }
    if output is not None:
        write_json(output, result)
    if as_json:
        emit_json(result)
    else:
        _print(result, built.timings())
    if output is not None:
        typer.echo(f"wrote {output}", err=True)


def find_dataset(name: str) -> Path:
    """The folder of a dataset: ``name`` itself, or ``benchmarks/data/name`` nearby.

    ``benchmarks/data/name`` is looked for in the working directory, then in each folder
    above it.

    Raises:
        LoadError: No such dataset.
    """
    given = Path(name)
    if given.is_dir():
        return given
    for folder in (Path.cwd(), *Path.cwd().parents):
        candidate = folder / DATASETS_FOLDER / name
        if candidate.is_dir():
            return candidate
    raise LoadError(name, f"no such dataset (looked for {DATASETS_FOLDER / name} here and above)")


def load_queries(path: Path) -> list[EvalQuery]:
    """Read a queries file, naming the line of any malformed query.

    Raises:
        LoadError: The file is missing, a line is not JSON, or a query lacks its text or
            relevant tools.
    """
    loaded: list[EvalQuery] = []
    for number, row in read_jsonl(path):
        if not isinstance(row, dict):
            raise LoadError(str(path), "expected a JSON object", line=number)
        text = row.get("query")
        relevant = row.get("relevant")
        if not isinstance(text, str) or not text.strip():
            raise LoadError(str(path), 'a query needs a non-empty "query" string', line=number)
        if (
            not isinstance(relevant, list)
            or not relevant
            or not all(isinstance(n, str) for n in relevant)
        ):
            raise LoadError(
                str(path), '"relevant" must be a non-empty list of tool names', line=number
            )
        query_id = str(row.get("id", number))
        loaded.append(EvalQuery(id=query_id, query=text, relevant=tuple(dict.fromkeys(relevant))))
    if not loaded:
        raise LoadError(str(path), "no queries found")
    return loaded


def load_name_map(path: Path) -> dict[str, str]:
    """Read a name map (``{variant name: original name}``).

    Raises:
        LoadError: The file is missing, not JSON, or not an object of strings.
    """
    data = read_json(path)
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise LoadError(str(path), "a name map must be a JSON object of name → original name")
    return {str(k): v for k, v in data.items()}


_LISTED_QUERIES = 5


def _check_relevant(
    queries: Sequence[EvalQuery],
    definitions: Sequence[ToolDefinition],
    name_map: dict[str, str] | None,
    source: Path,
    *,
    strict: bool,
) -> dict[str, list[str]]:
    """Warn (or, ``strict``, fail) when queries name relevant tools the catalog lacks.

    Returns:
        The names missing, by query id.

    Raises:
        LoadError: ``strict``, and a query names a relevant tool not in the catalog.
    """
    missing = unknown_relevant(queries, [d.name for d in definitions], name_map)
    if not missing:
        return {}
    listed = "; ".join(
        f"{query.id} ({', '.join(repr(n) for n in names)})"
        for query, names in missing[:_LISTED_QUERIES]
    )
    if len(missing) > _LISTED_QUERIES:
        listed += f"; and {len(missing) - _LISTED_QUERIES:,} more"
    if len(missing) == 1:
        what = "1 query names a relevant tool that is not in the catalog, so it scores as a miss"
    else:
        what = (
            f"{len(missing):,} queries name relevant tools that are not in the catalog, so they "
            "score as misses"
        )
    message = f"{what} whatever the index does: {listed}"
    if strict:
        raise LoadError(str(source), message)
    typer.echo(f"warning: {source}: {message} (--strict makes this an error)", err=True)
    return {query.id: list(names) for query, names in missing}


class _Counting(IndexWrapper):
    """An index that advances a progress bar on every search (and searches with a history)."""

    def __init__(
        self, index: ToolIndex, advance: Callable[[int], None], history: QueryHistory | None
    ) -> None:
        super().__init__(index)
        self._advance = advance
        self._history = history

    def search(self, request: SearchRequest) -> SearchResponse:
        if self._history is not None:
            request = dataclasses.replace(request, history=self._history)
        response = self.inner.search(request)
        self._advance(1)
        return response


def _report_json(report: EvalReport, cutoffs: list[int], subsets: list[str]) -> dict[str, Any]:
    def metrics(part: EvalReport) -> dict[str, float]:
        values = part.metrics()
        for k in cutoffs:
            if f"R@{k}" not in values and part.outcomes:
                values[f"R@{k}"] = 100.0 * statistics.fmean(o.recall(k) for o in part.outcomes)
        recall = sorted((m for m in values if m.startswith("R@")), key=lambda m: int(m[2:]))
        return {m: values[m] for m in recall} | {
            m: v for m, v in values.items() if not m.startswith("R@")
        }

    return {
        "queries": report.queries,
        "lenient": report.lenient,
        "search_ms": report.search_ms,
        "metrics": metrics(report),
        "subsets": {
            prefix: {"queries": part.queries, "metrics": metrics(part)}
            for prefix in subsets
            for part in [report.subset(prefix)]
        },
        "outcomes": [
            {
                "id": o.id,
                "retrieved": list(o.retrieved),
                "hit_ranks": list(o.hit_ranks),
                "relevant": o.relevant,
            }
            for o in report.outcomes
        ],
    }


def _print(result: dict[str, Any], timings: str) -> None:
    console = stdout_console()
    scoring = "lenient (name map)" if result["lenient"] else "strict"
    source = result["dataset"] or result["catalog"]
    console.print(
        f"{source}: {plural(result['tools'], 'tool')}, "
        f"{plural(result['queries'], 'query', 'queries')}, "
        f"index {result['index']}, {scoring} scoring",
        markup=False,
    )
    table = Table(show_edge=False)
    table.add_column("Metric")
    table.add_column("all", justify="right")
    subsets: dict[str, Any] = result["subsets"]
    for prefix, part in subsets.items():
        table.add_column(f"{prefix}* ({part['queries']})", justify="right")
    for name, value in result["metrics"].items():
        cells = [f"{value:.1f}"]
        cells += [_cell(part["metrics"].get(name)) for part in subsets.values()]
        table.add_row(name, *cells)
    console.print(table)
    console.print(
        f"search {result['search_ms']:.2f} ms/query; {timings}",
        markup=False,
        style="dim",
    )


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"
