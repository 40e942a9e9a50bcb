"""Billing a run of requests: the prompt-cache rules on hand-made requests, output, the
tool-use prompt, each model's minimum, and the request bodies priced."""

from __future__ import annotations

import pytest

from tests.extras import needs_extra
from toolrelay.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolChangeMessage,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.models._anthropic_wire import INLINE_TOOLS_BETA
from toolrelay.models._billing import (
    CLAUDE_SONNET_4_5,
    CLAUDE_TOOL_ADDITION,
    GPT_5,
    GPT_5_RESPONSES,
    PREFIX_SERVER,
    AnthropicCache,
    Bill,
    Block,
    PrefixCache,
    Priced,
    PricedModel,
    anthropic_body,
    openai_body,
    output_tokens,
)
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import text_response, tool_call_response
from toolrelay.tools import as_tools, tool

SONNET = CLAUDE_SONNET_4_5.prices
GPT = GPT_5.prices

_next = iter(range(10**9))


def block(size: int, *, breakpoint: bool = False) -> Block:
    """A block of ``size`` tokens no other block shares."""
    return Block(tokens=tuple(next(_next) for _ in range(size)), breakpoint=breakpoint)


def marked(blocks: list[Block], position: int) -> list[Block]:
    """``blocks`` with the breakpoint on the block at ``position`` only."""
    return [Block(tokens=b.tokens, breakpoint=i == position) for i, b in enumerate(blocks)]


# --- Anthropic ------------------------------------------------------------------------------


def test_a_breakpoint_written_once_is_read_by_the_next_request() -> None:
    cache = AnthropicCache()
    tools = [block(600), block(500, breakpoint=True)]
    system = block(100, breakpoint=True)
    first = cache.send([*tools, system, block(50)])
    assert first == Priced(uncached=50, written=1200, read=0)
    second = cache.send([*tools, system, block(50), block(30), block(20)])
    assert second == Priced(uncached=100, written=0, read=1200)
    assert second.cost(SONNET) == pytest.approx((100 * 3.0 + 1200 * 0.30) / 1e6)
    assert first.cost(SONNET) == pytest.approx((50 * 3.0 + 1200 * 3.75) / 1e6)


def test_a_changed_tool_list_misses_and_writes_again() -> None:
    cache = AnthropicCache()
    search = block(200)
    system = block(900, breakpoint=True)
    cache.send([search, block(300, breakpoint=True), system, block(40)])
    # The next step shows another tool: the tools come first, so nothing after them matches.
    changed = cache.send([search, block(300, breakpoint=True), system, block(40)])
    assert changed == Priced(uncached=40, written=1400, read=0)


def test_history_without_a_breakpoint_is_never_cached() -> None:
    cache = AnthropicCache()
    prefix = [block(1000), block(100, breakpoint=True)]
    history = [block(2000), block(2000)]
    cache.send([*prefix, *history])
    again = cache.send([*prefix, *history, block(10)])
    assert again == Priced(uncached=4010, written=0, read=1100)


def test_the_lookback_finds_an_entry_up_to_twenty_blocks_before_a_breakpoint() -> None:
    head = block(1100)
    tail = [block(5) for _ in range(25)]
    cache = AnthropicCache()
    cache.send(marked([head, *tail], 0))  # writes the prefix ending at the head
    near = cache.send(marked([head, *tail[:20]], 20))  # 20 blocks after the entry
    assert near.read == 1100
    assert near.written == 100  # the breakpoint's own prefix is written past what was read
    cache = AnthropicCache()
    cache.send(marked([head, *tail], 0))
    far = cache.send(marked([head, *tail[:21]], 21))  # 21 blocks after: out of reach
    assert far.read == 0
    assert far.written == 1205


def test_a_prefix_under_the_minimum_is_neither_written_nor_read() -> None:
    cache = AnthropicCache(minimum=1024)
    short = [block(1000, breakpoint=True), block(100)]
    assert cache.send(short) == Priced(uncached=1100)
    assert cache.send(short) == Priced(uncached=1100)
    haiku = AnthropicCache(minimum=2048)
    long = [block(1500, breakpoint=True)]
    assert haiku.send(long) == Priced(uncached=1500)


# --- OpenAI and a prefix-caching server -----------------------------------------------------


def test_openai_reads_the_shared_prefix_in_128_token_steps() -> None:
    cache = PrefixCache(minimum=1024, step=128)
    shared = [block(1000), block(300)]
    assert cache.send([*shared, block(10)]) == Priced(uncached=1310)
    # 1,300 tokens shared: 10 whole steps of 128 are read.
    assert cache.send([*shared, block(10)]) == Priced(uncached=30, read=1280)
    # Tokens shared within a block count too.
    partly = Block(tokens=shared[1].tokens[:200] + (-1,) * 100)
    assert cache.send([shared[0], partly]).read == 1152


def test_openai_caches_nothing_under_1024_tokens() -> None:
    cache = PrefixCache(minimum=1024, step=128)
    small = [block(900)]
    assert cache.send(small) == Priced(uncached=900)
    assert cache.send(small) == Priced(uncached=900)
    # A long prompt sharing only 1,000 tokens with an earlier one reads nothing.
    first = [block(1000), block(500)]
    cache.send(first)
    assert cache.send([first[0], block(500)]) == Priced(uncached=1500)
    assert GPT.cache_write == GPT.input  # no write surcharge


def test_a_server_reuses_whole_blocks_and_computes_the_last_token() -> None:
    server = PrefixCache(minimum=0, step=16, keep_last=True)
    prompt = [block(40), block(10)]
    assert server.send(prompt) == Priced(uncached=50)
    assert server.send([*prompt, block(7)]) == Priced(uncached=9, read=48)
    # The same prompt again: every whole block but the one holding the last token.
    assert server.send(prompt) == Priced(uncached=2, read=48)
    same = [block(32)]
    server.send(same)
    assert server.send(same) == Priced(uncached=16, read=16)


# --- what a model bills -----------------------------------------------------------------------


@tool
def get_weather(city: str) -> str:
    """The current weather in a city."""
    return "sunny"


@tool
def tool_search(query: str) -> str:
    """Find tools."""
    return "[]"


WEATHER = {
    "name": "get_weather",
    "description": "The current weather in a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def _prompt(*texts: str, tools: bool = True) -> Prompt:
    options = ChatOptions(tools=as_tools(get_weather) if tools else [])
    return Prompt(
        messages=[SystemMessage(text="You help."), *(UserMessage(text=t) for t in texts)],
        options=options,
    )


def test_output_is_billed_at_the_output_price() -> None:
    bill = Bill(GPT_5)
    priced = bill.add(openai_body(_prompt("hi", tools=False)), output=1000)
    assert priced.output == 1000
    assert bill.cost == pytest.approx((priced.uncached * 1.25 + 1000 * 10.0) / 1e6)
    assert Priced(output=10).cost(SONNET) == pytest.approx(10 * 15.0 / 1e6)


def test_output_counts_the_answer_as_the_provider_returns_it() -> None:
    call = tool_call_response(("get_weather", {"city": "Paris"}))
    text = text_response("It is sunny in Paris.")
    for layout in ("anthropic", "openai"):
        assert output_tokens(call, layout) > output_tokens(text_response(""), layout)
        assert output_tokens(text, layout) > output_tokens(text_response(""), layout)
    # Anthropic returns the arguments as an object in a tool_use block; OpenAI as a JSON string.
    assert output_tokens(call, "anthropic") != output_tokens(call, "openai")


def test_anthropic_adds_its_tool_use_prompt_to_every_request_with_tools() -> None:
    with_tools = anthropic_body(_prompt("hi"))
    without = anthropic_body(_prompt("hi", tools=False))
    sonnet = CLAUDE_SONNET_4_5.blocks(with_tools)
    assert len(sonnet[0].tokens) == CLAUDE_SONNET_4_5.tool_use_prompt == 346
    assert len(sonnet) == len(CLAUDE_SONNET_4_5.blocks(without)) + 2  # the prompt and the tool
    priced = Bill(CLAUDE_SONNET_4_5).add(with_tools, output=0)
    plain = Bill(CLAUDE_SONNET_4_5).add(without, output=0)
    tool_tokens = len(sonnet[1].tokens)
    assert priced.input == plain.input + 346 + tool_tokens
    # OpenAI publishes no such prompt.
    assert GPT_5.tool_use_prompt == 0
    assert len(GPT_5.blocks(openai_body(_prompt("hi")))) == 1 + 2  # the tool, two messages


def test_the_cache_minimum_is_the_priced_models() -> None:
    history = " ".join(f"word{i}" for i in range(700))  # about 1,400 tokens
    prompts = [_prompt(history), _prompt(history, "and then?")]

    def read(model: PricedModel) -> int:
        bill = Bill(model)
        return sum(bill.add(anthropic_body(p), output=0).read for p in prompts)

    assert read(CLAUDE_SONNET_4_5) > 1024  # written by the first request, read by the second
    haiku = PricedModel(
        key="haiku",
        name="claude-3-5-haiku",
        label="haiku",
        layout="anthropic",
        prices=SONNET,
        cache_minimum=2048,
        tool_use_prompt=346,
    )
    assert read(haiku) == 0
    assert CLAUDE_TOOL_ADDITION.cache_minimum == 1024
    assert (GPT_5.cache_minimum, GPT_5.cache_step) == (1024, 128)


def test_the_anthropic_defaults_mark_the_history_and_the_prompt_marks_tools_and_system() -> None:
    prompt = _prompt("hi")
    default = anthropic_body(prompt)
    assert "cache_control" not in default["tools"][-1]
    assert isinstance(default["system"], str)
    assert "cache_control" in default["messages"][-1]["content"][-1]
    marked = anthropic_body(prompt, cache_prompt=True)
    assert "cache_control" in marked["tools"][-1]
    assert "cache_control" in marked["system"][-1]


def _with_tool_change() -> Prompt:
    """A tool loop where a search made a tool available: a tool change after its result."""
    return Prompt(
        messages=[
            SystemMessage(text="You help."),
            UserMessage(text="What is the weather in Paris?"),
            AssistantMessage(tool_calls=(ToolCall(id="c1", name="tool_search", arguments="{}"),)),
            ToolResponseMessage(responses=(ToolResponse(id="c1", name="tool_search", data="[]"),)),
            ToolChangeMessage(added=(WEATHER,)),
        ],
        options=ChatOptions(tools=as_tools(tool_search)),
    )


def test_the_priced_bodies_are_the_adapters_own() -> None:
    pytest.importorskip("anthropic", reason=needs_extra("anthropic"))
    pytest.importorskip("openai", reason=needs_extra("openai"))
    from toolrelay.models import AnthropicChatModel, OpenAIChatModel, OpenAIResponsesModel

    anthropic_fields = ("tools", "system", "messages", "betas")
    for prompt in (_prompt("hi", "more"), _with_tool_change()):
        for name in (CLAUDE_SONNET_4_5.name, CLAUDE_TOOL_ADDITION.name):
            for settings in ({}, {"cache_prompt": True}, {"cache_history": False}):
                adapter = AnthropicChatModel(name, api_key="unused", **settings)
                sent = adapter.request_body(prompt)
                assert anthropic_body(prompt, model=name, **settings) == {
                    k: sent[k] for k in anthropic_fields if k in sent
                }
        for model in (CLAUDE_SONNET_4_5, CLAUDE_TOOL_ADDITION):
            sent = AnthropicChatModel(model.name, api_key="unused").request_body(prompt)
            assert model.body(prompt) == {k: sent[k] for k in anthropic_fields if k in sent}
        sent = OpenAIChatModel("gpt-5", api_key="unused").request_body(prompt)
        assert (
            openai_body(prompt) == GPT_5.body(prompt) == {k: sent[k] for k in ("tools", "messages")}
        )
        sent = OpenAIResponsesModel("gpt-5", api_key="unused").request_body(prompt)
        assert GPT_5_RESPONSES.body(prompt) == {k: sent[k] for k in ("tools", "input")}


def test_tool_additions_are_priced_as_input_where_they_stand() -> None:
    prompt = _with_tool_change()
    native = CLAUDE_TOOL_ADDITION.body(prompt)
    [*_, change] = native["messages"]
    assert change["role"] == "system"
    assert [b["type"] for b in change["content"]] == ["tool_addition"]
    assert native["betas"] == [INLINE_TOOLS_BETA]
    # A model that does not take tool changes is sent (and billed) without it.
    other = CLAUDE_SONNET_4_5.body(prompt)
    assert "betas" not in other
    assert all(m["role"] != "system" for m in other["messages"])
    blocks = CLAUDE_TOOL_ADDITION.blocks(native)
    without = CLAUDE_TOOL_ADDITION.blocks(other)
    assert blocks[: len(without)] == [
        *without[:-1],
        Block(tokens=without[-1].tokens),  # the history's breakpoint moved to the change
    ]
    [addition] = blocks[len(without) :]
    assert addition.breakpoint  # the adapter marks the last message, the change
    assert len(addition.tokens) > 20  # the definition by value, in the messages
    first = Bill(CLAUDE_TOOL_ADDITION).add(native, output=0)
    assert first.input == sum(len(b.tokens) for b in blocks)
    assert first.input == Bill(CLAUDE_TOOL_ADDITION).add(other, output=0).input + len(
        addition.tokens
    )


def test_a_server_counts_the_tokens_it_computes() -> None:
    bill = Bill(PREFIX_SERVER)
    body = openai_body(_prompt("hi"))
    first = bill.add(body, output=5)
    second = bill.add(body, output=5)
    assert second.read > 0
    assert bill.cost == pytest.approx(first.uncached + second.uncached + 10)
