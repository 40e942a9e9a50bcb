"""The tool indexes the command line offers, by name, and building one for a catalog.

Each kind maps to a class of :mod:`toolrelay.search`, made with its defaults: ``regex``
matches a pattern against names and descriptions, ``bm25`` ranks by keywords, ``vector`` by
embedding similarity (needs the ``embeddings`` extra), ``hybrid`` fuses keywords and
embeddings, and ``auto`` is what :func:`toolrelay.search.default_index` recommends for
the installed packages.

:func:`build_index` is how every command builds one: the embedding model is loaded first,
under a spinner and timed on its own, then the catalog is indexed under a progress bar fed
by the index itself (:data:`~toolrelay.search._base.IndexProgress`: ``Embedding 1,200/2,574
tools ... 0:00:31 remaining``), so neither wait is counted as search time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import typer

from toolrelay.cli._output import missing_extra, progress
from toolrelay.exceptions import ConfigurationError
from toolrelay.search import (
    BM25ToolIndex,
    HybridToolIndex,
    RegexToolIndex,
    VectorToolIndex,
    default_index,
)
from toolrelay.search._auto_embedder import any_embedder_available
from toolrelay.search._base import SearchRequest, SearchResponse, ToolIndex
from toolrelay.search._scoring import ScoringToolIndex
from toolrelay.tools._base import ToolDefinition

__all__ = [
    "BuiltIndex",
    "IndexType",
    "IndexWrapper",
    "build_index",
    "index_catalog",
    "make_index",
    "parse_index_type",
]


class IndexType(StrEnum):
    """The kinds of tool index, as named by ``--index``."""

    REGEX = "regex"
    BM25 = "bm25"
    VECTOR = "vector"
    HYBRID = "hybrid"
    AUTO = "auto"


def parse_index_type(value: str | IndexType) -> IndexType:
    """The index kind named by ``value`` (any case); else :class:`typer.BadParameter`."""
    try:
        return IndexType(str(value).strip().lower())
    except ValueError:
        choices = ", ".join(kind.value for kind in IndexType)
        raise typer.BadParameter(f"unknown index type {value!r}; choose one of {choices}") from None


_FACTORIES: dict[IndexType, Callable[[], ToolIndex]] = {
    IndexType.REGEX: RegexToolIndex,
    IndexType.BM25: BM25ToolIndex,
    IndexType.VECTOR: VectorToolIndex,
    IndexType.HYBRID: HybridToolIndex,
    IndexType.AUTO: default_index,
}
_EMBEDDING = {IndexType.VECTOR, IndexType.HYBRID}
_EMBEDDING_TYPES = {kind.value for kind in _EMBEDDING}  # search_type of an index that embeds


class IndexWrapper:
    """A :class:`~toolrelay.search.ToolIndex` that hands every call to ``inner``.

    Subclasses override the one method they watch.
    """

    def __init__(self, inner: ToolIndex) -> None:
        self.inner = inner

    @property
    def search_type(self) -> str:
        return self.inner.search_type

    @property
    def fingerprint(self) -> str | None:
        return self.inner.fingerprint

    @property
    def ranks_history(self) -> bool:
        """The inner index's, so tool search knows whether it ranks with usage history."""
        return bool(getattr(self.inner, "ranks_history", False))

    def index(self, definitions: Sequence[ToolDefinition]) -> bool:
        return self.inner.index(definitions)

    def search(self, request: SearchRequest) -> SearchResponse:
        return self.inner.search(request)

    def clear(self) -> None:
        self.inner.clear()


@dataclass(frozen=True, kw_only=True)
class BuiltIndex:
    """An index with the catalog indexed.

    Attributes:
        index: The index, ready to search.
        kind: Its kind.
        seconds: How long indexing took (embedding included, model loading not).
        load_seconds: How long loading its embedding model took; ``None`` for an index
            without one.
    """

    index: ToolIndex
    kind: IndexType
    seconds: float
    load_seconds: float | None = None

    def timings(self) -> str:
        """``indexed in 0.31 s`` and, for an index with a model, ``model loaded in 3.90 s``."""
        text = f"indexed in {self.seconds:.2f} s"
        if self.load_seconds is not None:
            text += f", model loaded in {self.load_seconds:.2f} s"
        return text


def make_index(kind: IndexType, *, named_as: str | None = None) -> ToolIndex:
    """A new, empty index of this kind with default settings.

    Raises:
        ConfigurationError: This kind needs packages that are not installed (the error
            names the extra as the user asked for the index: ``named_as``, by default
            ``--index KIND``).
    """
    if kind in _EMBEDDING and not any_embedder_available():
        raise missing_extra(named_as or f"--index {kind}", "embeddings")
    try:
        return _FACTORIES[kind]()
    except ImportError as exc:
        raise _missing_packages(kind, exc) from exc


def build_index(kind: IndexType, definitions: Sequence[ToolDefinition]) -> BuiltIndex:
    """Make an index of this kind and index ``definitions``, showing progress on stderr.

    Raises:
        ConfigurationError: See :func:`make_index`.
    """
    index = make_index(kind)
    try:
        load_seconds, seconds = index_catalog(index, definitions)
    except ImportError as exc:
        raise _missing_packages(kind, exc) from exc
    return BuiltIndex(index=index, kind=kind, seconds=seconds, load_seconds=load_seconds)


def index_catalog(
    index: ToolIndex, definitions: Sequence[ToolDefinition]
) -> tuple[float | None, float]:
    """Load ``index``'s model, then index ``definitions``, each under its own progress bar.

    Returns:
        The seconds loading the model took (``None`` for an index without one) and the
        seconds indexing took.
    """
    load_seconds = None
    embeds = index.search_type in _EMBEDDING_TYPES
    if embeds and isinstance(index, ScoringToolIndex):
        with progress("Loading the embedding model"):
            started = time.perf_counter()
            index.load_models(definitions)
            load_seconds = time.perf_counter() - started
    with progress(
        "Embedding" if embeds else "Indexing", total=len(definitions), unit="tools"
    ) as bar:
        started = time.perf_counter()
        if isinstance(index, ScoringToolIndex):
            index.index(definitions, progress=bar)
        else:
            index.index(definitions)
        seconds = time.perf_counter() - started
    return load_seconds, seconds


def _missing_packages(kind: IndexType, exc: ImportError) -> ConfigurationError:
    if kind in _EMBEDDING:
        return missing_extra(f"--index {kind}", "embeddings")
    missing = exc.name or str(exc)
    return ConfigurationError(f"the {kind} index needs {missing!r}, which is not installed")
