"""``toolrelay demo``: the refund triage over a 78-tool catalog, through the whole pipeline.

The task ("find yesterday's failed refunds, retry the recoverable ones, open tickets for the
ones still failing, and notify the owner") runs through the chat client with tool search
(``ToolSearchAdvisor`` over the chosen index), the execution layer and chat memory, against
the refund desk's deterministic fake back end. Each round is shown as it happens, then a
token table compares every request with the same request carrying every tool, the turn is
billed on claude-sonnet-4-5 and gpt-5 both ways (``_billed.py``: prompt cache and output at
the published prices), and a check
says whether the four required tools were found and called in order (exit status 1 if not).

By default the model is a replay of the task's decisions (no key, no server; see
``_replay.py``); ``--model local`` / ``openai:NAME`` / ``anthropic:NAME`` puts a
real model in its place. ``--lang zh`` runs the task in Chinese, the language of the seed
documents: the catalog's descriptions, the task, the system text, the replay's searches and
words, and the tool search texts (see ``_demo_language.py``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from toolrelay._plural import plural
from toolrelay._sync import run_sync
from toolrelay.cli._billed import BilledTurn, bill_rounds, billed_json, billed_line
from toolrelay.cli._chat_models import (
    BaseUrlOption,
    GgufOption,
    ModelOption,
    ModelSpec,
    Provider,
    make_chat_model,
)
from toolrelay.cli._demo_catalog import (
    DemoCatalog,
    load_demo_catalog,
    locate_demo_catalog,
    shown_path,
)
from toolrelay.cli._demo_language import DEMO_LANGUAGES, parse_demo_language
from toolrelay.cli._indexes import BuiltIndex, IndexType, build_index
from toolrelay.cli._live_view import LiveView, rounds_json, token_line, token_table
from toolrelay.cli._output import JsonOption, emit_json, stdout_console
from toolrelay.cli._pipeline import RequestTokens, RoundRecord, build_pipeline, quiet_library_logs
from toolrelay.cli._replay import REPLAY_NAME, triage_plan
from toolrelay.cli._search import IndexOption
from toolrelay.models._base import ChatModel, model_name
from toolrelay.search._base import MAX_RESULTS_LIMIT
from toolrelay.search._usage import InMemoryUsageLog, dump_usage, load_usage
from toolrelay.toolsearch import TOOL_SEARCH_NAME, ToolSearchRecord
from toolrelay.toolsearch._options import DEFAULT_MAX_RESULTS

__all__ = [
    "DEMO_TOOL_CONTEXT",
    "LanguageOption",
    "MaxResultsOption",
    "RequiredTool",
    "check_required",
    "demo_command",
]

DEMO_TOOL_CONTEXT = {"tenant_id": "acme", "user_id": "U-ZHANG"}
"""Who acts in the demo: a refund-operations analyst of the seeded refund desk."""

_CONVERSATION = "refund-triage"

MaxResultsOption = Annotated[
    int,
    typer.Option(
        "--max-results",
        "-k",
        min=1,
        max=MAX_RESULTS_LIMIT,
        help=f"Tools a search returns when the model does not say (1-{MAX_RESULTS_LIMIT}).",
    ),
]

LanguageOption = Annotated[
    str,
    typer.Option(
        "--lang",
        parser=parse_demo_language,
        metavar="en|zh",
        help="The language of the task, the catalog's descriptions, the replay and the tool "
        "search texts: en (English) or zh (Chinese, as in the seed documents).",
    ),
]

UsageLogFileOption = Annotated[
    Path | None,
    typer.Option(
        "--usage-log",
        metavar="FILE",
        help=(
            "Rank searches with the usage history in this JSONL file, and write the run's "
            "history back to it: a second run shows the first one's history at work."
        ),
        show_default=False,
    ),
]

CatalogPathOption = Annotated[
    Path | None,
    typer.Option(
        "--catalog",
        "-c",
        help="The demo catalog's folder (default: examples/refund_desk of the checkout).",
        show_default=False,
    ),
]


@dataclass(frozen=True, kw_only=True)
class RequiredTool:
    """Whether one required tool was found and used.

    Attributes:
        name: The tool.
        found_in: The model call whose round first searched it up (0: revealed before the
            first model call), or ``None``.
        query: That search's query.
        rank: Its rank in that search.
        called_in: The model call that first called it successfully, or ``None``.
    """

    name: str
    found_in: int | None = None
    query: str | None = None
    rank: int | None = None
    called_in: int | None = None


def check_required(
    rounds: list[RoundRecord],
    required: tuple[str, ...],
    revealed: ToolSearchRecord | None = None,
) -> list[RequiredTool]:
    """Where each required tool was first found by a search and first called successfully.

    ``revealed``: the search with the request's text before the first model call, which
    counts as round 0.
    """
    found = [(0, revealed.response)] if revealed is not None else []
    found += [
        (r.model_call, s) for r in rounds for call in r.searches for s in call if s is not None
    ]
    checks = []
    for name in required:
        check = RequiredTool(name=name)
        hit = next(((call, s) for call, s in found if name in s.names), None)
        if hit is not None:
            found_in, search = hit
            rank = search.names.index(name) + 1
            check = replace(check, found_in=found_in, query=search.query, rank=rank)
        called = (
            r.model_call for r in rounds if any(o.ok and o.tool_name == name for o in r.outcomes)
        )
        checks.append(replace(check, called_in=next(called, None)))
    return checks


def _completed(checks: list[RequiredTool]) -> bool:
    calls = [c.called_in for c in checks]
    if any(c.found_in is None or c.called_in is None for c in checks):
        return False
    return all(a is not None and b is not None and a < b for a, b in itertools.pairwise(calls))


def demo_command(
    model: ModelOption = ModelSpec(provider=Provider.REPLAY),  # noqa: B008 - frozen value
    index: IndexOption = IndexType.AUTO,
    catalog: CatalogPathOption = None,
    max_results: MaxResultsOption = DEFAULT_MAX_RESULTS,
    lang: LanguageOption = "en",
    gguf: GgufOption = None,
    base_url: BaseUrlOption = None,
    usage_log: UsageLogFileOption = None,
    as_json: JsonOption = False,
) -> None:
    """Run the refund-triage task over a 78-tool catalog with tool search, round by round.

    Shows each round (the search query, the tools the index returned with scores, the tool
    calls and their results, the answer), then the tokens of every request against the same
    request carrying every tool, and what the turn costs as billed on claude-sonnet-4-5 and
    gpt-5 both ways. Exits with status 1 when the four required tools were not
    all found and called in order.
    """
    if gguf is not None and model.provider is Provider.REPLAY:
        model = ModelSpec(provider=Provider.LOCAL)
    demo = load_demo_catalog(locate_demo_catalog(catalog), lang=lang)
    chat_model = _model(model, demo, gguf=gguf, base_url=base_url)
    replay = model.provider is Provider.REPLAY
    console = stdout_console()
    definitions = demo.catalog.definitions()
    built = build_index(index, definitions)
    if not as_json:
        _header(console, demo, model, built, replay=replay, name=model_name(chat_model).strip("'"))
    speaker = REPLAY_NAME if replay else "model"
    view = None if as_json else LiveView(console, speaker=speaker, catalog_size=len(definitions))
    log = InMemoryUsageLog()
    if usage_log is not None and usage_log.exists():
        run_sync(log.record(load_usage(usage_log)))
    pipeline = build_pipeline(
        chat_model,
        demo.catalog,
        built.index,
        system=DEMO_LANGUAGES[demo.language].system,
        max_results=max_results,
        tool_context=DEMO_TOOL_CONTEXT,
        listener=view,
        usage_log=log if usage_log is not None else None,
    )
    spec = pipeline.client.prompt(demo.task).conversation(_CONVERSATION)
    with quiet_library_logs():
        response = run_sync(spec.acall())
    answer = response.content() or ""
    report = response.tool_search
    learned = () if report is None else report.learned
    if usage_log is not None:
        dump_usage(run_sync(log.entries()), usage_log)
    rounds = pipeline.recorder.rounds
    checks = check_required(rounds, demo.required_tools, report.revealed if report else None)
    completed = _completed(checks)
    billed = bill_rounds(rounds, definitions)
    if as_json:
        result = _as_json(demo, model, built, rounds, answer, checks) | {
            "billed": billed_json(billed),
            "completed": completed,
        }
        if usage_log is not None and report is not None:
            result["usage"] = {
                "file": str(usage_log),
                "history_entries": report.history_entries,
                "learned": [{"query": e.query, "tool": e.tool} for e in learned],
            }
        emit_json(result)
    else:
        _footer(console, answer, rounds, checks, billed, len(definitions), replay=replay)
        if usage_log is not None and report is not None:
            _usage_lines(console, usage_log, report.history_entries, len(learned))
    if not completed:
        missing = [c.name for c in checks if c.found_in is None or c.called_in is None]
        why = f"not found or not called: {', '.join(missing)}" if missing else "out of order"
        typer.echo(f"error: the task was not completed; required tools {why}", err=True)
        raise typer.Exit(1)


def _model(
    spec: ModelSpec, demo: DemoCatalog, *, gguf: Path | None, base_url: str | None
) -> ChatModel:
    if spec.provider is Provider.REPLAY:
        if base_url is not None:
            raise typer.BadParameter("--base-url needs --model openai:NAME or anthropic:NAME")
        return triage_plan(demo.required_tools, words=DEMO_LANGUAGES[demo.language])
    return make_chat_model(spec, gguf=gguf, base_url=base_url)


def _header(
    console: Console,
    demo: DemoCatalog,
    model: ModelSpec,
    built: BuiltIndex,
    *,
    replay: bool,
    name: str,
) -> None:
    console.print(Text(f"toolrelay demo: {demo.task}", style="bold"))
    console.print(
        f"Catalog: {plural(len(demo.catalog), 'tool')} from {shown_path(demo.path)}"
        f"{'' if demo.language == 'en' else f' (texts in {demo.language})'}; the model first "
        f"sees only tool search ({TOOL_SEARCH_NAME}). "
        f"Index: {built.index.search_type} ({built.timings()}).",
        markup=False,
    )
    if replay:
        console.print(
            Text(
                "Model: REPLAY of the task's decisions, not a language model. The client, tool "
                "search, index, tools and memory are real: what a search finds is live, a miss "
                "shows as a miss, and call arguments come from earlier results. Try "
                "--model local, openai:NAME or anthropic:NAME for a real model.",
                style="yellow",
            )
        )
    else:
        console.print(f"Model: {model} ({name})", markup=False)


def _footer(
    console: Console,
    answer: str,
    rounds: list[RoundRecord],
    checks: list[RequiredTool],
    billed: list[BilledTurn],
    catalog_size: int,
    *,
    replay: bool,
) -> None:
    console.rule(Text("Answer" + (" (replay)" if replay else ""), style="bold"), align="left")
    console.print(Text(answer or "(no text)"))
    console.print()
    console.print(token_table(rounds, catalog_size))
    console.print(Text(token_line(rounds), style="bold"))
    for bill in billed:
        console.print(Text(billed_line(bill, catalog_size), style="bold"))
    console.print()
    table = Table(title="Required tools", title_justify="left")
    table.add_column("Tool", style="bold")
    table.add_column("Found by search")
    table.add_column("Called", justify="right")
    for check in checks:
        found = (
            (
                f"round {check.found_in}, rank {check.rank}: {check.query!r}"
                if check.found_in
                else f"revealed before round 1, rank {check.rank}"
            )
            if check.found_in is not None
            else "not found"
        )
        called = f"round {check.called_in}" if check.called_in is not None else "not called"
        table.add_row(Text(check.name), Text(found), called)
    console.print(table)
    if _completed(checks):
        console.print(
            Text(
                f"All {plural(len(checks), 'required tool')} were found by search and called "
                "in order.",
                style="green",
            )
        )


def _usage_lines(console: Console, path: Path, history: int, learned: int) -> None:
    ranked = (
        f"Searches ranked with {plural(history, 'past query', 'past queries')} of {path}"
        if history
        else f"No usage history in {path} yet"
    )
    console.print(
        Text(
            f"{ranked}; this run learned {plural(learned, 'query', 'queries')} and wrote them "
            "back: run it again to rank with them.",
            style="magenta",
        )
    )


def _as_json(
    demo: DemoCatalog,
    model: ModelSpec,
    built: BuiltIndex,
    rounds: list[RoundRecord],
    answer: str,
    checks: list[RequiredTool],
) -> dict[str, Any]:
    totals = RequestTokens.total(rounds)
    return {
        "task": demo.task,
        "language": demo.language,
        "catalog": {"path": str(demo.path), "tools": len(demo.catalog)},
        "model": {"spec": str(model), "replay": model.provider is Provider.REPLAY},
        "index": {
            "type": built.index.search_type,
            "seconds": round(built.seconds, 4),
            "load_seconds": None if built.load_seconds is None else round(built.load_seconds, 4),
        },
        "rounds": rounds_json(rounds),
        "answer": answer,
        "required_tools": [
            {
                "name": c.name,
                "found": None
                if c.found_in is None
                else {"model_call": c.found_in, "query": c.query, "rank": c.rank},
                "called": None if c.called_in is None else {"model_call": c.called_in},
            }
            for c in checks
        ],
        "tokens": {
            "encoding": "cl100k_base",
            "requests": len(rounds),
            "sent": totals.sent,
            "with_all_tools": totals.without_search,
            "saved": totals.saved,
            "saved_percent": round(totals.saved_percent, 2),
        },
    }
