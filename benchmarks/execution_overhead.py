"""The ToolCallingManager's own overhead for one round of trivial tool calls.

For rounds of 1 and of 10 calls, the same calls are executed two ways:

- directly: ``await tool.call(arguments, context)`` for each call, one after the other;
- through ``ToolCallingManager.execute_tool_calls`` (resolution, JSON parsing, limits,
  concurrency, timeouts off, result and history building).

The tools do (almost) nothing, so the difference is the manager's cost. Two kinds of tool:
a hand-written async tool (pure overhead) and an ``@tool`` function (pydantic validation and a
worker-thread hop, which both paths pay). Each figure is the best of several repeats, in CPU
time of the process (``time.process_time``, all threads) and in wall-clock time
(``time.perf_counter``); the CPU figures stay meaningful on a busy machine, where wall-clock
time mostly measures waiting for a core.

Run: ``python benchmarks/execution_overhead.py [--quick]``. Writes
``benchmarks/results/execution_overhead.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from toolrelay.execution import ToolCallingManager
from toolrelay.messages import AssistantMessage, ChatResponse, Generation, ToolCall, UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.tools import FunctionTool, Tool, ToolContext, tool
from toolrelay.tools._base import ToolDefinition, ToolMetadata

RESULTS = Path(__file__).resolve().parent / "results"


class EchoTool:
    """The cheapest possible tool: returns a constant."""

    definition = ToolDefinition(
        name="echo",
        description="Echo.",
        input_schema={"type": "object", "properties": {"x": {"type": "integer"}}},
    )
    metadata = ToolMetadata()

    async def call(self, arguments_json: str, context: Mapping[str, Any] | None = None) -> str:
        return "ok"


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def make_round(tool_: Tool, n_calls: int, arguments: str) -> tuple[Prompt, ChatResponse]:
    name = tool_.definition.name
    calls = tuple(ToolCall(id=f"call_{i}", name=name, arguments=arguments) for i in range(n_calls))
    prompt = Prompt(
        messages=(UserMessage(text="go"),),
        options=ChatOptions(tools=(tool_,), tool_context={"tenant_id": "t1"}),
    )
    response = ChatResponse(generations=(Generation(message=AssistantMessage(tool_calls=calls)),))
    return prompt, response


async def time_per_round(
    run: Callable[[], Awaitable[Any]], rounds: int, repeats: int
) -> tuple[float, float]:
    """Best (CPU seconds, wall seconds) per round over ``repeats`` batches of ``rounds``."""
    for _ in range(max(rounds // 10, 5)):  # warm-up
        await run()
    cpu, wall = [], []
    for _ in range(repeats):
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        for _ in range(rounds):
            await run()
        cpu.append((time.process_time() - cpu_start) / rounds)
        wall.append((time.perf_counter() - wall_start) / rounds)
    return min(cpu), min(wall)


async def measure(quick: bool) -> list[dict[str, Any]]:
    manager = ToolCallingManager()
    kinds: list[tuple[str, Tool, str]] = [
        ("async tool (hand-written)", EchoTool(), '{"x": 1}'),
        ("@tool sync function", FunctionTool.from_function(add), '{"a": 1, "b": 2}'),
    ]
    rows = []
    for kind, tool_, arguments in kinds:
        for n_calls in (1, 10):
            prompt, response = make_round(tool_, n_calls, arguments)
            calls = response.generations[0].message.tool_calls
            context = ToolContext(prompt.options.tool_context)

            async def direct(
                tool_: Tool = tool_,
                calls: tuple[ToolCall, ...] = calls,
                context: ToolContext = context,
            ) -> None:
                for call in calls:
                    await tool_.call(call.arguments, context)

            async def managed(prompt: Prompt = prompt, response: ChatResponse = response) -> None:
                await manager.execute_tool_calls(prompt, response)

            base_rounds = 200 if quick else 3000
            rounds = max(base_rounds // n_calls, 20)
            if isinstance(tool_, FunctionTool):  # a thread hop per call: fewer rounds suffice
                rounds = max(rounds // 10, 10)
            repeats = 3 if quick else 7
            direct_cpu, direct_wall = await time_per_round(direct, rounds, repeats)
            managed_cpu, managed_wall = await time_per_round(managed, rounds, repeats)
            rows.append(
                {
                    "tool": kind,
                    "calls_per_round": n_calls,
                    "direct_cpu_us_per_round": round(direct_cpu * 1e6, 2),
                    "manager_cpu_us_per_round": round(managed_cpu * 1e6, 2),
                    "cpu_ratio": round(managed_cpu / direct_cpu, 2),
                    "cpu_overhead_us_per_call": round(
                        (managed_cpu - direct_cpu) * 1e6 / n_calls, 2
                    ),
                    "direct_wall_us_per_round": round(direct_wall * 1e6, 2),
                    "manager_wall_us_per_round": round(managed_wall * 1e6, 2),
                    "wall_ratio": round(managed_wall / direct_wall, 2),
                    "wall_overhead_us_per_call": round(
                        (managed_wall - direct_wall) * 1e6 / n_calls, 2
                    ),
                    "rounds": rounds,
                    "repeats": repeats,
                }
            )
    return rows


def markdown(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = [
        "# ToolCallingManager overhead",
        "",
        f"Python {meta['python']} on {meta['platform']} ({meta['cpus']} CPUs, load average "
        f"{meta['load_average']} at start); best of {rows[0]['repeats']} repeats. "
        "Direct = awaiting `tool.call` for each call in sequence; manager = "
        "`execute_tool_calls` on the same calls (concurrent, default options). "
        "CPU = process CPU time (all threads); wall = elapsed time.",
        "",
        "| tool | calls/round | direct CPU µs/round | manager CPU µs/round | CPU ratio "
        "| CPU overhead µs/call | wall ratio | wall overhead µs/call |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['tool']} | {r['calls_per_round']} | {r['direct_cpu_us_per_round']:.1f} | "
            f"{r['manager_cpu_us_per_round']:.1f} | {r['cpu_ratio']:.1f}x | "
            f"{r['cpu_overhead_us_per_call']:.1f} | {r['wall_ratio']:.1f}x | "
            f"{r['wall_overhead_us_per_call']:.1f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few rounds, for a smoke run")
    args = parser.parse_args()
    load = round(os.getloadavg()[0], 2)
    rows = asyncio.run(measure(args.quick))
    meta = {
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "cpus": os.cpu_count(),
        "load_average": load,
        "quick": args.quick,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "execution_overhead.json").write_text(
        json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n", encoding="utf-8"
    )
    table = markdown(rows, meta)
    (RESULTS / "execution_overhead.md").write_text(table, encoding="utf-8")
    sys.stdout.write(table)


if __name__ == "__main__":
    main()
