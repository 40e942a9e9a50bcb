"""The tool indexes the command line offers, by name, and building one for a catalog.

Each kind maps to a class of :mod:`toolrelay.search`, made with its defaults: ``regex``
matches a pattern against names and descriptions, ``bm25`` ranks by keywords, ``vector`` by
embedding similarity (needs the ``embeddings`` extra), ``hybrid`` fuses keywords and
embeddings, and ``auto`` is what :func:`toolrelay.search.factory.default_index` recommends for
the installed packages. Building an index that embeds can take minutes, so it runs under a
progress bar.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import typer

from toolrelay.cli.output import progress
from toolrelay.exceptions import ConfigurationError
from toolrelay.search.base import ToolIndex
from toolrelay.tools.base import ToolDefinition

__all__ = ["BuiltIndex", "IndexType", "build_index", "make_index", "parse_index_type"]


class IndexType(StrEnum):
    """The kinds of tool index, as named by ``--index``."""

    REGEX = "regex"
    BM25 = "bm25"
    VECTOR = "vector"
    HYBRID = "hybrid"
    AUTO = "auto"


def parse_index_type(value: str | IndexType) -> IndexType:
    """The index kind named by ``value`` (any case).

    Raises:
        typer.BadParameter: No index of that kind.
    """
    try:
        return IndexType(str(value).strip().lower())
    except ValueError:
        choices = ", ".join(kind.value for kind in IndexType)
        raise typer.BadParameter(f"unknown index type {value!r}; choose one of {choices}") from None


# The factory (a class, or for "auto" a function) in toolrelay.search, and the module that
# defines it; each is called without arguments.
_FACTORIES: dict[IndexType, tuple[str, str]] = {
    IndexType.REGEX: ("RegexToolIndex", "toolrelay.search.regex"),
    IndexType.BM25: ("BM25ToolIndex", "toolrelay.search.bm25"),
    IndexType.VECTOR: ("VectorToolIndex", "toolrelay.search.vector"),
    IndexType.HYBRID: ("HybridToolIndex", "toolrelay.search.hybrid"),
    IndexType.AUTO: ("default_index", "toolrelay.search.factory"),
}
_EMBEDDING = {IndexType.VECTOR, IndexType.HYBRID}


@dataclass(frozen=True, kw_only=True)
class BuiltIndex:
    """An index with the catalog indexed.

    Attributes:
        index: The index, ready to search.
        kind: Its kind.
        seconds: How long indexing took.
    """

    index: ToolIndex
    kind: IndexType
    seconds: float


def make_index(kind: IndexType) -> ToolIndex:
    """A new, empty index of this kind with default settings.

    Raises:
        ConfigurationError: This kind is not available in the installed toolrelay, or it
            needs packages that are not installed.
    """
    factory_name, module_name = _FACTORIES[kind]
    search = importlib.import_module("toolrelay.search")
    factory = getattr(search, factory_name, None)
    if factory is None:
        try:
            factory = getattr(importlib.import_module(module_name), factory_name)
        except (ImportError, AttributeError) as exc:
            if isinstance(exc, ImportError) and exc.name != module_name:
                raise _missing_packages(kind, exc) from exc
            raise ConfigurationError(
                f"the {kind} index is not available in this version of toolrelay"
            ) from exc
    try:
        made = factory()
    except ImportError as exc:
        raise _missing_packages(kind, exc) from exc
    if not isinstance(made, ToolIndex):
        raise ConfigurationError(f"{factory_name} does not implement the ToolIndex protocol")
    return made


def build_index(kind: IndexType, definitions: Sequence[ToolDefinition]) -> BuiltIndex:
    """Make an index of this kind and index ``definitions``, with a progress bar on stderr.

    Raises:
        ConfigurationError: See :func:`make_index`.
    """
    verb = "Embedding" if kind in _EMBEDDING else "Indexing"
    with progress(f"{verb} {len(definitions):,} tools ({kind})"):
        started = time.perf_counter()
        index = make_index(kind)
        try:
            index.index(definitions)
        except ImportError as exc:
            raise _missing_packages(kind, exc) from exc
        seconds = time.perf_counter() - started
    return BuiltIndex(index=index, kind=kind, seconds=seconds)


def _missing_packages(kind: IndexType, exc: ImportError) -> ConfigurationError:
    hint = ' (pip install "toolrelay[embeddings]")' if kind in _EMBEDDING else ""
    missing = exc.name or str(exc)
    return ConfigurationError(f"the {kind} index needs {missing!r}, which is not installed{hint}")
