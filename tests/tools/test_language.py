"""The language of tool texts: CJK share, a catalog's language, definitions with other texts."""

from __future__ import annotations

import doctest

import pytest

from toolrelay.exceptions import ToolDefinitionError
from toolrelay.tools import FunctionTool, ToolDefinition
from toolrelay.tools import _language as language_module
from toolrelay.tools._language import CHINESE_THRESHOLD, catalog_language, cjk_share, replace_texts


def test_the_examples_in_the_docstrings_hold() -> None:
    results = doctest.testmod(language_module)
    assert results.attempted >= 2
    assert results.failed == 0


@pytest.mark.parametrize(
    ("text", "share"),
    [
        ("查询指定时间范围内退款失败的订单", 1.0),
        ("Find yesterday's failed refunds.", 0.0),
        ("", 0.0),
        ("..., 123 ___", 0.0),  # digits count as letters, punctuation and "_" do not
        ("退款 ab", 0.5),  # two CJK characters, two letters
        ("退款，失败！", 1.0),  # full-width punctuation is not counted
        ("ひらがな카타", 1.0),  # kana and hangul are CJK too
        ("𠀀𠀁 xy", 0.5),  # a CJK extension B character is one character
    ],
)
def test_cjk_share_counts_characters_among_letters_and_digits(text: str, share: float) -> None:
    assert cjk_share(text) == pytest.approx(share)


def test_a_chinese_description_with_identifiers_is_still_mostly_cjk() -> None:
    text = (
        "只读查询指定日期（默认昨天）退款失败的订单。\n"
        "要查询任意状态的退款记录，请改用 refund.find_orders，例如 RF-2001。"
    )
    assert cjk_share(text) > 0.5


def definitions(*descriptions: str) -> list[ToolDefinition]:
    return [ToolDefinition(name=f"t{i}", description=d) for i, d in enumerate(descriptions)]


def test_catalog_language_weighs_every_character_of_every_description() -> None:
    assert catalog_language([]) == "en"
    assert catalog_language(definitions("查询退款失败的订单", "重试失败的退款")) == "zh"
    assert catalog_language(definitions("Find failed refunds.", "Retry a refund.")) == "en"
    # One long English description outweighs a short Chinese one, and the other way round.
    long_english = "Read-only query of refunds that failed on a given day, by channel. " * 3
    assert catalog_language(definitions(long_english, "查询订单")) == "en"
    assert (
        catalog_language(definitions("Get weather.", "查询指定时间范围内退款失败的订单" * 2))
        == "zh"
    )


def test_the_threshold_decides_mixed_catalogs() -> None:
    mixed = definitions("退款失败 " + "x" * 16)  # 4 CJK characters among 20: a share of 0.2
    assert cjk_share(mixed[0].description) == pytest.approx(0.2)
    assert catalog_language(mixed) == "en"  # more than the threshold is needed
    assert catalog_language(mixed, threshold=0.1) == "zh"
    assert pytest.approx(0.2) == CHINESE_THRESHOLD


def tool_definition() -> ToolDefinition:
    def find(day: str | None = None, limit: int = 50) -> list[str]:
        """Find failed refunds.

        Args:
            day: The day, as YYYY-MM-DD.
            limit: At most this many.
        """
        return []

    return FunctionTool.from_function(find, name="refund.find").definition


def test_replace_texts_changes_only_the_texts() -> None:
    original = tool_definition()
    schema_before = repr(original.input_schema)
    chinese = replace_texts(
        original,
        description="查询失败的退款。",
        parameters={"day": "日期，格式为 YYYY-MM-DD。"},
    )
    assert chinese.name == original.name
    assert chinese.description == "查询失败的退款。"
    properties = chinese.input_schema["properties"]
    assert properties["day"]["description"] == "日期，格式为 YYYY-MM-DD。"
    assert properties["limit"]["description"] == "At most this many."  # not named: kept
    # Everything but the descriptions is the same, and the original is untouched.
    assert properties["day"]["anyOf"] == original.input_schema["properties"]["day"]["anyOf"]
    assert chinese.input_schema["required"] == original.input_schema.get("required", [])
    assert repr(original.input_schema) == schema_before


def test_replace_texts_without_changes_and_with_the_description_only() -> None:
    original = tool_definition()
    assert replace_texts(original) is original
    only = replace_texts(original, description="查询失败的退款。")
    assert only.description == "查询失败的退款。"
    assert only.input_schema == original.input_schema


def test_replace_texts_rejects_parameters_the_schema_lacks() -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        replace_texts(tool_definition(), parameters={"days": "天数", "day": "日期"})
    assert str(caught.value) == "invalid tool 'refund.find': no parameter 'days' to describe"
