"""benchmarks/bridges.py: each framework runs the task with and without its bridge."""

from __future__ import annotations

import pytest

from tests.benchmarks._scripts import BENCHMARKS, load_script
from tests.extras import needs_extra

for module, extra in (
    ("pydantic_ai", "pydantic-ai"),
    ("agents", "openai-agents"),
    ("langgraph", "langgraph"),
):
    pytest.importorskip(module, reason=needs_extra(extra))

bridges = load_script(BENCHMARKS / "bridges.py", "bridges_benchmark")


@pytest.mark.parametrize("framework", ["pydantic-ai", "openai-agents", "langgraph"])
async def test_the_same_answer_with_far_fewer_tool_tokens(framework: str) -> None:
    scenario, _ = bridges.bfcl_scenario(bridges.QUICK_SIZE)
    setup = bridges.Setup(scenario)
    result = await bridges.measure(framework, setup, runs=1, batches=1)
    modes = result["modes"]
    assert result["same_answer"]
    assert modes["bridge"]["misses"] == 0
    assert modes["bridge"]["tool_tokens"] * 20 < modes["all tools"]["tool_tokens"]
    assert modes["bridge"]["requests"] == modes["own disclosure"]["requests"] == 7
    assert modes["own loop, all shown"]["requests"] == 7
    # The own disclosure shows what the bridge shows, step by step.
    assert modes["own disclosure"]["tools_shown"] == modes["bridge"]["tools_shown"]
    assert modes["bridge"]["tools_shown"][0] == 1  # tool_search alone at first
