"""The texts tool search shows the model: per language, chosen from the catalog, overridable."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.search_only import SEARCH_ONLY
from toolrelay.client import ChatClient, ToolSearchAdvisor
from toolrelay.exceptions import ConfigurationError, ToolArgumentError, ToolDefinitionError
from toolrelay.execution import ApprovalInterceptor
from toolrelay.messages import AssistantMessage, SystemMessage, ToolResponseMessage
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.testing import ScriptedModel, tool_call_response
from toolrelay.tools import FunctionTool, Tool, ToolCatalog, ToolDefinition, provider_safe_name
from toolrelay.tools._language import cjk_share
from toolrelay.tools._schema import cached_function_schema
from toolrelay.toolsearch import TOOL_SEARCH_NAME, SearchOptions, ToolSearcher
from toolrelay.toolsearch._texts import CHINESE, ENGLISH, SearchTexts, SearchTextSelector

# examples/ is a directory of scripts, not an installed package: import it from the repo root.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from examples.refund_desk import build_catalog

SYSTEM = "You run the refund desk."


def make_tool(name: str, description: str) -> Tool:
    def run(order_id: str) -> str:
        return f"{name} ran for {order_id}"

    return FunctionTool.from_function(run, name=name, description=description)


ENGLISH_TOOLS = [
    make_tool("refund.find", "Find refunds that failed yesterday."),
    make_tool("refund.retry", "Retry a failed refund through its payment channel."),
]
CHINESE_TOOLS = [
    make_tool("refund.find", "查询昨天退款失败的订单。"),
    make_tool("refund.retry", "重新执行一笔失败的退款，把它再次发送到支付渠道。"),
]


def advisor(catalog: Any, **options: Any) -> ToolSearchAdvisor:
    options.setdefault("index", BM25ToolIndex())
    return ToolSearchAdvisor(catalog, **{"channel": "rewrite", **SEARCH_ONLY, **options})


async def first_prompt(search_advisor: ToolSearchAdvisor, *script: Any) -> ScriptedModel:
    model = ScriptedModel([*script, "done"])
    # The refund desk has tools that need approval (a person decides later; none is called)
    # and tools that need their context.
    client = (
        ChatClient.builder(model)
        .default_system(SYSTEM)
        .default_advisors(search_advisor)
        .guards(approval=ApprovalInterceptor())
        .default_tool_context({"tenant_id": "acme", "user_id": "U-ZHANG"})
    )
    await client.build().prompt("go").conversation("c1").acall()
    return model


def shown_search_tool(model: ScriptedModel, request: int = 0) -> ToolDefinition:
    definition = model.tool_definitions[request][0]
    assert definition.name == TOOL_SEARCH_NAME
    return definition


def parameter_texts(definition: ToolDefinition) -> dict[str, str]:
    properties = definition.input_schema["properties"]
    return {name: spec["description"] for name, spec in properties.items()}


def assert_shows(model: ScriptedModel, texts: SearchTexts) -> None:
    """Every request showed ``texts``: the search tool, its parameters, the system suffix."""
    for request, prompt in enumerate(model.prompts):
        definition = shown_search_tool(model, request)
        assert definition.description == texts.description
        assert parameter_texts(definition) == dict(texts.parameters)
        assert prompt.messages[0] == SystemMessage(text=f"{SYSTEM}\n\n{texts.system_suffix}")


# --- the texts ----------------------------------------------------------------------------


def test_english_texts_are_the_defaults_and_chinese_ones_are_chinese() -> None:
    english = [t.definition for t in ENGLISH_TOOLS]
    assert SearchOptions().language == "auto"
    assert SearchTextSelector().for_catalog(english) is ENGLISH
    assert SearchTextSelector("en").for_catalog(english) is ENGLISH
    assert SearchTextSelector("zh").for_catalog(english) is CHINESE
    assert ToolSearcher(index=BM25ToolIndex(), allowed=None).as_tool().definition.description == (
        ENGLISH.description
    )
    assert (
        set(CHINESE.parameters) == set(ENGLISH.parameters) == {"queries", "max_results", "category"}
    )
    assert set(CHINESE.call_parameters) == set(ENGLISH.call_parameters) == {"name", "arguments"}
    for text in [CHINESE.description, CHINESE.system_suffix or "", *CHINESE.parameters.values()]:
        assert cjk_share(text) > 0.5, text
    # The texts that name tools and schema fields (ASCII identifiers) are Chinese too.
    for field in (
        "unavailable_message",
        "similar_names_message",
        "proxy_description",
        "proxy_system_suffix",
        "call_description",
        "left_out",
        "instructions",
    ):
        assert cjk_share(getattr(CHINESE, field)) > 0.4, field
    for text in CHINESE.call_parameters.values():
        assert cjk_share(text) > 0.25, text
    # Both suffixes name the search tool; the unavailable text fills in the same fields.
    assert TOOL_SEARCH_NAME in (CHINESE.system_suffix or "")
    assert TOOL_SEARCH_NAME in (ENGLISH.system_suffix or "")
    filled = CHINESE.unavailable_message.format(name="'x'", search_tool=TOOL_SEARCH_NAME)
    assert filled == "工具 'x' 不可用。请先用 tool_search 搜索它，再按搜索返回的准确名称调用。"


def test_the_english_parameter_texts_are_what_the_docstring_says() -> None:
    searcher = ToolSearcher(index=BM25ToolIndex(), allowed=None)
    assert parameter_texts(searcher.as_tool().definition) == dict(ENGLISH.parameters)
    # The schema that validates the arguments is built from the method's docstring.
    validating = cached_function_schema(searcher.tool_search, tool_name=TOOL_SEARCH_NAME)
    documented = {
        name: spec["description"] for name, spec in validating.json_schema["properties"].items()
    }
    assert documented == dict(ENGLISH.parameters)


async def test_the_search_tool_in_chinese_validates_as_before() -> None:
    searcher = ToolSearcher(index=BM25ToolIndex(), allowed=None)
    tool = searcher.as_tool(CHINESE.description, parameters=CHINESE.parameters)
    english = searcher.as_tool()
    assert tool.definition.description == CHINESE.description
    assert parameter_texts(tool.definition) == dict(CHINESE.parameters)
    # Only the texts differ: the schema's structure and the validation are the same.
    stripped = [
        {n: {k: v for k, v in p.items() if k != "description"} for n, p in props.items()}
        for props in (
            tool.definition.input_schema["properties"],
            english.definition.input_schema["properties"],
        )
    ]
    assert stripped[0] == stripped[1]
    with pytest.raises(ToolArgumentError):
        await tool.call('{"max_results": "many"}')
    assert await tool.call('{"queries": ["退款"]}') == "[]"  # nothing indexed
    with pytest.raises(ToolDefinitionError, match="no parameter 'limit'"):
        searcher.as_tool(parameters={"limit": "数量"})


def test_unknown_languages_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match="unknown tool search language 'fr'"):
        SearchOptions(language="fr")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="unknown tool search language 'french'"):
        ToolSearchAdvisor(
            ENGLISH_TOOLS,
            index=BM25ToolIndex(),
            options=SearchOptions(language="french"),  # type: ignore[arg-type]
        )


# --- the advisor in each language ------------------------------------------------------------


async def test_zh_mode_sends_the_chinese_description_parameters_and_suffix() -> None:
    search = tool_call_response((TOOL_SEARCH_NAME, {"queries": ["退款"]}))
    model = await first_prompt(advisor(ENGLISH_TOOLS, options=SearchOptions(language="zh")), search)
    assert len(model.prompts) == 2
    assert_shows(model, CHINESE)


async def test_en_mode_keeps_english_texts_for_a_chinese_catalog() -> None:
    model = await first_prompt(advisor(CHINESE_TOOLS, options=SearchOptions(language="en")))
    assert_shows(model, ENGLISH)


async def test_the_unavailable_answer_is_chinese_in_zh_mode() -> None:
    hidden = tool_call_response(("refund__retry", {"order_id": "o1"}))
    model = await first_prompt(advisor(CHINESE_TOOLS), hidden)
    answer = model.prompts[1].messages[-1]
    assert isinstance(answer, ToolResponseMessage)
    assert answer.responses[0].is_error
    assert answer.responses[0].data == (
        "工具 'refund__retry' 不可用。请先用 tool_search 搜索它，再按搜索返回的准确名称调用。"
    )


def test_a_misspelled_shown_name_is_answered_with_it_in_each_language() -> None:
    shown = ["tool_search", "refund.retry", "refund.find"]
    assert ENGLISH.unavailable_answer("refund.rety", shown) == (
        "Tool 'refund.rety' is not available; similar tools you can call: refund__retry. Call "
        "one of them by its exact name, or search for another tool with tool_search first."
    )
    assert CHINESE.unavailable_answer("refund.rety", shown) == (
        "工具 'refund.rety' 不可用；名称相近、可以调用的工具：refund__retry。请按准确名称调用"
        "其中之一，或先用 tool_search 搜索其他工具。"
    )
    # Far from every shown name: the search advice; texts without the message: always it.
    assert ENGLISH.unavailable_answer("ticket.create", shown) == (
        "Tool 'ticket.create' is not available. Search for it with tool_search first, then call "
        "it by the exact name the search returns."
    )
    plain = dataclasses.replace(CHINESE, similar_names_message=None)
    assert plain.unavailable_answer("refund.rety", shown) == (
        "工具 'refund.rety' 不可用。请先用 tool_search 搜索它，再按搜索返回的准确名称调用。"
    )


async def test_the_similar_names_answer_is_chinese_in_zh_mode() -> None:
    search = tool_call_response((TOOL_SEARCH_NAME, {"queries": ["重试 退款"]}))
    misspelled = tool_call_response(("refund.rety", {"order_id": "o1"}))
    model = await first_prompt(advisor(CHINESE_TOOLS), search, misspelled)
    assert "refund.retry" in model.tool_names_shown(2)
    answer = model.prompts[2].messages[-1]
    assert isinstance(answer, ToolResponseMessage)
    assert answer.responses[0].data.startswith(
        "工具 'refund.rety' 不可用；名称相近、可以调用的工具：refund__retry"
    )


async def test_auto_picks_chinese_for_the_chinese_refund_desk_and_english_for_the_english() -> None:
    chinese = await first_prompt(advisor(build_catalog(lang="zh")))
    assert_shows(chinese, CHINESE)
    english = await first_prompt(advisor(build_catalog()))
    assert_shows(english, ENGLISH)


async def test_auto_decides_again_when_the_catalog_changes() -> None:
    catalog = ToolCatalog([make_tool("refund.find", "Find refunds that failed yesterday.")])
    search_advisor = advisor(catalog)
    assert_shows(await first_prompt(search_advisor), ENGLISH)
    for number in range(3):
        catalog.add(
            make_tool(f"ticket.create_{number}", "为仍然失败、需要人工处理的退款创建事故工单。")
        )
    assert_shows(await first_prompt(search_advisor), CHINESE)


async def test_explicit_texts_win_over_the_language() -> None:
    expected = dataclasses.replace(
        CHINESE, description="Find tools.", unavailable_message="没有 {name}；请用 {search_tool}。"
    )
    # An English catalog: texts given are shown whatever language the catalog is in.
    search_advisor = advisor(ENGLISH_TOOLS, options=SearchOptions(language=expected))
    hidden = tool_call_response(("refund__retry", {"order_id": "o1"}))
    model = await first_prompt(search_advisor, hidden)
    assert_shows(model, expected)  # the suffix and parameters stay Chinese
    answer = model.prompts[1].messages[-1]
    assert isinstance(answer, ToolResponseMessage)
    assert answer.responses[0].data == "没有 'refund__retry'；请用 tool_search。"


async def test_texts_without_a_suffix_add_none_in_either_channel() -> None:
    quiet = dataclasses.replace(CHINESE, system_suffix=None, proxy_system_suffix=None)
    for channel in ("rewrite", "proxy"):
        search_advisor = advisor(
            CHINESE_TOOLS, options=SearchOptions(language=quiet), channel=channel
        )
        model = await first_prompt(search_advisor)
        assert model.prompts[0].messages[0] == SystemMessage(text=SYSTEM)
        description = CHINESE.description if channel == "rewrite" else CHINESE.proxy_description
        assert description in {d.description for d in model.tool_definitions[0]}


async def test_texts_of_your_own_are_a_language_too() -> None:
    traditional = SearchTexts(
        language="zh-TW",
        description="在工具目錄中搜尋能完成任務的工具。",
        parameters={"queries": "描述動作與對象的幾個詞。"},
        system_suffix="需要看不到的工具時，請呼叫 tool_search。",
        unavailable_message="工具 {name} 無法使用；請先用 {search_tool} 搜尋。",
        proxy_description="在工具目錄中搜尋工具，回傳其定義；再用 call_tool 執行。",
        proxy_system_suffix="請用 tool_search 搜尋工具，再用 call_tool 執行。",
        call_description="執行用 tool_search 找到的工具。",
        call_parameters={"name": "工具的準確名稱。"},
        left_out="定義未列出：回答已滿。請單獨搜尋此工具。",
        instructions="此伺服器提供大型工具目錄：先用 tool_search 搜尋，再用 call_tool 執行。",
    )
    model = await first_prompt(advisor(ENGLISH_TOOLS, options=SearchOptions(language=traditional)))
    definition = shown_search_tool(model)
    assert definition.description == traditional.description
    # Parameters the texts leave out keep the English text.
    texts = parameter_texts(definition)
    assert texts["queries"] == "描述動作與對象的幾個詞。"
    assert texts["max_results"] == ENGLISH.parameters["max_results"]
    assert model.prompts[0].messages[0] == SystemMessage(
        text=f"{SYSTEM}\n\n{traditional.system_suffix}"
    )
    assert "zh-TW" in repr(SearchTextSelector(traditional))
    # Texts naming a parameter the tools do not have are refused when made.
    with pytest.raises(ConfigurationError, match=r"tool_search has no parameters \['limit'\]"):
        dataclasses.replace(traditional, parameters={"limit": "數量"})
    with pytest.raises(ConfigurationError, match=r"call_tool has no parameters \['tool'\]"):
        dataclasses.replace(traditional, call_parameters={"tool": "名稱"})


def test_the_selector_decides_once_per_catalog() -> None:
    selector = SearchTextSelector()
    english = tuple(t.definition for t in ENGLISH_TOOLS)
    chinese = tuple(t.definition for t in CHINESE_TOOLS)
    first = selector.for_catalog(english)
    assert first.language == "en"
    assert selector.for_catalog(english) is first  # the same catalog: the same answer
    assert selector.for_catalog(chinese).language == "zh"
    # A fixed language or texts of your own do not follow the catalog.
    own = dataclasses.replace(CHINESE, system_suffix="只用已展示的工具。")
    fixed = SearchTextSelector(own)
    assert fixed.for_catalog(english) is own
    assert fixed.for_catalog(chinese) is own


async def test_chinese_and_dotted_names_are_searched_and_called_by_their_provider_names() -> None:
    names = ["查询天气", "Navigation.TrainTickets.queryPassengerTrainOrder"]
    tools = [
        make_tool(names[0], "查询一个城市当前的天气。"),
        make_tool(names[1], "查询乘客的火车票订单。"),
    ]

    def call_all_found(prompt: Any) -> Any:
        last = prompt.messages[-1]
        assert isinstance(last, ToolResponseMessage)
        found = [hit["name"] for hit in json.loads(last.responses[0].data)]
        return tool_call_response(*((name, {"order_id": "o1"}) for name in found))

    # Both words appear whole in the descriptions: found however the index cuts Chinese.
    search = tool_call_response((TOOL_SEARCH_NAME, {"queries": ["天气 乘客的火车票订单"]}))
    model = await first_prompt(
        advisor(tools, options=SearchOptions(min_relative_score=None)), search, call_all_found
    )
    shown = [d.name for d in model.tool_definitions[2]]
    assert shown[0] == TOOL_SEARCH_NAME
    assert sorted(shown[1:]) == sorted(names)
    *_, calls, answers = model.prompts[2].messages
    assert isinstance(calls, AssistantMessage)
    assert isinstance(answers, ToolResponseMessage)
    # The model called the provider-safe forms; the tools ran under their own names.
    assert sorted(c.name for c in calls.tool_calls) == sorted(provider_safe_name(n) for n in names)
    assert all(c.name.isascii() for c in calls.tool_calls)
    assert sorted(r.data for r in answers.responses) == sorted(f"{n} ran for o1" for n in names)
    assert not any(r.is_error for r in answers.responses)
