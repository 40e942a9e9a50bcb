"""Every script in examples/ runs to completion and prints what it promises."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# Key lines each example must print; an example without an entry fails, so a new example
# comes with the behaviour it demonstrates pinned down.
EXPECTED: dict[str, list[str]] = {
    "quickstart.py": [
        "4 tools",
        "refund.find_failed_orders  (sent to providers as refund__find_failed_orders)",
        "get_weather  (sent to providers as get_weather)",
        '"city"',
        "Orders of the caller's tenant whose payment failed recently.",
        "get_weather('Paris') -> {'city': 'Paris', 'temperature': 18.0, 'unit': 'c'}",
        "refund.find_failed_orders for tenant acme -> ",
        "A-1001 (last 7 days)",
        "bad call rejected: invalid arguments for tool 'get_weather'",
        "- city: ",
        "- unit: ",
    ],
}


def _examples() -> list[Path]:
    return sorted(EXAMPLES.glob("*.py"))


def test_examples_exist() -> None:
    assert _examples(), f"no examples found in {EXAMPLES}"


@pytest.mark.parametrize("script", _examples(), ids=lambda path: path.name)
def test_example_runs(script: Path) -> None:
    assert script.name in EXPECTED, f"add the key output lines of examples/{script.name}"
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=EXAMPLES.parent,
        check=False,
    )
    assert done.returncode == 0, f"{script.name} failed:\n{done.stdout}\n{done.stderr}"
    for line in EXPECTED[script.name]:
        assert line in done.stdout, f"{script.name} did not print {line!r}:\n{done.stdout}"
