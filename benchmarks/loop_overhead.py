"""The tool loop's own cost per round: toolrelay next to pydantic-ai and LangGraph.

The same task runs through each framework's agent loop: the model asks for one tool call per
round for four rounds (``get_value(key="k1")`` ... ``"k4"``), then answers. The model is a
function that answers instantly from the conversation (it counts the tool results so far) and
the tool is a trivial ``async`` function, so what is measured is the loop itself: building
requests, running advisors or graph nodes, validating arguments, executing the call, building
the history. Each framework gets the same decision function and the same tool:

- **toolrelay**: ``ChatClient`` with its default ``ToolCallingAdvisor``, a
  ``toolrelay.testing.FunctionModel`` and an ``@tool`` function (``client.prompt(...).acall()``);
- **toolrelay, tool search**: the same task with progressive disclosure: a
  ``ToolSearchAdvisor`` over a BM25 index of ``get_value`` and 49 other tools, the model first
  searching (``tool_search("value of a key")``), then calling the tool it found; one round
  more (six), the search included in the loop's cost;
- **pydantic-ai**: ``Agent`` over ``pydantic_ai.models.function.FunctionModel`` with the tool
  registered as a plain function (``agent.run(...)``);
- **LangGraph**: ``langgraph.prebuilt.create_react_agent`` over a ``BaseChatModel`` subclass
  (the fake chat models of ``langchain_core`` cannot bind tools) and a ``@tool`` function of
  ``langchain_core`` (``graph.ainvoke(...)``);
- **bare loop**: the decision function and the tool called directly in a ``for`` loop, the
  floor any framework adds to.

A batch runs the task ``--runs`` times in a row; batches of the frameworks alternate (in a
rotating order) ``--repeats`` times, so a change in machine load hits all of them alike. Each
batch is timed in process CPU time (``time.process_time``, all threads) and in wall-clock time
(``time.perf_counter``); the tables give the median batch, per round (one model call and the
tool calls it asked for; the task has 5 rounds). On a shared, loaded machine the CPU figures
are the ones to compare. The garbage collector stays on, as in real use.

Run with the interpreter that has the peers installed (``requirements-loop.txt``):
``.venv-peers/bin/python benchmarks/loop_overhead.py [--quick] [--profile]``. Writes
``benchmarks/results/loop_overhead.json`` and ``.md`` and the loop overhead section of
``docs/benchmarks.md`` (``--quick``: a few small batches, written to a temporary folder).
``--profile`` adds where toolrelay's loop spends its time (needs ``pyinstrument``).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import importlib.util
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
SECTION_START = "<!-- loop_overhead:start -->"
SECTION_END = "<!-- loop_overhead:end -->"
TASK = "Collect the values of k1 to k4."
TOOL_ROUNDS = 4
ROUNDS = TOOL_ROUNDS + 1  # four tool rounds, then the answer
TARGET_RATIO = 0.1
SEARCH_LOOP = "toolrelay, tool search"
OURS = ("toolrelay", SEARCH_LOOP)

Run = Callable[[], Awaitable[str]]

sys.path.insert(0, str(HERE))
from docs_section import DOCS, Section, write_sections  # noqa: E402

# --- the shared decision and tool ---------------------------------------------------------


def next_key(tool_results: int) -> str | None:
    """The key the model asks for after ``tool_results`` results, or ``None`` to answer."""
    return f"k{tool_results + 1}" if tool_results < TOOL_ROUNDS else None


def answer_text() -> str:
    return "The values of k1 to k4 are collected."


async def get_value(key: str) -> str:
    """Look up the value stored under a key.

    Args:
        key: The key to look up, e.g. "k1".
    """
    return f"value of {key}"


# --- one agent per framework --------------------------------------------------------------


def bare_loop() -> Run:
    async def run() -> str:
        results: list[str] = []
        while (key := next_key(len(results))) is not None:
            results.append(await get_value(key))
        return answer_text()

    return run


def toolrelay_steps() -> Callable[[int], Any]:
    """toolrelay's model response after ``done`` values: the next ``get_value`` call, or the
    answer (the imports done once, outside the measured loop)."""
    from toolrelay.messages import ToolCall
    from toolrelay.testing import text_response, tool_call_response

    def step(done: int) -> Any:
        key = next_key(done)
        if key is None:
            return text_response(answer_text())
        arguments = json.dumps({"key": key})
        return tool_call_response(
            ToolCall(id=f"call_{done + 1}", name="get_value", arguments=arguments)
        )

    return step


def forget_prompts(model: Any) -> None:
    """The test model records every prompt; forget them between batches."""
    model.prompts.clear()
    model.tool_definitions.clear()


def toolrelay_agent() -> tuple[Run, Callable[[], None]]:
    from toolrelay.client import ChatClient
    from toolrelay.messages import ChatResponse, ToolResponseMessage
    from toolrelay.prompt import Prompt
    from toolrelay.testing import FunctionModel
    from toolrelay.tools import tool

    step = toolrelay_steps()

    def decide(prompt: Prompt) -> ChatResponse:
        return step(sum(isinstance(m, ToolResponseMessage) for m in prompt.messages))

    model = FunctionModel(decide)
    client = ChatClient.builder(model).default_tools(tool(get_value)).build()

    async def run() -> str:
        content = (await client.prompt(TASK).acall()).content()
        assert content == answer_text()
        return content

    return run, lambda: forget_prompts(model)


SEARCH_ROUNDS = ROUNDS + 1  # the search, four tool rounds, the answer


def toolrelay_search_agent() -> tuple[Run, Callable[[], None]]:
    from toolrelay.client import ChatClient, ToolSearchAdvisor
    from toolrelay.messages import ChatResponse, ToolCall, ToolResponseMessage
    from toolrelay.prompt import Prompt
    from toolrelay.search import BM25ToolIndex
    from toolrelay.testing import FunctionModel, tool_call_response
    from toolrelay.tools import Tool, tool

    def filler(i: int) -> Tool:
        async def other(key: str) -> str:
            """Manage one record.

            Args:
                key: The record's key.
            """
            return key

        description = f"Operation {i} of service {i}: manage records of kind {i}."
        return tool(name=f"service{i}.operation", description=description)(other)

    catalog = [tool(get_value), *(filler(i) for i in range(49))]
    step = toolrelay_steps()

    def decide(prompt: Prompt) -> ChatResponse:
        responses = [m for m in prompt.messages if isinstance(m, ToolResponseMessage)]
        if not responses:
            search = ToolCall(
                id="call_0", name="tool_search", arguments='{"queries":["value of a key"]}'
            )
            return tool_call_response(search)
        result: ChatResponse = step(len(responses) - 1)  # the search's answer aside
        return result

    model = FunctionModel(decide)
    advisor = ToolSearchAdvisor(catalog, index=BM25ToolIndex())
    client = ChatClient.builder(model).default_advisors(advisor).build()
    conversations = iter(range(10**9))

    async def run() -> str:
        # A new conversation each run: each starts with tool_search alone, as a first turn does.
        spec = client.prompt(TASK).conversation(f"c{next(conversations)}")
        content = (await spec.acall()).content()
        assert content == answer_text()
        return content

    return run, lambda: forget_prompts(model)


def pydantic_ai_agent() -> Run:
    from pydantic_ai import Agent
    from pydantic_ai.messages import (
        ModelMessage,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    # Async: FunctionModel runs a sync function in a worker thread, which would be the
    # stand-in model's cost, not the loop's.
    async def decide(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        done = sum(isinstance(p, ToolReturnPart) for m in messages for p in m.parts)
        key = next_key(done)
        if key is None:
            return ModelResponse(parts=[TextPart(answer_text())])
        call = ToolCallPart("get_value", {"key": key}, tool_call_id=f"call_{done + 1}")
        return ModelResponse(parts=[call])

    agent = Agent(FunctionModel(decide), tools=[get_value])

    async def run() -> str:
        output = str((await agent.run(TASK)).output)
        assert output == answer_text()
        return output

    return run


def langgraph_agent() -> Run:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool as lc_tool
    from langgraph.prebuilt import create_react_agent

    class ScriptedChatModel(BaseChatModel):
        """A chat model answering from the conversation; binding tools changes nothing."""

        @property
        def _llm_type(self) -> str:
            return "scripted"

        def _reply(self, messages: list[BaseMessage]) -> ChatResult:
            done = sum(isinstance(m, ToolMessage) for m in messages)
            key = next_key(done)
            if key is None:
                message = AIMessage(content=answer_text())
            else:
                call = {"name": "get_value", "args": {"key": key}, "id": f"call_{done + 1}"}
                message = AIMessage(content="", tool_calls=[{**call, "type": "tool_call"}])
            return ChatResult(generations=[ChatGeneration(message=message)])

        def _generate(
            self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **_: Any
        ) -> ChatResult:
            return self._reply(messages)

        async def _agenerate(
            self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **_: Any
        ) -> ChatResult:
            # Overridden: the default runs _generate in a thread pool.
            return self._reply(messages)

        def bind_tools(self, tools: Any, **_: Any) -> Any:
            return self

    with warnings.catch_warnings():
        # create_react_agent is deprecated in favour of langchain's create_agent.
        warnings.simplefilter("ignore")
        graph = create_react_agent(ScriptedChatModel(), [lc_tool(get_value)])

    async def run() -> str:
        state = await graph.ainvoke({"messages": [("user", TASK)]})
        content = str(state["messages"][-1].content)
        assert content == answer_text()
        return content

    return run


# --- measuring -----------------------------------------------------------------------------


@dataclass(kw_only=True)
class Subject:
    name: str
    version: str
    run: Run
    reset: Callable[[], None] = lambda: None
    rounds: int = ROUNDS
    cpu: list[float] | None = None
    wall: list[float] | None = None


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def subjects() -> tuple[list[Subject], list[str]]:
    """Every framework that imports here, and a note for each one that does not."""
    run, reset = toolrelay_agent()
    search_run, search_reset = toolrelay_search_agent()
    found = [
        Subject(name="bare loop", version=platform.python_version(), run=bare_loop()),
        Subject(name="toolrelay", version=_version("toolrelay"), run=run, reset=reset),
        Subject(
            name=SEARCH_LOOP,
            version=_version("toolrelay"),
            run=search_run,
            reset=search_reset,
            rounds=SEARCH_ROUNDS,
        ),
    ]
    missing = []
    for name, package, factory in (
        ("pydantic-ai", "pydantic-ai-slim", pydantic_ai_agent),
        ("LangGraph", "langgraph", langgraph_agent),
    ):
        try:
            found.append(Subject(name=name, version=_version(package), run=factory()))
        except ImportError as exc:
            missing.append(f"{name}: not installed ({exc})")
    return found, missing


async def batch(subject: Subject, runs: int) -> tuple[float, float]:
    """Seconds per run of ``runs`` runs in a row: (CPU, wall)."""
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(runs):
        await subject.run()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    subject.reset()
    return cpu / runs, wall / runs


async def measure(found: Sequence[Subject], runs: int, repeats: int, warmup: int) -> None:
    for subject in found:
        subject.cpu, subject.wall = [], []
        await batch(subject, warmup)
    for repeat in range(repeats):
        shift = repeat % len(found)
        for subject in [*found[shift:], *found[:shift]]:
            cpu, wall = await batch(subject, runs)
            assert subject.cpu is not None
            assert subject.wall is not None
            subject.cpu.append(cpu)
            subject.wall.append(wall)


def _us_per_round(seconds: Sequence[float], rounds: int) -> dict[str, float]:
    per_round = sorted(s * 1e6 / rounds for s in seconds)
    quartiles = statistics.quantiles(per_round, n=4) if len(per_round) > 1 else per_round * 3
    return {
        "median": round(statistics.median(per_round), 1),
        "p25": round(quartiles[0], 1),
        "p75": round(quartiles[-1], 1),
        "min": round(per_round[0], 1),
    }


async def profile_toolrelay(runs: int, top: int = 15) -> dict[str, Any]:
    """Where toolrelay's loop spends its time, sampled with pyinstrument (async-aware).

    Returns the hottest functions by own time (``own``), the time inside toolrelay's main
    steps including what they call (``steps``), both as shares of the profiled runs, and the
    sample count.
    """
    from pyinstrument import Profiler

    run, reset = toolrelay_agent()
    for _ in range(50):
        await run()
    profiler = Profiler(interval=0.0001)
    profiler.start()
    for _ in range(runs):
        await run()
    profiler.stop()
    reset()
    root = profiler.last_session.root_frame() if profiler.last_session else None
    if root is None:
        return {"own": [], "steps": [], "samples": 0}
    own: dict[str, float] = {}
    inclusive: dict[str, float] = {}

    def walk(frame: Any, parent: str, open_names: frozenset[str]) -> None:
        if frame.is_synthetic:  # "[self]" time belongs to the parent; "[await]" to nobody
            if frame.function == "[self]":
                own[parent] = own.get(parent, 0.0) + frame.time
            return
        name = f"{_short_path(frame.file_path or '?')}:{frame.function}"
        rest = frame.time - sum(child.time for child in frame.children)
        own[name] = own.get(name, 0.0) + rest
        if name not in open_names:  # count recursion once
            inclusive[name] = inclusive.get(name, 0.0) + frame.time
        for child in frame.children:
            walk(child, name, open_names | {name})

    walk(root, "", frozenset())
    total = root.time

    def share(items: dict[str, float], keep: Callable[[str], bool]) -> list[dict[str, Any]]:
        ranked = sorted(((t, n) for n, t in items.items() if keep(n)), reverse=True)[:top]
        return [{"function": n, "percent": round(100 * t / total, 1)} for t, n in ranked]

    def is_step(name: str) -> bool:
        return name.startswith("toolrelay/") and "toolrelay/testing/" not in name

    return {
        "own": share(own, lambda n: True),
        "steps": share(inclusive, is_step),
        "samples": len(profiler.last_session.frame_records) if profiler.last_session else 0,
    }


def _short_path(path: str) -> str:
    if "/src/toolrelay/" in path:
        return "toolrelay/" + path.split("/src/toolrelay/", 1)[1]
    for marker in ("/site-packages/", "/lib/python3.11/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


# --- reporting ------------------------------------------------------------------------------


def result_rows(found: Sequence[Subject]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for subject in found:
        assert subject.cpu is not None
        assert subject.wall is not None
        rows.append(
            {
                "framework": subject.name,
                "version": subject.version,
                "rounds": subject.rounds,
                "cpu_us_per_round": _us_per_round(subject.cpu, subject.rounds),
                "wall_us_per_round": _us_per_round(subject.wall, subject.rounds),
            }
        )
    ours = {r["framework"]: r for r in rows if r["framework"] in OURS}
    for row in rows:
        if row["framework"] in OURS or row["framework"] == "bare loop":
            continue
        for label, key in (("toolrelay", "toolrelay_ratio"), (SEARCH_LOOP, "search_ratio")):
            if label not in ours:
                continue
            for clock in ("cpu", "wall"):
                theirs = row[f"{clock}_us_per_round"]["median"]
                row[f"{key}_{clock}"] = round(
                    ours[label][f"{clock}_us_per_round"]["median"] / theirs, 3
                )
    return rows


def table(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = [
        "| loop | version | CPU µs/round (median) | CPU p25–p75 | wall µs/round (median) | "
        "toolrelay ÷ this (CPU) | toolrelay ÷ this (wall) | toolrelay with tool search ÷ "
        "this (CPU) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        cpu, wall = row["cpu_us_per_round"], row["wall_us_per_round"]
        peer = row["framework"] not in (*OURS, "bare loop")
        cells = ["–", "–", "–"]
        if peer:
            mark = " ✓" if row["toolrelay_ratio_cpu"] <= TARGET_RATIO else ""
            cells[0] = f"**{row['toolrelay_ratio_cpu']:.2f}×**{mark}"
            cells[1] = f"{row['toolrelay_ratio_wall']:.2f}×"
            if "search_ratio_cpu" in row:
                search_mark = " ✓" if row["search_ratio_cpu"] <= TARGET_RATIO else ""
                cells[2] = f"**{row['search_ratio_cpu']:.2f}×**{search_mark}"
        lines.append(
            f"| {row['framework']} | {row['version']} | {cpu['median']:,.1f} | "
            f"{cpu['p25']:,.1f}–{cpu['p75']:,.1f} | {wall['median']:,.1f} | "
            + " | ".join(cells)
            + " |"
        )
    return lines


def profile_table(rows: Sequence[Mapping[str, Any]], what: str) -> list[str]:
    lines = [f"| function (file:name) | {what} |", "|---|---:|"]
    lines += [f"| `{row['function']}` | {row['percent']}% |" for row in rows]
    return lines


def method_text(meta: Mapping[str, Any]) -> str:
    return (
        "One task, four tool rounds and an answer, through each framework's agent loop with an "
        "instant scripted model and a trivial async tool (`benchmarks/loop_overhead.py` lists "
        "the exact setup); a round is one model call and the tool calls it asked for. Medians "
        f"of {meta['repeats']} alternating batches of {meta['runs']} runs, Python "
        f"{meta['python']} on {meta['machine']} ({meta['cpus']} CPUs, load average "
        f"{meta['load_average']} at start). CPU = process CPU time, the figure to compare on a "
        "busy machine; wall = elapsed time. The bare loop calls the decision function and the "
        "tool directly: the floor under every framework."
    )


NOTES = (
    "Every framework gets an instant model and an `async` tool, so none of them pays a "
    "thread hop for the stand-ins (pydantic-ai's `FunctionModel` would run a sync function in "
    "a worker thread; LangChain's default `_agenerate` would too). What remains is each "
    "loop's own machinery, e.g. LangGraph's prebuilt agent runs its routing function in a "
    "thread pool every round, pydantic-ai runs every step through its graph."
)


def markdown(meta: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], extra: list[str]) -> str:
    lines = [
        "# Tool loop overhead per round",
        "",
        method_text(meta),
        "",
        *table(rows),
        "",
        NOTES,
        *extra,
    ]
    return "\n".join(lines) + "\n"


def docs_sections(data: Mapping[str, Any] | None = None) -> list[Section]:
    """The section of docs/benchmarks.md, from ``data`` (default: the committed results)."""
    if data is None:
        data = json.loads((RESULTS / "loop_overhead.json").read_text(encoding="utf-8"))
    return [Section.from_marked(DOCS, docs_section(data["meta"], data["results"]))]


def docs_section(meta: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> str:
    return "\n".join(
        [
            SECTION_START,
            "## Tool loop overhead per round",
            "",
            method_text(meta),
            "",
            *table(rows),
            "",
            NOTES,
            "",
            "Details: `benchmarks/results/loop_overhead.md`. Regenerate with "
            "`.venv-peers/bin/python benchmarks/loop_overhead.py` (peers pinned in "
            "`benchmarks/requirements-loop.txt`).",
            SECTION_END,
        ]
    )


async def main_async(args: argparse.Namespace) -> int:
    runs, repeats, warmup = (20, 3, 5) if args.quick else (args.runs, args.repeats, 50)
    found, missing = subjects()
    meta = {
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}",
        "cpus": os.cpu_count(),
        "load_average": round(os.getloadavg()[0], 2),
        "runs": runs,
        "repeats": repeats,
        "rounds_per_run": ROUNDS,
        "quick": args.quick,
        "missing": missing,
    }
    await measure(found, runs, repeats, warmup)
    rows = result_rows(found)
    extra: list[str] = []
    if missing:
        extra += ["", "Not measured: " + "; ".join(missing) + "."]
    hot: dict[str, Any] = {}
    if args.profile and importlib.util.find_spec("pyinstrument") is None:
        extra += ["", "No profile: --profile needs pyinstrument (requirements-loop.txt)."]
    elif args.profile:
        hot = await profile_toolrelay(runs=400 if args.quick else 4000)
        extra += [
            "",
            "## Where toolrelay's loop spends its time",
            "",
            f"pyinstrument, {hot['samples']:,} samples every 0.1 ms over whole runs of the task "
            "(the stand-in model and the tool included); shares of the profiled time. "
            "toolrelay's functions, including what they call:",
            "",
            *profile_table(hot["steps"], "incl. callees"),
            "",
            "The functions with the most own time:",
            "",
            *profile_table(hot["own"], "own time"),
        ]
    out = Path(tempfile.mkdtemp(prefix="loop-overhead-")) if args.quick else RESULTS
    out.mkdir(parents=True, exist_ok=True)
    (out / "loop_overhead.json").write_text(
        json.dumps({"meta": meta, "results": rows, "profile": hot}, indent=2) + "\n",
        encoding="utf-8",
    )
    (out / "loop_overhead.md").write_text(markdown(meta, rows, extra), encoding="utf-8")
    if not args.quick:
        write_sections(docs_sections({"meta": meta, "results": rows}))
    print("\n".join(table(rows) + extra))
    print(f"\nwrote {out / 'loop_overhead.json'} and {out / 'loop_overhead.md'}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run; temp output")
    parser.add_argument("--runs", type=int, default=200, help="runs per batch")
    parser.add_argument("--repeats", type=int, default=15, help="batches per framework")
    parser.add_argument("--profile", action="store_true", help="profile toolrelay's loop")
    args = parser.parse_args()
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
