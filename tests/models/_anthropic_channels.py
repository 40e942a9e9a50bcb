"""Two turns of tool search over the Anthropic adapter, on each channel, and the bodies sent.

A :class:`~toolrelay.client.ChatClient` with memory (outside the loop, its default place) and
a :class:`~toolrelay.client.ToolSearchAdvisor` over three refund tools talks to
``claude-opus-5`` (a model that takes mid-conversation tool changes) through a fake SDK client
that records each request body and answers with the next scripted message:

1. turn one: the model searches for "refund" (two hits), calls the status tool (which
   retires the other hit, passed over), and answers;
2. turn two, after memory replays turn one: it searches for the retry tool, calls it, and
   answers.

The model's calls are the same on every channel, in the channel's form (``call_tool`` on the
proxy channel). No network: the bodies are exactly what the adapter passes to the SDK.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from tests.search_only import SEARCH_ONLY
from toolrelay.client import ChatClient, MessageChatMemoryAdvisor, ToolSearchAdvisor
from toolrelay.memory import InMemoryChatMemoryRepository, MessageWindowChatMemory
from toolrelay.models._anthropic import AnthropicChatModel
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.tools import tool

MODEL = "claude-opus-5"
CHANNELS = ("rewrite", "proxy", "native")


@tool(name="refund.retry")
def retry_refund(refund_id: str) -> str:
    """Retry a failed refund payment.

    Args:
        refund_id: The refund, such as RF-1.
    """
    return f"{refund_id} retried"


@tool(name="refund.status")
def refund_status(refund_id: str) -> str:
    """Show the payment status of a refund.

    Args:
        refund_id: The refund, such as RF-1.
    """
    return f"{refund_id}: failed, card expired"


@tool(name="weather.now")
def weather(city: str) -> str:
    """Current weather of a city.

    Args:
        city: The city.
    """
    return "sunny"


class _Messages:
    def __init__(self, replies: list[dict[str, Any]], bodies: list[dict[str, Any]]) -> None:
        self.replies = replies
        self.bodies = bodies

    async def create(self, **body: Any) -> dict[str, Any]:
        self.bodies.append(json.loads(json.dumps(body)))
        return self.replies.pop(0)


class FakeAnthropic:
    """What the adapter uses of ``anthropic.AsyncAnthropic``: ``messages`` and ``beta``."""

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.messages = _Messages(replies, self.bodies)
        self.beta = SimpleNamespace(messages=self.messages)


def _reply(number: int, *content: dict[str, Any]) -> dict[str, Any]:
    calls = any(block["type"] == "tool_use" for block in content)
    return {
        "id": f"msg_{number:02d}",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": list(content),
        "stop_reason": "tool_use" if calls else "end_turn",
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def _use(number: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{number:02d}", "name": name, "input": arguments}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _call(channel: str, number: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A found tool's call as the model makes it on ``channel``."""
    if channel == "proxy":
        return _use(number, "call_tool", {"name": name, "arguments": arguments})
    return _use(number, name.replace(".", "__"), arguments)


def script(channel: str) -> list[dict[str, Any]]:
    """The model's six answers on ``channel``."""
    return [
        _reply(1, _use(1, "tool_search", {"queries": ["refund"], "max_results": 2})),
        _reply(2, _call(channel, 2, "refund.status", {"refund_id": "RF-1"})),
        _reply(3, _text("RF-1 failed: the card expired.")),
        _reply(4, _use(4, "tool_search", {"queries": ["retry a failed refund"], "max_results": 1})),
        _reply(5, _call(channel, 5, "refund.retry", {"refund_id": "RF-1"})),
        _reply(6, _text("RF-1 is retried.")),
    ]


async def run(channel: str) -> list[dict[str, Any]]:
    """The request bodies of the two turns on ``channel``, in order."""
    fake = FakeAnthropic(script(channel))
    model = AnthropicChatModel(MODEL, client=fake)
    search = ToolSearchAdvisor(
        [retry_refund, refund_status, weather],
        index=BM25ToolIndex(),
        channel=channel,
        **SEARCH_ONLY,
    )
    memory = MessageChatMemoryAdvisor(MessageWindowChatMemory(InMemoryChatMemoryRepository()))
    client = ChatClient(model, system="You help with refunds.", advisors=[memory, search])
    for text in ("Why did refund RF-1 fail?", "Retry it."):
        await client.prompt(text).conversation("c1").acall()
    assert not fake.messages.replies, "the script was not used up"
    return fake.bodies
