"""The ``toolrelay`` console script and ``python -m toolrelay``: without the cli extra, one line."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

import pytest

import toolrelay.__main__

# What the console script runs (test_the_console_script_runs_main).
SCRIPT = """
import sys
for name in {missing!r}:
    sys.modules[name] = None  # as if it were not installed
sys.argv = ["toolrelay", "demo"]
from toolrelay.__main__ import main
main()
"""


def test_the_console_script_runs_main() -> None:
    (script,) = entry_points(group="console_scripts", name="toolrelay")
    assert script.value == "toolrelay.__main__:main", (
        "the installed metadata is older than pyproject.toml: pip install -e ."
    )
    assert script.load() is toolrelay.__main__.main


@pytest.mark.parametrize("missing", [("typer",), ("rich",), ("typer", "rich")])
def test_without_the_cli_extra_the_command_names_it_in_one_line(missing: tuple[str, ...]) -> None:
    code = SCRIPT.format(missing=missing)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "error: the toolrelay command needs the cli extra: pip install -e '.[cli]'"
    ]


def test_another_missing_module_is_not_blamed_on_the_extra() -> None:
    code = SCRIPT.format(missing=("toolrelay.cli._app",))
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 1
    assert "Traceback" in done.stderr
    assert "cli extra" not in done.stderr


def test_the_library_imports_without_the_cli_extra() -> None:
    code = (
        "import sys\nsys.modules['typer'] = sys.modules['rich'] = None\n"
        "import toolrelay, toolrelay.client, toolrelay.search, toolrelay.evaluation\n"
        "print(toolrelay.ChatClient.__name__)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.stdout.strip() == "ChatClient", done.stderr
