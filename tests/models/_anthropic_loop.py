"""A fixed three-call tool loop (search, call, answer) and the request bodies the adapter builds.

The model searches for a tool, calls the tool it found, then answers: three model calls, each
request the history so far. The messages are fixed, so the bodies are too (no network: the
adapter's :meth:`~toolrelay.models.AnthropicChatModel.request_body` builds them).
"""

from __future__ import annotations

import json
from typing import Any

from toolrelay.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.models._anthropic import AnthropicChatModel
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.tools import FunctionTool, tool


@tool(name="tool_search")
def tool_search(query: str) -> str:
    """Find the tools for a task.

    Args:
        query: What the tool should do.
    """
    return "[]"


@tool(name="refund.retry")
def retry_refund(refund_id: str) -> str:
    """Retry one failed refund.

    Args:
        refund_id: The refund's id, such as RF-1.
    """
    return f"{refund_id} retried"


SEARCH = FunctionTool.from_function(tool_search)
RETRY = FunctionTool.from_function(retry_refund)

_FOUND = json.dumps([{"name": "refund.retry", "description": "Retry one failed refund."}])

_START: tuple[Message, ...] = (
    SystemMessage(text="You triage failed refunds. Search for the tools you need."),
    UserMessage(text="Retry refund RF-1."),
)
_SEARCHED: tuple[Message, ...] = (
    AssistantMessage(
        tool_calls=(
            ToolCall(id="toolu_01", name="tool_search", arguments='{"queries": ["retry"]}'),
        )
    ),
    ToolResponseMessage(responses=(ToolResponse(id="toolu_01", name="tool_search", data=_FOUND),)),
)
_CALLED: tuple[Message, ...] = (
    AssistantMessage(
        text="Retrying RF-1.",
        tool_calls=(
            ToolCall(id="toolu_02", name="refund.retry", arguments='{"refund_id": "RF-1"}'),
        ),
    ),
    ToolResponseMessage(
        responses=(ToolResponse(id="toolu_02", name="refund.retry", data="RF-1 retried"),)
    ),
)

PROMPTS = (
    Prompt(messages=_START, options=ChatOptions(tools=(SEARCH,))),
    Prompt(messages=_START + _SEARCHED, options=ChatOptions(tools=(SEARCH, RETRY))),
    Prompt(messages=_START + _SEARCHED + _CALLED, options=ChatOptions(tools=(SEARCH, RETRY))),
)
"""The three requests of the loop: search, call, answer."""


def model(**kwargs: Any) -> AnthropicChatModel:
    """The adapter as the loop uses it: tools and system cached, history cached (default)."""
    kwargs.setdefault("cache_prompt", True)
    return AnthropicChatModel("claude-sonnet-4-5", api_key="sk-ant-test", **kwargs)


def bodies(**kwargs: Any) -> list[dict[str, Any]]:
    """The request body of each call of the loop."""
    adapter = model(**kwargs)
    return [adapter.request_body(p) for p in PROMPTS]
