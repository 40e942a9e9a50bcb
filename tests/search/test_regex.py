from __future__ import annotations

import pytest

from toolrelay.search.base import SearchRequest
from toolrelay.search.regex import RegexToolIndex, keyword_pattern, query_pattern

from ._catalog import CATALOG, CATALOG_ZH


@pytest.fixture
def index() -> RegexToolIndex:
    index = RegexToolIndex()
    index.index(CATALOG)
    return index


def names(index: RegexToolIndex, query: str, k: int = 5) -> list[str]:
    return index.search(SearchRequest(query=query, max_results=k)).names


def test_keywords_rank_name_matches_above_description_matches(index: RegexToolIndex) -> None:
    assert names(index, "weather in Paris") == ["get_weather", "get_forecast"]
    assert names(index, "refund a failed payment") == [
        "refund.find_failed_orders",
        "refund.issueRefund",
    ]
    assert names(index, "forecast") == ["get_forecast"]


def test_scores_follow_the_documented_weights(index: RegexToolIndex) -> None:
    hits = {h.name: h.score for h in index.search(SearchRequest(query="forecast")).hits}
    # "forecast" in the name (2 + early-match bonus) and in the description (1 + bonus)
    assert hits["get_forecast"] == pytest.approx(2 + 1.5 / 1.4 + 1 + 0.75 / 2.7, rel=1e-5)


def test_a_regex_query_is_used_as_a_pattern(index: RegexToolIndex) -> None:
    assert names(index, r"^get_\w+") == ["get_weather", "get_forecast"]
    # parameters are not searched (Spring AI semantics): only names and descriptions
    assert names(index, r"\bemail\b") == ["send_email", "shop_search_orders"]


def test_camel_case_names_match_as_words(index: RegexToolIndex) -> None:
    # "issueRefund" has no "refund" word boundary as written; its name words do
    assert names(index, r"\bissue\b") == ["refund.issueRefund"]


def test_matching_is_case_insensitive(index: RegexToolIndex) -> None:
    assert names(index, "WEATHER") == names(index, "weather")


def test_natural_language_that_looks_like_a_pattern_falls_back_to_keywords(
    index: RegexToolIndex,
) -> None:
    # "(in Paris)" parses as a group and matches nothing as a pattern
    assert names(index, "weather (in Paris)") == ["get_weather", "get_forecast"]
    # an invalid pattern is read as keywords at once
    assert names(index, "currency [convert") == ["convert_currency"]


def test_no_match_no_hits(index: RegexToolIndex) -> None:
    response = index.search(SearchRequest(query="zzz"))
    assert response.hits == ()
    assert response.total == 0
    assert index.search(SearchRequest(query="a")).hits == ()


def test_patterns() -> None:
    keywords = keyword_pattern("Get the weather, please!")
    assert keywords is not None
    assert keywords.pattern == "(?:get|weather)"
    assert keyword_pattern("a the") is not None  # only stop words: they are kept
    assert keyword_pattern("!!") is None
    pattern = query_pattern("get_.*")
    assert pattern is not None
    assert pattern.pattern == "get_.*"


@pytest.fixture
def index_zh() -> RegexToolIndex:
    index = RegexToolIndex()
    index.index(CATALOG_ZH)
    return index


def test_chinese_keywords_are_bigrams() -> None:
    pattern = keyword_pattern("帮我查退款失败的订单")
    assert pattern is not None
    # 帮我 is a stop word; every other bigram is a keyword
    assert pattern.pattern == "(?:我查|查退|退款|款失|失败|败的|的订|订单)"
    mixed = keyword_pattern("查询refund失败")
    assert mixed is not None
    assert mixed.pattern == "(?:refund|查询|失败)"
    lone = keyword_pattern("查 天气")
    assert lone is not None
    assert lone.pattern == "(?:查|天气)"
    only_stop_words = keyword_pattern("帮我")
    assert only_stop_words is not None
    assert only_stop_words.pattern == "(?:帮我)"


def test_a_chinese_query_finds_descriptions_that_contain_its_words(
    index_zh: RegexToolIndex,
) -> None:
    # 退款失败 matches 退款 and 失败 in "...退款失败的订单", only 退款 in issueRefund's
    assert names(index_zh, "退款失败") == ["refund.findFailedRefunds", "refund.issueRefund"]
    assert names(index_zh, "明天北京的天气") == ["weather.forecast"]
    assert names(index_zh, "快递到哪了") == ["orders.getOrderStatus"]


def test_chinese_names_match_and_count_as_names(index_zh: RegexToolIndex) -> None:
    assert names(index_zh, "文案分析")[0] == "文案分析工具"


def test_english_queries_on_a_chinese_catalog_match_names(index_zh: RegexToolIndex) -> None:
    assert names(index_zh, "refund") == ["refund.findFailedRefunds", "refund.issueRefund"]
