"""What a prompt lacks before the provider caches it: each adapter's ``cache_shortfall``.

Tool search fills its reveal until the first request reaches the minimum; these check that
each adapter reports the minimum of its provider and model, counts the prompt as its own
body holds it (the provider's tool-use prompt included), and says 0 where nothing would be
cached anyway.
"""

from __future__ import annotations

import pytest

from tests.extras import needs_extra
from toolrelay.messages import SystemMessage, UserMessage
from toolrelay.models._base import cache_shortfall
from toolrelay.models._billing import (
    ANTHROPIC_CACHE_MINIMUMS,
    CLAUDE_SONNET_4_5,
    GPT_5,
    GPT_5_RESPONSES,
    PREFIX_SERVER,
    Block,
    anthropic_cache_minimum,
    request_blocks,
)
from toolrelay.models._billing import cache_shortfall as blocks_shortfall
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.tools import as_tools, tool


@tool(name="refund.retry")
def retry(refund_id: str) -> str:
    """Retry a failed refund payment.

    Args:
        refund_id: The refund, e.g. RF-1.
    """
    return "ok"


def prompt(words: int = 10, *, model: str | None = None) -> Prompt:
    return Prompt(
        messages=(SystemMessage(text="You help."), UserMessage(text="word " * words)),
        options=ChatOptions(tools=tuple(as_tools([retry])), model=model),
    )


@pytest.mark.parametrize(
    ("model", "minimum"),
    [
        ("claude-sonnet-4-5", 1024),
        ("claude-sonnet-4-5-20250929", 1024),  # a dated snapshot
        ("claude-sonnet-4-0", 1024),  # the alias of Claude Sonnet 4
        ("claude-opus-5", 512),
        ("claude-opus-4-7", 2048),
        ("claude-3-5-haiku-20241022", 2048),
        ("claude-haiku-4-5", 4096),
        ("claude-unknown-9", 0),  # not listed: no minimum is assumed, nothing is filled
    ],
)
def test_anthropic_minimums_by_api_name(model: str, minimum: int) -> None:
    assert anthropic_cache_minimum(model) == minimum


def test_every_listed_anthropic_model_has_its_minimum() -> None:
    for _, minimum, names in ANTHROPIC_CACHE_MINIMUMS:
        assert names
        assert {anthropic_cache_minimum(name) for name in names} == {minimum}


def test_the_shortfall_counts_to_the_last_breakpoint_where_the_cache_keeps_only_those() -> None:
    blocks = [
        Block(tokens=(1,) * 300, breakpoint=True),
        Block(tokens=(2,) * 500),
    ]
    assert blocks_shortfall(blocks, minimum=1024, breakpoints=True) == 724
    assert blocks_shortfall(blocks, minimum=1024, breakpoints=False) == 224
    assert blocks_shortfall(blocks[1:], minimum=1024, breakpoints=True) == 0  # nothing cached
    assert blocks_shortfall(blocks, minimum=0, breakpoints=False) == 0
    assert blocks_shortfall(blocks, minimum=700, breakpoints=False) == 0


def test_a_priced_model_counts_its_body_and_its_tool_use_prompt() -> None:
    small = prompt()
    body = CLAUDE_SONNET_4_5.body(small)
    counted = sum(len(b.tokens) for b in request_blocks("anthropic", body))
    # The history breakpoint is on the last message: the whole prompt, and the 346 tokens
    # Anthropic adds to every request with tools.
    assert CLAUDE_SONNET_4_5.cache_shortfall(small) == 1024 - 346 - counted
    assert GPT_5.cache_shortfall(small) == 1024 - sum(
        len(b.tokens) for b in GPT_5.blocks(GPT_5.body(small))
    )
    assert GPT_5.cache_shortfall(prompt(2000)) == 0
    assert PREFIX_SERVER.cache_shortfall(small) == 0  # a server caches any prefix


def test_a_model_declaring_nothing_lacks_nothing() -> None:
    class Plain:
        supports_tools = True

    assert cache_shortfall(Plain(), prompt()) == 0


def test_anthropic_adapter_reports_the_request_models_minimum() -> None:
    pytest.importorskip("anthropic", reason=needs_extra("anthropic"))
    from toolrelay.models import AnthropicChatModel

    adapter = AnthropicChatModel("claude-sonnet-4-5", api_key="sk-test")
    small = prompt()
    assert adapter.cache_shortfall(small) == CLAUDE_SONNET_4_5.cache_shortfall(small) > 0
    # The request's own model decides: Claude Haiku 4.5 keeps nothing under 4,096 tokens.
    haiku = prompt(model="claude-haiku-4-5")
    assert adapter.cache_shortfall(haiku) == adapter.cache_shortfall(small) + 4096 - 1024
    assert adapter.cache_shortfall(prompt(model="claude-unknown-9")) == 0
    assert adapter.cache_shortfall(prompt(2000)) == 0
    # No breakpoint at all: nothing is ever cached, so nothing is worth filling.
    uncached = AnthropicChatModel(
        "claude-sonnet-4-5", api_key="sk-test", cache_prompt=False, cache_history=False
    )
    assert uncached.cache_shortfall(small) == 0


def test_openai_adapters_report_the_minimum_on_openais_api_only() -> None:
    pytest.importorskip("openai", reason=needs_extra("openai"))
    from toolrelay.models import OpenAIChatModel, OpenAIResponsesModel

    small = prompt()
    chat = OpenAIChatModel("gpt-5", api_key="sk-test")
    assert chat.cache_shortfall(small) == GPT_5.cache_shortfall(small) > 0
    responses = OpenAIResponsesModel("gpt-5", api_key="sk-test")
    assert responses.cache_shortfall(small) == GPT_5_RESPONSES.cache_shortfall(small) > 0
    # A compatible server (vLLM, Ollama...) is no OpenAI cache: nothing to reach.
    local = OpenAIChatModel("qwen2.5", base_url="http://localhost:11434/v1")
    assert local.cache_shortfall(small) == 0
    local_responses = OpenAIResponsesModel("qwen2.5", base_url="http://localhost:8000/v1")
    assert local_responses.cache_shortfall(small) == 0
