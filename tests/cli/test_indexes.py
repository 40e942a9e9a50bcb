"""Index kinds by name, and building one for a catalog."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import pytest
import typer

from toolrelay.cli import _indexes as indexes
from toolrelay.cli._indexes import IndexType, build_index, make_index, parse_index_type
from toolrelay.search._base import SearchRequest, ToolIndex
from toolrelay.search._vector import VectorToolIndex
from toolrelay.testing import HashingEmbedder
from toolrelay.tools import ToolDefinition


@pytest.mark.parametrize("text", ["bm25", "BM25", " regex "])
def test_parse_index_type_ignores_case_and_spaces(text: str) -> None:
    assert parse_index_type(text) is IndexType(text.strip().lower())


def test_parse_index_type_lists_the_choices() -> None:
    with pytest.raises(typer.BadParameter, match="choose one of regex, bm25, vector, hybrid, auto"):
        parse_index_type("fuzzy")


@pytest.mark.parametrize("kind", [IndexType.BM25, IndexType.REGEX])
def test_make_index_gives_an_empty_index_of_that_kind(kind: IndexType) -> None:
    index = make_index(kind)
    assert isinstance(index, ToolIndex)
    assert index.search_type == kind.value
    assert index.fingerprint is None


def test_build_index_indexes_the_catalog() -> None:
    definitions = [
        ToolDefinition(name="get_weather", description="Weather for a city."),
        ToolDefinition(name="send_email", description="Send an email."),
    ]
    built = build_index(IndexType.BM25, definitions)
    assert built.kind is IndexType.BM25
    assert built.seconds >= 0
    assert built.index.search(SearchRequest(query="email")).names == ["send_email"]


def test_auto_is_the_recommended_index_for_the_installation() -> None:
    from toolrelay.search._embedders import embeddings_available

    expected = "hybrid" if embeddings_available() else "bm25"
    assert make_index(IndexType.AUTO).search_type == expected


class Recording(HashingEmbedder):
    """Records when it is loaded and when it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[str] = []

    def load(self) -> None:
        self.events.append("load")

    def embed(self, texts: Sequence[str], *, kind: Literal["query", "document"]) -> Any:
        self.events.append(kind)
        return super().embed(texts, kind=kind)


def test_the_model_is_loaded_before_indexing_and_searching(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    embedder = Recording()
    monkeypatch.setattr(indexes, "make_index", lambda *_, **__: VectorToolIndex(embedder))
    built = build_index(IndexType.VECTOR, [ToolDefinition(name="ping", description="Ping.")])
    assert embedder.events == ["load", "document"]
    assert built.load_seconds is not None
    assert "model loaded in" in built.timings()
    built.index.search(SearchRequest(query="ping"))
    assert embedder.events == ["load", "document", "query"]
    monkeypatch.undo()
    bm25 = build_index(IndexType.BM25, [ToolDefinition(name="ping", description="Ping.")])
    assert bm25.load_seconds is None
    assert bm25.timings().startswith("indexed in ")
