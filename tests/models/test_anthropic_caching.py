"""Anthropic prompt caching: where the adapter puts its breakpoints, and why.

Tools and system text end the stable prefix (``cache_prompt``); the rolling breakpoints of
``cache_history`` sit on the last message and on the user turn before the last assistant
turn, where the previous call of the loop put its own: each call reads the previous call's
prefix, however many blocks the newest round added (the API looks back only about 20 blocks
from a breakpoint). Never more than the API's four a request.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from tests.extras import needs_extra
from toolrelay.client import ChatClient
from toolrelay.models._anthropic_wire import (
    MAX_BREAKPOINTS,
    count_breakpoints,
    mark_history,
)

from . import _anthropic_loop
from ._wire import MockServer, json_reply

pytest.importorskip("anthropic", reason=needs_extra("anthropic"))

EPHEMERAL = {"type": "ephemeral"}


def marked(messages: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """(message, block) of every breakpoint in ``messages``."""
    return [
        (m, b)
        for m, message in enumerate(messages)
        for b, block in enumerate(message["content"])
        if "cache_control" in block
    ]


def unmarked(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` without their breakpoints (the content the cache compares)."""

    def plain(block: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in block.items() if k != "cache_control"}

    return [{**m, "content": [plain(b) for b in m["content"]]} for m in messages]


def assert_each_call_reads_the_previous_one(bodies: list[dict[str, Any]]) -> None:
    for before, after in itertools.pairwise(bodies):
        previous, current = before["messages"], after["messages"]
        # The earlier call's messages open the later call's, block for block...
        assert unmarked(current)[: len(previous)] == unmarked(previous)
        # ...and the later call has a breakpoint exactly where the earlier one's newest was,
        # so it reads that cache entry, whatever the distance to its own newest breakpoint.
        newest = marked(previous)[-1]
        assert newest in marked(current)
        assert marked(current)[-1][0] == len(current) - 1
    for body in bodies:
        assert count_breakpoints(body) <= MAX_BREAKPOINTS


def test_the_search_call_answer_loop_reads_each_previous_prefix() -> None:
    bodies = _anthropic_loop.bodies()
    assert_each_call_reads_the_previous_one(bodies)
    # With tools and system cached too, the loop uses the four breakpoints the API allows.
    assert [count_breakpoints(b) for b in bodies] == [3, 4, 4]
    assert [marked(b["messages"]) for b in bodies] == [[(0, 0)], [(0, 0), (2, 0)], [(2, 0), (4, 0)]]


def test_without_cache_history_only_tools_and_system_are_marked() -> None:
    bodies = _anthropic_loop.bodies(cache_history=False)
    assert [count_breakpoints(b) for b in bodies] == [2, 2, 2]
    assert all(marked(b["messages"]) == [] for b in bodies)
    # And with neither, nothing is.
    plain = _anthropic_loop.bodies(cache_history=False, cache_prompt=False)
    assert [count_breakpoints(b) for b in plain] == [0, 0, 0]


def test_history_alone_uses_two_breakpoints() -> None:
    bodies = _anthropic_loop.bodies(cache_prompt=False)
    assert [count_breakpoints(b) for b in bodies] == [1, 2, 2]
    assert_each_call_reads_the_previous_one(bodies)


async def test_a_round_of_many_parallel_calls_still_reads_the_previous_call() -> None:
    # Twelve calls and their twelve results: 24 blocks between the two calls' newest
    # breakpoints, beyond the API's lookback. The second breakpoint bridges them.
    calls = [
        {"type": "tool_use", "id": f"toolu_{i:02}", "name": "refund__retry", "input": {}}
        for i in range(12)
    ]
    reply = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 4},
    }
    server = MockServer(
        json_reply(reply | {"content": calls}),
        json_reply(reply | {"content": [{"type": "text", "text": "done"}]}),
    )
    model = _anthropic_loop.model(http_client=server.http_client(), max_retries=0)
    client = ChatClient.builder(model).default_tools(_anthropic_loop.retry_refund).build()
    await client.prompt("Retry them all").acall()

    first, second = server.bodies
    assert marked(second["messages"]) == [(0, 0), (2, 11)]
    assert len(second["messages"][1]["content"]) + len(second["messages"][2]["content"]) == 24
    assert_each_call_reads_the_previous_one([first, second])
    await model.aclose()


async def test_request_body_is_what_crosses_the_wire() -> None:
    reply = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 4},
    }
    server = MockServer(json_reply(reply))
    model = _anthropic_loop.model(http_client=server.http_client(), max_retries=0)
    for request in _anthropic_loop.PROMPTS:
        await model.call(request)
    assert server.bodies == json.loads(json.dumps(_anthropic_loop.bodies()))
    await model.aclose()


def test_a_breakpoint_goes_on_the_last_block_that_can_carry_one() -> None:
    thinking = {"type": "thinking", "thinking": "hm", "signature": "sig"}
    redacted = {"type": "redacted_thinking", "data": "xyz"}
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "q"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "a"}, thinking, redacted]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t", "content": "x"},
                {"type": "tool_result", "tool_use_id": "u", "content": ""},
                {"type": "text", "text": ""},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "b"}, redacted, thinking]},
    ]
    wire = mark_history(messages, available=4)
    # The API refuses cache_control on thinking blocks, and on a block without content.
    assert marked(wire) == [(2, 0), (3, 0)]
    assert wire[3]["content"][0]["cache_control"] == EPHEMERAL
    assert messages[3]["content"][0] == {"type": "text", "text": "b"}  # the input is kept
    # A message with no block that can carry one gets none.
    only_thinking = [*messages[:3], {"role": "assistant", "content": [thinking]}]
    assert marked(mark_history(only_thinking, available=4)) == [(2, 0)]


def test_breakpoints_stay_within_what_is_left_of_the_limit() -> None:
    messages = [
        {"role": m, "content": [{"type": "text", "text": t}]}
        for m, t in (("user", "q"), ("assistant", "a"), ("user", "r"))
    ]
    assert marked(mark_history(messages, available=2)) == [(0, 0), (2, 0)]
    assert marked(mark_history(messages, available=1)) == [(2, 0)]  # the newest first
    assert marked(mark_history(messages, available=0)) == []
    assert marked(mark_history(messages[:1], available=2)) == [(0, 0)]
    assert mark_history([], available=2) == []


def test_only_breakpoints_count_towards_the_limit() -> None:
    # A tool parameter named cache_control is part of a schema, not a breakpoint.
    body = {
        "tools": [{"name": "t", "input_schema": {"properties": {"cache_control": {}}}}],
        "system": [{"type": "text", "text": "s", "cache_control": EPHEMERAL}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t",
                        "content": [{"type": "text", "text": "x", "cache_control": EPHEMERAL}],
                    }
                ],
            }
        ],
    }
    assert count_breakpoints(body) == 2
