from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.extras import needs_extra
from toolrelay.search._base import MAX_QUERY_LENGTH, MAX_QUERY_TERMS, SearchRequest
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.search._documents import tool_text
from toolrelay.search._evaluation import load_dataset
from toolrelay.search._text import Tokenizer
from toolrelay.tools._base import ToolDefinition

from ._catalog import CATALOG, CATALOG_ZH
from ._permissions import assert_equals_an_index_of_the_subset, assert_ranks_permitted_tools_alone


@pytest.fixture
def index() -> BM25ToolIndex:
    index = BM25ToolIndex()
    index.index(CATALOG)
    return index


def names(index: BM25ToolIndex, query: str, k: int = 5) -> list[str]:
    return index.search(SearchRequest(query=query, max_results=k)).names


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("weather in Paris", ["get_weather", "get_forecast"]),
        ("refund a failed payment", ["refund.find_failed_orders", "refund.issueRefund"]),
        (
            "send a message by email",
            ["send_email", "refund.find_failed_orders", "shop_search_orders"],
        ),
        # stemming: "forecasts" finds "forecast"; the enum value "euro"/"EUR" does not match
        ("forecasts", ["get_forecast"]),
        # parameter enum values are indexed
        ("fahrenheit", ["get_weather"]),
        ("JPY", ["convert_currency"]),
    ],
)
def test_rankings(index: BM25ToolIndex, query: str, expected: list[str]) -> None:
    assert names(index, query) == expected


def test_name_words_count_more_than_description_words() -> None:
    catalog = [
        ToolDefinition(name="archive_report", description="Store a document for later."),
        ToolDefinition(name="store_document", description="Archive a report for later."),
    ]
    boosted = BM25ToolIndex()
    boosted.index(catalog)
    assert names(boosted, "archive") == ["archive_report", "store_document"]
    flat = BM25ToolIndex(name_boost=1)
    flat.index(catalog)
    flat_hits = flat.search(SearchRequest(query="archive")).hits
    assert flat_hits[0].score == pytest.approx(flat_hits[1].score)


def test_parameters_can_be_left_out(index: BM25ToolIndex) -> None:
    bare = BM25ToolIndex(include_parameters=False)
    bare.index(CATALOG)
    assert names(bare, "fahrenheit") == []
    assert names(index, "fahrenheit") == ["get_weather"]


def test_terms_of_a_tool() -> None:
    index = BM25ToolIndex(name_boost=2, tokenizer=Tokenizer(stem=False))
    text = tool_text(CATALOG[7])  # convert_currency
    assert index.terms_of(text) == [
        "convert",
        "currency",
        "convert",
        "currency",
        "convert",
        "amount",
        "money",
        "between",
        "currencies",
        "amount",
        "target",
        "usd",
        "eur",
        "jpy",
    ]


def test_tools_without_text_and_unknown_words() -> None:
    index = BM25ToolIndex()
    index.index([ToolDefinition(name="x", description=""), *CATALOG[:2]])
    assert names(index, "weather") == ["get_weather", "get_forecast"]
    assert names(index, "unknownword") == []


@pytest.fixture
def index_zh() -> BM25ToolIndex:
    index = BM25ToolIndex()
    index.index(CATALOG_ZH)
    return index


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("查询上个月退款失败的订单", "refund.findFailedRefunds"),
        ("帮我给这个订单退款", "refund.issueRefund"),
        ("我的快递到哪了", "orders.getOrderStatus"),
        ("北京明天会下雨吗", "weather.forecast"),  # 北京 is in a parameter's description
        ("看看这段文案的情感", "文案分析工具"),
        # mixed Chinese and English, in the style of a developer's request
        ("查询refund失败的订单", "refund.findFailedRefunds"),
        ("findFailedRefunds", "refund.findFailedRefunds"),
        ("send an email", "send_email"),
    ],
)
def test_a_chinese_catalog_ranks_the_tool_asked_for_first(
    index_zh: BM25ToolIndex, query: str, first: str
) -> None:
    assert names(index_zh, query)[0] == first


def test_chinese_stop_words_do_not_find_tools(index_zh: BM25ToolIndex) -> None:
    assert names(index_zh, "帮我一下") == []


def test_terms_of_a_chinese_tool() -> None:
    index = BM25ToolIndex(name_boost=1, tokenizer=Tokenizer(segment=False))
    text = tool_text(CATALOG_ZH[3])  # weather.forecast
    assert index.terms_of(text) == [
        "weather",
        "forecast",
        # 查询城市未来五天的天气预报: bigrams, then characters (的 dropped)
        *["查询", "询城", "城市", "市未", "未来", "来五", "五天", "天的", "的天", "天气"],
        *["气预", "预报"],
        *["查", "询", "城", "市", "未", "来", "五", "天", "天", "气", "预", "报"],
        # parameters: the name "city", then 城市名称 and 例如北京, split at the comma
        "citi",
        *["城市", "市名", "名称", "城", "市", "名", "称"],
        *["例如", "如北", "北京", "例", "如", "北", "京"],
    ]


def test_a_catalog_without_any_term_matches_nothing_and_does_not_fail() -> None:
    index = BM25ToolIndex()
    # one-letter names and a description of stop words leave no term to index
    index.index(
        [ToolDefinition(name="a", description="的"), ToolDefinition(name="b", description="")]
    )
    assert index.search(SearchRequest(query="a b anything")).hits == ()
    assert len(index) == 2


# --- permitted subsets, and the reference implementation -----------------------------------

RESTBENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "restbench"


def restbench() -> tuple[list[ToolDefinition], list[str]]:
    dataset = load_dataset(RESTBENCH)
    return list(dataset.tools), [q.query for q in dataset.queries[:40]]


def test_a_forbidden_tool_changes_no_answer() -> None:
    assert_ranks_permitted_tools_alone(BM25ToolIndex)
    assert_ranks_permitted_tools_alone(BM25ToolIndex, category="refund")


def test_term_statistics_come_from_the_permitted_tools() -> None:
    # "refund" is rare among the permitted tools; forbidden tools full of it make it common
    # (a lower idf) and the tools longer on average: over the whole catalog, scores move.
    refunds = [
        ToolDefinition(name=f"secret_{i}", description="refund refund refund order")
        for i in range(30)
    ]
    mixed = BM25ToolIndex()
    mixed.index([*CATALOG, *refunds])
    alone = BM25ToolIndex()
    alone.index(CATALOG)
    permitted = frozenset(t.name for t in CATALOG)
    for query in ("refund an order", "order status"):
        got = mixed.search(SearchRequest(query=query, allowed=permitted)).hits
        assert got == alone.search(SearchRequest(query=query)).hits
        whole = mixed.scores(query)[: len(CATALOG)]
        assert not np.array_equal(whole, alone.scores(query))  # what the statistics change


def test_random_permitted_subsets_rank_as_an_index_of_the_subset_alone() -> None:
    tools, queries = restbench()
    assert_equals_an_index_of_the_subset(BM25ToolIndex, tools, queries)
    zh = list(CATALOG_ZH)
    assert_equals_an_index_of_the_subset(BM25ToolIndex, zh, ["退款失败的订单", "天气"], subsets=6)


def test_scores_are_those_of_bm25s_lucene_to_the_bit() -> None:
    bm25s = pytest.importorskip("bm25s", reason=needs_extra("dev"))
    tools, queries = restbench()
    for catalog, asked in ((tools, queries), (list(CATALOG_ZH), ["退款失败的订单", "refund"])):
        index = BM25ToolIndex()
        index.index(catalog)
        reference = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
        reference.index([index.terms_of(tool_text(t)) for t in catalog], show_progress=False)
        for query in asked:
            ids = reference.get_tokens_ids(index.tokenizer.terms(query))
            expected = reference.get_scores_from_ids(ids).astype(np.float32)
            assert np.array_equal(index.scores(query), expected), query


def test_a_query_is_ranked_by_its_first_distinct_terms_only() -> None:
    index = BM25ToolIndex()
    index.index(CATALOG)
    filler = " ".join(f"w{i}x" for i in range(MAX_QUERY_TERMS))  # distinct terms, none known
    assert names(index, f"{filler} weather") == []
    assert names(index, f"weather {filler}") == ["get_weather", "get_forecast"]
    # repeats of a term already counted are still counted
    assert index.scores(f"weather {filler} weather")[0] > index.scores(f"weather {filler}")[0]


def test_a_huge_query_is_cut_and_answered() -> None:
    index = BM25ToolIndex()
    index.index(CATALOG)
    response = index.search(SearchRequest(query="weather " * 2_000_000))
    assert len(response.query) == MAX_QUERY_LENGTH
    assert response.names == ["get_weather", "get_forecast"]
