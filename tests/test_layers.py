"""The import-linter contracts in pyproject.toml hold and cover every top-level package."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.extras import needs_extra

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "toolrelay"


def _contracts() -> list[dict[str, Any]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts: list[dict[str, Any]] = config["tool"]["importlinter"]["contracts"]
    return contracts


def _named_modules(contract: dict[str, Any]) -> set[str]:
    """Module names in a layers contract, optional ``(name)`` markers removed."""
    return {
        name.strip().strip("()")
        for layer in contract["layers"]
        for name in re.split(r"[|:]", layer)
    }


def _top_level_modules() -> set[str]:
    found = {f"toolrelay.{path.stem}" for path in PACKAGE.glob("*.py")}
    found |= {f"toolrelay.{path.parent.name}" for path in PACKAGE.glob("*/__init__.py")}
    return found - {"toolrelay.__init__"}


def test_contracts_hold() -> None:
    pytest.importorskip("importlinter", reason=needs_extra("dev"))
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from importlinter.cli import lint_imports;"
            "sys.exit(lint_imports(config_filename=sys.argv[1], no_cache=True, no_logo=True))",
            str(ROOT / "pyproject.toml"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("index", range(len(_contracts())), ids=lambda i: _contracts()[i]["name"])
def test_every_top_level_module_is_in_the_contract(index: int) -> None:
    contract = _contracts()[index]
    expected = _top_level_modules()
    if "toolrelay.testing" not in _named_modules(contract):
        expected.discard("toolrelay.testing")
    missing = expected - _named_modules(contract)
    assert not missing, f"add {sorted(missing)} to the contract {contract['name']!r}"
