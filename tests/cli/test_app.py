"""The root command: help, version, ``python -m toolrelay``, and how failures are reported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import typer

from toolrelay.cli import app
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

    monkeypatch.setattr("toolrelay.cli.tools.load_catalog", explode)
    result = cli("tools", "anything.jsonl")
    assert result.exit_code == 1
    assert result.stderr == (
        "error: unexpected ZeroDivisionError: division by zero; second line "
        "(run with --debug for the traceback)\n"
    )


def test_multi_line_library_errors_are_folded(cli: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    def invalid(spec: str) -> None:
        raise ToolDefinitionError("t", ["first problem\nmore", "second problem"])

    monkeypatch.setattr("toolrelay.cli.tools.load_catalog", invalid)
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


def test_console_script_points_at_main() -> None:
    from importlib.metadata import entry_points

    from toolrelay.cli import main

    (script,) = entry_points(group="console_scripts", name="toolrelay")
    assert script.load() is main
