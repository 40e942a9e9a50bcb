"""Index kinds by name, and building one for a catalog."""

from __future__ import annotations

import pytest
import typer

from toolrelay.cli.indexes import IndexType, build_index, make_index, parse_index_type
from toolrelay.search.base import SearchRequest, ToolIndex
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
    from toolrelay.search.embedders import embeddings_available

    expected = "hybrid" if embeddings_available() else "bm25"
    assert make_index(IndexType.AUTO).search_type == expected
