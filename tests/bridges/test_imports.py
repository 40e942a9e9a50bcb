"""Importing a bridge without its framework names the extra to install."""

from __future__ import annotations

import subprocess
import sys

import pytest

BLOCK = """
import sys
sys.modules[{module!r}] = None  # as if it were not installed
try:
    import toolrelay.bridges.{bridge}
except ImportError as exc:
    print(exc)
"""


@pytest.mark.parametrize(
    ("bridge", "module", "extra"),
    [
        ("pydantic_ai", "pydantic_ai", "pydantic-ai"),
        ("openai_agents", "agents", "openai-agents"),
        ("langgraph", "langgraph", "langgraph"),
    ],
)
def test_a_missing_framework_names_its_extra(bridge: str, module: str, extra: str) -> None:
    code = BLOCK.format(module=module, bridge=bridge)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert f"pip install -e '.[{extra}]'" in done.stdout


def test_the_core_needs_no_framework() -> None:
    code = (
        "import sys\nfor m in ('pydantic_ai', 'agents', 'langgraph'):\n    sys.modules[m] = None\n"
    )
    code += "import toolrelay.bridges\nprint(toolrelay.bridges.BridgeSearch.__name__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "BridgeSearch"
