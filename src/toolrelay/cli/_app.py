"""The ``toolrelay`` command: the root app, its global options, and one place for errors.

Each command lives in its own module as a plain function with typer annotations and is
registered at the bottom of this module; adding a command is one import and one line.

Errors are reported in one place, :class:`ToolRelayGroup`: any failure of a command (a
missing file, a malformed line, a duplicate tool name, a bad option value) becomes a single
``error: ...`` line on stderr and a non-zero exit status (2 for usage errors, 1 otherwise).
``--debug`` (or ``TOOLRELAY_DEBUG=1``) lets the exception through, with its traceback.

The global options (``--debug``, ``--progress``) may also follow the command, and ``--json``
may also precede it: :meth:`ToolRelayGroup.parse_args` moves them where click expects them.
Help is rendered as Markdown, so docstrings wrap to the terminal and brackets stay brackets.

A mistyped name is answered with the nearest real one (:class:`CommandGroup`): a command
anywhere in the tree (``toolrelay tokens`` points to ``toolrelay eval tokens``), or an option
of the group (click itself suggests a command's own options).
"""

from __future__ import annotations

import difflib
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from toolrelay.cli import _api_token as api_token
from toolrelay.cli import _chat as chat
from toolrelay.cli import _demo as demo
from toolrelay.cli import _eval_retrieval as eval_retrieval
from toolrelay.cli import _eval_tasks as eval_tasks
from toolrelay.cli import _eval_tokens as eval_tokens
from toolrelay.cli import _lint as lint
from toolrelay.cli import _search as search
from toolrelay.cli import _serve as serve
from toolrelay.cli import _tools as tools
from toolrelay.cli._output import one_line, start_invocation
from toolrelay.exceptions import ToolRelayError

__all__ = ["CommandGroup", "ToolRelayGroup", "app", "arrange_options", "eval_app", "main"]

_COMMAND_FLAGS = ("--json",)
"""Flags of the commands that may also be given before the command's name."""


class CommandGroup(TyperGroup):
    """A group whose mistyped commands and options are answered with the nearest real ones."""

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:  # type: ignore[override]
        """Parse ``args`` after :func:`arrange_options` put the global options first."""
        try:
            return super().parse_args(ctx, arrange_options(self, args))
        except typer.TyperException as exc:
            option = getattr(exc, "option_name", None)
            if option is not None and not getattr(exc, "possibilities", None):
                # Click looked among the group's own options only; a command's flag given
                # before the command (--json) is taken there too.
                near = _nearest(option, {name: [name] for name in self._options()})
                exc.message = _suggesting(exc.message, near)
            raise

    def resolve_command(  # type: ignore[override]
        self, ctx: typer.Context, args: list[str]
    ) -> tuple[str | None, Any, list[str]]:
        """The command ``args`` name; a name no command has fails naming the nearest ones."""
        try:
            return super().resolve_command(ctx, args)
        except typer.TyperException as exc:
            if args and not args[0].startswith("-"):
                root = ctx.find_root()
                near = _nearest(args[0], _command_paths(root.command, root.info_name))
                exc.message = _suggesting(f"No such command '{args[0]}'.", near)
            raise

    def _options(self) -> list[str]:
        """The options this group takes before its command: its own and the commands' flags."""
        own = [name for param in self.params for name in getattr(param, "opts", ())]
        return [*own, *_COMMAND_FLAGS]


def _command_paths(group: Any, path: str | None) -> dict[str, list[str]]:
    """Every command's name under ``group``, with the full paths (``toolrelay eval tokens``)."""
    paths: dict[str, list[str]] = {}
    for name, command in group.commands.items():
        full = f"{path or 'toolrelay'} {name}"
        paths.setdefault(name, []).append(full)
        if hasattr(command, "commands"):
            for inner, fulls in _command_paths(command, full).items():
                paths.setdefault(inner, []).extend(fulls)
    return paths


def _nearest(typed: str, known: dict[str, list[str]]) -> list[str]:
    """What to suggest for ``typed``: ``known``'s entries under the names nearest it.

    A name that is exactly ``typed`` (a command of another group) wins over near ones.
    """
    near = [typed] if typed in known else difflib.get_close_matches(typed, known, n=3)
    return list(dict.fromkeys(suggestion for name in near for suggestion in known[name]))


def _suggesting(message: str, suggestions: list[str]) -> str:
    """``message``, then ``Did you mean 'a' or 'b'?`` when there are suggestions."""
    if not suggestions:
        return message
    named = " or ".join(f"'{suggestion}'" for suggestion in suggestions)
    return f"{message.rstrip('.')}. Did you mean {named}?"


class ToolRelayGroup(CommandGroup):
    """The root command group: turns every failure below it into one line on stderr."""

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:  # type: ignore[override]
        """Parse the root's options, a failure reported in one line like a command's."""
        try:
            return super().parse_args(ctx, args)
        except typer.TyperException as exc:
            code, message = _describe(exc)
            typer.echo(f"error: {message}", err=True)
            raise typer.Exit(code) from None

    def invoke(self, ctx: typer.Context) -> Any:  # type: ignore[override]  # always typer's Context
        """Run the chosen command, reporting its failure as ``error: ...``."""
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort):
            raise
        except Exception as exc:
            if ctx.find_root().params.get("debug"):
                raise
            code, message = _describe(exc)
            typer.echo(f"error: {message}", err=True)
            raise typer.Exit(code) from None


def _describe(exc: Exception) -> tuple[int, str]:
    """The exit status and the one-line message for a failure."""
    if isinstance(exc, typer.TyperException):
        # Usage errors (bad option values, missing arguments) come from typer's click.
        message = one_line(exc.format_message())
        possibilities = getattr(exc, "possibilities", None)
        if possibilities:  # click's own suggestions for a command's option, worded as ours
            message = _suggesting(one_line(exc.message), list(possibilities))
        command = getattr(getattr(exc, "ctx", None), "command_path", None)
        hint = f" (see '{command} --help')" if command else ""
        return exc.exit_code, message + hint
    if isinstance(exc, ToolRelayError | OSError):
        # Expected failures: bad input, missing extras, unwritable output files.
        return 1, one_line(str(exc))
    return 1, one_line(
        f"unexpected {type(exc).__name__}: {exc} (run with --debug for the traceback)"
    )


def arrange_options(group: Any, args: list[str]) -> list[str]:
    """``args`` with the group's own flags first and the command flags after the command.

    ``tools x.jsonl --debug`` becomes ``--debug tools x.jsonl`` (the group's options that are
    not eager: ``--help`` and ``--version`` after a command keep their meaning there), and
    ``--json search x q`` becomes ``search x q --json``. Nothing after ``--`` is touched.
    """
    end = args.index("--") if "--" in args else len(args)
    head, tail = args[:end], args[end:]
    own = {
        name
        for param in group.params
        if getattr(param, "is_flag", False) and not param.is_eager
        for name in (*param.opts, *param.secondary_opts)
    }
    leading = [a for a in head if a in own]
    rest = [a for a in head if a not in own]
    command = _command_position(group, rest)
    if command is None:
        return leading + rest + tail
    early = [a for a in rest[:command] if a in _COMMAND_FLAGS]
    rest = [a for i, a in enumerate(rest) if i >= command or a not in _COMMAND_FLAGS]
    return leading + rest + early + tail


def _command_position(group: Any, args: list[str]) -> int | None:
    """Where the name of the command that will run is in ``args`` (through nested groups)."""
    for position, arg in enumerate(args):
        if arg.startswith("-"):
            continue  # the groups' own options are flags, which take no value
        command = group.commands.get(arg)
        if command is None:
            return None
        if not hasattr(command, "commands"):  # a command, not a group of them
            return position
        group = command
    return None


def _show_version(value: bool) -> None:
    if value:
        try:
            typer.echo(f"toolrelay {version('toolrelay')}")
        except PackageNotFoundError:
            typer.echo("toolrelay (version unknown)")
        raise typer.Exit()


app = typer.Typer(
    name="toolrelay",
    cls=ToolRelayGroup,
    help="Inspect tool catalogs, search them, measure retrieval quality and token costs, "
    "and watch tool search at work (demo, chat).",
    add_completion=False,
    pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    # Rich markup would eat "[names]"; Markdown also joins a docstring's wrapped lines.
    rich_markup_mode="markdown",
)

eval_app = typer.Typer(
    cls=CommandGroup,
    help="Measure retrieval quality, token costs, and task success with a model.",
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode="markdown",
)


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    debug: Annotated[
        bool,
        typer.Option(
            "--debug", envvar="TOOLRELAY_DEBUG", help="Show the traceback of any failure."
        ),
    ] = False,
    show_progress: Annotated[
        bool | None,
        typer.Option(
            "--progress/--no-progress",
            envvar="TOOLRELAY_PROGRESS",
            help="Draw progress bars on stderr even when it is not a terminal or with "
            "--json, or never. Default: on a terminal, without --json.",
            show_default=False,
        ),
    ] = None,
    show_version: Annotated[
        bool,
        typer.Option("--version", is_eager=True, callback=_show_version, help="Print the version."),
    ] = False,
) -> None:
    start_invocation(show_progress)
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())


@eval_app.callback(invoke_without_command=True)
def _eval(ctx: typer.Context) -> None:
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())


app.command("tools")(tools.tools_command)
app.command("search")(search.search_command)
app.command("demo")(demo.demo_command)
app.command("chat")(chat.chat_command)
app.command("lint")(lint.lint_command)
app.command("serve")(serve.serve_command)
app.command("api-token")(api_token.api_token_command)
eval_app.command("retrieval")(eval_retrieval.retrieval_command)
eval_app.command("tokens")(eval_tokens.tokens_command)
eval_app.command("tasks")(eval_tasks.tasks_command)
app.add_typer(eval_app, name="eval")


def main() -> None:
    """Run the ``toolrelay`` command line (the console script's entry point)."""
    app()
