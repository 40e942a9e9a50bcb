"""The machinery every toolrelay index shares: rebuild-on-change, filtering and ranking.

A backend only says how to build its structures from a catalog and how to score every tool
for a query (one number per tool, in catalog order), *from the permitted tools alone*: the
search's permitted subset (a mask over the catalog, ``_masks.py``) is handed to the backend, which
takes every statistic it ranks by from the tools inside it. :class:`ScoringToolIndex` does the
rest: it fingerprints the catalog and rebuilds only when it changed, swaps the built catalog
in atomically, masks the scores by permitted subset, category and ``min_score``, and picks the
best hits without sorting the whole catalog (:func:`best_hits`). Ties are broken by catalog
order.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from toolrelay.exceptions import ConfigurationError
from toolrelay.search._base import IndexProgress, SearchHit, SearchRequest, SearchResponse
from toolrelay.search._documents import (
    ToolText,
    catalog_fingerprint,
    summarize,
    tool_text,
)
from toolrelay.search._history import (
    DEFAULT_HISTORY_WEIGHT,
    EvidenceMemo,
    HistoryEvidence,
    history_bonus,
)
from toolrelay.search._masks import CatalogMasks, Mask
from toolrelay.search._prerequisites import Links, lift_providers, prerequisite_links
from toolrelay.tools._base import ToolDefinition

__all__ = ["Scores", "ScoringToolIndex", "best_hits", "best_positions"]

Scores = npt.NDArray[np.float32]
"""One relevance score per indexed tool, in catalog order."""

Categories = Mapping[str, str | Collection[str]]
"""Explicit categories per tool name, in addition to those implied by dotted names."""


@dataclass(frozen=True, kw_only=True)
class _Catalog:
    fingerprint: str
    categories_key: tuple[tuple[str, tuple[str, ...]], ...]
    masks: CatalogMasks
    summaries: tuple[str, ...]
    links: Links | None
    payload: Any


class ScoringToolIndex(ABC):
    """Base class of the indexes that score every tool of a catalog for a query.

    Subclasses set :attr:`search_type` and implement :meth:`_build` and :meth:`_score`;
    :meth:`_matches` says which scores count as a match (positive ones, by default). A
    backend whose build takes long overrides :meth:`_build_reporting` to report its progress,
    and one that loads a model overrides :meth:`load_models`. :meth:`_score` is given the
    search's permitted tools and must compute every score from them alone: a backend whose
    scores depend on other tools (collection statistics, score normalisation) takes those
    statistics over the permitted tools, so that the ranking equals that of an index built on
    the permitted tools only.

    Args:
        prerequisite_lift: When set, a tool that finds what another tool requires (a
            ``search_movie`` for a ``get_movie_credits(movie_id)``) scores at least this
            fraction of that tool's score, so both come back together (see
            ``_prerequisites.py``). ``None`` ranks tools independently.
        history_weight: The most a search's history (``SearchRequest.history``) adds to a
            tool's score, for a past query matching the request perfectly, as a share of the
            query's best score where that is above 1 (see ``_history.py``); 0 ignores
            history.

    Raises:
        ConfigurationError: ``history_weight`` is negative.
    """

    search_type: ClassVar[str] = "abstract"

    def __init__(
        self,
        *,
        prerequisite_lift: float | None = None,
        history_weight: float = DEFAULT_HISTORY_WEIGHT,
    ) -> None:
        if history_weight < 0:
            raise ConfigurationError(f"history_weight must be 0 or more, not {history_weight}")
        self.prerequisite_lift = prerequisite_lift
        self.history_weight = history_weight
        self._evidence = EvidenceMemo()
        self._catalog: _Catalog | None = None
        self._build_lock = threading.Lock()

    # --- the ToolIndex protocol ----------------------------------------------------------

    @property
    def fingerprint(self) -> str | None:
        """The fingerprint of the indexed catalog, or ``None`` when nothing is indexed."""
        catalog = self._catalog
        return catalog.fingerprint if catalog else None

    @property
    def names(self) -> tuple[str, ...]:
        """The indexed tool names, in catalog order (the order of :meth:`scores`)."""
        catalog = self._catalog
        return catalog.masks.names if catalog else ()

    def __len__(self) -> int:
        return len(self.names)

    def index(
        self,
        definitions: Sequence[ToolDefinition],
        *,
        categories: Categories | None = None,
        progress: IndexProgress | None = None,
    ) -> bool:
        """Index a catalog unless it is the one already indexed.

        Args:
            definitions: The catalog. Names must be unique.
            categories: Extra categories per tool name (a name or several), searchable with
                ``SearchRequest.category`` besides the prefixes of dotted names.
            progress: Told how far the build is, as ``progress(done, total)``; not called
                when nothing is rebuilt.

        Returns:
            ``True`` when the index was rebuilt, ``False`` when the catalog was unchanged.
        """
        definitions = list(definitions)
        fingerprint = catalog_fingerprint(definitions)
        categories_key = _categories_key(categories)
        current = self._catalog
        if current and (current.fingerprint, current.categories_key) == (
            fingerprint,
            categories_key,
        ):
            return False
        with self._build_lock:
            current = self._catalog
            if current and (current.fingerprint, current.categories_key) == (
                fingerprint,
                categories_key,
            ):
                return False
            texts = [tool_text(d) for d in definitions]
            payload = None
            if definitions:
                payload = (
                    self._build(definitions, texts)
                    if progress is None
                    else self._build_reporting(definitions, texts, progress)
                )
            # Assigning one attribute is atomic: searches see the old or the new catalog.
            self._catalog = _Catalog(
                fingerprint=fingerprint,
                categories_key=categories_key,
                masks=CatalogMasks([d.name for d in definitions], dict(categories_key)),
                summaries=tuple(summarize(d.description) for d in definitions),
                links=prerequisite_links(definitions) if definitions else None,
                payload=payload,
            )
        return True

    def load_models(self, definitions: Sequence[ToolDefinition]) -> None:  # noqa: B027 - no model
        """Load the models that indexing and searching ``definitions`` will use, now.

        Indexes that embed load their model on first use, which takes seconds: calling this
        first keeps that wait out of :meth:`index` and the first search, and lets a caller
        time it apart. Indexes without a model do nothing.
        """

    def clear(self) -> None:
        """Forget the catalog; searches return nothing until :meth:`index` is called."""
        with self._build_lock:
            self._catalog = None

    def scores(self, query: str, permitted: Mask | None = None) -> Scores:
        """One score per indexed tool for ``query``, in catalog order.

        Args:
            query: The query.
            permitted: Score from these tools alone (a mask);
                tools outside the mask score 0. ``None``: every tool.

        Empty when nothing is indexed; before prerequisites are lifted. Fusing indexes read
        this.
        """
        catalog = self._catalog
        if catalog is None or catalog.payload is None:
            return np.zeros(0, dtype=np.float32)
        return self._permitted_scores(catalog.payload, query, permitted)

    def search(self, request: SearchRequest) -> SearchResponse:
        """The best permitted tools for ``request``; see :class:`SearchRequest`."""
        started = time.perf_counter()
        catalog = self._catalog
        hits: list[SearchHit] = []
        total = 0
        if catalog is not None and catalog.payload is not None:
            permitted = catalog.masks.permitted(request.allowed)
            if permitted is None or permitted.any():
                scores = self._permitted_scores(catalog.payload, request.query, permitted)
                history = request.history
                evidence = None
                if history is not None and len(history) and self.history_weight > 0:
                    evidence = self._evidence.get(history, catalog.fingerprint, catalog.masks.names)
                if evidence is not None and evidence.queries:
                    bonus, parts = self._bonus(evidence, request.query, permitted, scores)
                    scores += bonus
                hits, total = best_hits(
                    scores,
                    request,
                    permitted=permitted,
                    masks=catalog.masks,
                    summaries=catalog.summaries,
                    links=catalog.links,
                    lift=self.prerequisite_lift,
                    matches=self._matches,
                )
                if evidence is not None and evidence.queries:
                    where = catalog.masks.positions
                    hits = [_explained(h, where[h.name], evidence, parts) for h in hits]
        return SearchResponse(
            hits=tuple(hits),
            total=total,
            search_type=self.search_type,
            query=request.query,
            time_ms=(time.perf_counter() - started) * 1000.0,
        )

    # --- what backends provide -----------------------------------------------------------

    @abstractmethod
    def _build(self, definitions: Sequence[ToolDefinition], texts: Sequence[ToolText]) -> Any:
        """Build the search structures of a non-empty catalog (returned, not stored)."""

    def _build_reporting(
        self,
        definitions: Sequence[ToolDefinition],
        texts: Sequence[ToolText],
        progress: IndexProgress,
    ) -> Any:
        """:meth:`_build`, telling ``progress`` how far it is; by default once, when done."""
        payload = self._build(definitions, texts)
        progress(len(definitions), len(definitions))
        return payload

    @abstractmethod
    def _score(self, payload: Any, query: str, permitted: Mask | None) -> Scores:
        """One float32 score per tool for ``query``, from what :meth:`_build` returned.

        Computed from the ``permitted`` tools alone (``None``: all of them); the scores of
        the others are ignored. The array is the caller's to modify.
        """

    @property
    def ranks_history(self) -> bool:
        """Whether searches rank with ``SearchRequest.history``.

        True when the index says how past queries compare (it overrides
        :meth:`history_similarity`) and its ``history_weight`` is above 0.
        """
        own = type(self).history_similarity is not ScoringToolIndex.history_similarity
        return own and self.history_weight > 0

    def history_similarity(
        self, evidence: HistoryEvidence, query: str, permitted: Mask | None
    ) -> npt.NDArray[np.float32]:
        """Each history entry's similarity to ``query`` in [0, 1], by this index's kind.

        Keyword indexes compare keywords, the embedding index embeddings, and the hybrid
        index mixes its sides'. By default none: history adds nothing.
        """
        return np.zeros(len(evidence.queries), dtype=np.float32)

    def _bonus(
        self, evidence: HistoryEvidence, query: str, permitted: Mask | None, scores: Scores
    ) -> tuple[Scores, Scores]:
        similarity = self.history_similarity(evidence, query, permitted)
        scale = self.history_weight * max(1.0, float(scores.max(initial=0.0)))
        bonus, parts = history_bonus(evidence, similarity, scores.size, scale)
        if permitted is not None:
            bonus[~permitted] = 0.0
        return bonus, parts

    def _matches(self, scores: Scores) -> npt.NDArray[np.bool_]:
        """Which tools match at all; positive scores by default."""
        return scores > 0.0

    def _permitted_scores(self, payload: Any, query: str, permitted: Mask | None) -> Scores:
        scores = self._score(payload, query, permitted)
        if permitted is not None:
            scores[~permitted] = 0.0
        return scores


def best_hits(
    scores: Scores,
    request: SearchRequest,
    *,
    permitted: Mask | None,
    masks: CatalogMasks,
    summaries: Sequence[str],
    links: Links | None,
    lift: float | None,
    matches: Callable[[Scores], npt.NDArray[np.bool_]] | None = None,
) -> tuple[list[SearchHit], int]:
    """The best hits of a scored catalog for ``request``, and how many permitted tools matched.

    Lifts prerequisite providers (from and onto permitted tools only), then keeps the
    matches that are permitted, in the request's category and above ``min_score``, and
    returns the best ``max_results`` of them (less those under ``min_relative_score``).
    ``scores`` is modified in place by the lift; ``matches`` says which scores match
    (positive ones by default).
    """
    if lift is not None and links is not None:
        lift_providers(scores, links, lift, among=permitted)
    keep = matches(scores) if matches is not None else scores > 0.0
    if request.min_score is not None:
        keep &= scores >= request.min_score
    if request.category is not None:
        category = masks.category(request.category)
        if category is None:
            return [], 0
        keep &= category
    if permitted is not None:
        keep &= permitted
    candidates = np.flatnonzero(keep)
    top = best_positions(scores, candidates, request.max_results)
    if request.min_relative_score is not None and len(top):
        floor = float(scores[top[0]]) * request.min_relative_score
        top = top[scores[top] >= floor]
    hits = [
        SearchHit(name=masks.names[i], score=float(scores[i]), summary=summaries[i]) for i in top
    ]
    return hits, int(candidates.size)


def _categories_key(categories: Categories | None) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not categories:
        return ()
    items = []
    for name, value in categories.items():
        values = (value,) if isinstance(value, str) else tuple(value)
        items.append((name, tuple(sorted(values))))
    return tuple(sorted(items))


def best_positions(
    scores: Scores, candidates: npt.NDArray[np.intp], k: int
) -> npt.NDArray[np.intp]:
    """The ``k`` best of the ``candidates`` (positions), best first; ties keep catalog order."""
    if candidates.size == 0:
        return candidates
    values = scores[candidates]
    if candidates.size > k:
        # Partition instead of sorting everything; then settle ties at the cut by position.
        kth = np.partition(values, candidates.size - k)[candidates.size - k]
        above = np.flatnonzero(values > kth)
        tied = np.flatnonzero(values == kth)[: k - above.size]
        chosen = np.concatenate([above, tied])
        candidates, values = candidates[chosen], values[chosen]
    order = np.lexsort((candidates, -values))
    return candidates[order]


def _explained(
    hit: SearchHit, position: int, evidence: HistoryEvidence, parts: npt.NDArray[np.float32]
) -> SearchHit:
    """``hit`` with what history added to its score, and the past query that added it."""
    entries = np.flatnonzero(evidence.positions == position)
    if entries.size == 0:
        return hit
    best = int(entries[np.argmax(parts[entries])])
    if parts[best] <= 0.0:
        return hit
    return dataclasses.replace(
        hit, history_score=float(parts[best]), history_query=evidence.queries[best]
    )
