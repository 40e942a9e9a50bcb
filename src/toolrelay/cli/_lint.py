"""``toolrelay lint CATALOG``: the tools a model will miss, confuse or misuse.

Runs :func:`toolrelay.lint.lint` over a catalog and prints the findings grouped by severity,
the largest confusable clusters, the least retrievable tools, the largest definitions and
a summary line; ``--json`` prints the whole report instead. The exit status is 1 when a
finding reaches ``--fail-on`` (``error`` by default), so the command can guard a catalog in
CI or a pre-commit hook. Settings come from ``[tool.toolrelay.lint]`` in the nearest
``pyproject.toml`` (see :class:`~toolrelay.lint.LintConfig`); options given here override them.

Tools of JSON catalogs may declare their side effects with MCP ``annotations``
(``readOnlyHint``, ``destructiveHint``); they are read from the catalog file.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated, Any, get_args

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from toolrelay._plural import plural
from toolrelay.cli._catalogs import LoadedCatalog, load_catalog
from toolrelay.cli._output import (
    JsonOption,
    ProgressBar,
    emit_json,
    missing_extra,
    progress,
    stdout_console,
)
from toolrelay.cli._tools import CatalogArgument
from toolrelay.lint import RULES, LintConfig, LintReport, LintTarget, Severity, find_config, lint
from toolrelay.lint._config import IndexChoice, load_config
from toolrelay.lint._findings import listed
from toolrelay.lint._targets import metadata_from_annotations
from toolrelay.search._embedders import embeddings_available

__all__ = ["lint_command", "lint_targets"]

_STYLES = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
_TITLES = {Severity.ERROR: "Errors", Severity.WARNING: "Warnings", Severity.INFO: "Info"}
_CLUSTERS_SHOWN = 5
_MEMBERS_SHOWN = 8
_LEAST_SHOWN = 10
_LARGEST_SHOWN = 5


def lint_command(
    catalog: CatalogArgument,
    index: Annotated[
        str | None,
        typer.Option(
            "--index",
            "-i",
            metavar="auto|bm25|hybrid",
            help=(
                "Index the retrieval rules rank with: auto (hybrid when the embeddings extra "
                "is installed, else bm25), bm25, hybrid. Default: the config's, else auto."
            ),
            show_default=False,
        ),
    ] = None,
    fail_on: Annotated[
        str | None,
        typer.Option(
            "--fail-on",
            metavar="error|warning|info|never",
            help="Exit with status 1 when a finding is this severe. Default: config, else error.",
            show_default=False,
        ),
    ] = None,
    show: Annotated[
        str,
        typer.Option("--show", metavar="error|warning|info", help="Least severe findings to list."),
    ] = "warning",
    limit: Annotated[
        int,
        typer.Option("--limit", min=0, help="Findings listed per severity (0: all)."),
    ] = 50,
    disable: Annotated[
        list[str] | None,
        typer.Option("--disable", "-d", metavar="RULE", help="Turn a rule off; repeatable."),
    ] = None,
    config_file: Annotated[
        Path | None,
        typer.Option(
            "--config",
            metavar="PATH",
            help="Read [tool.toolrelay.lint] from this file, not the nearest pyproject.toml.",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Find the tools a model will miss, confuse or misuse, and what the catalog costs.

    Checks names, descriptions, confusable and hard-to-find tools, side effects and token
    costs. Exits with status 1 when a finding reaches --fail-on.
    """
    config = load_config(config_file) if config_file is not None else find_config()
    config = _override(config, index=index, fail_on=fail_on, disable=disable or [])
    shown = _severity(show, "--show")
    if config.index == "hybrid" and not embeddings_available():
        subject = "--index hybrid" if index else "[tool.toolrelay.lint] index = 'hybrid'"
        raise missing_extra(subject, "embeddings")
    loaded = load_catalog(catalog)
    targets = lint_targets(loaded)
    label = f"Linting {plural(len(targets), 'tool')}"
    with progress(label) as bar:
        report = lint(targets, config=config, catalog=catalog, progress=_Embedding(bar, label))
    if as_json:
        emit_json({**report.to_dict(), "fail_on": _fail_on_name(config.fail_on)})
    else:
        _print(report, shown=shown, limit=limit)
    if report.failed(config.fail_on):
        raise typer.Exit(1)


class _Embedding:
    """Shows the embedding of the catalog as its own stage of the lint's progress bar."""

    def __init__(self, bar: ProgressBar, label: str) -> None:
        self.bar = bar
        self.label = label
        self.counting = False

    def __call__(self, done: int, total: int) -> None:
        if done < total and not self.counting:
            self.counting = True
            self.bar.stage("Embedding", total, unit="tools")
        if self.counting:
            self.bar(done, total)
            if done >= total:
                self.counting = False
                self.bar.stage(self.label)


def lint_targets(loaded: LoadedCatalog) -> list[LintTarget]:
    """The catalog's tools as lint targets, with metadata from JSON ``annotations``."""
    return [
        LintTarget(
            definition=entry.definition,
            metadata=entry.metadata if entry.row is None else metadata_from_annotations(entry.row),
            origin=entry.origin,
        )
        for entry in loaded.entries
    ]


def _override(
    config: LintConfig, *, index: str | None, fail_on: str | None, disable: list[str]
) -> LintConfig:
    changes: dict[str, Any] = {}
    if index is not None:
        changes["index"] = index.strip().lower()
        if changes["index"] not in get_args(IndexChoice):
            raise typer.BadParameter(f"unknown index {index!r}; choose auto, bm25 or hybrid")
    if fail_on is not None:
        changes["fail_on"] = None if fail_on.lower() == "never" else _severity(fail_on, "--fail-on")
    if disable:
        changes["disable"] = config.disable | frozenset(disable)
    return config.model_copy(update=changes) if changes else config


def _severity(value: str, option: str) -> Severity:
    try:
        return Severity(value.strip().lower())
    except ValueError:
        choices = ", ".join(s.value for s in Severity)
        extra = ", never" if option == "--fail-on" else ""
        raise typer.BadParameter(
            f"{option} must be one of {choices}{extra}, not {value!r}"
        ) from None


def _fail_on_name(fail_on: Severity | None) -> str:
    return "never" if fail_on is None else fail_on.value


def _print(report: LintReport, *, shown: Severity, limit: int) -> None:
    console = stdout_console()
    for severity in Severity:
        if severity.at_least(shown):
            _findings_table(console, report, severity, limit)
    _rules_table(console, report)
    _retrieval_tables(console, report)
    largest = report.cost.largest[:_LARGEST_SHOWN]
    if largest:
        sizes = ", ".join(f"{name} {tokens:,}" for name, tokens in largest)
        console.print(Text(f"Largest definitions (tokens): {sizes}", style="dim"))
    console.print(Text(report.summary(), style="bold"))


def _findings_table(console: Console, report: LintReport, severity: Severity, limit: int) -> None:
    findings = [f for f in report.findings if f.severity is severity]
    if not findings:
        return
    listed = findings if limit == 0 else findings[:limit]
    table = Table(
        title=f"{_TITLES[severity]} ({len(findings):,})",
        title_justify="left",
        title_style=_STYLES[severity],
    )
    table.add_column("Tool", style="bold", overflow="fold", ratio=1)
    table.add_column("Rule", style=_STYLES[severity], no_wrap=True)
    table.add_column("Reason and fix", overflow="fold", ratio=3)
    for finding in listed:
        reason = Text(finding.message)
        reason.append(f"\n→ {finding.fix}", style="dim")
        table.add_row(Text(finding.tool or "(catalog)"), Text(finding.rule), reason)
    console.print(table)
    if len(listed) < len(findings):
        console.print(
            Text(
                f"... and {len(findings) - len(listed):,} more; --limit 0 lists all, "
                "--json prints everything",
                style="dim",
            )
        )


def _rules_table(console: Console, report: LintReport) -> None:
    counts = Counter((f.rule, f.severity) for f in report.findings)
    if not counts:
        return
    table = Table(title="Findings per rule", title_justify="left")
    table.add_column("Rule")
    table.add_column("Severity")
    table.add_column("Findings", justify="right")
    order = {rule_id: position for position, rule_id in enumerate(RULES)}
    for (rule_id, severity), count in sorted(
        counts.items(), key=lambda item: (-item[0][1].level, order.get(item[0][0], 0))
    ):
        table.add_row(rule_id, Text(severity.value, style=_STYLES[severity]), f"{count:,}")
    console.print(table)


def _retrieval_tables(console: Console, report: LintReport) -> None:
    retrieval = report.retrieval
    if retrieval is None:
        return
    if retrieval.clusters:
        table = Table(
            title=f"Largest confusable clusters ({retrieval.search_type})", title_justify="left"
        )
        table.add_column("Tools", justify="right")
        table.add_column("Members", overflow="fold")
        for cluster in retrieval.clusters[:_CLUSTERS_SHOWN]:
            table.add_row(str(len(cluster)), Text(listed(cluster, _MEMBERS_SHOWN)))
        console.print(table)
    hard = [
        t
        for t in retrieval.least_retrievable(_LEAST_SHOWN)
        if _outside(t.description_rank, retrieval.top_k) or _outside(t.name_rank, retrieval.top_k)
    ]
    if hard:
        title = f"Least retrievable tools ({retrieval.search_type}, of {len(retrieval.tools):,})"
        table = Table(title=title, title_justify="left")
        table.add_column("Tool", overflow="fold")
        table.add_column("By description", justify="right")
        table.add_column("By name", justify="right")
        for tool in hard:
            table.add_row(Text(tool.name), _rank(tool.description_rank), _rank(tool.name_rank))
        console.print(table)
    console.print(
        Text(
            f"{retrieval.found_within(retrieval.top_k):.1%} of tools are in the top "
            f"{retrieval.top_k} for their own description, "
            f"{retrieval.found_within(retrieval.top_k, by='name'):.1%} for their name "
            f"({retrieval.search_type}, {retrieval.seconds:.2f} s)",
            style="dim",
        )
    )


def _outside(rank: int | None, top_k: int) -> bool:
    return rank is None or rank > top_k


def _rank(rank: int | None) -> str:
    return "not found" if rank is None else f"{rank:,}"
