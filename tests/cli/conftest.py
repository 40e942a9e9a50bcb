"""Fixtures for the command-line tests: a runner, small catalogs, and import isolation."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from toolrelay.cli import app

from ._helpers import WEATHER_TOOLS, write_jsonl

Invoke = Callable[..., Result]


@pytest.fixture
def cli() -> Invoke:
    """Run ``toolrelay ARGS...``; stdout and stderr are kept apart, the table is wide."""
    runner = CliRunner()

    def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
        return runner.invoke(app, list(args), env={"COLUMNS": "200", **(env or {})})

    return invoke


@pytest.fixture
def catalog_file(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "tools.jsonl", WEATHER_TOOLS)


@pytest.fixture(autouse=True)
def _isolated_imports(tmp_path: Path) -> Iterator[None]:
    """Undo what loading modules from tmp_path does to sys.path and sys.modules."""
    saved_path = list(sys.path)
    yield
    sys.path[:] = saved_path
    prefixes = (str(tmp_path), str(tmp_path.resolve()))
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and file.startswith(prefixes):
            del sys.modules[name]


@pytest.fixture(autouse=True)
def _private_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Embedding caches go to a temporary folder, never the user's cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
