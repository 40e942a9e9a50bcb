from __future__ import annotations

from toolrelay.search.text import Tokenizer


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


def test_other_scripts_still_give_terms() -> None:
    assert Tokenizer().terms("天气 预报") == ["天气", "预报"]


def test_without_stemming_and_with_custom_stop_words() -> None:
    tok = Tokenizer(stem=False, stop_words=frozenset({"get"}))
    assert tok.terms("get the forecasts") == ["the", "forecasts"]
