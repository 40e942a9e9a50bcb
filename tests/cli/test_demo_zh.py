"""``toolrelay demo --lang zh``: the seeds' refund triage in Chinese, through the real pipeline."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from toolrelay.cli import _demo as demo
from toolrelay.cli._demo_language import CHINESE_DEMO, ENGLISH_DEMO, parse_demo_language
from toolrelay.messages import (
    ChatResponse,
    SystemMessage,
    UserMessage,
)
from toolrelay.models._base import ChatModel
from toolrelay.prompt import Prompt
from toolrelay.toolsearch._texts import CALL_TOOL_NAME, CHINESE, ENGLISH, TOOL_SEARCH_NAME

from .conftest import Invoke
from .test_demo import hide_from_search

TASK_ZH = "找出昨天退款失败的订单，重试可以恢复的记录，再把仍然失败的订单创建为工单并通知负责人。"
QUERIES = list(CHINESE_DEMO.triage.queries)


class RecordingModel:
    """Passes requests on to the replay and keeps each prompt."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner
        self.supports_tools = True
        self.name = "replay"
        self.prompts: list[Prompt] = []

    async def call(self, prompt: Prompt) -> ChatResponse:
        self.prompts.append(prompt)
        return await self.inner.call(prompt)

    async def stream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        yield await self.call(prompt)


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> list[RecordingModel]:
    """The demo's models, wrapped so that every prompt they are sent is kept."""
    models: list[RecordingModel] = []
    make_model = demo._model

    def recording(*args: Any, **kwargs: Any) -> ChatModel:
        model = RecordingModel(make_model(*args, **kwargs))
        models.append(model)
        return model

    monkeypatch.setattr(demo, "_model", recording)
    return models


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def test_the_chinese_demo_shows_chinese_texts_and_sends_chinese_search_texts(
    cli: Invoke, recorded: list[RecordingModel]
) -> None:
    result = cli("demo", "--lang", "zh", "--index", "bm25")
    out = result.stdout
    assert f"toolrelay demo: {TASK_ZH}" in out
    assert "78 tools from" in out
    assert "(texts in zh)" in out
    # The failed orders' finder was revealed before the first model call; every other need is
    # searched for in one call, and a miss asked again for more hits.
    assert "先搜索工具：重试可以恢复的退款；" in out
    assert 'tool_search({"queries": ["重试失败的退款", ' in out  # unescaped, as models write
    assert "Tokens per model request (cl100k_base" in out
    # What the model was sent (the proxy channel, auto's for a model declaring none): the
    # Chinese system text with the Chinese suffix, and the search tool with the Chinese
    # description and parameter descriptions.
    [model] = recorded
    first = model.prompts[0]
    assert first.messages[0] == SystemMessage(
        text=f"{CHINESE_DEMO.system}\n\n{CHINESE.proxy_system_suffix}"
    )
    # The conversation's first reveal pinned its hit to the tool list, before the pair.
    assert first.messages[-1] == UserMessage(text=TASK_ZH)
    revealed, search_tool, call = first.options.tools
    assert revealed.definition.name == "refund.find_failed_orders"
    assert call.definition.name == CALL_TOOL_NAME
    assert search_tool.definition.description == CHINESE.proxy_description
    properties = search_tool.definition.input_schema["properties"]
    assert {n: p["description"] for n, p in properties.items()} == dict(CHINESE.parameters)
    assert result.exit_code == 0, result.output
    assert "All 4 required tools were found by search and called in order." in out
    # The hits show the Chinese summaries (the first line of each description).
    assert "只读查询指定日期（默认昨天）退款失败的订单。" in out
    assert "搜索返回了 refund.retry_failed_order，" in out
    assert "现在调用 3 次。" in out
    assert "昨天有 5 笔退款失败；3 笔重试后成功（RF-2001、RF-2005、RF-2006）" in out
    assert "已通知负责人（MSG-" in out
    assert result.stderr == ""


def test_json_of_the_chinese_demo(cli: Invoke) -> None:
    result = cli("demo", "--lang", "zh", "--index", "bm25", "--json")
    data = json.loads(result.stdout)
    assert data["language"] == "zh"
    assert data["task"] == TASK_ZH
    assert data["catalog"]["tools"] == 78
    searches = [
        s
        for r in data["rounds"]
        for x in r["results"]
        if x["tool"] == "tool_search"
        for s in x["searches"]
    ]
    queries = [s["query"] for s in searches]
    # The first need was revealed; BM25 put the retry tool third, so that search is asked
    # again for more hits.
    assert queries == [*QUERIES[1:], QUERIES[1]]
    assert result.exit_code == 0
    assert data["completed"] is True
    assert data["answer"].startswith("昨天有 5 笔退款失败")
    results = [x for r in data["rounds"] for x in r["results"]]
    incidents = [x for x in results if x["tool"] == "ticket.create_incident"]
    assert [x["arguments"]["title"] for x in incidents] == [
        "退款 RF-2002 失败：account_closed",
        "退款 RF-2004 失败：insufficient_merchant_balance",
    ]
    [notify] = [x for x in results if x["tool"] == "notify.send_owner_message"]
    assert notify["arguments"]["subject"] == "退款排查"


def test_a_miss_in_chinese_is_shown_with_the_chinese_answer_and_the_replay_stops(
    cli: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    hide_from_search(monkeypatch, "refund.find_failed_orders")
    result = cli("demo", "--lang", "zh", "--index", "bm25")
    assert result.exit_code == 1
    out = result.stdout
    assert "搜索“昨天退款失败的订单”没有返回 refund.find_failed_orders" in out
    assert "以便显示工具闸门的答复；回放随后停止。" in out
    refused = "✗ unknown_tool: 工具 'refund__find_failed_orders' 不可用。请先用 tool_search 搜索它"
    assert refused in out
    assert "已停止：搜索没有找到 refund.find_failed_orders，调用被拒绝：" in out
    assert "refund.retry_failed_order(" not in out
    assert one_line(result.stderr) == (
        "error: the task was not completed; required tools not found or not called: "
        "refund.find_failed_orders, refund.retry_failed_order, ticket.create_incident, "
        "notify.send_owner_message"
    )


def test_an_unknown_language_is_a_one_line_usage_error(cli: Invoke) -> None:
    result = cli("demo", "--lang", "xx", "--index", "bm25")
    assert result.exit_code == 2
    assert one_line(result.stderr) == (
        "error: Invalid value for '--lang': unknown language 'xx'; use en or zh "
        "(see 'toolrelay demo --help')"
    )
    assert result.stdout == ""


def test_language_values() -> None:
    assert parse_demo_language(" ZH ") == "zh"
    assert parse_demo_language("en") == "en"


def test_english_is_the_default_and_sends_english_search_texts(
    cli: Invoke, recorded: list[RecordingModel]
) -> None:
    result = cli("demo", "--index", "bm25", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["language"] == "en"
    assert data["answer"].startswith("5 refunds failed yesterday")
    [model] = recorded
    first = model.prompts[0]
    assert first.messages[0] == SystemMessage(
        text=f"{ENGLISH_DEMO.system}\n\n{ENGLISH.proxy_system_suffix}"
    )
    [search_tool] = [t for t in first.options.tools if t.definition.name == TOOL_SEARCH_NAME]
    assert search_tool.definition.description == ENGLISH.proxy_description


def test_a_catalog_without_the_language_is_named(cli: Invoke, tmp_path: Path) -> None:
    package = tmp_path / "desk"
    package.mkdir()
    (package / "__init__.py").write_text(
        "def build_catalog(lang='en'):\n    return []\nTASK = 'Do it.'\nREQUIRED_TOOLS = ()\n",
        encoding="utf-8",
    )
    result = cli("demo", "--lang", "zh", "-c", str(package), "-i", "bm25")
    assert result.exit_code == 1
    assert one_line(result.stderr) == (
        f"error: {package}: the demo catalog has no task in 'zh' (TASKS['zh'])"
    )
