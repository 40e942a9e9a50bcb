from __future__ import annotations

import pytest

from toolrelay.exceptions import ConfigurationError
from toolrelay.lint import _indexes as indexes
from toolrelay.lint._indexes import lint_index
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.search._hybrid import HybridToolIndex

from .test_query_vectors import LengthEmbedder


def test_bm25_and_indexes_of_your_own() -> None:
    made = lint_index("bm25")
    assert isinstance(made.index, BM25ToolIndex)
    assert made.prime is None
    mine = BM25ToolIndex()
    assert lint_index(mine).index is mine


def test_auto_is_bm25_without_the_embeddings_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(indexes, "embeddings_available", lambda: False)
    assert isinstance(lint_index("auto").index, BM25ToolIndex)


def test_an_embedder_makes_auto_hybrid_with_query_priming() -> None:
    made = lint_index("auto", embedder=LengthEmbedder(), cache=False)
    assert isinstance(made.index, HybridToolIndex)
    assert made.prime is not None


def test_hybrid_without_the_extra_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing() -> None:
        raise ConfigurationError("the bundled MiniLM model is not installed")

    monkeypatch.setattr(indexes, "minilm_embedder", missing)
    with pytest.raises(ConfigurationError, match="not installed"):
        lint_index("hybrid")
