"""Token sizes: the cl100k_base count of a tool's wire form."""

from __future__ import annotations

import json

import tiktoken

from toolrelay.cli._tokens import search_tool_definition
from toolrelay.tools import ToolDefinition
from toolrelay.tools._tokens import (
    ENCODING_NAME,
    count_tokens,
    summarize_tokens,
    tool_payload,
    tool_tokens,
)
from toolrelay.toolsearch._texts import CHINESE, ENGLISH

WEATHER = ToolDefinition(
    name="weather.get",
    description="Météo actuelle d'une ville.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
)


def test_the_offline_encoding_is_cl100k_base() -> None:
    encoding = tiktoken.get_encoding(ENCODING_NAME)
    # Known cl100k_base ids: "hello" is 15339, " world" is 1917.
    assert encoding.encode("hello world") == [15339, 1917]
    assert count_tokens("hello world") == 2


def test_tool_size_is_the_count_of_its_openai_wire_form() -> None:
    payload = tool_payload(WEATHER)
    assert payload == {
        "type": "function",
        "function": {
            "name": "weather__get",
            "description": "Météo actuelle d'une ville.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
    expected = len(
        tiktoken.get_encoding(ENCODING_NAME).encode(json.dumps(payload, ensure_ascii=False))
    )
    assert tool_tokens(WEATHER) == expected


def test_special_token_text_is_counted_as_text() -> None:
    assert count_tokens("<|endoftext|>") > 1


def test_summary_totals_and_largest() -> None:
    small = ToolDefinition(name="a", description="x")
    summary = summarize_tokens([small, WEATHER, small])
    assert summary.sizes == (tool_tokens(small), tool_tokens(WEATHER), tool_tokens(small))
    assert summary.total == sum(summary.sizes)
    assert summary.largest == tool_tokens(WEATHER)
    assert summary.largest_k(2) == tool_tokens(WEATHER) + tool_tokens(small)
    assert summarize_tokens([]).mean == 0.0


def test_search_tool_is_the_advisors_tool_search() -> None:
    definition = search_tool_definition()
    assert definition.name == "tool_search"
    assert "queries" in definition.input_schema["properties"]
    assert tool_tokens(definition) > 50


def test_search_tool_speaks_the_catalogs_language() -> None:
    chinese_catalog = [ToolDefinition(name="weather.get", description="查询一个城市当前的天气。")]
    assert search_tool_definition().description == ENGLISH.description
    assert search_tool_definition(chinese_catalog).description == CHINESE.description
    assert search_tool_definition(language="zh").description == CHINESE.description
    assert search_tool_definition(chinese_catalog, language="en").description == (
        ENGLISH.description
    )
    # The same definition the advisor shows: lean schema, nothing but the texts differ.
    assert "anyOf" not in json.dumps(search_tool_definition().input_schema)
