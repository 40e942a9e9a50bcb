from __future__ import annotations

import logging
import sys

import pytest

from toolrelay.search import _cjk as cjk
from toolrelay.search._cjk import (
    CHINESE_STOP_WORDS,
    cjk_keywords,
    cjk_terms,
    has_cjk,
    segmenter_available,
)


def test_a_run_gives_bigrams_then_single_han_characters() -> None:
    assert cjk_terms("退款失败", segment=False) == [
        "退款",
        "款失",
        "失败",
        "退",
        "款",
        "失",
        "败",
    ]


def test_stop_words_are_dropped_as_whole_terms_only() -> None:
    # 的 goes as a character; the bigrams that contain it (败的, 的订) stay
    assert cjk_terms("退款失败的订单", segment=False) == [
        "退款",
        "款失",
        "失败",
        "败的",
        "的订",
        "订单",
        "退",
        "款",
        "失",
        "败",
        "订",
        "单",
    ]
    assert cjk_terms("退款失败的订单", stop_words=frozenset(), segment=False).count("的") == 1


def test_a_lone_character_is_its_own_term() -> None:
    assert cjk_terms("查", segment=False) == ["查"]
    assert cjk_terms("的", segment=False) == []


def test_kana_and_hangul_give_bigrams_without_single_characters() -> None:
    assert cjk_terms("テスト", segment=False) == ["テス", "スト"]
    assert cjk_terms("날씨를", segment=False) == ["날씨", "씨를"]
    # a Japanese run: bigrams across kanji and kana, single characters of the kanji only
    assert cjk_terms("天気予報を", segment=False) == [
        "天気",
        "気予",
        "予報",
        "報を",
        "天",
        "気",
        "予",
        "報",
    ]
    assert cjk_terms("돈", segment=False) == ["돈"]


def test_dictionary_words_are_added_to_bigrams_and_characters() -> None:
    assert cjk_terms("退款失败的订单") == [
        *cjk_terms("退款失败的订单", segment=False),
        "退款",
        "失败",
        "订单",  # 的 is a stop word
    ]
    # a three-character word is found whole, which no bigram is
    assert cjk_terms("目的地")[-1] == "目的地"
    assert cjk_terms("查") == ["查", "查"]


def test_without_rjieba_chinese_falls_back_to_bigrams_and_characters(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    cjk._segmenter.cache_clear()
    monkeypatch.setitem(sys.modules, "rjieba", None)  # the import fails
    try:
        with caplog.at_level(logging.WARNING, logger="toolrelay.search._cjk"):
            assert not segmenter_available()
            assert cjk_terms("目的地") == ["目的", "的地", "目", "地"]
        assert "rjieba is not installed" in caplog.text
    finally:
        cjk._segmenter.cache_clear()


def test_keywords_are_bigrams_without_stop_words() -> None:
    assert cjk_keywords("帮我查退款失败") == ["我查", "查退", "退款", "款失", "失败"]
    assert cjk_keywords("查") == ["查"]
    assert cjk_keywords("的") == []
    assert cjk_keywords("帮我", stop_words=frozenset()) == ["帮我"]


def test_has_cjk() -> None:
    assert has_cjk("查询refund")
    assert has_cjk("ＩＤ：テスト")
    assert not has_cjk("getWeather")
    assert not has_cjk("café, Москва, ，。")  # accents, Cyrillic and CJK punctuation


def test_stop_words_are_short_function_words() -> None:
    assert {"的", "了", "请", "帮我", "一下", "我要"} <= CHINESE_STOP_WORDS
    assert all(len(w) <= 2 for w in CHINESE_STOP_WORDS)
