from __future__ import annotations

import pytest

from toolrelay.search._text import Tokenizer, split_words


def test_identifiers_are_split_lowercased_stemmed_and_stop_words_dropped() -> None:
    tok = Tokenizer()
    assert tok.terms("getWeatherForecasts for the city_name") == [
        "get",
        "weather",
        "forecast",
        "citi",
        "name",
    ]


def test_acronyms_digits_and_short_words() -> None:
    tok = Tokenizer(stem=False)
    assert tok.words("parseHTTPResponse v2 x") == ["parse", "http", "response", "v2", "x"]
    # one-letter words go, digits stay
    assert tok.terms("a 7 x order") == ["7", "order"]


def test_other_spaced_scripts_give_words_as_terms() -> None:
    assert Tokenizer().terms("Погода в Москве") == ["погода", "москве"]
    assert Tokenizer(stem=False).terms("καιρός σήμερα") == ["καιρός", "σήμερα"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("refund.findFailedOrders_v2", ["refund", "find", "fail", "order", "v2"]),
        ("getHTTPResponse", ["get", "http", "respons"]),
        (
            "Navigation.TrainTickets.queryPassengerTrainOrder",
            ["navig", "train", "ticket", "queri", "passeng", "train", "order"],
        ),
        (
            "Cancel an order that has not shipped yet; the customer is refunded in full.",
            ["cancel", "order", "not", "ship", "yet", "custom", "refund", "full"],
        ),
        ("What's the weather like in São Paulo, in °C?", ["weather", "like", "são", "paulo"]),
        ("ISO-4217 currency codes (EUR, USD)", ["iso", "4217", "currenc", "code", "eur", "usd"]),
        ("naïve café résumé", ["naïv", "café", "résumé"]),
    ],
)
def test_english_and_other_latin_text_is_cut_as_it_always_was(
    text: str, expected: list[str]
) -> None:
    assert Tokenizer().terms(text) == expected


def test_cjk_runs_are_words_of_their_own_inside_identifiers() -> None:
    assert split_words("查询refund失败的orderId") == ["查询", "refund", "失败的", "order", "id"]
    assert split_words("情感_文本分析") == ["情感", "文本分析"]


def test_mixed_chinese_and_english_in_one_pass() -> None:
    tok = Tokenizer(segment=False)
    assert tok.terms("查询refund失败的orderId") == [
        "查询",
        "查",
        "询",
        "refund",
        "失败",
        "败的",
        "失",
        "败",  # 的 is a stop word
        "order",
        "id",
    ]
    # English words keep their stems next to Chinese
    assert tok.terms("退款refunds") == ["退款", "退", "款", "refund"]


def test_chinese_words_from_the_dictionary_join_bigrams_and_characters() -> None:
    assert Tokenizer().terms("查询refund失败的orderId") == [
        "查询",
        "查",
        "询",
        "查询",
        "refund",
        "失败",
        "败的",
        "失",
        "败",
        "失败",
        "order",
        "id",
    ]


def test_chinese_stop_words_and_request_frames_are_dropped() -> None:
    # 帮我 (help me), 一下 (a bit), 帮, 我 and 下 go; what is asked for stays
    assert Tokenizer(segment=False).terms("帮我查一下") == ["我查", "查一", "查", "一"]
    assert Tokenizer(segment=False, stop_words=frozenset()).terms("帮我") == [
        "帮我",
        "帮",
        "我",
    ]


def test_a_chinese_sentence_is_no_longer_one_term() -> None:
    terms = Tokenizer().terms("查询指定时间范围内退款失败的订单")
    assert {"退款", "失败", "订单", "时间"} <= set(terms)
    assert "查询指定时间范围内退款失败的订单" not in terms


def test_full_width_letters_and_digits_read_as_ascii() -> None:
    assert Tokenizer(segment=False).terms("ＩＤ１２３的订单") == [
        "id123",
        "的订",
        "订单",
        "订",
        "单",
    ]
    assert Tokenizer().terms("ＯｒｄｅｒＳｔａｔｕｓ") == Tokenizer().terms("OrderStatus")


def test_words_given_already_split_are_analysed_too() -> None:
    tok = Tokenizer(segment=False)
    assert tok.terms_of_words(["查询refund", "orders"]) == ["查询", "查", "询", "refund", "order"]


def test_without_stemming_and_with_custom_stop_words() -> None:
    tok = Tokenizer(stem=False, stop_words=frozenset({"get"}))
    assert tok.terms("get the forecasts") == ["the", "forecasts"]
