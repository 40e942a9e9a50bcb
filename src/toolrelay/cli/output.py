"""Where the command line writes: tables to stdout; progress, warnings and errors to stderr.

Human output goes through rich; ``--json`` output is plain JSON text on stdout, so it can be
piped into ``jq`` while progress bars and warnings stay on stderr. Consoles are made per call,
because the streams can change between invocations (tests swap them).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

__all__ = [
    "JsonOption",
    "emit_json",
    "progress",
    "stderr_console",
    "stdout_console",
    "warn",
    "write_json",
]

JsonOption = Annotated[
    bool, typer.Option("--json", help="Print machine-readable JSON on stdout instead of tables.")
]
"""The ``--json`` flag every command takes."""


def stdout_console() -> Console:
    """A console on stdout, without automatic highlighting of numbers and paths."""
    return Console(highlight=False)


def stderr_console() -> Console:
    """A console on stderr, for progress bars."""
    return Console(stderr=True, highlight=False)


def emit_json(data: Any) -> None:
    """Write ``data`` as indented JSON on stdout."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as indented JSON to ``path``, creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def warn(message: str) -> None:
    """One ``warning:`` line on stderr."""
    typer.echo(f"warning: {message}", err=True)


@contextmanager
def progress(description: str, total: int | None = None) -> Iterator[Callable[[int], None]]:
    """Show a progress bar on stderr while the block runs; yields ``advance(n)``.

    With ``total=None`` the bar only pulses (for one long call that reports nothing). Nothing
    is drawn when stderr is not a terminal, so logs and captured output stay clean.
    """
    console = stderr_console()
    columns = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn()]
    if total is not None:
        columns.append(MofNCompleteColumn())
    columns.append(TimeElapsedColumn())
    with Progress(
        *columns, console=console, transient=True, disable=not console.is_terminal
    ) as bar:
        task = bar.add_task(description, total=total)

        def advance(steps: int = 1) -> None:
            bar.advance(task, steps)

        yield advance
