"""The bridges side by side: one task through pydantic-ai, the Agents SDK and LangGraph.

The trip-planning task of ``benchmarks/tokens.py`` (three steps: distance, time difference,
flights) over its 2,500-tool BFCL catalog runs through each framework's own agent loop, with
the same scripted decisions (the model answers instantly; the tools return canned JSON):

- **all tools**: the framework is given every catalog tool (converted with the bridge's
  ``to_*``), and the model calls the three task tools by name;
- **bridge**: the framework gets toolrelay's tool search (``ToolSearchCapability``,
  ``ToolSearchTools.agent``, ``ToolRelayNode`` with ``bound_tools``; one ``BridgeSearch``,
  a new conversation per run) over a BM25 index of the
  catalog; before each step the model searches with the words of ``tokens.py``, calls the
  step's tool when the answer names it, searches again with its next words otherwise, and
  takes the top hit when none are left (a **retrieval miss**);
- **own disclosure**: the framework alone doing the same progressive disclosure its own way,
  with native tools (its own tool objects, answering as the catalog's do): a stand-in
  ``tool_search`` answers each query with what the bridge's search answered, from a table,
  and adds the tools it named to the run's set; the framework's own mechanism for tools that
  change during a run shows the set (pydantic-ai: a ``FunctionToolset`` ``filtered`` by it,
  the Agents SDK: ``is_enabled``, LangGraph: the tools the agent node binds), with the
  instructions the bridge adds (pydantic-ai, the Agents SDK). The same conversation and
  rounds without toolrelay: the framework's own loop overhead for the task, which the bridge
  is compared with;
- **own loop, all shown**: the same native tools and stand-in search, every tool the bridge's
  run showed offered from the first step (tools that never change during a run, which a
  framework may handle at less cost than tools that do).

Reported per framework and mode: the model requests of the task, the **tool tokens per task**
(the definitions of the tools each request offered, each serialised as
``{"type": "function", "function": {...}}`` and counted with cl100k_base, summed over the
requests; the messages are left out, as each framework formats its own), the retrieval misses,
and the CPU time per round (``time.process_time`` of each run, the modes taking turns run by
run; summed over a batch of runs, median of the batches; a round is one model request and
the calls it asked for), with what every mode built
beforehand frozen out of the garbage collector's sight (``gc.freeze``). **Bridge overhead** is
what the bridge adds per round to the own disclosure, with the BM25 searches themselves (timed
as they run within the bridge's rounds) left out: toolrelay's sessions, views, validation and
interceptors.

Run with every bridge's extra installed: ``python benchmarks/bridges.py [--quick]``. Writes
``benchmarks/results/bridges.json`` and ``.md`` and the bridges section of
``docs/benchmarks.md`` (``--quick``: a 400-tool catalog and fewer runs, to a temporary folder).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.metadata
import json
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from benchmarks.docs_section import DOCS, Section, write_sections  # noqa: E402
from benchmarks.tokens import (  # noqa: E402
    BFCL_SIZE,
    ENCODING,
    Facts,
    Scenario,
    _decode,
    _tool_tokens,
    bfcl_scenario,
)

RESULTS = HERE / "results"
QUICK_SIZE = 400
FRAMEWORKS = ("pydantic-ai", "openai-agents", "langgraph")
MODES = ("all tools", "bridge", "own disclosure", "own loop, all shown")
OWN = "own disclosure"
"""The mode the bridge is compared with: the framework's own progressive disclosure."""
OVERHEAD_LIMIT = 0.10
"""The most the bridge may add to the framework's own loop overhead (the issue's bound)."""

Call = tuple[str, dict[str, Any]]


# --- the scripted model, framework-neutral ------------------------------------------------------


@dataclass(kw_only=True)
class Script:
    """The model's decisions: search (with the bridge), call each step's tool, answer."""

    scenario: Scenario
    search: bool
    position: int = 0
    attempts: dict[int, int] = field(default_factory=dict)
    chosen: dict[int, str] = field(default_factory=dict)
    facts: Facts = field(default_factory=dict)
    misses: int = 0
    searching: bool = False
    queries: list[str] = field(default_factory=list)

    def next(self, results: Sequence[str]) -> list[Call] | str:
        """What the model asks for, given the answers to its previous calls."""
        steps = self.scenario.steps
        if self.searching:
            self._read_search(results[0])
        elif results and self.position < len(steps):
            self.facts[steps[self.position].tool] = [_decode(r) for r in results]
            self.position += 1
        if self.position == len(steps):
            return self.scenario.answer(self.facts)
        step = steps[self.position]
        if self.search and self.position not in self.chosen:
            self.searching = True
            query = step.queries[self.attempts.get(self.position, 0)]
            self.queries.append(query)
            return [("tool_search", {"queries": [query]})]
        name = self.chosen.get(self.position, safe(step.tool))
        return [(name, arguments) for arguments in step.arguments(self.facts)]

    def _read_search(self, answer: str) -> None:
        self.searching = False
        hits = [hit["name"] for hit in json.loads(answer)]
        step = self.scenario.steps[self.position]
        attempt = self.attempts[self.position] = self.attempts.get(self.position, 0) + 1
        if safe(step.tool) in hits:
            self.chosen[self.position] = safe(step.tool)
            return
        self.misses += 1
        if attempt == len(step.queries):
            self.chosen[self.position] = hits[0] if hits else safe(step.tool)


def safe(name: str) -> str:
    from toolrelay.tools import provider_safe_name

    return provider_safe_name(name)


def tool_tokens(definitions: Sequence[tuple[str, str, Mapping[str, Any]]]) -> int:
    """Tokens of the tool definitions of one request, in OpenAI's function format."""
    return sum(
        _tool_tokens(
            json.dumps(
                {
                    "type": "function",
                    "function": {"name": n, "description": d, "parameters": dict(p)},
                },
                ensure_ascii=False,
            )
        )
        for n, d, p in definitions
    )


@dataclass(kw_only=True)
class Run:
    """One task's run: the tools each request offered, and the script's decisions."""

    script: Script
    offered: list[list[tuple[str, str, Mapping[str, Any]]]] = field(default_factory=list)
    answer: str = ""


# --- the three setups ---------------------------------------------------------------------------


class Setup:
    """The catalog, its bridge, and the own loop's stand-in search table."""

    def __init__(self, scenario: Scenario) -> None:
        from toolrelay.bridges import BridgeSearch
        from toolrelay.search import BM25ToolIndex

        self.scenario = scenario
        self.tools = list(scenario.make_tools())
        self.task_tools = [t for t in self.tools if t.definition.name in _task_names(scenario)]
        self.index = BM25ToolIndex()
        self.search = BridgeSearch(self.tools, index=self.index)
        self.answers: dict[str, str] = {}  # the stand-in search: query -> the bridge's answer
        self.found: dict[str, list[str]] = {}  # query -> the provider-safe names it found
        self.runs = 0
        self.shown_by_bridge: list[Any] = []  # every tool the bridge's run showed, in order

    def conversation(self) -> str:
        """A new conversation for a run: it starts with no discoveries."""
        self.runs += 1
        return f"run-{self.runs}"


def _task_names(scenario: Scenario) -> set[str]:
    return {step.tool for step in scenario.steps}


def _pai_results(messages: Sequence[Any]) -> list[str]:
    from pydantic_ai.messages import (
        ModelRequest,
        RetryPromptPart,
        ToolReturnPart,
        ToolSearchReturnPart,
    )

    last = messages[-1]
    if not isinstance(last, ModelRequest):
        return []
    return [
        # pydantic-ai's own search answers with the names it revealed, as toolrelay's does.
        json.dumps(part.content["discovered_tools"])
        if isinstance(part, ToolSearchReturnPart)
        else str(part.content)
        for part in last.parts
        if isinstance(part, ToolReturnPart | RetryPromptPart)
    ]


@dataclass(kw_only=True)
class Current:
    """The run under way: a built agent runs the task many times, each with a new script."""

    setup: Setup
    mode: str
    run: Run = field(init=False)
    discovered: set[str] = field(default_factory=set)
    """The own disclosure's tools found so far in this run (provider-safe names)."""

    def start(self) -> Run:
        self.run = Run(script=Script(scenario=self.setup.scenario, search=self.mode != "all tools"))
        self.discovered = set()
        return self.run

    def shows(self, name: str) -> bool:
        """Whether the own disclosure offers ``name`` at this step."""
        return self.mode != OWN or name == "tool_search" or name in self.discovered


def own_tools(
    setup: Setup, current: Current
) -> list[tuple[str, str, Mapping[str, Any], Callable[[str], Any]]]:
    """The own modes' tools, framework-neutral: name, description, schema, ``await call(json)``."""
    answers, found = setup.answers, setup.found

    async def search(arguments: str) -> str:
        [query] = json.loads(arguments)["queries"]
        current.discovered.update(found[query])
        return answers[query]

    definition = setup.search.search_tool().definition
    tools = [("tool_search", definition.description, definition.input_schema, search)]
    for tool in setup.shown_by_bridge or setup.task_tools:
        d = tool.definition
        tools.append((safe(d.name), d.description, d.input_schema, tool.call))
    return tools


async def build_pydantic_ai(setup: Setup, mode: str) -> Callable[[], Awaitable[Run]]:
    from pydantic_ai import Agent, Tool
    from pydantic_ai.capabilities import ToolSearch
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from toolrelay.bridges.pydantic_ai import ToolSearchCapability, to_pydantic_ai

    current = Current(setup=setup, mode=mode)

    def part(name: str, arguments: Any) -> ToolCallPart:
        if mode == "bridge" and name == "tool_search":  # the bridge's search is pydantic-ai's
            return ToolCallPart(ToolSearch.function_tool_name, arguments)
        return ToolCallPart(name, arguments)

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        run = current.run
        run.offered.append(
            [(t.name, t.description or "", t.parameters_json_schema) for t in info.function_tools]
        )
        step = run.script.next(_pai_results(messages))
        if isinstance(step, str):
            return ModelResponse(parts=[TextPart(step)])
        return ModelResponse(parts=[part(n, a) for n, a in step])

    if mode == "bridge":
        capability = ToolSearchCapability(setup.search)
        agent = Agent(FunctionModel(model), capabilities=[capability])
    elif mode == "all tools":
        agent = Agent(FunctionModel(model), tools=[to_pydantic_ai(t) for t in setup.tools])
    else:
        from pydantic_ai.toolsets import FunctionToolset

        def native(call: Callable[[str], Any]) -> Callable[..., Any]:
            async def function(**arguments: Any) -> Any:
                return await call(json.dumps(arguments))

            return function

        tools = [
            Tool.from_schema(native(c), name=n, description=d, json_schema=dict(p))
            for n, d, p, c in own_tools(setup, current)
        ]
        # The bridge's instructions too: the same requests but for toolrelay.
        suffix = setup.search.texts().system_suffix
        if mode == OWN:
            shown = FunctionToolset(tools).filtered(lambda ctx, d: current.shows(d.name))
            agent = Agent(FunctionModel(model), toolsets=[shown], instructions=suffix)
        else:
            agent = Agent(FunctionModel(model), tools=tools, instructions=suffix)

    async def once() -> Run:
        run = current.start()
        result = await agent.run(setup.scenario.task, conversation_id=setup.conversation())
        run.answer = result.output
        return run

    return once


async def build_openai_agents(setup: Setup, mode: str) -> Callable[[], Awaitable[Run]]:
    from agents import (
        Agent,
        FunctionTool,
        Model,
        ModelResponse,
        Runner,
        Usage,
        set_tracing_disabled,
    )
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    from toolrelay.bridges.openai_agents import ToolSearchTools, to_openai_agents

    set_tracing_disabled(True)
    current = Current(setup=setup, mode=mode)

    class Scripted(Model):
        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            run = current.run
            items = kwargs["input"] if "input" in kwargs else args[1]
            tools = kwargs["tools"] if "tools" in kwargs else args[3]
            run.offered.append([(t.name, t.description, t.params_json_schema) for t in tools])
            results = []
            for item in reversed(items if isinstance(items, list) else []):
                if item.get("type") != "function_call_output":
                    break
                results.append(str(item["output"]))
            step = run.script.next(list(reversed(results)))
            if isinstance(step, str):
                text = ResponseOutputText(
                    text=step, type="output_text", annotations=[], logprobs=[]
                )
                output: list[Any] = [
                    ResponseOutputMessage(
                        id="m", type="message", role="assistant", status="completed", content=[text]
                    )
                ]
            else:
                turn = len(run.offered)
                output = [
                    ResponseFunctionToolCall(
                        id=f"f{turn}_{i}",
                        call_id=f"c{turn}_{i}",
                        type="function_call",
                        name=n,
                        arguments=json.dumps(a),
                    )
                    for i, (n, a) in enumerate(step)
                ]
            return ModelResponse(output=output, usage=Usage(requests=1), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    if mode == "bridge":
        agent = ToolSearchTools(setup.search).agent(name="bench", model=Scripted())
    elif mode == "all tools":
        tools = [to_openai_agents(t) for t in setup.tools]
        agent = Agent(name="bench", model=Scripted(), tools=tools)
    else:

        def native(call: Callable[[str], Any]) -> Callable[..., Any]:
            async def invoke(ctx: Any, arguments: str) -> Any:
                return await call(arguments)

            return invoke

        def enabled(name: str) -> Callable[[Any, Any], bool]:
            return lambda wrapper, agent: current.shows(name)

        tools = [
            FunctionTool(
                name=n,
                description=d,
                params_json_schema=dict(p),
                on_invoke_tool=native(c),
                strict_json_schema=False,
                is_enabled=enabled(n) if mode == OWN else True,
            )
            for n, d, p, c in own_tools(setup, current)
        ]
        suffix = setup.search.texts().system_suffix
        agent = Agent(name="bench", model=Scripted(), tools=tools, instructions=suffix)

    async def once() -> Run:
        run = current.start()
        context = {"session_id": setup.conversation()}
        result = await Runner.run(agent, setup.scenario.task, context=context, max_turns=20)
        run.answer = str(result.final_output)
        return run

    return once


async def build_langgraph(setup: Setup, mode: str) -> Callable[[], Awaitable[Run]]:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import StructuredTool
    from langgraph.graph import END, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    from toolrelay.bridges.langgraph import ToolRelayNode, bound_tools, to_langchain

    current = Current(setup=setup, mode=mode)

    class Scripted(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
            offered = []
            for t in tools:
                if isinstance(t, dict):
                    f = t["function"]
                    offered.append((f["name"], f["description"], f["parameters"]))
                else:
                    offered.append((t.name, t.description, _args_schema(t)))
            current.run.offered.append(offered)
            return self

        def _generate(
            self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kwargs: Any
        ) -> ChatResult:
            results = []
            for message in reversed(messages):
                if not isinstance(message, ToolMessage):
                    break
                results.append(str(message.content))
            run = current.run
            step = run.script.next(list(reversed(results)))
            if isinstance(step, str):
                reply = AIMessage(content=step)
            else:
                turn = len(run.offered)
                reply = AIMessage(
                    content="",
                    tool_calls=[
                        {"name": n, "args": a, "id": f"c{turn}_{i}"}
                        for i, (n, a) in enumerate(step)
                    ],
                )
            return ChatResult(generations=[ChatGeneration(message=reply)])

    model = Scripted()
    if mode == "bridge":
        search = setup.search

        async def agent(state: MessagesState, config: Any) -> dict[str, Any]:
            llm = model.bind_tools(await bound_tools(search, config))
            return {"messages": [await llm.ainvoke(state["messages"], config)]}

        node: Any = ToolRelayNode(search)
    else:
        if mode == "all tools":
            lc_tools = [to_langchain(t) for t in setup.tools]
        else:

            def native(call: Callable[[str], Any]) -> Callable[..., Any]:
                async def function(**arguments: Any) -> Any:
                    return await call(json.dumps(arguments))

                return function

            lc_tools = [
                StructuredTool(name=n, description=d, args_schema=dict(p), coroutine=native(c))
                for n, d, p, c in own_tools(setup, current)
            ]

        async def agent(state: MessagesState, config: Any) -> dict[str, Any]:
            llm = model.bind_tools([t for t in lc_tools if current.shows(t.name)])
            return {"messages": [await llm.ainvoke(state["messages"], config)]}

        node = ToolNode(lc_tools)
    # LangGraph hands a node its config by the parameter's annotation, read at run time.
    agent.__annotations__.update(state=MessagesState, config=RunnableConfig)
    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", node)
    builder.set_entry_point("agent")
    builder.add_conditional_edges("agent", tools_condition, path_map=["tools", END])
    builder.add_edge("tools", "agent")
    graph = builder.compile()

    async def once() -> Run:
        run = current.start()
        state = await graph.ainvoke(
            {"messages": setup.scenario.task},
            {"configurable": {"thread_id": setup.conversation()}, "recursion_limit": 50},
        )
        run.answer = str(state["messages"][-1].content)
        return run

    return once


def _args_schema(tool: Any) -> Mapping[str, Any]:
    schema = tool.tool_call_schema
    return schema if isinstance(schema, dict) else schema.model_json_schema()


BUILDERS: Mapping[str, Callable[[Setup, str], Awaitable[Callable[[], Awaitable[Run]]]]] = {
    "pydantic-ai": build_pydantic_ai,
    "openai-agents": build_openai_agents,
    "langgraph": build_langgraph,
}
DISTRIBUTIONS = {
    "pydantic-ai": "pydantic-ai-slim",
    "openai-agents": "openai-agents",
    "langgraph": "langgraph",
}


# --- measuring ----------------------------------------------------------------------------------


class SearchClock:
    """CPU time the index spends searching, as the searches run inside the bridge's rounds.

    Timed in place rather than alone: inside a framework's loop the index's arrays are no
    longer in the CPU's caches, and a search costs more than in a tight loop of searches.
    """

    def __init__(self, setup: Setup) -> None:
        self.index = setup.index
        self.spent = 0.0
        self._search = setup.index.search

    def __enter__(self) -> SearchClock:
        def timed_search(request: Any) -> Any:
            start = time.process_time()
            try:
                return self._search(request)
            finally:
                self.spent += time.process_time() - start

        self.index.search = timed_search  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        del self.index.search


async def measure(framework: str, setup: Setup, *, runs: int, batches: int) -> dict[str, Any]:
    build = BUILDERS[framework]
    rows: dict[str, Any] = {}
    agents = {}
    for mode in MODES:  # the bridge's run first: the own modes answer its searches
        agents[mode] = once = await build(setup, mode)
        run = await once()
        if mode == "bridge":
            # The own modes answer each query as the bridge did.
            await _record_answers(setup, run)
        rows[mode] = {
            "requests": len(run.offered),
            "tools_shown": [len(o) for o in run.offered],
            "tool_tokens": sum(tool_tokens(o) for o in run.offered),
            "misses": run.script.misses,
            "queries": run.script.queries,
            "answer": run.answer,
        }
    # Everything built so far (the catalog, its index, the modes' agents and converted tools)
    # lives as long as the benchmark: out of the collector's sight, as a server freezes what it
    # built at start-up. Otherwise every full collection walks the 2,500 tools of all four
    # modes, and a mode pays for the others' objects in proportion to what it allocates.
    gc.collect()
    gc.freeze()
    samples: dict[str, list[float]] = {mode: [] for mode in MODES}
    searching: list[float] = []  # per batch: the index's searches per bridge round
    without_search: list[float] = []  # per batch: the bridge's round, its searches left out
    for _ in range(batches):
        spent = dict.fromkeys(MODES, 0.0)
        rounds = dict.fromkeys(MODES, 0)
        clock = SearchClock(setup)  # only the bridge's runs search the index
        for i in range(runs):
            # The modes take turns run by run, each turn in a rotated order, so a change in the
            # machine's load, or a cache warmed by the mode before, hits all of them alike.
            for mode in MODES[i % len(MODES) :] + MODES[: i % len(MODES)]:
                if mode == "all tools" and i >= max(1, runs // 10):
                    continue  # a tenth of the runs: it is slow, and not the one compared
                start = time.process_time()
                with clock:
                    rounds[mode] += len((await agents[mode]()).offered)
                spent[mode] += time.process_time() - start
        for mode in MODES:
            samples[mode].append(spent[mode] / rounds[mode])
        searching.append(clock.spent / rounds["bridge"])
        without_search.append((spent["bridge"] - clock.spent) / rounds["bridge"])
    for mode in MODES:
        rows[mode]["cpu_ms_per_round"] = 1000 * statistics.median(samples[mode])
    rows["bridge"]["toolrelay_ms_per_round"] = 1000 * await toolrelay_seconds(
        setup, agents["bridge"], runs
    )
    gc.unfreeze()
    own = rows[OWN]
    search_ms = 1000 * statistics.median(searching)
    rest_ms = 1000 * statistics.median(without_search)
    added = rest_ms - own["cpu_ms_per_round"]
    static = rows["own loop, all shown"]["cpu_ms_per_round"]
    return {
        "framework": framework,
        "version": importlib.metadata.version(DISTRIBUTIONS[framework]),
        "modes": rows,
        "search_ms_per_round": search_ms,
        "bridge_added_ms_per_round": added,
        "bridge_overhead": added / own["cpu_ms_per_round"],
        "bridge_overhead_vs_all_shown": (rest_ms - static) / static,
        "same_answer": len({rows[m]["answer"] for m in MODES}) == 1,
    }


async def toolrelay_seconds(setup: Setup, once: Callable[[], Awaitable[Run]], runs: int) -> float:
    """CPU seconds per round spent in the bridge's ``BridgeSearch`` (search, shown, call).

    Timed in the event loop's thread (``time.thread_time``): the frameworks run other work in
    threads of their own meanwhile.
    """
    search = setup.search
    spent = [0.0]
    originals = {name: getattr(search, name) for name in ("search", "shown", "permitted", "call")}

    def timing(function: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def timed_call(*args: Any, **kwargs: Any) -> Any:
            start = time.thread_time()
            try:
                return await function(*args, **kwargs)
            finally:
                spent[0] += time.thread_time() - start

        return timed_call

    for name, function in originals.items():
        setattr(search, name, timing(function))
    try:
        rounds = sum([len((await once()).offered) for _ in range(runs)])
    finally:
        for name in originals:
            delattr(search, name)
    return spent[0] / rounds


async def _record_answers(setup: Setup, run: Run) -> None:
    searches = ("tool_search", "search_tools")  # toolrelay's, pydantic-ai's
    names = dict.fromkeys(n for offered in run.offered for n, _, _ in offered if n not in searches)
    by_name = {safe(t.definition.name): t for t in setup.tools}
    setup.shown_by_bridge = [by_name[n] for n in names]
    for query in run.script.queries:
        result = await setup.search.search(json.dumps({"queries": [query]}), key=None)
        setup.answers[query] = result.text
        setup.found[query] = [safe(name) for name in result.found]


# --- reporting ----------------------------------------------------------------------------------


def table(results: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = [
        "| Framework | Mode | Requests | Tool tokens per task | Retrieval misses | CPU per round |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for result in results:
        for mode in MODES:
            row = result["modes"][mode]
            misses = str(row["misses"]) if mode == "bridge" else "–"
            lines.append(
                f"| {result['framework']} {result['version']} | {mode} | {row['requests']} | "
                f"{row['tool_tokens']:,} | {misses} | {row['cpu_ms_per_round']:.2f} ms |"
            )
    return lines


def overhead_table(results: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = [
        "| Framework | Own disclosure per round | Bridge per round | BM25 search per round "
        "| Bridge adds | Within 10% | In BridgeSearch | Bridge vs all shown |",
        "|---|---:|---:|---:|---:|:---:|---:|---:|",
    ]
    for r in results:
        own, bridge = r["modes"][OWN], r["modes"]["bridge"]
        within = "yes" if r["bridge_overhead"] <= OVERHEAD_LIMIT else "no"
        lines.append(
            f"| {r['framework']} | {own['cpu_ms_per_round']:.2f} ms | "
            f"{bridge['cpu_ms_per_round']:.2f} ms | {r['search_ms_per_round']:.2f} ms | "
            f"{r['bridge_added_ms_per_round']:+.2f} ms ({100 * r['bridge_overhead']:+.0f}%) | "
            f"{within} | {bridge['toolrelay_ms_per_round']:.2f} ms | "
            f"{100 * r['bridge_overhead_vs_all_shown']:+.0f}% |"
        )
    return lines


def section_text(meta: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> str:
    tools = f"{meta['catalog_size']:,}"
    return "\n".join(
        [
            "<!-- bridges:start -->",
            "## Bridges: the same task through pydantic-ai, the Agents SDK and LangGraph",
            "",
            f"`python benchmarks/bridges.py` runs the three-step trip-planning task of the token "
            f"benchmark over its {tools}-tool BFCL catalog through each framework's own agent "
            "loop, with scripted decisions: every tool given to the framework (*all tools*), "
            "toolrelay's bridge with tool search over a BM25 index (*bridge*), and the framework "
            "alone with native tools and a stand-in `tool_search` answering from a table what "
            "the bridge's search answered: showing the tools each search named from the next "
            "step on, by the framework's own mechanism for tools that change during a run "
            "(*own disclosure*: pydantic-ai's `FunctionToolset.filtered`, the Agents SDK's "
            "`is_enabled`, the tools LangGraph's agent node binds; the same rounds, without "
            "toolrelay), or every tool the bridge showed, from the first step (*own loop, all "
            "shown*). Tool tokens are the definitions each request offered "
            f"({meta['encoding']}, summed over the task's requests; messages left out). CPU "
            f"time per round is the median of {meta['batches']} batches of {meta['runs']} runs "
            f"(three for *all tools*), the modes taking turns run by run, with the catalog, its "
            "index and every mode's agent built beforehand and frozen out of the garbage "
            "collector's sight (`gc.freeze`, as a server does after start-up; unfrozen, each "
            f"full collection walks the {tools} tools of all four modes, and a mode pays for "
            "that in proportion to the objects it allocates) "
            f"(Python {meta['python']}, a shared machine).",
            "",
            *table(results),
            "",
            "What the bridge adds per round to the framework's own disclosure, the BM25 searches "
            "left out (timed as they run inside the bridge's rounds, where they cost more "
            "than in a tight loop of searches: the framework's work in between pushes the "
            "index's arrays out of the CPU's caches), and the part of the bridge's round "
            "spent in toolrelay's "
            "`BridgeSearch` (searches, the shown tools, guarded calls; searches included; "
            "event-loop thread time from entry to return, so an upper bound when the framework "
            "runs other tasks meanwhile). "
            "Where the bridge adds more than `BridgeSearch` takes, the rest is spent outside it: "
            "in the framework's handling of the bridge's toolset, tools or node, and in the "
            "bridge's adapter. The last column compares the bridge with *own loop, all shown*: "
            "tools that change during a run can cost the framework more than tools that never "
            "do, whoever changes them (compare *own disclosure* with *own loop, all shown* "
            "above: pydantic-ai records each new tool in the conversation and resolves the "
            "request's tools again). The figures are CPU time on a shared machine, and vary "
            "from run to run by a few tenths of a millisecond per round:",
            "",
            *overhead_table(results),
            "<!-- bridges:end -->",
        ]
    )


def docs_sections(data: Mapping[str, Any] | None = None) -> list[Section]:
    """The section this benchmark writes, from ``data`` (default: the committed results)."""
    if data is None:
        data = json.loads((RESULTS / "bridges.json").read_text(encoding="utf-8"))
    return [Section.from_marked(DOCS, section_text(data["meta"], data["results"]))]


async def main_async(quick: bool) -> int:
    scenario, _ = bfcl_scenario(QUICK_SIZE if quick else BFCL_SIZE)
    setup = Setup(scenario)
    await setup.search.snapshot()  # index once, before anything is timed
    runs, batches = (4, 3) if quick else (30, 21)
    results = []
    for framework in FRAMEWORKS:
        print(f"{framework}...", file=sys.stderr)
        results.append(await measure(framework, setup, runs=runs, batches=batches))
    meta = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "encoding": ENCODING,
        "catalog_size": len(setup.tools),
        "runs": runs,
        "batches": batches,
        "quick": quick,
    }
    out = Path(tempfile.mkdtemp(prefix="bridges-")) if quick else RESULTS
    out.mkdir(parents=True, exist_ok=True)
    data = {"meta": meta, "results": results}
    (out / "bridges.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    text = section_text(meta, results)
    (out / "bridges.md").write_text(text + "\n", encoding="utf-8")
    if not quick:
        write_sections(docs_sections(data))
    print(text)
    wrong = [r["framework"] for r in results if not r["same_answer"]]
    if wrong:
        print(f"different answers across modes: {wrong}", file=sys.stderr)
    return 1 if wrong else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a 400-tool catalog, fewer runs")
    return asyncio.run(main_async(parser.parse_args().quick))


if __name__ == "__main__":
    sys.exit(main())
