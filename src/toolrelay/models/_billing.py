"""What a run of model requests costs as a provider bills it.

One implementation for everything toolrelay prices (the token benchmark, ``toolrelay demo``,
``toolrelay eval tokens``). A request is its wire body (what an adapter sends, built by the
adapter's own builder: ``content_body`` of its wire module), cut into :class:`Block` s in the
order the provider reads it: tools, then system, then messages. A
:class:`Bill` feeds a run's requests in order to the priced model's prompt cache and adds
each request's output. The rules, as the providers publish them (sources on
:class:`PricedModel` and in docs/benchmarks.md):

- :class:`AnthropicCache`: explicit breakpoints (``cache_control``). At each breakpoint the API
  looks for a cached prefix ending there, then at the earlier block boundaries, up to
  ``lookback`` (20) blocks back; the longest hit is read. The prefix up to the last breakpoint
  past what was read is written, when it is at least the model's minimum long. Entries are
  only made at breakpoints. Every request with tools also carries the fixed tool-use system
  prompt (346 tokens on Claude 4-class models with ``tool_choice`` auto), taken here as a
  constant block ahead of the tools.
- :class:`PrefixCache` (OpenAI, automatic; Chat Completions and Responses alike): a prompt
  of at least ``minimum`` (1,024) tokens reads the longest prefix it shares with an earlier
  prompt of the run, in whole ``step`` (128-token) increments, and only from ``minimum``
  tokens on. No write surcharge.
- :class:`PrefixCache` (a vLLM-style server): no minimum, 16-token blocks, the last prompt
  token always computed. Priced as tokens evaluated anew.

Tokens are counted with cl100k_base on the JSON of each block (the providers' tokenizers
differ a little; the same counter on both sides of a comparison). Output is the model's
visible answer serialised as the provider returns it (text and tool-call blocks); reasoning
tokens are not modelled.
"""

from __future__ import annotations

import hashlib
import json
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from toolrelay.messages import AssistantMessage, ChatResponse
from toolrelay.models._anthropic_wire import (
    accepts_tool_changes,
    messages_to_anthropic,
    model_family,
)
from toolrelay.models._anthropic_wire import content_body as anthropic_content
from toolrelay.models._openai_wire import content_body as openai_content
from toolrelay.models._openai_wire import messages_to_openai
from toolrelay.models._responses_wire import messages_to_input, tools_to_responses
from toolrelay.prompt import Prompt
from toolrelay.tools._base import ToolDefinition
from toolrelay.tools._tokens import encode_tokens

__all__ = [
    "ANTHROPIC_CACHE_MINIMUMS",
    "ANTHROPIC_TOOL_USE_PROMPT",
    "CLAUDE_SONNET_4_5",
    "CLAUDE_TOOL_ADDITION",
    "GPT_5",
    "GPT_5_RESPONSES",
    "HEADLINE_MODELS",
    "OPENAI_CACHE_MINIMUM",
    "PREFIX_SERVER",
    "PRICED_MODELS",
    "AnthropicCache",
    "Bill",
    "Block",
    "PrefixCache",
    "Priced",
    "PricedModel",
    "Prices",
    "anthropic_body",
    "anthropic_cache_minimum",
    "cache_shortfall",
    "openai_body",
    "output_tokens",
    "request_blocks",
    "responses_body",
]

Layout = Literal["anthropic", "openai", "responses"]


@dataclass(frozen=True, kw_only=True)
class Block:
    """One content block of a request: its tokens, and whether it carries ``cache_control``."""

    tokens: tuple[int, ...]
    breakpoint: bool = False


@dataclass(frozen=True, kw_only=True)
class Prices:
    """US dollars per million tokens."""

    input: float
    cache_write: float
    cache_read: float
    output: float


@dataclass(frozen=True, kw_only=True)
class Priced:
    """The tokens of one request (or a sum of them): input by what the cache did, and output."""

    uncached: int = 0
    written: int = 0
    read: int = 0
    output: int = 0

    @property
    def input(self) -> int:
        return self.uncached + self.written + self.read

    def cost(self, prices: Prices) -> float:
        """The cost in US dollars."""
        return (
            self.uncached * prices.input
            + self.written * prices.cache_write
            + self.read * prices.cache_read
            + self.output * prices.output
        ) / 1_000_000

    def __add__(self, other: Priced) -> Priced:
        return Priced(
            uncached=self.uncached + other.uncached,
            written=self.written + other.written,
            read=self.read + other.read,
            output=self.output + other.output,
        )


class AnthropicCache:
    """Anthropic's prompt cache over one run: entries are the prefixes written at breakpoints."""

    def __init__(self, *, minimum: int = 1024, lookback: int = 20) -> None:
        self.minimum = minimum
        self.lookback = lookback
        self._entries: set[bytes] = set()

    def send(self, blocks: Sequence[Block]) -> Priced:
        ends: list[int] = []  # tokens up to and including block i
        for block in blocks:
            ends.append((ends[-1] if ends else 0) + len(block.tokens))
        total = ends[-1] if ends else 0
        keys = _prefix_keys(blocks)
        marks = [i for i, block in enumerate(blocks) if block.breakpoint]
        read_at = -1  # the last block of the prefix read from the cache
        for mark in marks:
            for position in range(mark, max(mark - self.lookback, 0) - 1, -1):
                if position > read_at and keys[position] in self._entries:
                    read_at = position
                    break
        read = ends[read_at] if read_at >= 0 else 0
        written_at = read_at
        for mark in marks:
            if mark > read_at and ends[mark] >= self.minimum:
                self._entries.add(keys[mark])
                written_at = mark
        written = ends[written_at] - read if written_at > read_at else 0
        return Priced(uncached=total - read - written, written=written, read=read)


class PrefixCache:
    """Automatic prefix caching: the longest prefix shared with an earlier prompt, in steps."""

    def __init__(self, *, minimum: int, step: int, keep_last: bool = False) -> None:
        self.minimum = minimum
        self.step = step
        self.keep_last = keep_last  # the last prompt token is always computed (vLLM)
        self._seen: list[Sequence[Block]] = []

    def send(self, blocks: Sequence[Block]) -> Priced:
        total = sum(len(b.tokens) for b in blocks)
        if total < self.minimum:
            return Priced(uncached=total)
        shared = max((_shared_prefix(blocks, earlier) for earlier in self._seen), default=0)
        self._seen.append(blocks)
        if self.keep_last:
            shared = min(shared, total - 1)
        read = shared // self.step * self.step
        if read < self.minimum:
            read = 0
        return Priced(uncached=total - read, read=read)


@dataclass(frozen=True, kw_only=True)
class PricedModel:
    """A model as its provider bills it.

    Attributes:
        key: The key of its figures in results (``"anthropic"``, ``"openai"``...).
        name: The model's API name.
        label: How tables head its column.
        layout: The wire format of its requests (``"anthropic"``: Messages API; ``"openai"``:
            Chat Completions, also spoken by prefix-caching servers; ``"responses"``: OpenAI's
            Responses API).
        prices: What it costs.
        cache_minimum: The shortest prefix the cache keeps, in tokens.
        cache_step: The granularity of an automatic cache's hits (1 for breakpoint caches).
        tool_use_prompt: Tokens the provider adds to every request that carries tools.
        server: A self-hosted prefix-caching server: its cost is the prompt tokens evaluated
            anew (prices of 1 per uncached token), not money.
        sources: Where the prices and rules are published.
    """

    key: str
    name: str
    label: str
    layout: Layout
    prices: Prices
    cache_minimum: int
    cache_step: int = 1
    tool_use_prompt: int = 0
    server: bool = False
    sources: tuple[str, ...] = field(default=())

    def new_cache(self) -> AnthropicCache | PrefixCache:
        if self.layout == "anthropic":
            return AnthropicCache(minimum=self.cache_minimum)
        return PrefixCache(minimum=self.cache_minimum, step=self.cache_step, keep_last=self.server)

    def body(
        self, prompt: Prompt, *, tools: Sequence[ToolDefinition] | None = None
    ) -> dict[str, Any]:
        """The priced fields of the body its adapter sends with every setting at its default.

        ``tools``: sent in place of the prompt's.
        """
        if self.layout == "anthropic":
            return anthropic_body(prompt, tools=tools, model=self.name)
        if self.layout == "responses":
            return responses_body(prompt, tools=tools)
        return openai_body(prompt, tools=tools)

    def blocks(self, body: Mapping[str, Any]) -> list[Block]:
        """``body`` in the order the provider caches it, the tool-use prompt first."""
        return request_blocks(self.layout, body, tool_use_prompt=self.tool_use_prompt)

    def cache_shortfall(self, prompt: Prompt) -> int:
        """Tokens ``prompt`` lacks before this model's cache keeps it (:func:`cache_shortfall`).

        What an adapter's ``cache_shortfall`` says for requests to this model, with every
        setting at its default: the scripted model of a benchmark declares it.
        """
        return cache_shortfall(
            self.blocks(self.body(prompt)),
            minimum=self.cache_minimum,
            breakpoints=self.layout == "anthropic",
        )


ANTHROPIC_PRICING = "https://platform.claude.com/docs/en/about-claude/pricing"
ANTHROPIC_CACHING = "https://platform.claude.com/docs/en/build-with-claude/prompt-caching"
ANTHROPIC_TOOL_USE = (
    "https://platform.claude.com/docs/en/agents-and-tools/tool-use/overview#pricing"
)
ANTHROPIC_TOOL_CHANGES = (
    "https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages"
)
OPENAI_PRICING = "https://platform.openai.com/docs/pricing"

ANTHROPIC_TOOL_USE_PROMPT = 346
"""Tokens of the system prompt Anthropic adds to every request with tools (Claude 4-class
models, ``tool_choice`` auto; its tool use page)."""
OPENAI_CACHE_MINIMUM = 1024
"""The shortest prompt OpenAI's automatic cache keeps (every model, both APIs)."""
OPENAI_CACHING = "https://platform.openai.com/docs/guides/prompt-caching"
VLLM_CACHING = "https://docs.vllm.ai/en/latest/design/prefix_caching/"

CLAUDE_SONNET_4_5 = PricedModel(
    key="anthropic",
    name="claude-sonnet-4-5",
    label="Anthropic, claude-sonnet-4-5",
    layout="anthropic",
    prices=Prices(input=3.0, cache_write=3.75, cache_read=0.30, output=15.0),
    cache_minimum=1024,
    tool_use_prompt=ANTHROPIC_TOOL_USE_PROMPT,
    sources=(ANTHROPIC_PRICING, ANTHROPIC_CACHING, ANTHROPIC_TOOL_USE),
)
CLAUDE_TOOL_ADDITION = PricedModel(
    key="anthropic_tool_addition",
    name="claude-opus-4-8",
    label="Anthropic, claude-opus-4-8 (takes tool_addition)",
    layout="anthropic",
    prices=Prices(input=5.0, cache_write=6.25, cache_read=0.50, output=25.0),
    cache_minimum=1024,
    tool_use_prompt=ANTHROPIC_TOOL_USE_PROMPT,
    sources=(
        ANTHROPIC_PRICING,
        ANTHROPIC_CACHING,
        ANTHROPIC_TOOL_USE,
        ANTHROPIC_TOOL_CHANGES,
    ),
)
GPT_5 = PricedModel(
    key="openai",
    name="gpt-5",
    label="OpenAI, gpt-5",
    layout="openai",
    prices=Prices(input=1.25, cache_write=1.25, cache_read=0.125, output=10.0),
    cache_minimum=OPENAI_CACHE_MINIMUM,
    cache_step=128,
    sources=(OPENAI_PRICING, OPENAI_CACHING),
)
GPT_5_RESPONSES = PricedModel(
    key="openai_responses",
    name="gpt-5",
    label="OpenAI Responses, gpt-5",
    layout="responses",
    prices=GPT_5.prices,
    cache_minimum=GPT_5.cache_minimum,
    cache_step=GPT_5.cache_step,
    sources=GPT_5.sources,
)
PREFIX_SERVER = PricedModel(
    key="server",
    name="a prefix-caching server",
    label="prefix-caching server",
    layout="openai",
    # A million "dollars" per million tokens: the cost is the count of tokens evaluated
    # anew, prompt and generated.
    prices=Prices(input=1e6, cache_write=1e6, cache_read=0.0, output=1e6),
    cache_minimum=0,
    cache_step=16,
    server=True,
    sources=(VLLM_CACHING,),
)
PRICED_MODELS = (CLAUDE_SONNET_4_5, CLAUDE_TOOL_ADDITION, GPT_5, GPT_5_RESPONSES, PREFIX_SERVER)
"""The models every billed figure is given for, in table order."""
HEADLINE_MODELS = (CLAUDE_SONNET_4_5, GPT_5)
"""The models a task's headline cost is billed on."""

ANTHROPIC_CACHE_MINIMUMS: tuple[tuple[str, int, tuple[str, ...]], ...] = (
    (
        "Claude Opus 5, Fable 5, Mythos 5",
        512,
        ("claude-opus-5", "claude-fable-5", "claude-mythos-5"),
    ),
    (
        "Claude Opus 4.8, Sonnet 4.6, Sonnet 4.5, Opus 4.1, Opus 4, Sonnet 4",
        1024,
        (
            "claude-opus-4-8",
            "claude-sonnet-4-6",
            "claude-sonnet-4-5",
            "claude-opus-4-1",
            "claude-opus-4",
            "claude-sonnet-4",
        ),
    ),
    (
        "Claude Opus 4.7, Haiku 3.5, Haiku 3",
        2048,
        ("claude-opus-4-7", "claude-3-5-haiku", "claude-3-haiku"),
    ),
    (
        "Claude Opus 4.6, Opus 4.5, Haiku 4.5",
        4096,
        ("claude-opus-4-6", "claude-opus-4-5", "claude-haiku-4-5"),
    ),
)
"""The shortest prefix Anthropic's prompt cache keeps, per model (its prompt caching page):
the models as the page names them, the minimum, and their API names."""

_ANTHROPIC_MINIMUMS = {name: size for _, size, names in ANTHROPIC_CACHE_MINIMUMS for name in names}


def anthropic_cache_minimum(model: str) -> int:
    """The cache minimum of ``model`` (an API name, alias or dated snapshot); 0 when unknown."""
    return _ANTHROPIC_MINIMUMS.get(model_family(model), 0)


def request_blocks(
    layout: Layout, body: Mapping[str, Any], *, tool_use_prompt: int = 0
) -> list[Block]:
    """``body`` in the order the provider caches it, its fixed tool-use prompt first."""
    if layout == "anthropic":
        blocks = anthropic_blocks(body)
    elif layout == "responses":
        blocks = responses_blocks(body)
    else:
        blocks = openai_blocks(body)
    if tool_use_prompt and body.get("tools"):
        blocks.insert(0, Block(tokens=_tool_use_prompt(tool_use_prompt)))
    return blocks


def cache_shortfall(blocks: Sequence[Block], *, minimum: int, breakpoints: bool) -> int:
    """Tokens a request (its :func:`request_blocks`) lacks before its provider caches it.

    ``minimum`` less the prefix the cache would keep: up to the last breakpoint where the
    cache keeps only what ``breakpoints`` mark (Anthropic; none marked: nothing is kept, 0),
    else the whole prompt. 0 once it is long enough, or when ``minimum`` is 0.
    """
    if minimum <= 0:
        return 0
    if breakpoints:
        marked = [i for i, block in enumerate(blocks) if block.breakpoint]
        if not marked:
            return 0
        blocks = blocks[: marked[-1] + 1]
    return max(0, minimum - sum(len(block.tokens) for block in blocks))


class Bill:
    """One run of requests to one priced model, in order, each with the output it got."""

    def __init__(self, model: PricedModel) -> None:
        self.model = model
        self.requests: list[Priced] = []
        self._cache = model.new_cache()

    def add(self, body: Mapping[str, Any], output: int) -> Priced:
        """Price the next request of the run: its wire ``body`` and ``output`` tokens."""
        priced = self._cache.send(self.model.blocks(body))
        priced = Priced(
            uncached=priced.uncached, written=priced.written, read=priced.read, output=output
        )
        self.requests.append(priced)
        return priced

    @property
    def total(self) -> Priced:
        return sum(self.requests, Priced())

    @property
    def cost(self) -> float:
        return self.total.cost(self.model.prices)


def anthropic_body(
    prompt: Prompt,
    *,
    tools: Sequence[ToolDefinition] | None = None,
    model: str = CLAUDE_SONNET_4_5.name,
    cache_prompt: bool = False,
    cache_history: bool = True,
) -> dict[str, Any]:
    """The priced fields (tools, system, messages, betas) of ``AnthropicChatModel``'s body.

    Built by the adapter's own builder, with its cache settings and defaults, for requests
    to ``model`` (whose tool changes it renders when the model accepts them).
    """
    return anthropic_content(
        prompt.messages,
        _definitions(prompt, tools),
        tool_changes=accepts_tool_changes(model),
        cache_prompt=cache_prompt,
        cache_history=cache_history,
    )


def openai_body(prompt: Prompt, *, tools: Sequence[ToolDefinition] | None = None) -> dict[str, Any]:
    """The priced fields (tools, messages) of the body ``OpenAIChatModel`` sends."""
    return openai_content(prompt.messages, _definitions(prompt, tools))


def responses_body(
    prompt: Prompt, *, tools: Sequence[ToolDefinition] | None = None
) -> dict[str, Any]:
    """The priced fields (tools, input) of the body ``OpenAIResponsesModel`` sends."""
    body: dict[str, Any] = {"input": messages_to_input(prompt.messages)}
    definitions = _definitions(prompt, tools)
    if definitions:
        body["tools"] = tools_to_responses(definitions)
    return body


def _definitions(
    prompt: Prompt, tools: Sequence[ToolDefinition] | None
) -> Sequence[ToolDefinition]:
    return [t.definition for t in prompt.options.tools] if tools is None else tools


def output_tokens(response: ChatResponse, layout: Layout) -> int:
    """The tokens of the visible output of ``response``, as the provider returns it.

    The assistant's content blocks (Anthropic), message (Chat Completions) or output items
    (Responses), as JSON.
    """
    generation = response.result
    message = generation.message if generation is not None else AssistantMessage(text="")
    if layout == "anthropic":
        [wire] = messages_to_anthropic([message]) or [{"content": []}]
        return _count(wire["content"])
    if layout == "responses":
        return _count(messages_to_input([message]))
    [entry] = messages_to_openai([message])
    return _count({k: v for k, v in entry.items() if k != "role"})


def anthropic_blocks(body: Mapping[str, Any]) -> list[Block]:
    """An Anthropic request in cache order: tools, system, then every content block."""
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


def openai_blocks(body: Mapping[str, Any]) -> list[Block]:
    """A Chat Completions request in cache order: tools, then the messages."""
    return [_block(tool) for tool in body.get("tools", ())] + [
        _block(message) for message in body["messages"]
    ]


def responses_blocks(body: Mapping[str, Any]) -> list[Block]:
    """A Responses request in cache order: tools, then the input items."""
    return [_block(tool) for tool in body.get("tools", ())] + [
        _block(item) for item in body["input"]
    ]


def _count(data: Any) -> int:
    return len(_encoded(json.dumps(data, ensure_ascii=False)))


@lru_cache(maxsize=1 << 16)
def _encoded(text: str) -> tuple[int, ...]:
    # A run sends the same tool definitions and history again with every request.
    return encode_tokens(text)


def _block(data: Any, *, role: str | None = None) -> Block:
    """A wire block as tokens; its ``cache_control`` marks a breakpoint, not prompt text."""
    breakpoint = isinstance(data, Mapping) and "cache_control" in data
    if breakpoint:
        data = {k: v for k, v in data.items() if k != "cache_control"}
    text = json.dumps(data, ensure_ascii=False)
    return Block(tokens=_encoded(f"{role}: {text}" if role else text), breakpoint=breakpoint)


def _tool_use_prompt(size: int) -> tuple[int, ...]:
    # Its text is not published, only its length; ids no text encodes to keep it apart.
    return tuple(range(-size, 0))


def _prefix_keys(blocks: Sequence[Block]) -> list[bytes]:
    """A digest per block of everything up to and including it (what a cache entry is)."""
    keys: list[bytes] = []
    previous = b""
    for block in blocks:
        digest = hashlib.sha256(previous)
        digest.update(array("q", block.tokens).tobytes())
        digest.update(b"|")  # a block boundary
        previous = digest.digest()
        keys.append(previous)
    return keys


def _shared_prefix(a: Sequence[Block], b: Sequence[Block]) -> int:
    """How many tokens the two requests share from their start."""
    shared = 0
    for left, right in zip(a, b, strict=False):
        if left.tokens == right.tokens:
            shared += len(left.tokens)
            continue
        for x, y in zip(left.tokens, right.tokens, strict=False):
            if x != y:
                break
            shared += 1
        break
    return shared
