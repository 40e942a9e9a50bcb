"""``toolrelay chat``: talk to a model that finds its tools with tool search, turn by turn.

Each line read from stdin is one turn of one conversation (chat memory keeps the earlier
turns; the tools a search found stay shown). Every round of a turn is shown as it happens:
the searches with the tools found and their scores, each tool call with its arguments and
result. The loop ends at end of input or on ``exit``/``quit``. A turn that fails (the model's
API is down, say) prints one ``error:`` line and the loop goes on.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Annotated, cast, get_args

import typer
from rich.console import Console
from rich.text import Text

from toolrelay._plural import plural
from toolrelay.cli._catalog_modules import load_module_tools
from toolrelay.cli._chat_models import (
    BaseUrlOption,
    ChannelOption,
    GgufOption,
    ModelOption,
    ModelSpec,
    Provider,
    make_chat_model,
    parse_channel,
)
from toolrelay.cli._demo import DEMO_TOOL_CONTEXT, MaxResultsOption
from toolrelay.cli._demo_catalog import (
    demo_catalog_of,
    is_demo_catalog,
    load_demo_catalog,
    locate_demo_catalog,
    shown_path,
)
from toolrelay.cli._indexes import IndexType, build_index
from toolrelay.cli._live_view import LiveView, token_line
from toolrelay.cli._output import one_line, stdout_console
from toolrelay.cli._pipeline import (
    Pipeline,
    RoundRecord,
    build_pipeline,
    quiet_library_logs,
)
from toolrelay.cli._replay import REPLAY_NAME, ReplayModel, SearchReplay, triage_plan
from toolrelay.cli._search import IndexOption
from toolrelay.exceptions import LoadError, ToolRelayError
from toolrelay.models._base import ChatModel
from toolrelay.tools import ToolCatalog
from toolrelay.tools._modules import import_target, split_attribute
from toolrelay.toolsearch import TOOL_SEARCH_NAME, ToolSearchReport
from toolrelay.toolsearch._options import DEFAULT_MAX_RESULTS
from toolrelay.toolsearch._texts import SearchLanguage

__all__ = ["DEFAULT_SYSTEM", "chat_command", "parse_context", "parse_search_language"]

DEFAULT_SYSTEM = (
    "You are a helpful assistant. Find the tools you need, act with them using the results "
    "of earlier steps, then answer briefly with what you did."
)
"""The system text unless ``--system`` gives another."""

_CONTEXT = {"tenant_id": "local", "user_id": "cli"}
_QUIT = {"exit", "quit"}
_CONVERSATION = "chat"
_LANGUAGES: tuple[str, ...] = get_args(SearchLanguage)


def parse_context(entries: list[str] | None) -> dict[str, str]:
    """``KEY=VALUE`` entries as a dict.

    Raises:
        typer.BadParameter: An entry has no ``=`` or an empty key.
    """
    context: dict[str, str] = {}
    for entry in entries or []:
        key, equals, value = entry.partition("=")
        if not equals or not key.strip():
            raise typer.BadParameter(f"expected KEY=VALUE, got {entry!r}")
        context[key.strip()] = value
    return context


def parse_search_language(value: str) -> SearchLanguage:
    """The ``--lang`` value ``value`` names (any case, surrounding spaces ignored).

    Raises:
        typer.BadParameter: Not ``auto``, ``en`` or ``zh``.
    """
    language = str(value).strip().lower()
    if language not in _LANGUAGES:
        raise typer.BadParameter(f"unknown language {value!r}; use auto, en or zh")
    return cast(SearchLanguage, language)


def chat_command(
    model: ModelOption,
    tools: Annotated[
        str | None,
        typer.Option(
            "--tools",
            "-t",
            metavar="CATALOG",
            help="The tools: a Python module (pkg.module, path/to/file.py or a package "
            "folder; :attribute optional). Default: examples/refund_desk of the checkout.",
            show_default=False,
        ),
    ] = None,
    index: IndexOption = IndexType.AUTO,
    max_results: MaxResultsOption = DEFAULT_MAX_RESULTS,
    system: Annotated[
        str,
        typer.Option(
            "--system",
            help="The system text (default: find the tools you need, act, answer briefly).",
            show_default=False,
        ),
    ] = DEFAULT_SYSTEM,
    context: Annotated[
        list[str] | None,
        typer.Option(
            "--context",
            metavar="KEY=VALUE",
            help="Tool context entries (tenant_id, user_id, ...); repeatable.",
            show_default=False,
        ),
    ] = None,
    gguf: GgufOption = None,
    base_url: BaseUrlOption = None,
    lang: Annotated[
        str,
        typer.Option(
            "--lang",
            parser=parse_search_language,
            metavar="auto|en|zh",
            help="The language of the tool search texts the model reads (the search tool's "
            "description, the system suffix, the 'not available' answer): auto (the "
            "catalog's language), en or zh.",
        ),
    ] = "auto",
    channel: ChannelOption = "auto",
) -> None:
    """Chat with a model that finds its tools through tool search; shows every tool round.

    Reads one message per line from stdin until end of input or "exit".
    """
    extra_context = parse_context(context)
    replay = model.provider is Provider.REPLAY
    catalog, source, tool_context, chat_model = _setup(model, tools, gguf, base_url)
    console = stdout_console()
    definitions = catalog.definitions()
    built = build_index(index, definitions)
    view = LiveView(
        console, speaker=REPLAY_NAME if replay else "model", catalog_size=len(definitions)
    )
    pipeline = build_pipeline(
        chat_model,
        catalog,
        built.index,
        system=system,
        max_results=max_results,
        tool_context={**tool_context, **extra_context},
        listener=view,
        language=parse_search_language(lang),
        channel=parse_channel(channel),
    )
    console.print(
        Text(
            f"toolrelay chat: {plural(len(catalog), 'tool')} from {source} behind "
            f"{TOOL_SEARCH_NAME} "
            f"({built.index.search_type} index); model {model}"
            + _replay_note(chat_model)
            + '. One message per line; "exit" or end of input quits.',
            style="bold",
        )
    )
    everything: list[RoundRecord] = []
    turns = 0
    # One event loop for the whole chat: provider clients keep their connections on it.
    with asyncio.Runner() as runner, quiet_library_logs():
        while (line := _read_line()) is not None:
            text = line.strip()
            if not text:
                continue
            if text.lower() in _QUIT:
                break
            turns += 1
            if _turn(runner, pipeline, console, text):
                everything.extend(pipeline.recorder.rounds)
    if everything:
        console.print(Text(f"{plural(turns, 'turn')}, {token_line(everything)}"), style="dim")


def _setup(
    model: ModelSpec, tools: str | None, gguf: Path | None, base_url: str | None
) -> tuple[ToolCatalog, str, dict[str, str], ChatModel]:
    """The catalog, where it came from, the default tool context and the model."""
    if model.provider is Provider.REPLAY:
        if gguf is not None or base_url is not None:
            raise typer.BadParameter("--gguf and --base-url are for local and provider models")
        return _replay_setup(tools)
    chat_model = make_chat_model(model, gguf=gguf, base_url=base_url)
    if tools is None:
        demo = load_demo_catalog(locate_demo_catalog(None))
        return demo.catalog, shown_path(demo.path), DEMO_TOOL_CONTEXT, chat_model
    return _runnable_tools(tools), tools, _CONTEXT, chat_model


def _replay_setup(tools: str | None) -> tuple[ToolCatalog, str, dict[str, str], ChatModel]:
    """The replay's catalog and model: the triage over a demo catalog, else searches only."""
    if tools is None:
        demo = load_demo_catalog(locate_demo_catalog(None))
    else:
        target, attribute = split_attribute(tools)
        path = Path(target)
        module = import_target(target) if attribute is None and path.is_dir() else None
        if module is None or not is_demo_catalog(module):
            return _runnable_tools(tools), tools, _CONTEXT, SearchReplay()
        demo = demo_catalog_of(module, path)
    return (
        demo.catalog,
        shown_path(demo.path),
        DEMO_TOOL_CONTEXT,
        triage_plan(demo.required_tools),
    )


def _runnable_tools(tools: str) -> ToolCatalog:
    """The tools of the Python module ``tools`` names.

    Raises:
        LoadError: ``tools`` names JSON tool definitions (which have no code), or the module
            cannot be loaded or has no tools.
    """
    path = Path(split_attribute(tools)[0])
    if (path.is_file() and path.suffix != ".py") or (path / "tools.jsonl").is_file():
        raise LoadError(
            tools,
            "chat needs tools that can run: a Python module with @tool functions, a "
            "ToolCatalog or build_catalog(); JSON tool definitions have no code",
        )
    return ToolCatalog([tool for tool, _ in load_module_tools(tools)])


def _replay_note(chat_model: ChatModel) -> str:
    """What the banner says about a replay model (nothing for a real one)."""
    if isinstance(chat_model, SearchReplay):
        return (
            " (a replay: it searches your tools for each message and calls none of them; "
            "its decisions are the refund triage's only)"
        )
    if isinstance(chat_model, ReplayModel):
        return " (a replay of the refund-triage decisions, whatever you type)"
    return ""


def _read_line() -> str | None:
    """The next line of input, or ``None`` at its end."""
    try:
        line = input("you> ")
    except EOFError:
        return None
    except KeyboardInterrupt:
        typer.echo()
        return None
    if not sys.stdin.isatty():
        typer.echo(line)  # piped input is not echoed by a terminal; keep the transcript readable
    return line


def _turn(runner: asyncio.Runner, pipeline: Pipeline, console: Console, text: str) -> bool:
    """Run one turn and show its answer; ``False`` when it failed (the error is shown)."""
    pipeline.recorder.start_turn()
    spec = pipeline.client.prompt(text).conversation(_CONVERSATION)
    try:
        response = runner.run(spec.acall())
    except ToolRelayError as exc:
        typer.echo(f"error: {one_line(str(exc))}", err=True)
        return False
    if (note := _start_note(response.tool_search)) is not None:
        console.print(Text(note, style="dim"))
    console.rule(Text("answer", style="bold"), align="left")
    console.print(Text(response.content() or "(no text)"))
    console.print(Text(token_line(pipeline.recorder.rounds), style="dim"))
    return True


def _start_note(report: ToolSearchReport | None) -> str | None:
    """What the turn's start showed before the first model call, in one line (or nothing)."""
    if report is None:
        return None
    if report.sent_all_tools is not None:
        return report.sent_all_tools
    if report.revealed is not None and report.revealed.names:
        names = report.revealed.names
        note = "revealed before the first model call: " + ", ".join(names)
        if set(names) <= set(report.pinned):
            note += " (pinned: the conversation's tool list from now on)"
        return note
    return None
