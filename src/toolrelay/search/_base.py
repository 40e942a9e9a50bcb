"""The tool-index contract: requests, hits, responses and the :class:`ToolIndex` protocol.

An index is built once per catalog and shared: many conversations search the same index, each
with its own permitted subset (``SearchRequest.allowed``). The index answers from the
permitted tools alone, as an index built on only those tools would: a tool outside the subset
changes no answer. Nothing is re-indexed per conversation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from toolrelay.exceptions import ConfigurationError
from toolrelay.tools._base import ToolDefinition

if TYPE_CHECKING:
    from toolrelay.search._history import QueryHistory

__all__ = [
    "DEFAULT_MAX_RESULTS",
    "MAX_QUERY_LENGTH",
    "MAX_QUERY_TERMS",
    "MAX_RESULTS_LIMIT",
    "AllowedTools",
    "IndexProgress",
    "SearchHit",
    "SearchRequest",
    "SearchResponse",
    "ToolIndex",
]

DEFAULT_MAX_RESULTS = 5
MAX_RESULTS_LIMIT = 10

MAX_QUERY_LENGTH = 8192
"""The characters of a query a search reads; :class:`SearchRequest` cuts off the rest.

Queries come from the model; whatever it writes, a search costs at most this much text to
cut into terms, embed or match. The longest request in the retrieval benchmarks has 4,737.
"""

MAX_QUERY_TERMS = 512
"""The distinct terms of a query a keyword index ranks by; terms first seen later are dropped.

A term costs a pass over the tools it occurs in, so this bounds a keyword search at 512
passes over the catalog. The benchmarks' requests have at most 285.
"""

AllowedTools = Callable[[str], bool] | frozenset[str] | None
"""Which tools a search may return: a predicate on names, a set of names, or all (``None``)."""

IndexProgress = Callable[[int, int], None]
"""Told how far the building of an index is: ``progress(done, total)``.

Given to :meth:`~toolrelay.search.ScoringToolIndex.index` (``progress=``), it is called from
the thread that builds. Indexes that embed report as each batch of tools is embedded
(``total`` counts one embedding per tool and model, cached ones included in ``done`` from the
first call); indexes that build in a moment report once, ``(total, total)``, when done. It is
not called when the catalog is unchanged and nothing is rebuilt. For example
``lambda done, total: print(f"{done}/{total} tools")``.
"""


@dataclass(frozen=True, kw_only=True)
class SearchRequest:
    """One search over an index.

    Attributes:
        query: Keywords, a natural-language request, or (for the regex index) a pattern;
            cut to its first :data:`MAX_QUERY_LENGTH` characters.
        max_results: How many hits to return; clamped to 1–10.
        min_score: Drop hits scoring below this. Scores are on each index's own scale (see
            the index's documentation); ``None`` keeps every match.
        min_relative_score: Drop hits scoring below this fraction (0–1) of the best hit's
            score. Unlike ``min_score`` it needs no knowledge of the index's scale: in a small
            catalog, where one tool clearly answers the query, it returns that tool alone
            instead of padding the answer with unrelated ones. ``None`` keeps every match.
        allowed: The caller's permitted subset: a ``frozenset`` of names (fastest; the
            index caches a mask per set) or a predicate on names (asked about every tool of
            the catalog on each search); ``None`` permits all. Any other set or collection of
            names is turned into a ``frozenset``. The index ranks these tools alone: no other
            tool changes the answer.
        category: Only tools in this category: tools whose dotted name starts with
            ``category + "."`` or that were indexed with this category.
        history: The past queries of the caller's scope
            (:class:`~toolrelay.search._history.QueryHistory`): tools they led to score higher, by
            at most the index's ``history_weight``. ``None`` (or an empty history): the
            ranking is the index's alone.
    """

    query: str
    max_results: int = DEFAULT_MAX_RESULTS
    min_score: float | None = None
    min_relative_score: float | None = None
    allowed: AllowedTools = None
    category: str | None = None
    history: QueryHistory | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_results", max(1, min(MAX_RESULTS_LIMIT, self.max_results)))
        if len(self.query) > MAX_QUERY_LENGTH:
            object.__setattr__(self, "query", self.query[:MAX_QUERY_LENGTH])
        ratio = self.min_relative_score
        if ratio is not None and not 0.0 <= ratio <= 1.0:
            raise ConfigurationError(f"min_relative_score must be in [0, 1], not {ratio}")
        allowed = self.allowed
        if allowed is not None and not callable(allowed) and not isinstance(allowed, frozenset):
            names: Set[str] | Sequence[str] = allowed
            object.__setattr__(self, "allowed", frozenset(names))


@dataclass(frozen=True, kw_only=True)
class SearchHit:
    """One tool found by a search.

    Attributes:
        name: The tool's canonical name.
        score: Relevance on the index's own scale; higher is better.
        summary: The first sentence of the description, shortened.
        history_score: The part of ``score`` that the search's history added (0 without).
        history_query: The past query that added it, or ``None``.
    """

    name: str
    score: float
    summary: str
    history_score: float = 0.0
    history_query: str | None = None


@dataclass(frozen=True, kw_only=True)
class SearchResponse:
    """What a search found.

    Attributes:
        hits: The best hits, best first, at most ``max_results``.
        total: How many permitted tools matched (before ``max_results`` was applied).
        search_type: The kind of index that answered (``"regex"``, ``"bm25"``, ...).
        query: The query as searched (cut to :data:`MAX_QUERY_LENGTH` characters).
        time_ms: Time spent searching, in milliseconds.
    """

    hits: tuple[SearchHit, ...]
    total: int
    search_type: str
    query: str
    time_ms: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "hits", tuple(self.hits))

    @property
    def names(self) -> list[str]:
        """The names of the hits, best first."""
        return [hit.name for hit in self.hits]


@runtime_checkable
class ToolIndex(Protocol):
    """A searchable index over one tool catalog.

    ``index`` is idempotent: it rebuilds only when the catalog's fingerprint (names,
    descriptions and schemas) changed, so calling it for every conversation costs a hash.
    Searches may run from many threads; a rebuild swaps in the new index atomically.
    """

    @property
    def search_type(self) -> str:
        """A short name of the method (``"bm25"``, ``"vector"``, ...)."""
        ...

    @property
    def fingerprint(self) -> str | None:
        """The fingerprint of the indexed catalog, or ``None`` when empty."""
        ...

    def index(self, definitions: Sequence[ToolDefinition]) -> bool:
        """Index a catalog; return whether anything was rebuilt."""
        ...

    def search(self, request: SearchRequest) -> SearchResponse:
        """The best permitted tools for ``request``, ranked from the permitted tools alone."""
        ...

    def clear(self) -> None:
        """Forget the catalog."""
        ...
