from __future__ import annotations

from toolrelay.search._documents import (
    catalog_fingerprint,
    dotted_categories,
    summarize,
    tool_text,
)
from toolrelay.tools._base import ToolDefinition

from ._catalog import CATALOG


def test_fingerprint_ignores_order_and_sees_every_change() -> None:
    base = catalog_fingerprint(CATALOG)
    assert catalog_fingerprint(tuple(reversed(CATALOG))) == base
    first = CATALOG[0]
    renamed = ToolDefinition(
        name="get_weather2", description=first.description, input_schema=first.input_schema
    )
    described = ToolDefinition(
        name=first.name, description="Other words.", input_schema=first.input_schema
    )
    reschemed = ToolDefinition(
        name=first.name, description=first.description, input_schema={"type": "object"}
    )
    changed = {
        catalog_fingerprint([variant, *CATALOG[1:]]) for variant in (renamed, described, reschemed)
    }
    assert base not in changed
    assert len(changed) == 3
    assert catalog_fingerprint(CATALOG[:-1]) != base


def test_fingerprint_does_not_confuse_field_boundaries() -> None:
    a = ToolDefinition(name="ab", description="c")
    b = ToolDefinition(name="a", description="bc")
    assert catalog_fingerprint([a]) != catalog_fingerprint([b])


def test_summary_is_the_first_sentence_shortened_at_a_word() -> None:
    assert summarize("Get the weather. Uses the API.") == "Get the weather."
    assert summarize("First line\nsecond line") == "First line"
    assert summarize("   ") == ""
    long = "word " * 100
    short = summarize(long, limit=20)
    assert short.endswith("…")
    assert len(short) <= 20
    assert short == "word word word word…"


def test_tool_text_splits_names_and_reads_nested_parameters() -> None:
    definition = ToolDefinition(
        name="refund.issueRefund",
        description="Refund an order.",
        input_schema={
            "type": "object",
            "properties": {
                "orderId": {"type": "string", "description": "The order"},
                "reason": {"type": "string", "enum": ["damaged", "late"]},
                "address": {
                    "type": "object",
                    "properties": {"postCode": {"type": "string", "description": "ZIP"}},
                },
                "items": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"sku": {"type": "string"}}},
                },
            },
        },
    )
    text = tool_text(definition)
    assert text.name_words == "refund issue refund"
    assert (
        text.parameters == "order id The order reason damaged late address post code ZIP items sku"
    )
    assert text.passage() == (
        "refund issue refund: Refund an order. Parameters: " + text.parameters
    )


def test_passage_without_parameters() -> None:
    text = tool_text(ToolDefinition(name="ping", description="Check the service."))
    assert text.passage() == "ping: Check the service."


def test_dotted_categories() -> None:
    assert dotted_categories("a.b.tool") == ("a", "a.b")
    assert dotted_categories("plain_tool") == ()


def test_chinese_names_read_as_words_apart_from_latin_ones() -> None:
    assert (
        tool_text(ToolDefinition(name="情感_文本分析", description="")).name_words
        == "情感 文本分析"
    )
    assert (
        tool_text(ToolDefinition(name="退款.查询Failed订单", description="")).name_words
        == "退款 查询 failed 订单"
    )


def test_summary_ends_at_a_chinese_full_stop() -> None:
    assert summarize("分析车辆的维护状态。支持多种车型！") == "分析车辆的维护状态。"
    assert summarize("查询订单状态？返回物流信息") == "查询订单状态？"
    assert summarize("查询乘客的火车票订单信息") == "查询乘客的火车票订单信息"
