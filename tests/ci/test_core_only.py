"""The core install (``pip install -e .``, no extra) is enough for a program's whole path.

A child interpreter that can import toolrelay's core dependencies and nothing else installed
here (every extra's packages, the test and lint tools, the command line's typer and rich are
made unimportable) defines tools, runs the tool loop, and searches a catalog with BM25 in
English and Chinese through ``ToolSearchAdvisor``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import packages_distributions

from packaging.utils import canonicalize_name

from tests.ci.test_fresh_collection import CHILD, _closure, _requirements

PROGRAM = """
import sys
from toolrelay import ChatClient, ToolSearchAdvisor, default_index, tool
from toolrelay.testing import ScriptedModel, text_response, tool_call_response


@tool(name="orders.status", read_only=True)
def status(order_id: str) -> str:
    '''Where an order is: its status, carrier and tracking number.'''
    return f"{order_id}: shipped"


@tool(name="refund.find_failed")
def failed(day: str) -> str:
    '''查询退款失败的订单: the refunds that failed on a day.'''
    return f"{day}: RF-1"


model = ScriptedModel([
    tool_call_response(("tool_search", {"queries": ["退款失败"]})),
    tool_call_response(("refund.find_failed", {"day": "today"})),
    text_response("RF-1 failed"),
])
client = ChatClient(model, advisors=[ToolSearchAdvisor([status, failed], send_all_below=0)])
result = client.run_sync("今天哪些退款失败了?", conversation="c1")
print(type(default_index()).__name__, result.text, result.tool_search.searches[0].names)
print(sorted(m for m in ("typer", "rich", "click") if m in sys.modules))
"""

# The collection child's blocker, running the program instead of pytest.
BLOCKED_RUN = CHILD.split("import pytest", 1)[0] + "exec(sys.argv[2])\n"


def _not_core_modules() -> set[str]:
    """Top-level modules installed here that no core dependency of toolrelay brings."""
    core = _closure(_requirements("toolrelay", set())) | {"toolrelay", "pip", "setuptools"}
    return {
        module
        for module, names in packages_distributions().items()
        if not any(canonicalize_name(name) in core for name in names)
    }


def test_a_program_runs_on_the_core_alone() -> None:
    blocked = _not_core_modules()
    assert {"typer", "rich", "pytest"} <= blocked  # the cli extra's, the dev extra's
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED_RUN, json.dumps(sorted(blocked)), PROGRAM],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == [
        "BM25ToolIndex RF-1 failed ('refund.find_failed',)",
        "[]",
    ]
