"""Task evaluation over a provider adapter: AnthropicChatModel against a scripted Messages API.

The adapter, its wire format and its reported usage are real; only the HTTP server is
scripted. It plays a model that searches when the retry tool is not shown, calls it, and
answers.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from examples.refund_desk import RefundDeskBackend, build_catalog

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

pytest.importorskip(
    "anthropic", reason="needs the anthropic extra: pip install 'toolrelay[anthropic]'"
)

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
            prompt="Retry refund RF-2001.",
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
                "input": {"query": "retry failed refund"},
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
        "usage": {"input_tokens": len(request.content) // 4, "output_tokens": 7},
    }
    return httpx.Response(200, json=reply)


async def test_an_evaluation_over_the_anthropic_adapter_reports_its_usage() -> None:
    server = MockServer(messages_api)
    model = AnthropicChatModel(
        "claude-test", api_key="sk-ant-test", http_client=server.http_client(), max_retries=0
    )
    modes = [Mode.all_tools(), Mode.search(BM25ToolIndex)]
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
