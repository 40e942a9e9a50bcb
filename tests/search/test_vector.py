from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt
import pytest

from toolrelay.exceptions import ConfigurationError
from toolrelay.search._base import SearchRequest
from toolrelay.search._cache import EmbeddingCache
from toolrelay.search._vector import VectorToolIndex
from toolrelay.testing._embedders import HashingEmbedder
from toolrelay.tools._base import ToolDefinition

from ._catalog import CATALOG
from ._permissions import (
    PERMITTED,
    QUERIES,
    assert_equals_an_index_of_the_subset,
    assert_ranks_permitted_tools_alone,
)


def names(index: VectorToolIndex, query: str, k: int = 5) -> list[str]:
    return index.search(SearchRequest(query=query, max_results=k)).names


def test_ranks_by_cosine_similarity() -> None:
    index = VectorToolIndex(HashingEmbedder(), cache=False)
    index.index(CATALOG)
    assert names(index, "weather in Paris", 2) == ["get_weather", "get_forecast"]
    assert names(index, "send a message by email", 1) == ["send_email"]
    hits = index.search(SearchRequest(query="forecast")).hits
    assert hits[0].name == "get_forecast"
    assert -1.0 <= hits[-1].score <= hits[0].score <= 1.0
    # tools with no positive similarity do not match
    assert index.search(SearchRequest(query="zzz")).total == 0


def test_second_build_of_an_unchanged_catalog_embeds_nothing(cache: EmbeddingCache) -> None:
    first = HashingEmbedder()
    VectorToolIndex(first, cache=cache).index(CATALOG)
    assert first.calls == 1
    assert first.texts_embedded == len(CATALOG)
    assert cache.count("hashing-256") == len(CATALOG)

    second = HashingEmbedder()  # a new process, say: same model, same cache file
    index = VectorToolIndex(second, cache=cache)
    index.index(CATALOG)
    assert second.calls == 0
    assert names(index, "weather in Paris", 1) == ["get_weather"]
    assert second.kinds == ["query"]


def test_only_changed_tools_are_embedded_again(cache: EmbeddingCache) -> None:
    VectorToolIndex(HashingEmbedder(), cache=cache).index(CATALOG)
    changed = [*CATALOG[:-1], ToolDefinition(name="convert_currency", description="New words.")]
    embedder = HashingEmbedder()
    VectorToolIndex(embedder, cache=cache).index(changed)
    assert embedder.texts_embedded == 1


def test_the_cache_is_keyed_by_model(cache: EmbeddingCache) -> None:
    VectorToolIndex(HashingEmbedder(), cache=cache).index(CATALOG)
    other = HashingEmbedder(dim=64)  # model id "hashing-64"
    VectorToolIndex(other, cache=cache).index(CATALOG)
    assert other.texts_embedded == len(CATALOG)
    renamed = HashingEmbedder()
    VectorToolIndex(renamed, model_id="my-model", cache=cache).index(CATALOG)
    assert renamed.texts_embedded == len(CATALOG)
    assert cache.count() == 3 * len(CATALOG)


def test_without_a_model_id_nothing_is_written_to_disk(cache: EmbeddingCache) -> None:
    class Anonymous:
        def __init__(self) -> None:
            self.inner = HashingEmbedder()

        def embed(
            self, texts: Sequence[str], *, kind: Literal["query", "document"]
        ) -> npt.NDArray[np.float32]:
            return self.inner.embed(texts, kind=kind)

    index = VectorToolIndex(Anonymous(), cache=cache)
    index.index(CATALOG)
    assert index.model_id is None
    assert cache.count() == 0
    assert names(index, "weather", 1) == ["get_weather"]


def test_an_unusable_cache_slows_indexing_but_does_not_stop_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    embedder = HashingEmbedder()
    index = VectorToolIndex(embedder, cache=EmbeddingCache(blocker / "sub" / "cache.sqlite3"))
    index.index(CATALOG)
    assert embedder.texts_embedded == len(CATALOG)
    assert names(index, "weather", 1) == ["get_weather"]
    assert "embedding cache not used" in caplog.text


def test_duplicate_passages_are_embedded_once() -> None:
    embedder = HashingEmbedder()
    vectors = VectorToolIndex(embedder, cache=False).embed_documents(["same", "same", "other"])
    assert embedder.texts_embedded == 2
    assert vectors.shape == (3, 256)
    assert np.array_equal(vectors[0], vectors[1])


def test_queries_of_several_sentences_are_embedded_sentence_by_sentence() -> None:
    embedder = HashingEmbedder()
    index = VectorToolIndex(embedder, cache=False)
    index.index(CATALOG)
    query = "I plan a trip to Paris. What will the weather be like? Also convert 100 dollars."
    assert index.query_pieces(query) == [
        "I plan a trip to Paris.",
        "What will the weather be like?",
        "Also convert 100 dollars.",
    ]
    assert index.query_pieces("Thanks! Weather in Paris?") == ["Thanks! Weather in Paris?"]
    whole = VectorToolIndex(embedder, cache=False, split_sentences=False)
    assert whole.query_pieces(query) == [query]
    whole.index(CATALOG)
    two_needs = "Current weather in Paris tonight. Convert an amount of money to euros."
    split_hits = index.search(SearchRequest(query=two_needs, max_results=2)).hits
    whole_hits = {h.name: h.score for h in whole.search(SearchRequest(query=two_needs)).hits}
    assert [h.name for h in split_hits] == ["convert_currency", "get_weather"]
    # each tool is scored by the sentence that asks for it, not by the blend of both
    for hit in split_hits:
        assert hit.score > whole_hits[hit.name] + 0.1


def test_recent_queries_are_not_embedded_again() -> None:
    embedder = HashingEmbedder()
    index = VectorToolIndex(embedder, cache=False)
    index.index(CATALOG)
    names(index, "weather")
    calls = embedder.calls
    names(index, "weather")
    assert embedder.calls == calls


def test_embedders_returning_bad_shapes_are_reported() -> None:
    class Flat:
        model_id = "flat"

        def embed(
            self, texts: Sequence[str], *, kind: Literal["query", "document"]
        ) -> npt.NDArray[np.float32]:
            return np.zeros(len(texts), dtype=np.float32)

    with pytest.raises(ConfigurationError, match="shape"):
        VectorToolIndex(Flat(), cache=False).index(CATALOG)


def _tools(count: int) -> list[ToolDefinition]:
    return [
        ToolDefinition(name=f"tool_{i}", description=f"Tool number {i} handles case {i}.")
        for i in range(count)
    ]


def test_progress_counts_the_tools_embedded_batch_by_batch(cache: EmbeddingCache) -> None:
    reports: list[tuple[int, int]] = []
    VectorToolIndex(HashingEmbedder(), cache=cache).index(
        _tools(150), progress=lambda done, total: reports.append((done, total))
    )
    assert reports == [(0, 150), (128, 150), (150, 150)]

    # Vectors already in the cache count as done from the first report; only new ones follow.
    reports.clear()
    VectorToolIndex(HashingEmbedder(), cache=cache).index(
        _tools(160), progress=lambda done, total: reports.append((done, total))
    )
    assert reports == [(150, 160), (160, 160)]


def test_progress_is_not_called_when_nothing_is_rebuilt() -> None:
    index = VectorToolIndex(HashingEmbedder(), cache=False)
    index.index(_tools(3))
    reports: list[tuple[int, int]] = []
    assert index.index(_tools(3), progress=lambda d, t: reports.append((d, t))) is False
    assert reports == []


class LoadingEmbedder(HashingEmbedder):
    """A hashing embedder that, like the bundled ones, loads a model ahead when asked."""

    def __init__(self, events: list[str], model_id: str) -> None:
        super().__init__(model_id=model_id)
        self.events = events

    def load(self) -> None:
        self.events.append(f"load {self.model_id}")

    def embed(
        self, texts: Sequence[str], *, kind: Literal["query", "document"]
    ) -> npt.NDArray[np.float32]:
        self.events.append(f"{kind} {self.model_id}")
        return super().embed(texts, kind=kind)


def test_a_mixed_catalog_reports_both_models_share_and_loads_both_ahead(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from toolrelay.search import _vector as vector
    from toolrelay.search._auto_embedder import LanguageRoute

    events: list[str] = []
    route = LanguageRoute(
        english=LoadingEmbedder(events, "en"), multilingual=LoadingEmbedder(events, "zh")
    )
    monkeypatch.setattr(vector, "any_embedder_available", lambda: True)
    monkeypatch.setattr(vector, "catalog_embedder", lambda definitions: route)
    index = VectorToolIndex(cache=False)
    catalog = _tools(150)

    index.load_models(catalog)
    assert events == ["load en", "load zh"]
    reports: list[tuple[int, int]] = []
    index.index(catalog, progress=lambda done, total: reports.append((done, total)))
    # One embedding per tool and model: the second model's share follows the first's.
    assert reports == [(0, 300), (128, 300), (150, 300), (150, 300), (278, 300), (300, 300)]
    assert events[2:] == ["document en", "document en", "document zh", "document zh"]


def test_load_models_leaves_an_embedder_without_load_to_load_on_use() -> None:
    embedder = HashingEmbedder()
    VectorToolIndex(embedder, cache=False).load_models(_tools(2))
    assert embedder.calls == 0


def test_a_forbidden_tool_changes_no_answer() -> None:
    assert_ranks_permitted_tools_alone(lambda: VectorToolIndex(HashingEmbedder(), cache=False))


def test_only_permitted_tools_are_ranked() -> None:
    index = VectorToolIndex(HashingEmbedder(), cache=False)
    index.index(CATALOG)
    permitted = frozenset({"get_forecast", "send_email"})
    response = index.search(SearchRequest(query="weather in Paris", allowed=permitted))
    assert response.names == ["get_forecast"]
    scores = index.scores("weather in Paris", np.array([t.name in permitted for t in CATALOG]))
    assert all(s == 0 for s, t in zip(scores, CATALOG, strict=True) if t.name not in permitted)
    assert scores[1] > 0  # get_forecast


def test_random_permitted_subsets_rank_as_an_index_of_the_subset_alone() -> None:
    assert_equals_an_index_of_the_subset(
        lambda: VectorToolIndex(HashingEmbedder(), cache=False), PERMITTED, QUERIES, subsets=6
    )
