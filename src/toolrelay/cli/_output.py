"""Where the command line writes: tables to stdout; progress, warnings and errors to stderr.

Human output goes through rich; ``--json`` output is plain JSON text on stdout, so it can be
piped into ``jq`` while progress bars and warnings stay on stderr. Consoles are made per call,
because the streams can change between invocations (tests swap them).

Progress is drawn on stderr only when it is a terminal and ``--json`` was not given, unless
``--progress`` (or ``TOOLRELAY_PROGRESS=1``) asks for it anyway; ``--no-progress`` turns it
off. The root command records these choices at the start of each invocation
(:func:`start_invocation`), and ``--json`` records itself, so that the code drawing a bar
need not be told.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, SpinnerColumn, Task, TextColumn
from rich.text import Text

from toolrelay.exceptions import ConfigurationError

__all__ = [
    "JsonOption",
    "ProgressBar",
    "emit_json",
    "missing_extra",
    "one_line",
    "progress",
    "start_invocation",
    "stderr_console",
    "stdout_console",
    "write_json",
]


class _Choices:
    """What this invocation asked about progress bars (one command runs per process)."""

    progress: bool | None = None
    json = False


def start_invocation(progress_choice: bool | None) -> None:
    """Record ``--progress`` / ``--no-progress`` (``None``: by the terminal); forget ``--json``."""
    _Choices.progress = progress_choice
    _Choices.json = False


def _remember_json(value: bool) -> bool:
    _Choices.json = value
    return value


JsonOption = Annotated[
    bool,
    typer.Option(
        "--json",
        help="Print machine-readable JSON on stdout instead of tables.",
        callback=_remember_json,
    ),
]
"""The ``--json`` flag every command with machine-readable output takes."""


def stdout_console() -> Console:
    """A console on stdout, without automatic highlighting of numbers and paths."""
    return Console(highlight=False)


def stderr_console() -> Console:
    """A console on stderr, for progress bars."""
    return Console(stderr=True, highlight=False)


def emit_json(data: Any) -> None:
    """Write ``data`` as indented JSON on stdout."""
    sys.stdout.write(_json_text(data))
    sys.stdout.flush()


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as indented JSON to ``path``, creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_json_text(data), encoding="utf-8")


def _json_text(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def one_line(message: str) -> str:
    """``message``'s lines joined with ``; `` (an error line on stderr)."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return "; ".join(lines) or "failed"


def missing_extra(subject: str, extra: str) -> ConfigurationError:
    """The error for an optional extra that is not installed, naming it once.

    ``missing_extra("--index hybrid", "embeddings")`` reads ``--index hybrid needs the
    embeddings extra: pip install -e '.[embeddings]'``.
    """
    return ConfigurationError(f"{subject} needs the {extra} extra: pip install -e '.[{extra}]'")


class ProgressBar:
    """What :func:`progress` yields: advance it, or tell it how far the work is.

    Calling it as ``bar(done, total)`` makes it an
    :data:`~toolrelay.search._base.IndexProgress`: ``done / total`` of the bar's own total (an
    index's total may count one embedding per tool and model; the bar counts tools).
    """

    def __init__(self, bar: Progress, task: Any, total: int | None) -> None:
        self._bar = bar
        self._task = task
        self._total = total

    def advance(self, steps: int = 1) -> None:
        self._bar.advance(self._task, steps)

    def __call__(self, done: int, total: int) -> None:
        if self._total is None or total == 0:
            self._bar.update(self._task, completed=done, total=total)
        else:
            self._bar.update(self._task, completed=self._total * done / total)

    def stage(self, description: str, total: int | None = None, *, unit: str = "") -> None:
        """Start over as another stage of the work (see :func:`progress` for the arguments)."""
        self._total = total
        self._bar.remove_task(self._task)
        self._task = self._bar.add_task(description, total=total, unit=unit)


@contextmanager
def progress(
    description: str, total: int | None = None, *, unit: str = ""
) -> Iterator[ProgressBar]:
    """Show a progress bar on stderr while the block runs; yields a :class:`ProgressBar`.

    With ``total`` the bar shows a count of ``unit`` and the time remaining
    (``Embedding 1,200/2,574 tools ━━━╸━━━ 0:00:31 remaining``); without, it pulses beside the
    time elapsed, for one long call that reports nothing. See the module documentation for
    when anything is drawn.
    """
    asked = _Choices.progress
    console = Console(stderr=True, force_terminal=True) if asked else stderr_console()
    shown = asked if asked is not None else console.is_terminal and not _Choices.json
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        _CountColumn(),
        BarColumn(),
        _TimeColumn(),
    )
    with Progress(*columns, console=console, transient=True, disable=not shown) as bar:
        task = bar.add_task(description, total=total, unit=unit)
        yield ProgressBar(bar, task, total)


class _CountColumn(ProgressColumn):
    """``1,200/2,574 tools`` once the total is known."""

    def render(self, task: Task) -> Text:
        if task.total is None:
            return Text("")
        count = f"{task.completed:,.0f}/{task.total:,.0f} {task.fields.get('unit', '')}"
        return Text(count.rstrip(), style="progress.download")


class _TimeColumn(ProgressColumn):
    """The time remaining while it can be estimated, else the time elapsed."""

    max_refresh = 0.5  # an estimate that changes at every frame is unreadable

    def render(self, task: Task) -> Text:
        remaining = task.time_remaining if task.total is not None else None
        if remaining is None or task.finished:
            elapsed = task.finished_time if task.finished else task.elapsed
            return Text(_clock(elapsed or 0.0), style="progress.elapsed")
        return Text(f"{_clock(remaining)} remaining", style="progress.remaining")


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours:d}:{minutes:02d}:{secs:02d}"
