"""BM25 keyword search over tool names, descriptions and parameters (on ``bm25s``).

Each field of a tool (the words of its name, its description, its parameters) is a separate
BM25 index over stemmed terms, and a tool's score is the weighted sum of its field scores.
Separate fields keep a long parameter list from drowning a telling name, and let the name
count more than the same word deep in a description. The heavy lifting (the sparse
term-by-tool score matrix) is done by ``bm25s``, so a search over thousands of tools is a
few sparse column sums.

Scores are BM25 sums, unbounded above; ``min_score`` on this scale depends on the catalog.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from toolrelay.search.documents import ToolText
from toolrelay.search.scoring import Scores, ScoringToolIndex
from toolrelay.search.text import Tokenizer
from toolrelay.tools.base import ToolDefinition

__all__ = ["BM25ToolIndex", "FieldWeights"]


@dataclass(frozen=True, kw_only=True)
class FieldWeights:
    """How much each field of a tool counts in its BM25 score.

    Attributes:
        name: The words of the tool's name.
        description: The description.
        parameters: Parameter names, descriptions and enumerated values.
    """

    name: float = 1.5
    description: float = 1.0
    parameters: float = 0.4


@dataclass(frozen=True)
class _Fields:
    engines: tuple[tuple[float, Any], ...]
    size: int


class BM25ToolIndex(ScoringToolIndex):
    """Ranks tools by BM25 over their name words, description and parameters.

    Args:
        weights: Per-field weights; the name counts most by default.
        k1: BM25 term-frequency saturation.
        b: BM25 length normalisation.
        tokenizer: How text becomes terms (stemmed English with stop words by default).

    Example:
        >>> index = BM25ToolIndex()
        >>> index.index(catalog.definitions())
        >>> index.search(SearchRequest(query="refund a failed order")).names
    """

    search_type: ClassVar[str] = "bm25"

    def __init__(
        self,
        *,
        weights: FieldWeights | None = None,
        k1: float = 1.2,
        b: float = 0.75,
        tokenizer: Tokenizer | None = None,
    ) -> None:
        super().__init__()
        self.weights = weights or FieldWeights()
        self.k1 = k1
        self.b = b
        self.tokenizer = tokenizer or Tokenizer()

    def _build(self, definitions: Sequence[ToolDefinition], texts: Sequence[ToolText]) -> Any:
        tok = self.tokenizer
        fields = (
            (self.weights.name, [tok.terms(t.name_words) for t in texts]),
            (self.weights.description, [tok.terms(t.description) for t in texts]),
            (self.weights.parameters, [tok.terms(t.parameters) for t in texts]),
        )
        engines = tuple(
            (weight, self._engine(corpus))
            for weight, corpus in fields
            if weight > 0 and any(corpus)
        )
        return _Fields(engines=engines, size=len(texts))

    def _engine(self, corpus: list[list[str]]) -> Any:
        import bm25s

        # bm25s logs a line per build, and its progress bars would go to stderr.
        logging.getLogger("bm25s").setLevel(logging.WARNING)
        engine = bm25s.BM25(k1=self.k1, b=self.b, method="lucene")
        engine.index(corpus, show_progress=False)
        return engine

    def _score(self, payload: Any, query: str) -> Scores:
        fields: _Fields = payload
        total = np.zeros(fields.size, dtype=np.float32)
        terms = self.tokenizer.terms(query)
        if not terms:
            return total
        for weight, engine in fields.engines:
            ids = engine.get_tokens_ids(terms)
            if ids:
                total += weight * engine.get_scores_from_ids(ids)
        return total
