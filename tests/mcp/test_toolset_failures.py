"""A server that is too slow or dies mid-call: error responses, nothing hangs, then recovery."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.extras import needs_extra

pytest.importorskip("mcp_types", reason=needs_extra("mcp"))
from tests.mcp.mcp_helpers import demo_stdio
from toolrelay.exceptions import McpServerError
from toolrelay.execution import ToolCallingManager, ToolCallStatus
from toolrelay.mcp import McpToolset
from toolrelay.messages import UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import tool_call_response


@pytest.fixture(scope="module")
def fragile() -> Iterator[McpToolset]:
    with McpToolset(demo_stdio("fragile", timeout=1.0), reconnect_delay=0.0) as toolset:
        yield toolset


async def test_a_slow_call_times_out_as_an_error_response(fragile: McpToolset) -> None:
    slow = fragile.catalog.get("fragile.slow")
    assert slow is not None
    started = time.monotonic()
    with pytest.raises(McpServerError, match="did not answer the call of 'slow' within 1 s"):
        await slow.call('{"seconds": 30}')
    assert time.monotonic() - started < 10
    # The execution layer cancels at the same deadline (the tool's metadata timeout).
    prompt = Prompt(messages=(UserMessage(text="go"),), options=ChatOptions(tools=(slow,)))
    result = await ToolCallingManager().execute_tool_calls(
        prompt, tool_call_response(("fragile__slow", {"seconds": 30}))
    )
    assert result.outcomes[0].response.is_error
    assert result.outcomes[0].status in (ToolCallStatus.TIMEOUT, ToolCallStatus.ERROR)


async def test_a_server_dying_mid_call_is_an_error_and_it_comes_back(fragile: McpToolset) -> None:
    tools = tuple(fragile.tools)
    prompt = Prompt(messages=(UserMessage(text="go"),), options=ChatOptions(tools=tools))
    started = time.monotonic()
    result = await ToolCallingManager().execute_tool_calls(
        prompt, tool_call_response(("fragile__die", {}))
    )
    assert time.monotonic() - started < 10  # answered, not hung
    (outcome,) = result.outcomes
    assert outcome.status is ToolCallStatus.ERROR
    assert outcome.response.is_error
    assert outcome.response.data == (
        "MCP server 'fragile' closed the connection during the call of 'die'"
    )
    assert isinstance(outcome.exception, McpServerError)
    # The next call starts the server again; the call that was running is not repeated.
    add = fragile.catalog.get("fragile.add")
    assert add is not None
    assert await add.call('{"a": 1, "b": 2}') == "3"
