"""Two turns of tool search over the Responses adapter on the native channel, and the bodies.

A :class:`~toolrelay.client.ChatClient` with memory (outside the loop, its default place) and
a :class:`~toolrelay.client.ToolSearchAdvisor` on the native channel over three refund tools
talks to ``gpt-5`` through a fake SDK client that records each request body and answers with
the next scripted response, as ``tests/models/_anthropic_channels.py`` does for Anthropic:

1. turn one: the model searches for "refund" (two hits), calls the status tool (which
   retires the other hit, passed over), and answers;
2. turn two, after memory replays turn one: it searches for the retry tool, calls it, and
   answers.

No network: the bodies are exactly what the adapter passes to the SDK.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.search_only import SEARCH_ONLY
from toolrelay.client import ChatClient, MessageChatMemoryAdvisor, ToolSearchAdvisor
from toolrelay.memory import InMemoryChatMemoryRepository, MessageWindowChatMemory
from toolrelay.models._openai_responses import OpenAIResponsesModel
from toolrelay.search._bm25 import BM25ToolIndex

from ._anthropic_channels import refund_status, retry_refund, weather

MODEL = "gpt-5"


class _Responses:
    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.replies = replies
        self.bodies: list[dict[str, Any]] = []

    async def create(self, **body: Any) -> dict[str, Any]:
        self.bodies.append(json.loads(json.dumps(body)))
        return self.replies.pop(0)


class FakeOpenAI:
    """What the adapter uses of ``openai.AsyncOpenAI``: ``responses`` and ``base_url``."""

    base_url = "https://api.openai.com/v1/"

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.responses = _Responses(replies)


def _reply(number: int, *output: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"resp_{number:02d}",
        "object": "response",
        "model": MODEL,
        "status": "completed",
        "output": list(output),
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def _call(number: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{number:02d}",
        "call_id": f"call_{number:02d}",
        "name": name,
        "arguments": json.dumps(arguments),
    }


def _text(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text}],
    }


def script() -> list[dict[str, Any]]:
    """The model's six answers; found tools are called by their provider-safe names."""
    return [
        _reply(1, _call(1, "tool_search", {"queries": ["refund"], "max_results": 2})),
        _reply(2, _call(2, "refund__status", {"refund_id": "RF-1"})),
        _reply(3, _text("RF-1 failed: the card expired.")),
        _reply(
            4, _call(4, "tool_search", {"queries": ["retry a failed refund"], "max_results": 1})
        ),
        _reply(5, _call(5, "refund__retry", {"refund_id": "RF-1"})),
        _reply(6, _text("RF-1 is retried.")),
    ]


async def run(channel: str = "native") -> list[dict[str, Any]]:
    """The request bodies of the two turns on ``channel``, in order."""
    fake = FakeOpenAI(script())
    model = OpenAIResponsesModel(MODEL, client=fake)
    search = ToolSearchAdvisor(
        [retry_refund, refund_status, weather],
        index=BM25ToolIndex(),
        channel=channel,
        **SEARCH_ONLY,
    )
    memory = MessageChatMemoryAdvisor(MessageWindowChatMemory(InMemoryChatMemoryRepository()))
    client = ChatClient(model, system="You help with refunds.", advisors=[memory, search])
    answers = []
    for text in ("Why did refund RF-1 fail?", "Retry it."):
        answers.append((await client.prompt(text).conversation("c1").acall()).content())
    assert answers == ["RF-1 failed: the card expired.", "RF-1 is retried."]
    assert not fake.responses.replies, "the script was not used up"
    return fake.responses.bodies


def native_bodies() -> dict[str, dict[str, Any]]:
    """The native channel's bodies, by name (``native channel, request N``)."""
    bodies = asyncio.run(run("native"))
    return {f"native channel, request {n}": body for n, body in enumerate(bodies, 1)}
