"""The root command: help, version, ``python -m toolrelay``, and how failures are reported."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from toolrelay.cli import app
from toolrelay.cli._app import arrange_options
from toolrelay.exceptions import ToolDefinitionError

from .conftest import Invoke


def test_help_lists_every_command(cli: Invoke) -> None:
    result = cli("--help")
    assert result.exit_code == 0
    for command in ("tools", "search", "eval"):
        assert command in result.stdout


def test_no_arguments_prints_help(cli: Invoke) -> None:
    result = cli()
    assert result.exit_code == 0
    assert "Usage" in result.stdout
    eval_help = cli("eval")
    assert eval_help.exit_code == 0
    assert "retrieval" in eval_help.stdout
    assert "tokens" in eval_help.stdout


def test_version(cli: Invoke) -> None:
    result = cli("--version")
    assert result.exit_code == 0
    assert result.stdout.startswith("toolrelay ")


def test_python_dash_m_runs_the_app(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolrelay", "--help"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "search" in done.stdout


def test_usage_errors_are_one_line_with_status_2(cli: Invoke) -> None:
    result = cli("tools")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: Missing argument 'CATALOG'. (see 'toolrelay tools --help')"
    ]
    unknown = cli("nonsense")
    assert unknown.exit_code == 2
    assert len(unknown.stderr.strip().splitlines()) == 1
    assert "nonsense" in unknown.stderr


@pytest.mark.parametrize(
    ("args", "suggestion"),
    [
        # A command of a nested group, named at the root.
        (("tokens",), "No such command 'tokens'. Did you mean 'toolrelay eval tokens'?"),
        (("retrieval", "-c", "x"), "Did you mean 'toolrelay eval retrieval'?"),
        # Mistyped, at the root and in a nested group.
        (("serach", "x", "q"), "No such command 'serach'. Did you mean 'toolrelay search'?"),
        (("evl", "tokens"), "Did you mean 'toolrelay eval'?"),
        (("eval", "tokns"), "No such command 'tokns'. Did you mean 'toolrelay eval tokens'"),
        # Options: a command's (click's suggestion, worded the same), the root's, and a
        # command's flag before the command, which the groups take.
        (("tools", "x.jsonl", "--jsn"), "No such option: --jsn. Did you mean '--json'?"),
        (("--debg", "tools", "x.jsonl"), "No such option: --debg. Did you mean '--debug'?"),
        (("--jsn", "tools", "x.jsonl"), "No such option: --jsn. Did you mean '--json'?"),
        (("eval", "--jsn", "tokens"), "No such option: --jsn. Did you mean '--json'?"),
    ],
)
def test_a_mistyped_command_or_option_suggests_the_nearest_real_one(
    cli: Invoke, args: tuple[str, ...], suggestion: str
) -> None:
    result = cli(*args)
    assert result.exit_code == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: ")
    assert suggestion in line


def test_a_name_near_nothing_suggests_nothing(cli: Invoke) -> None:
    result = cli("xyzzy")
    assert result.stderr == "error: No such command 'xyzzy'. (see 'toolrelay --help')\n"
    option = cli("tools", "x.jsonl", "--zzzzz")
    assert option.stderr == "error: No such option: --zzzzz (see 'toolrelay tools --help')\n"


def test_missing_file_is_one_line_without_traceback(cli: Invoke, tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"
    result = cli("tools", str(missing))
    assert result.exit_code == 1
    assert result.stderr == f"error: {missing}: no such file\n"
    assert "Traceback" not in result.output
    assert result.stdout == ""


def test_debug_lets_the_exception_through(cli: Invoke, tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.jsonl")
    result = cli("--debug", "tools", missing)
    assert result.exit_code == 1
    assert type(result.exception).__name__ == "LoadError"
    assert cli("tools", missing, env={"TOOLRELAY_DEBUG": "1"}).exception is not None


def test_unexpected_errors_are_one_line_and_suggest_debug(
    cli: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(spec: str) -> None:
        raise ZeroDivisionError("division by zero\nsecond line")

    monkeypatch.setattr("toolrelay.cli._tools.load_catalog", explode)
    result = cli("tools", "anything.jsonl")
    assert result.exit_code == 1
    assert result.stderr == (
        "error: unexpected ZeroDivisionError: division by zero; second line "
        "(run with --debug for the traceback)\n"
    )


def test_multi_line_library_errors_are_folded(cli: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    def invalid(spec: str) -> None:
        raise ToolDefinitionError("t", ["first problem\nmore", "second problem"])

    monkeypatch.setattr("toolrelay.cli._tools.load_catalog", invalid)
    result = cli("tools", "anything.jsonl")
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert "first problem; more" in result.stderr


def test_a_new_command_is_one_registration() -> None:
    probe = typer.Typer()

    @probe.command()
    def hello() -> None:
        typer.echo("hi")

    # The registration pattern the app uses for its own commands.
    app.command("hello-probe")(hello)
    try:
        from typer.testing import CliRunner

        result = CliRunner().invoke(app, ["hello-probe"])
        assert result.exit_code == 0
        assert result.stdout == "hi\n"
    finally:
        app.registered_commands[:] = [c for c in app.registered_commands if c.name != "hello-probe"]


COMMANDS = [
    (),
    ("tools",),
    ("search",),
    ("lint",),
    ("eval",),
    ("eval", "retrieval"),
    ("eval", "tokens"),
    ("demo",),
    ("chat",),
    ("serve",),
]


def _description(help_text: str) -> list[list[str]]:
    """The paragraphs of the description (between the usage line and the first panel)."""
    lines = help_text.splitlines()
    start = next(i for i, line in enumerate(lines) if "Usage:" in line) + 1
    end = next(i for i, line in enumerate(lines) if line.startswith("╭"))
    paragraphs: list[list[str]] = [[]]
    for line in lines[start:end]:
        if line.strip():
            paragraphs[-1].append(line.strip())
        elif paragraphs[-1]:
            paragraphs.append([])
    return [p for p in paragraphs if p]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "toolrelay")
def test_help_fits_80_columns_and_wraps_docstrings(cli: Invoke, command: tuple[str, ...]) -> None:
    result = cli(*command, "--help", env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert all(len(line) <= 80 for line in result.stdout.splitlines())
    for paragraph in _description(result.stdout):
        # Wrapped to the width: no line could have taken the next line's first word.
        for line, following in itertools.pairwise(paragraph):
            assert len(line) + 1 + len(following.split()[0]) > 78, (line, following)


def test_help_keeps_square_brackets(cli: Invoke) -> None:
    queries = cli("eval", "retrieval", "--help", env={"COLUMNS": "200"})
    assert '{"id", "query", "relevant": [names]}' in queries.stdout
    lint = cli("lint", "--help", env={"COLUMNS": "200"})
    assert "Read [tool.toolrelay.lint] from this file" in lint.stdout


def test_global_options_may_follow_the_command(cli: Invoke, tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.jsonl")
    result = cli("tools", missing, "--debug")
    assert type(result.exception).__name__ == "LoadError"  # the traceback is let through
    nested = cli("eval", "tokens", "-c", missing, "--debug")
    assert type(nested.exception).__name__ == "LoadError"


def test_json_may_precede_the_command(cli: Invoke, catalog_file: Path) -> None:
    before = cli("--json", "tools", str(catalog_file))
    assert before.exit_code == 0, before.output
    assert json.loads(before.stdout)["totals"]["tools"] == 3
    nested = cli("eval", "--json", "tokens", "-c", str(catalog_file))
    assert nested.exit_code == 0, nested.output
    assert json.loads(nested.stdout)["catalog"] == str(catalog_file)
    chat = cli("--json", "chat", "-m", "replay")
    assert chat.exit_code == 2  # chat has no JSON output: a usage error, as after it
    assert "No such option: --json" in chat.stderr


@pytest.mark.parametrize(
    ("args", "arranged"),
    [
        (["tools", "x", "--debug"], ["--debug", "tools", "x"]),
        (["search", "x", "q", "--no-progress"], ["--no-progress", "search", "x", "q"]),
        (["--json", "eval", "tokens", "-c", "x"], ["eval", "tokens", "-c", "x", "--json"]),
        (["search", "x", "--", "--debug"], ["search", "x", "--", "--debug"]),
        (["--json", "search", "x", "--", "-q"], ["search", "x", "--json", "--", "-q"]),
        (["tools", "--help"], ["tools", "--help"]),
        (["--json"], ["--json"]),
    ],
)
def test_arrange_options(args: list[str], arranged: list[str]) -> None:
    group = typer.main.get_command(app)
    assert arrange_options(group, args) == arranged
