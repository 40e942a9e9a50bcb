"""BM25 keyword search over tool names, descriptions and parameters.

Each tool is one document: the words of its name (counted ``name_boost`` times, so a word in
the name weighs more than the same word deep in a description), its description, and its
parameters' names, descriptions and enumerated values. Text is cut by the shared
:class:`~toolrelay.search.Tokenizer` (identifiers split, stop words dropped, Snowball
stems; Chinese, Japanese and Korean as bigrams, single ideographs and dictionary words).

The index is an inverted index in numpy arrays (:class:`Postings`: for every term, the tools
it occurs in and how often; every tool's length in terms). A search reads the postings of
its own terms only. Every statistic BM25 ranks by (how many tools there are, how many of them
a term occurs in, their average length) is taken over the tools the search may return
(``SearchRequest.allowed``): a search ranks the permitted tools, with the same scores, exactly
as an index built on those tools alone, and a tool outside them changes no answer. For the
whole catalog the weights are computed once at build time; for a permitted subset, per search
(a pass over each query term's postings).

:class:`BM25` is the ranking function, Lucene's variant (as ``bm25s`` computes it, to the
bit): a term weighs ``idf * tf / (tf + k1 * (1 - b + b * length / average_length))`` with
``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``, summed over the query's terms (a term written
twice counts twice). The PostgreSQL index stores the same postings and ranks with the same
function, so both order tools identically.

The defaults (``name_boost=3``, ``k1=1.2``, ``b=0.75``, parameters indexed) were checked on
the Chinese benchmarks too: ``name_boost`` 1-5, ``k1`` 0.9-2.0 and ``b`` 0.5-0.9 all stay
within 1 NDCG@10 point of them, and indexing parameters adds 4-12 points.

Scoring the fields as one document was measured against separate per-field BM25 indexes
with weights: one document won on every benchmark (it keeps BM25's length normalisation and
term saturation over the whole tool).

Scores are BM25 sums, unbounded above; ``min_score`` on this scale depends on the catalog.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, Protocol

import numpy as np
import numpy.typing as npt

from toolrelay.search._base import MAX_QUERY_TERMS
from toolrelay.search._documents import ToolText
from toolrelay.search._history import DEFAULT_HISTORY_WEIGHT, HistoryEvidence
from toolrelay.search._masks import Mask
from toolrelay.search._scoring import Scores, ScoringToolIndex
from toolrelay.search._text import Tokenizer
from toolrelay.tools._base import ToolDefinition

__all__ = [
    "BM25",
    "BM25Analysis",
    "BM25ToolIndex",
    "Postings",
    "QueryTerms",
    "TermRow",
    "TermRows",
    "history_keyword_similarity",
]

Positions = npt.NDArray[np.int32]
"""Tool positions in catalog order, ascending."""
Counts = npt.NDArray[np.float32]
"""How often a term occurs in each tool (whole numbers)."""


TermRow = tuple[Positions, Counts, Counts | None]
"""One term's postings: its tools, how often it occurs in each, and (when computed) each
posting's weight with every tool permitted."""


class TermRows(Protocol):
    """Where a search finds its terms' postings (:class:`Postings`, or a plain dict)."""

    def get(self, term: str, /) -> TermRow | None:
        """The postings of ``term``; ``None`` when no tool has it."""
        ...


@dataclass(frozen=True, kw_only=True, eq=False)
class Postings:
    """An inverted index: the tools each term occurs in, how often, and every tool's length.

    Attributes:
        vocabulary: Each term's row.
        starts: Row ``r`` spans ``tools[starts[r]:starts[r + 1]]`` (``size`` = rows + 1).
        tools: The tools of each row, ascending.
        counts: How often the row's term occurs in each of them.
        lengths: Every tool's length in terms (repeats counted), in catalog order.
        weights: Every posting's weight with every tool permitted (:meth:`BM25.weights`), or
            ``None`` until computed.
    """

    vocabulary: Mapping[str, int]
    starts: npt.NDArray[np.int64]
    tools: Positions
    counts: Counts
    lengths: npt.NDArray[np.int64]
    weights: Counts | None = None

    @classmethod
    def of_corpus(cls, corpus: Sequence[Sequence[str]]) -> Postings:
        """The postings of a corpus: one list of terms per tool, in catalog order."""
        size = len(corpus)
        lengths = np.fromiter((len(terms) for terms in corpus), dtype=np.int64, count=size)
        vocabulary: dict[str, int] = {}
        ids = np.fromiter(
            (vocabulary.setdefault(term, len(vocabulary)) for terms in corpus for term in terms),
            dtype=np.int64,
            count=int(lengths.sum()),
        )
        # One sort of (term, tool) keys gives every term's tools in order, with their counts.
        tool_of = np.repeat(np.arange(size, dtype=np.int64), lengths)
        keys, counts = np.unique(ids * max(size, 1) + tool_of, return_counts=True)
        rows = keys // max(size, 1)
        starts = np.zeros(len(vocabulary) + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=len(vocabulary)), out=starts[1:])
        return cls(
            vocabulary=vocabulary,
            starts=starts,
            tools=(keys % max(size, 1)).astype(np.int32),
            counts=counts.astype(np.float32),
            lengths=lengths,
        )

    @property
    def size(self) -> int:
        """How many tools the postings cover."""
        return int(self.lengths.size)

    @cached_property
    def total_length(self) -> int:
        """The sum of every tool's length."""
        return int(self.lengths.sum())

    def get(self, term: str, /) -> TermRow | None:
        """The postings of ``term``; ``None`` for an unknown term."""
        row = self.vocabulary.get(term)
        if row is None:
            return None
        start, end = int(self.starts[row]), int(self.starts[row + 1])
        weights = None if self.weights is None else self.weights[start:end]
        return self.tools[start:end], self.counts[start:end], weights

    def rows(self) -> list[tuple[str, Positions, Counts]]:
        """Every term with its tools and counts."""
        found = []
        for term in self.vocabulary:
            row = self.get(term)
            assert row is not None  # the term is in the vocabulary
            found.append((term, row[0], row[1]))
        return found


@dataclass(frozen=True, kw_only=True)
class BM25Analysis:
    """How a tool and a query become BM25 terms.

    Attributes:
        tokenizer: How text becomes terms.
        name_boost: How many times the terms of a tool's name count.
        include_parameters: Index parameter names, descriptions and enumerated values.
    """

    tokenizer: Tokenizer
    name_boost: int = 3
    include_parameters: bool = True

    def terms_of(self, text: ToolText) -> list[str]:
        """The terms one tool is indexed under (name terms repeated ``name_boost`` times)."""
        tok = self.tokenizer
        terms = tok.terms(text.name_words) * self.name_boost + tok.terms(text.description)
        if self.include_parameters:
            terms += tok.terms(text.parameters)
        return terms

    def query_terms(self, query: str) -> list[str]:
        """The terms of ``query``, repeats kept, its first :data:`MAX_QUERY_TERMS` distinct ones."""
        terms = self.tokenizer.terms(query)
        distinct = dict.fromkeys(terms)
        if len(distinct) <= MAX_QUERY_TERMS:
            return terms
        kept = frozenset(list(distinct)[:MAX_QUERY_TERMS])
        return [term for term in terms if term in kept]


@dataclass(frozen=True, kw_only=True)
class BM25:
    """The BM25 ranking function (Lucene's variant), over a permitted subset of tools.

    Attributes:
        k1: Term-frequency saturation.
        b: Length normalisation.
    """

    k1: float = 1.2
    b: float = 0.75

    def scores(
        self,
        rows: TermRows,
        terms: Sequence[str],
        lengths: npt.NDArray[np.int64],
        permitted: Mask | None,
        *,
        total_length: int | None = None,
    ) -> Scores:
        """One score per tool for the query ``terms``.

        Args:
            rows: The postings of (at least) the query's terms; weights given with them are
                read instead of computed when every tool is permitted.
            terms: The query's terms in order, repeats kept.
            lengths: Every tool's length in terms.
            permitted: Rank these tools with statistics of these tools alone; the others
                score 0. ``None``: every tool.
            total_length: ``lengths.sum()``, when the caller knows it already.
        """
        scores = np.zeros(lengths.size, dtype=np.float32)
        if permitted is None:
            tools_count = int(lengths.size)
            total = int(lengths.sum()) if total_length is None else total_length
        else:
            tools_count = int(np.count_nonzero(permitted))
            total = int(lengths[permitted].sum())
        if not terms or total == 0:
            return scores
        average = total / tools_count
        found: dict[str, tuple[Positions, Counts] | None] = {}
        for term in terms:
            if term not in found:
                row = rows.get(term)
                found[term] = (
                    None
                    if row is None
                    else self._term(row, lengths, permitted, tools_count, average)
                )
            hit = found[term]
            if hit is not None:
                tools, values = hit
                np.add.at(scores, tools, values)  # in place: far faster than scores[tools] +=
        return scores

    def weights(self, postings: Postings) -> Counts:
        """Every posting's weight with every tool permitted (what :meth:`scores` reads)."""
        size = postings.size
        if postings.total_length == 0:
            return np.zeros(postings.tools.size, dtype=np.float32)
        frequencies = np.diff(postings.starts)
        idf = np.array([_idf(int(df), size) for df in frequencies], dtype=np.float32).repeat(
            frequencies
        )
        average = postings.total_length / size
        return self._weigh(postings.counts, postings.lengths[postings.tools], idf, average)

    def term_weights(
        self, tools: Positions, counts: Counts, lengths: npt.NDArray[np.int64], total_length: int
    ) -> Counts:
        """One term's weights with every tool permitted: the slice :meth:`weights` would give."""
        if total_length == 0:
            return np.zeros(tools.size, dtype=np.float32)
        idf = np.float32(_idf(int(tools.size), int(lengths.size)))
        return self._weigh(counts, lengths[tools], idf, total_length / lengths.size)

    def _term(
        self,
        row: TermRow,
        lengths: npt.NDArray[np.int64],
        permitted: Mask | None,
        tools_count: int,
        average: float,
    ) -> tuple[Positions, Counts] | None:
        tools, counts, weights = row
        if permitted is None and weights is not None:
            return tools, weights
        if permitted is not None:
            inside = permitted[tools]
            tools, counts = tools[inside], counts[inside]
        if tools.size == 0:
            return None
        idf = np.float32(_idf(int(tools.size), tools_count))
        return tools, self._weigh(counts, lengths[tools], idf, average)

    def _weigh(
        self,
        counts: Counts,
        lengths: npt.NDArray[np.int64],
        idf: np.float32 | npt.NDArray[np.float32],
        average: float,
    ) -> Counts:
        # The operations and their order are bm25s': the same scores to the last bit.
        k1, b = self.k1, self.b
        saturation = counts / (k1 * ((1 - b) + b * lengths.astype(np.float64) / average) + counts)
        weighted: Counts = (np.asarray(idf).astype(np.float64) * saturation).astype(np.float32)
        return weighted


def _idf(df: int, tools_count: int) -> float:
    return math.log(1 + (tools_count - df + 0.5) / (df + 0.5))


class BM25ToolIndex(ScoringToolIndex):
    """Ranks tools by BM25 over their name words, description and parameters.

    Args:
        name_boost: How many times the words of a tool's name count.
        include_parameters: Index parameter names, descriptions and enumerated values.
        k1: BM25 term-frequency saturation.
        b: BM25 length normalisation.
        tokenizer: How text becomes terms (stemmed English without stop words by default).
        prerequisite_lift: See :class:`~toolrelay.search.ScoringToolIndex`.
        history_weight: See :class:`~toolrelay.search.ScoringToolIndex`; past queries are
            compared by keywords (:func:`history_keyword_similarity`).

    Example:
        >>> index = BM25ToolIndex()
        >>> index.index(catalog.definitions())
        >>> index.search(SearchRequest(query="refund a failed order")).names
    """

    search_type: ClassVar[str] = "bm25"

    def __init__(
        self,
        *,
        name_boost: int = 3,
        include_parameters: bool = True,
        k1: float = 1.2,
        b: float = 0.75,
        tokenizer: Tokenizer | None = None,
        prerequisite_lift: float | None = 0.9,
        history_weight: float = DEFAULT_HISTORY_WEIGHT,
    ) -> None:
        super().__init__(prerequisite_lift=prerequisite_lift, history_weight=history_weight)
        self.analysis = BM25Analysis(
            tokenizer=tokenizer or Tokenizer(),
            name_boost=name_boost,
            include_parameters=include_parameters,
        )
        self.ranking = BM25(k1=k1, b=b)
        self._past_terms = QueryTerms(self.analysis.tokenizer)

    @property
    def tokenizer(self) -> Tokenizer:
        """How text becomes terms."""
        return self.analysis.tokenizer

    def _build(self, definitions: Sequence[ToolDefinition], texts: Sequence[ToolText]) -> Any:
        postings = Postings.of_corpus([self.analysis.terms_of(t) for t in texts])
        return dataclasses.replace(postings, weights=self.ranking.weights(postings))

    def terms_of(self, text: ToolText) -> list[str]:
        """The terms one tool is indexed under (name terms repeated ``name_boost`` times)."""
        return self.analysis.terms_of(text)

    def history_similarity(
        self, evidence: HistoryEvidence, query: str, permitted: Mask | None
    ) -> npt.NDArray[np.float32]:
        """Keyword similarity of each past query (:func:`history_keyword_similarity`)."""
        return history_keyword_similarity(evidence, self._past_terms, query, permitted)

    def _score(self, payload: Any, query: str, permitted: Mask | None) -> Scores:
        postings: Postings = payload
        terms = self.analysis.query_terms(query)
        return self.ranking.scores(
            postings, terms, postings.lengths, permitted, total_length=postings.total_length
        )


class QueryTerms:
    """The terms of queries, remembered: a usage log changes by an entry at a time.

    Each change of a log is a new history to build postings for; cutting its other queries
    into terms again would cost a third of a second per 10,000 entries.
    """

    def __init__(self, tokenizer: Tokenizer, size: int = 50_000) -> None:
        self.tokenizer = tokenizer
        self.size = size
        self._known: OrderedDict[str, list[str]] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, query: str) -> list[str]:
        """The terms of ``query`` (the list is shared: do not change it)."""
        with self._lock:
            found = self._known.get(query)
            if found is not None:
                self._known.move_to_end(query)
                return found
        terms = self.tokenizer.terms(query)
        with self._lock:
            self._known[query] = terms
            while len(self._known) > self.size:
                self._known.popitem(last=False)
        return terms


def history_keyword_similarity(
    evidence: HistoryEvidence, terms_of: QueryTerms, query: str, permitted: Mask | None
) -> npt.NDArray[np.float32]:
    """Each entry's keyword similarity to ``query`` in [0, 1].

    BM25 over the entries' queries (statistics of the permitted tools' entries), divided by
    the most the query's terms could score: an entry holding every query term at its best
    weight scores 1.
    """
    ranking = BM25()
    postings: Postings = evidence.part(
        ("lexical", id(terms_of)), lambda: _postings(evidence, terms_of, ranking)
    )
    inside = None if permitted is None else permitted[evidence.positions]
    terms = terms_of.tokenizer.terms(query)
    total = np.zeros(len(evidence.queries), dtype=np.float32)
    ceiling = 0.0
    for term, times in _counted(terms):
        row = postings.get(term)
        if row is None:
            continue
        scores = ranking.scores(postings, [term], postings.lengths, inside)
        ceiling += float(scores.max()) * times
        total += scores * np.float32(times)
    if ceiling <= 0.0:
        return total
    similarity: npt.NDArray[np.float32] = np.minimum(total / np.float32(ceiling), 1.0)
    return similarity


def _postings(evidence: HistoryEvidence, terms_of: QueryTerms, ranking: BM25) -> Postings:
    postings = Postings.of_corpus([terms_of(q) for q in evidence.queries])
    return dataclasses.replace(postings, weights=ranking.weights(postings))


def _counted(terms: Sequence[str]) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for term in terms:
        counts[term] = counts.get(term, 0) + 1
    return list(counts.items())
