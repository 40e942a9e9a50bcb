"""Task evaluation over provider adapters against scripted APIs (Anthropic Messages, OpenAI Chat).

The adapter, its wire format and its reported usage are real; only the HTTP server is
scripted. It plays a model that searches when the retry tool is not shown, calls it, and
answers.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from examples.refund_desk import RefundDeskBackend, build_catalog

from tests.extras import needs_extra
from tests.models._wire import MockServer, httpx
from toolrelay.evaluation import (
    EvaluationReport,
    Mode,
    StateCheck,
    Task,
    TaskEnvironment,
    TaskSuite,
)
from toolrelay.evaluation._runner import TaskRunner
from toolrelay.search import BM25ToolIndex

pytest.importorskip("anthropic", reason=needs_extra("anthropic"))

from toolrelay.models import AnthropicChatModel

RETRY = "refund__retry_failed_order"


def desk() -> TaskEnvironment:
    backend = RefundDeskBackend.seeded()
    return TaskEnvironment(tools=build_catalog(backend), state=backend)


SUITE = TaskSuite(
    name="desk",
    environments={"desk": desk},
    tasks=(
        Task(
            id="retry",
            # Worded so the turn's reveal misses the retry tool: the model searches for it.
            prompt="Please handle RF-2001.",
            environment="desk",
            tool_context={"tenant_id": "acme", "user_id": "U-ZHANG"},
            checks=(StateCheck(function=lambda b: b.refund("RF-2001").status == "succeeded"),),
        ),
    ),
)


def messages_api(request: httpx.Request) -> httpx.Response:
    body = json.loads(request.content)
    tools = [t["name"] for t in body.get("tools", [])]
    said = [
        block
        for message in body["messages"]
        if message["role"] == "assistant" and isinstance(message["content"], list)
        for block in message["content"]
    ]
    if any(b.get("type") == "tool_use" and b["name"] == RETRY for b in said):
        content: list[dict[str, Any]] = [{"type": "text", "text": "RF-2001 was retried."}]
        stop = "end_turn"
    elif RETRY in tools:
        content = [
            {"type": "tool_use", "id": "toolu_2", "name": RETRY, "input": {"refund_id": "RF-2001"}}
        ]
        stop = "tool_use"
    else:
        content = [
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "tool_search",
                "input": {"queries": ["retry failed refund"]},
            }
        ]
        stop = "tool_use"
    reply = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        # Every request after the first reads 40 tokens from the cache and writes 10.
        "usage": {
            "input_tokens": len(request.content) // 4 - (50 if said else 0),
            "cache_read_input_tokens": 40 if said else 0,
            "cache_creation_input_tokens": 10 if said else 0,
            "output_tokens": 7,
        },
    }
    return httpx.Response(200, json=reply)


async def test_an_evaluation_over_the_anthropic_adapter_reports_its_usage() -> None:
    server = MockServer(messages_api)
    model = AnthropicChatModel(
        "claude-test", api_key="sk-ant-test", http_client=server.http_client(), max_retries=0
    )
    # The fake API reads the found tool from the tool list: the rewrite channel.
    modes = [Mode.all_tools(), Mode.search(BM25ToolIndex, name="search:bm25", channel="rewrite")]
    runner = TaskRunner(SUITE, model, modes=modes)
    results, unrecorded = await runner.run()
    assert unrecorded == []
    by_mode = {r.mode: r for r in results}
    assert [by_mode[m.name].success for m in modes] == [True, True]
    assert (by_mode["all-tools"].requests, by_mode["search:bm25"].requests) == (2, 3)
    sizes = [len(r.content) // 4 for r in server.requests]
    assert by_mode["all-tools"].prompt_tokens + by_mode["search:bm25"].prompt_tokens == sum(sizes)
    assert by_mode["all-tools"].completion_tokens == 14
    report = EvaluationReport.of(
        SUITE, results, modes=[m.name for m in modes], repeats=1, model="c"
    )
    assert report.token_source == "reported"
    assert report.comparisons[0].tokens_change is not None
    assert report.comparisons[0].tokens_change < -0.5  # 78 tools in every request, or a few


async def test_cache_reads_and_writes_the_anthropic_api_reports_are_summed_per_run() -> None:
    server = MockServer(messages_api)
    model = AnthropicChatModel(
        "claude-test", api_key="sk-ant-test", http_client=server.http_client(), max_retries=0
    )
    # The fake API reads the found tool from the tool list: the rewrite channel.
    modes = [Mode.all_tools(), Mode.search(BM25ToolIndex, name="search:bm25", channel="rewrite")]
    results, _ = await TaskRunner(SUITE, model, modes=modes).run()
    by_mode = {r.mode: r for r in results}
    # Two requests (one after the first), then three (two after the first).
    assert (by_mode["all-tools"].cache_read_tokens, by_mode["all-tools"].cache_write_tokens) == (
        40,
        10,
    )
    assert (
        by_mode["search:bm25"].cache_read_tokens,
        by_mode["search:bm25"].cache_write_tokens,
    ) == (
        80,
        20,
    )
    line = by_mode["search:bm25"].to_json()
    assert line["tokens"]["cache"] == {"read": 80, "write": 20}
    again = type(by_mode["search:bm25"]).from_json(line)
    assert (again.cache_read_tokens, again.cache_write_tokens) == (80, 20)
    report = EvaluationReport.of(
        SUITE, results, modes=[m.name for m in modes], repeats=1, model="c"
    )
    summary = {s.mode: s for s in report.summaries}["search:bm25"]
    assert (summary.cache_read_tokens, summary.cache_write_tokens) == (80.0, 20.0)
    assert summary.to_json()["tokens_per_run"]["cache_read"] == 80.0


def chat_completions_api(request: httpx.Request) -> httpx.Response:
    body = json.loads(request.content)
    answered = any(m["role"] == "tool" for m in body["messages"])
    message: dict[str, Any] = (
        {"role": "assistant", "content": "RF-2001 was retried."}
        if answered
        else {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": RETRY, "arguments": '{"refund_id": "RF-2001"}'},
                }
            ],
        }
    )
    reply = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-test",
        "choices": [
            {"index": 0, "message": message, "finish_reason": "stop" if answered else "tool_calls"}
        ],
        "usage": {
            "prompt_tokens": 2000,
            "completion_tokens": 7,
            "total_tokens": 2007,
            "prompt_tokens_details": {"cached_tokens": 1920 if answered else 0},
        },
    }
    return httpx.Response(200, json=reply)


async def test_cached_tokens_the_openai_api_reports_are_the_runs_cache_reads() -> None:
    pytest.importorskip("openai", reason=needs_extra("openai"))
    from toolrelay.models import OpenAIChatModel

    server = MockServer(chat_completions_api)
    model = OpenAIChatModel(
        "gpt-test", api_key="sk-test", http_client=server.http_client(), max_retries=0
    )
    [result], _ = await TaskRunner(SUITE, model, modes=[Mode.all_tools()]).run()
    assert result.success
    assert (result.cache_read_tokens, result.cache_write_tokens) == (1920, None)
    assert result.to_json()["tokens"]["cache"] == {"read": 1920, "write": None}
