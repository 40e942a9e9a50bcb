"""``toolrelay chat --lang``: the language of the tool search texts the model reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolrelay.cli._chat import parse_search_language
from toolrelay.messages import SystemMessage
from toolrelay.testing import ScriptedModel, tool_call_response
from toolrelay.toolsearch._texts import CHINESE, ENGLISH, SearchTexts, unavailable_text

from .test_chat import chat_cli, use_model, weather_module  # noqa: F401 - a fixture

CHINESE_MODULE = '''
from toolrelay.tools import tool


@tool(name="查询天气")
def query_weather(city: str) -> dict:
    """查询城市当前的天气：气温和天气状况，不提供天气预报。

    Args:
        city: 城市名称。
    """
    return {"city": city, "sky": "晴", "celsius": 21}


@tool(name="换算货币")
def convert_currency(amount: float, source: str, target: str) -> float:
    """按今天的汇率把一笔金额从一种货币换算成另一种货币。

    Args:
        amount: 要换算的金额。
        source: 金额所用货币的 ISO 代码。
        target: 想要的货币的 ISO 代码。
    """
    return amount


@tool(name="预订餐桌")
def book_table(restaurant: str, guests: int, time: str) -> str:
    """在餐厅为若干位客人预订餐桌，并返回预订编号。

    Args:
        restaurant: 餐厅名称。
        guests: 用餐人数。
        time: 用餐时间，例如“今晚七点”。
    """
    return "已预订"
'''


@pytest.fixture
def chinese_module(tmp_path: Path) -> Path:
    path = tmp_path / "chinese_tools.py"
    path.write_text(CHINESE_MODULE, encoding="utf-8")
    return path


def first_request_texts(
    monkeypatch: pytest.MonkeyPatch, tools: Path, *options: str
) -> tuple[str, str]:
    """The ``tool_search`` description and the system text of the first request."""
    model = ScriptedModel(["Done."])
    use_model(monkeypatch, model)
    result = chat_cli(
        "--model", "openai:x", "--tools", str(tools), "-i", "bm25", *options, stdin="hi\n"
    )
    assert result.exit_code == 0, result.output
    prompt = model.prompts[0]
    [search] = [t.definition for t in prompt.options.tools if t.definition.name == "tool_search"]
    system = next(m.text for m in prompt.messages if isinstance(m, SystemMessage))
    return search.description, system


def assert_texts(texts: tuple[str, str], expected: SearchTexts) -> None:
    # A model that declares no channel: the proxy channel's texts, by default.
    description, system = texts
    assert description == expected.proxy_description
    assert expected.proxy_system_suffix is not None
    assert system.endswith(expected.proxy_system_suffix)


@pytest.mark.parametrize(
    ("options", "expected"),
    [((), ENGLISH), (("--lang", "auto"), ENGLISH), (("--lang", "zh"), CHINESE)],
)
def test_english_tools(
    monkeypatch: pytest.MonkeyPatch,
    weather_module: Path,  # noqa: F811 - the fixture
    options: tuple[str, ...],
    expected: SearchTexts,
) -> None:
    assert_texts(first_request_texts(monkeypatch, weather_module, *options), expected)


@pytest.mark.parametrize(
    ("options", "expected"),
    [((), CHINESE), (("--lang", "EN"), ENGLISH), (("--lang", "zh"), CHINESE)],
)
def test_chinese_tools(
    monkeypatch: pytest.MonkeyPatch,
    chinese_module: Path,
    options: tuple[str, ...],
    expected: SearchTexts,
) -> None:
    assert_texts(first_request_texts(monkeypatch, chinese_module, *options), expected)


def test_the_unavailable_answer_is_in_the_chosen_language(
    monkeypatch: pytest.MonkeyPatch,
    weather_module: Path,  # noqa: F811 - the fixture
) -> None:
    model = ScriptedModel([tool_call_response(("get_weather", {"city": "Paris"})), "Sorry."])
    use_model(monkeypatch, model)
    result = chat_cli(
        "--model",
        "openai:x",
        "--tools",
        str(weather_module),
        "-i",
        "bm25",
        "--lang",
        "zh",
        stdin="Is it sunny in Paris?\n",  # the reveal misses: get_weather stays hidden
    )
    assert result.exit_code == 0, result.output
    assert unavailable_text(CHINESE.unavailable_message, "get_weather") in result.stdout


def test_an_unknown_language_is_a_usage_error() -> None:
    result = chat_cli("--model", "replay", "--lang", "fr", stdin="")
    assert result.exit_code == 2
    assert "unknown language 'fr'; use auto, en or zh" in result.stderr
    assert parse_search_language(" ZH ") == "zh"
