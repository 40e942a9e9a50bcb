from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from toolrelay.exceptions import ConfigurationError
from toolrelay.search import _regex as regex
from toolrelay.search._base import SearchRequest
from toolrelay.search._regex import RegexToolIndex, keyword_pattern, linear_patterns, query_pattern
from toolrelay.tools._base import ToolDefinition

from ._catalog import CATALOG, CATALOG_ZH, NAMES
from ._permissions import (
    PERMITTED,
    QUERIES,
    assert_equals_an_index_of_the_subset,
    assert_ranks_permitted_tools_alone,
)


@pytest.fixture
def index() -> RegexToolIndex:
    index = RegexToolIndex()
    index.index(CATALOG)
    return index


def names(index: RegexToolIndex, query: str, k: int = 5) -> list[str]:
    return index.search(SearchRequest(query=query, max_results=k)).names


def bounded(work: Callable[[], Any], seconds: float) -> Any:
    """Run ``work`` in a thread; fail the test if it does not end within ``seconds``."""
    outcome: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: outcome.update(value=work()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still searching after {seconds} s"
    return outcome["value"]


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
    assert keyword_pattern("Get the weather, please!") == "(?:get|weather)"
    assert keyword_pattern("a the") is not None  # only stop words: they are kept
    assert keyword_pattern("!!") is None
    assert query_pattern("get_.*") == "get_.*"
    assert query_pattern("weather") == "(?:weather)"


@pytest.fixture
def index_zh() -> RegexToolIndex:
    index = RegexToolIndex()
    index.index(CATALOG_ZH)
    return index


def test_chinese_keywords_are_bigrams() -> None:
    # 帮我 is a stop word; every other bigram is a keyword
    assert keyword_pattern("帮我查退款失败的订单") == "(?:我查|查退|退款|款失|失败|败的|的订|订单)"
    assert keyword_pattern("查询refund失败") == "(?:refund|查询|失败)"
    assert keyword_pattern("查 天气") == "(?:查|天气)"
    assert keyword_pattern("帮我") == "(?:帮我)"


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


# --- permitted tools only, and bounded whatever the pattern --------------------------------


def test_a_forbidden_tool_changes_no_answer() -> None:
    assert_ranks_permitted_tools_alone(RegexToolIndex)


def test_a_pattern_cannot_read_other_tools_texts() -> None:
    # The attack: from a permitted tool's text, look ahead into the text after it.
    secret = ToolDefinition(name="admin.secret_tool", description="Rotate the master keys.")
    index = RegexToolIndex()
    index.index([*CATALOG, secret])
    permitted = frozenset(NAMES)
    for pattern in (
        r"currencies\.(?=[\s\S]*admin\.s)",
        r"currencies\.[\s\S]*admin",
        r"(?s)currencies.*master",
        r"currencies\.\C*admin",
    ):
        assert names(index, pattern) != ["admin.secret_tool"]
        found = index.search(SearchRequest(query=pattern, allowed=permitted)).names
        assert "admin.secret_tool" not in found
        # no pattern matches within one tool: the query is read as keywords
        keywords = keyword_pattern(pattern) or ""
        assert found == index.search(SearchRequest(query=keywords, allowed=permitted)).names


def test_a_pattern_is_matched_within_each_tool_only(index: RegexToolIndex) -> None:
    # "city." ends get_forecast's description, "Refund" starts another's: as a pattern it
    # matches nowhere, so the query is read as keywords
    assert names(index, r"city\.[\s\S]*Refund") == names(index, "city Refund")
    assert names(index, r"Five-day[\s\S]*city") == ["get_forecast"]


@pytest.mark.parametrize(
    "pattern",
    [
        r"(a+)+$",
        r"(x+x+)+y",
        r"((a|aa)+)+b",
        r"(.*a){25}",
        r"(\w+\s?)*$",
        r"^(([a-z])+.)+[A-Z]([a-z])+$",
        r"(?:.{0,100}e){1,10}zz",  # linear, but a program too large: read as keywords
        r"(a)\1",  # a backreference: RE2 has none, read as keywords
        r"(?=a)a",
    ],
)
def test_hostile_patterns_end_quickly(pattern: str) -> None:
    hostile = [
        ToolDefinition(name=f"t{i}", description="a" * 3000 + "!" + " x" * 200) for i in range(40)
    ]
    index = RegexToolIndex()
    index.index([*CATALOG, *hostile])
    # with Python's re, the first patterns backtrack for far longer than any test runs
    bounded(lambda: index.search(SearchRequest(query=pattern)), seconds=20)


def test_patterns_re2_refuses_are_read_as_keywords() -> None:
    assert query_pattern(r"weather(?=\s)") == "(?:weather)"
    assert query_pattern(r"(weather)\1") == "(?:weather)"
    assert query_pattern(r"weather\C") == "(?:weather)"
    assert query_pattern(r"(?:.{0,100}e){1,10}zz") == "(?:100|10|zz)"
    assert query_pattern(r"^get_\w+") == r"^get_\w+"


def test_a_pattern_unfinished_in_time_is_given_up_for_the_keywords() -> None:
    # names of 60,000 bytes: several pieces, so the time limit can stop between them
    many = [ToolDefinition(name=f"svc{i:04d}.do_nothing", description="Idle.") for i in range(3000)]
    last = ToolDefinition(name="zz.weather_report", description="Weather for a city.")
    patient, hurried = RegexToolIndex(), RegexToolIndex(time_limit=1e-9)
    for index in (patient, hurried):
        index.index([*many, last])
    pattern = r"^z{2}\.[a-z]+"  # no keywords in it
    assert names(patient, pattern) == ["zz.weather_report"]
    # the pattern stops after its first piece, and the query has no keywords to fall back on
    assert names(hurried, pattern) == []
    # keywords always finish
    assert names(hurried, "weather report") == ["zz.weather_report"]
    assert names(hurried, r"^zz\.weather") == ["zz.weather_report"]  # read as keywords


def test_without_re2_every_query_is_read_as_keywords(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(regex, "re2", None)
    regex._user_matcher.cache_clear()
    regex._keyword_matcher.cache_clear()
    try:
        assert not linear_patterns()
        assert query_pattern(r"^get_\w+") == "(?:get)"
        index = RegexToolIndex()
        index.index(CATALOG)
        assert names(index, r"^get_\w+") == names(index, "get")
        assert names(index, "weather in Paris") == ["get_weather", "get_forecast"]
        bounded(lambda: index.search(SearchRequest(query=r"(a+)+$" + "a" * 50)), seconds=20)
    finally:
        regex._user_matcher.cache_clear()
        regex._keyword_matcher.cache_clear()


def test_the_time_limit_must_be_positive() -> None:
    with pytest.raises(ConfigurationError, match="time_limit"):
        RegexToolIndex(time_limit=0)


def test_random_permitted_subsets_rank_as_an_index_of_the_subset_alone() -> None:
    assert_equals_an_index_of_the_subset(RegexToolIndex, PERMITTED, QUERIES, subsets=6)
