"""``toolrelay eval tasks``: does the model get the tasks done, with all tools and with search?

Runs every task of a suite ``--repeat`` times in each ``--mode`` through the real client (see
:mod:`toolrelay.evaluation`), appending each run to a results file as it finishes; run again
with the same file, it makes only the runs that are missing. Then it prints, per mode, the
success rate with its 95% interval, tokens, model requests, wall time p50/p95, tool-call
errors and retrieval misses; each mode against the first, paired by task, in one sentence;
and the tasks' outcomes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from toolrelay._plural import plural
from toolrelay._sync import run_sync
from toolrelay.cli._chat_models import (
    MODEL_HELP,
    BaseUrlOption,
    ChannelOption,
    GgufOption,
    ModelSpec,
    Provider,
    make_chat_model,
    parse_channel,
    parse_model_spec,
)
from toolrelay.cli._indexes import IndexType, index_catalog, make_index, parse_index_type
from toolrelay.cli._output import JsonOption, emit_json, progress, stdout_console
from toolrelay.cli._pipeline import quiet_library_logs
from toolrelay.cli._task_files import SUITES_FOLDER, load_task_suite
from toolrelay.client._tool_search import Channel
from toolrelay.evaluation import EvaluationReport, Mode
from toolrelay.evaluation._results import ResultsFile
from toolrelay.evaluation._runner import ALL_TOOLS, DEFAULT_MAX_REQUESTS, RunResult, TaskRunner
from toolrelay.exceptions import ConfigurationError
from toolrelay.models import ChatModel
from toolrelay.models._base import model_name
from toolrelay.prompt import ChatOptions

__all__ = ["DEFAULT_MODES", "RESULTS_FOLDER", "parse_mode", "tasks_command"]

DEFAULT_MODES = (ALL_TOOLS, "search")
"""The modes compared when no ``--mode`` is given."""

RESULTS_FOLDER = Path("eval-results")
"""Where results files go by default, in the working directory."""

_PER_TASK_ROWS = 30  # a longer suite lists only the tasks whose modes disagree


def parse_mode(value: str, channel: Channel = "auto") -> Mode:
    """The mode ``value`` names: ``all-tools``, ``search`` or ``search:INDEX``.

    A search mode takes ``channel`` (named in the mode's name unless ``auto``).

    Raises:
        typer.BadParameter: Not one of those, or an unknown index.
        ConfigurationError: The index needs an extra that is not installed.
    """
    text = value.strip().lower()
    if text == ALL_TOOLS:
        return Mode.all_tools()
    head, _, tail = text.partition(":")
    if head != "search":
        raise typer.BadParameter(f"unknown mode {value!r}; use {ALL_TOOLS}, search or search:INDEX")
    kind = parse_index_type(tail or IndexType.AUTO)
    named = f"--mode {text}"
    make_index(kind, named_as=named)  # fails now, naming the extra, when it is missing
    return Mode.search(lambda: make_index(kind, named_as=named), channel=channel)


def tasks_command(
    tasks: Annotated[
        str,
        typer.Option(
            "--tasks",
            "-t",
            metavar="SUITE",
            help=f"The suite: a JSONL file, a Python module (path or dotted name, optionally "
            f":attribute), or the NAME of a suite shipped with toolrelay ({SUITES_FOLDER}/: "
            "refund_triage, bfcl, bfcl:small; found from any folder).",
            show_default=False,
        ),
    ],
    model: Annotated[
        ModelSpec,
        typer.Option(
            "--model",
            "-m",
            parser=parse_model_spec,
            metavar="MODEL",
            help=MODEL_HELP.replace(
                "replay (the refund triage's decisions replayed; no key or server needed), ", ""
            ),
            show_default=False,
        ),
    ],
    modes: Annotated[
        list[str] | None,
        typer.Option(
            "--mode",
            metavar="MODE",
            help="all-tools, search (the default index) or search:INDEX (regex, bm25, "
            "vector, hybrid); repeatable, the first is the baseline. Default: all-tools "
            "and search.",
            show_default=False,
        ),
    ] = None,
    repeat: Annotated[
        int, typer.Option("--repeat", "-n", min=1, metavar="N", help="Runs per task and mode.")
    ] = 1,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help=f"The results file (JSONL, appended as runs finish; an existing one is "
            f"resumed). Default: {RESULTS_FOLDER}/SUITE.MODEL.jsonl.",
            show_default=False,
        ),
    ] = None,
    concurrency: Annotated[
        int,
        typer.Option(
            "--concurrency", "-j", min=1, metavar="N", help="Runs at once (remote models)."
        ),
    ] = 1,
    max_requests: Annotated[
        int,
        typer.Option(
            "--max-requests", min=1, metavar="N", help="Model requests per run before it fails."
        ),
    ] = DEFAULT_MAX_REQUESTS,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, metavar="N", help="Only the first N tasks.")
    ] = None,
    subsets: Annotated[
        list[str] | None,
        typer.Option(
            "--subset",
            metavar="PREFIX",
            help="Only the tasks whose id starts with this; repeatable.",
        ),
    ] = None,
    temperature: Annotated[
        float | None,
        typer.Option(
            "--temperature",
            min=0.0,
            metavar="T",
            help="Sampling temperature of every request.",
        ),
    ] = None,
    gguf: GgufOption = None,
    base_url: BaseUrlOption = None,
    channel: ChannelOption = "auto",
    as_json: JsonOption = False,
) -> None:
    """Run a task suite with all tools and with tool search, and compare success and cost.

    Every run goes through the real client, tools and index with a fresh back end; success
    is decided by the tasks' checks. Prints per mode the success rate (95% Wilson interval),
    tokens, model requests, wall time p50/p95, tool-call errors and retrieval misses, then
    each mode against the first with a paired test over tasks. Exits with status 1 when
    some runs could not reach the model (run it again to retry them).
    """
    if model.provider is Provider.REPLAY:
        raise typer.BadParameter(
            "the replay only knows the refund triage's decisions; give a model: local, "
            "openai:NAME or anthropic:NAME",
            param_hint="'--model'",
        )
    suite = load_task_suite(tasks).select(prefixes=subsets or (), limit=limit)
    taken = parse_channel(channel)
    chosen = [parse_mode(m, taken) for m in (modes or DEFAULT_MODES)]
    if taken != "auto" and not any(m.searches for m in chosen):
        raise ConfigurationError(
            f"--channel {taken} is how tool search shows found tools, and no --mode searches; "
            "add --mode search (or search:INDEX), or leave --channel out"
        )
    chat_model = make_chat_model(model, gguf=gguf, base_url=base_url)
    label = model_name(chat_model).strip("'")
    runner = TaskRunner(
        suite,
        chat_model,
        modes=chosen,
        repeats=repeat,
        model_label=label,
        max_requests=max_requests,
        concurrency=concurrency,
        options=ChatOptions(temperature=temperature) if temperature is not None else None,
    )
    path = output or RESULTS_FOLDER / f"{_slug(suite.name)}.{_slug(label)}.jsonl"
    store = ResultsFile(path, suite=suite.name, model=label)
    todo = store.missing(runner.keys)
    earlier = len(runner.keys) - len(todo)
    if todo:
        runner.prepare(build=index_catalog)
        _load(chat_model)
    with quiet_library_logs(), progress("Running tasks", total=len(todo), unit="runs") as bar:

        def keep(result: RunResult) -> None:
            store.append(result)
            bar.advance()

        _, unrecorded = run_sync(runner.run(todo, keep))
    report = EvaluationReport.of(
        suite,
        store.results.values(),
        modes=[m.name for m in chosen],
        repeats=repeat,
        model=label,
    )
    if as_json:
        emit_json(
            report.to_json()
            | {
                "results_file": str(path),
                "new_runs": len(todo) - len(unrecorded),
                "earlier_runs": earlier,
                "unrecorded": [{"run": vars(u.key), "error": u.error} for u in unrecorded],
            }
        )
    else:
        _print(stdout_console(), report, path, len(todo) - len(unrecorded), earlier)
    if unrecorded:
        typer.echo(
            f"error: {plural(len(unrecorded), 'run')} could not reach the model "
            f"(first: {unrecorded[0].error}); run the command again to retry "
            f"{'it' if len(unrecorded) == 1 else 'them'}",
            err=True,
        )
        raise typer.Exit(1)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "model"


def _load(model: ChatModel) -> None:
    """Load a local model before the first run is timed."""
    if hasattr(model, "llama"):
        with progress("Loading the model"):
            model.llama  # noqa: B018 - the property loads the GGUF file


def _print(console: Console, report: EvaluationReport, path: Path, new: int, earlier: int) -> None:
    console.print(
        f"{report.suite}: {plural(report.tasks, 'task')}"
        + (f" ({report.description})" if report.description else "")
        + f"; model {report.model}; {plural(report.repeats, 'run')} per task and mode",
        markup=False,
    )
    console.print(
        f"results: {path} ({plural(new, 'new run')}, {earlier:,} from earlier"
        + (f", {plural(report.missing, 'run')} missing" if report.missing else "")
        + ")",
        markup=False,
        style="dim",
    )
    console.print(mode_table(report))
    source = (
        "as the model reported them"
        if report.token_source == "reported"
        else "counted with cl100k_base in the OpenAI wire format (the model reports none)"
    )
    console.print(f"Tokens: {source}.", style="dim", markup=False)
    for comparison in report.comparisons:
        console.print(Text(comparison.sentence(), style="bold"))
        low, high = comparison.interval
        console.print(
            f"  difference in success {comparison.difference:+.2f}, 95% interval "
            f"{low:+.2f} to {high:+.2f} (paired bootstrap over tasks)",
            style="dim",
            markup=False,
        )
    console.print(task_table(report))


def mode_table(report: EvaluationReport) -> Table:
    """One column per mode, one row per measure."""
    table = Table(show_edge=False)
    table.add_column("Per mode")
    for mode in report.modes:
        table.add_column(mode, justify="right")
    rows: list[tuple[str, Any]] = [
        ("Success", lambda s: f"{s.success_rate:.2f} ({s.successes}/{s.runs})"),
        ("95% interval", lambda s: f"{s.interval[0]:.2f}–{s.interval[1]:.2f}"),
        ("Tokens per run", lambda s: f"{s.tokens:,.0f}"),
        ("  prompt", lambda s: f"{s.prompt_tokens:,.0f}"),
        ("  completion", lambda s: f"{s.completion_tokens:,.0f}"),
        ("Model requests per run", lambda s: f"{s.requests:.1f}"),
        ("Seconds per run, p50", lambda s: f"{s.latency_p50:.1f}"),
        ("Seconds per run, p95", lambda s: f"{s.latency_p95:.1f}"),
        ("Calls with invalid arguments", lambda s: f"{s.invalid_arguments:,}"),
        ("Calls of unknown names", lambda s: f"{s.unknown_names:,}"),
        ("Calls of tools not yet found", lambda s: f"{s.not_shown:,}"),
        ("Runs missing a needed tool", lambda s: f"{s.retrieval_misses:,}"),
        ("Runs ended by an error", lambda s: f"{s.errors:,}"),
    ]
    # What the provider's usage said about its prompt cache, when it said anything.
    for label, field in (
        ("  cache read", "cache_read_tokens"),
        ("  cache write", "cache_write_tokens"),
    ):
        if any(getattr(s, field) is not None for s in report.summaries):
            rows.insert(
                [r[0] for r in rows].index("  completion"),
                (label, lambda s, field=field: _optional(getattr(s, field))),
            )
    for label, cell in rows:
        table.add_row(label, *(cell(s) for s in report.summaries))
    return table


def _optional(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def task_table(report: EvaluationReport) -> Table:
    """The tasks' outcomes per mode (only the disagreeing ones in a long suite)."""
    outcomes = list(report.outcomes)
    title = "Tasks"
    if len(outcomes) > _PER_TASK_ROWS:
        outcomes = [o for o in outcomes if len({_rate(v) for v in o.results.values()}) > 1]
        title = f"Tasks where the modes differ ({len(outcomes):,} of {report.tasks:,})"
        outcomes = outcomes[:_PER_TASK_ROWS]
    table = Table(title=title, title_justify="left", show_edge=False)
    table.add_column("Task")
    for mode in report.modes:
        table.add_column(mode, justify="right")
    table.add_column("Why the last failure failed")
    for outcome in outcomes:
        cells = [f"{s}/{n}" if n else "-" for s, n in outcome.results.values()]
        why = next(iter(outcome.failures.items()), None)
        table.add_row(
            Text(outcome.task), *cells, Text(f"{why[0]}: {why[1]}" if why else "", overflow="fold")
        )
    return table


def _rate(value: tuple[int, int]) -> Any:
    successes, runs = value
    return successes / runs if runs else None
