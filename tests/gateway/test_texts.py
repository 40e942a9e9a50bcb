"""What clients read besides the catalog, in its language: the tools, answers, instructions.

The gateway reads the tool search's texts (:class:`~toolrelay.toolsearch.SearchTexts`), as the
in-process tool search does: ``SearchOptions(language=...)`` picks them, ``"auto"`` (the
default) following the catalog's language.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from mcp import Client

from toolrelay.exceptions import ConfigurationError
from toolrelay.gateway import GatewayConfig, ToolGateway, gateway_server, open_gateway
from toolrelay.gateway._config import SearchSettings
from toolrelay.mcp import LiveToolCatalog
from toolrelay.tools import (
    Tool,
    ToolCatalog,
    ToolDefinition,
    as_tools,
    provider_safe_name,
    tool,
)
from toolrelay.toolsearch import (
    CALL_TOOL_NAME,
    CHINESE,
    ENGLISH,
    TOOL_SEARCH_NAME,
    SearchLanguage,
    SearchOptions,
    SearchTexts,
)
from toolrelay.toolsearch._search_tool import search_tool_schema
from toolrelay.toolsearch._texts import unavailable_text

from ._helpers import served, text_of


@tool(name="查询天气", read_only=True)
def query_weather(city: str) -> str:
    """查询城市当前的天气：气温和天气状况。只读，不提供天气预报。

    Args:
        city: 城市名称。
    """
    return f"{city}：晴，21 °C"


@tool(name="退款.重试失败订单")
def retry_refund(order_id: str) -> str:
    """重试一笔退款失败的订单。会再次发起退款，请先确认订单确实失败。

    Args:
        order_id: 订单号，例如 RF-2001。
    """
    return f"{order_id} 已重试"


@tool(name="billing.get_invoice", read_only=True)
def get_invoice(number: str) -> str:
    """Read-only lookup of one invoice by its number: amount, due date and status.

    Args:
        number: The invoice number.
    """
    return f"invoice {number}: paid"


def chinese() -> ToolCatalog:
    return ToolCatalog(as_tools(query_weather, retry_refund))


def english() -> ToolCatalog:
    return ToolCatalog(as_tools(get_invoice))


def in_language(language: SearchLanguage | SearchTexts) -> SearchOptions:
    return SearchOptions(language=language)


def parameters(found: Tool) -> dict[str, str]:
    properties = found.definition.input_schema["properties"]
    return {name: spec["description"] for name, spec in properties.items()}


def assert_tools_in(gateway: ToolGateway, texts: SearchTexts) -> None:
    """The two tools read as the proxy channel's, in ``texts``."""
    search, call = gateway.tools()
    assert search.definition.description == texts.proxy_description
    assert parameters(search) == dict(texts.parameters)
    assert call.definition.description == texts.call_description
    assert parameters(call) == dict(texts.call_parameters)


async def test_a_chinese_catalog_gets_chinese_texts_by_default() -> None:
    gateway = ToolGateway(chinese())
    assert gateway.texts() is CHINESE
    assert_tools_in(gateway, CHINESE)
    missing = await gateway.call("no_such_tool", {})
    assert (missing.is_error, missing.status) == (True, "unknown_tool")
    assert missing.text == unavailable_text(CHINESE.unavailable_message, "no_such_tool")


async def test_an_english_catalog_gets_english_texts_by_default() -> None:
    gateway = ToolGateway(english())
    assert gateway.texts() is ENGLISH
    assert_tools_in(gateway, ENGLISH)
    missing = await gateway.call("no_such_tool", {})
    assert missing.text == unavailable_text(ENGLISH.unavailable_message, "no_such_tool")


async def test_a_served_client_reads_the_texts_of_the_catalogs_language() -> None:
    for catalog, texts in ((chinese(), CHINESE), (english(), ENGLISH)):
        gateway = ToolGateway(catalog)
        async with Client(served(gateway)) as client:
            listed = {t.name: t.description for t in (await client.list_tools()).tools}
            missing = await client.call_tool("call_tool", {"name": "no_such_tool"})
            instructions = client.instructions
        assert instructions == texts.instructions
        assert listed == {
            TOOL_SEARCH_NAME: texts.proxy_description,
            CALL_TOOL_NAME: texts.call_description,
        }
        assert missing.is_error
        assert text_of(missing) == unavailable_text(texts.unavailable_message, "no_such_tool")


async def test_the_language_can_be_fixed() -> None:
    assert_tools_in(ToolGateway(chinese(), options=in_language("en")), ENGLISH)
    fixed = ToolGateway(english(), options=in_language("zh"))
    assert_tools_in(fixed, CHINESE)
    missing = await fixed.call("no_such_tool", {})
    assert missing.text == unavailable_text(CHINESE.unavailable_message, "no_such_tool")


async def test_an_unavailable_message_of_ones_own_holds_for_any_catalog() -> None:
    terse = dataclasses.replace(ENGLISH, unavailable_message="No {name} here.")
    for catalog in (chinese(), english()):
        gateway = ToolGateway(catalog, options=in_language(terse))
        assert (await gateway.call("x.y", {})).text == "No 'x.y' here."


async def test_under_auto_the_answer_follows_a_changed_catalog() -> None:
    live = LiveToolCatalog()
    live.replace_all([(t, "test") for t in as_tools(get_invoice)])
    gateway = ToolGateway(live)
    before = await gateway.call("nothing", {})
    live.replace_all([(t, "test") for t in as_tools(query_weather, retry_refund)])
    after = await gateway.call("nothing", {})
    assert before.text == unavailable_text(ENGLISH.unavailable_message, "nothing")
    assert after.text == unavailable_text(CHINESE.unavailable_message, "nothing")
    assert gateway.texts() is CHINESE


async def test_texts_of_your_own() -> None:
    terse = dataclasses.replace(CHINESE, instructions="只提供天气工具。")
    gateway = ToolGateway(english(), options=in_language(terse))
    assert gateway.texts().instructions == "只提供天气工具。"
    assert_tools_in(gateway, terse)
    with pytest.raises(ConfigurationError, match=r"call_tool has no parameters \['x'\]"):
        dataclasses.replace(ENGLISH, call_parameters={"x": "?"})


def test_an_unknown_language_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="unknown tool search language 'fr'"):
        ToolGateway(english(), options=in_language("fr"))  # type: ignore[arg-type]


async def test_chinese_tools_are_searched_and_run_through_the_described_tools() -> None:
    gateway = ToolGateway(chinese())
    async with Client(served(gateway)) as client:
        searched = await client.call_tool("tool_search", {"queries": ["天气"], "max_results": 1})
        assert [hit["name"] for hit in json.loads(text_of(searched))] == ["查询天气"]
        # The canonical name and the form providers are sent both run it.
        for name in ("查询天气", provider_safe_name("查询天气")):
            ran = await client.call_tool("call_tool", {"name": name, "arguments": {"city": "北京"}})
            assert (ran.is_error, text_of(ran)) == (False, "北京：晴，21 °C")
        invalid = await client.call_tool("call_tool", {"name": "查询天气", "arguments": {}})
    assert invalid.is_error
    assert "city: Field required" in text_of(invalid)


def _chinese_module(spec: str) -> list[Tool]:
    return as_tools(query_weather, retry_refund)


@pytest.mark.parametrize(
    ("language", "expected"), [("auto", CHINESE), ("en", ENGLISH), ("zh", CHINESE)]
)
async def test_a_served_gateway_speaks_the_configured_language(
    language: SearchLanguage, expected: SearchTexts
) -> None:
    config = GatewayConfig(modules=("chinese_tools",), search=SearchSettings(language=language))
    async with open_gateway(config, module_loader=_chinese_module) as gateway:
        assert gateway.options.language == language
        server = gateway_server(gateway, config)
        assert server.instructions == expected.instructions
        assert_tools_in(gateway, expected)
    instructed = config.model_copy(update={"instructions": "Ask the desk."})
    async with open_gateway(instructed, module_loader=_chinese_module) as gateway:
        assert gateway_server(gateway, instructed).instructions == "Ask the desk."


def test_the_call_tool_texts_name_the_tools() -> None:
    definitions: list[ToolDefinition] = [t.definition for t in ToolGateway(english()).tools()]
    for texts in (ENGLISH, CHINESE):
        assert CALL_TOOL_NAME in texts.proxy_description
        assert TOOL_SEARCH_NAME in texts.call_description
        assert CALL_TOOL_NAME in texts.instructions
        assert TOOL_SEARCH_NAME in texts.instructions
        assert set(texts.call_parameters) == set(definitions[1].input_schema["properties"])


def test_the_published_schemas_are_plain_and_the_arguments_an_object() -> None:
    # Clients that build calls from a form or a command line (the MCP Inspector) convert a
    # value to JSON only for a parameter of type object, and render no anyOf with null.
    for texts in (ENGLISH, CHINESE):
        search, call = ToolGateway(english(), options=in_language(texts)).tools()
        assert search.definition.input_schema == search_tool_schema(texts.parameters)
        assert call.definition.input_schema == {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": texts.call_parameters["name"]},
                "arguments": {
                    "type": "object",
                    "description": texts.call_parameters["arguments"],
                    "default": {},
                },
            },
            "required": ["name"],
        }
        assert "anyOf" not in json.dumps(
            [search.definition.input_schema, call.definition.input_schema]
        )
