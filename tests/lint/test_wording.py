from __future__ import annotations

import pytest

from toolrelay.lint._wording import says_what, says_what_not, says_when, word_count


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("Returns the weather.", 3),
        ("查询用户订单", 3),
        ("Query 用户订单 now", 4),
        ("", 0),
    ],
)
def test_word_count_counts_cjk_characters_as_half_words(text: str, count: float) -> None:
    assert word_count(text) == count


def test_what_when_and_not_cues_in_english_and_chinese() -> None:
    assert says_what("Fetches the invoices of a customer.")
    assert says_what("Creates a ticket.")
    assert says_what("查询订单状态")
    assert not says_what("TheClique (Data): concert info, venue and date")
    assert says_when("Use when the user asks about refunds.")
    assert says_when("用于处理退款失败的订单")
    assert not says_when("Returns the weather in a city.")
    assert says_what_not("Does not change any order.")
    assert says_what_not("Read-only.")
    assert says_what_not("仅返回前十条结果")
    assert not says_what_not("Returns the weather in a city.")
