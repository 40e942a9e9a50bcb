"""The machinery every toolrelay index shares: rebuild-on-change, filtering and ranking.

A backend only says how to build its structures from a catalog and how to score every tool
for a query (one number per tool, in catalog order). :class:`ScoringToolIndex` does the rest:
it fingerprints the catalog and rebuilds only when it changed, swaps the built catalog in
atomically, masks the scores by category, permitted subset and ``min_score``, and picks the
best hits without sorting the whole catalog. Ties are broken by catalog order.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from toolrelay.search.base import IndexProgress, SearchHit, SearchRequest, SearchResponse
from toolrelay.search.documents import (
    ToolText,
    catalog_fingerprint,
    dotted_categories,
    summarize,
    tool_text,
)
from toolrelay.search.prerequisites import Links, lift_providers, prerequisite_links
from toolrelay.tools.base import ToolDefinition

__all__ = ["Scores", "ScoringToolIndex"]

Scores = npt.NDArray[np.float32]
"""One relevance score per indexed tool, in catalog order."""

Categories = Mapping[str, str | Collection[str]]
"""Explicit categories per tool name, in addition to those implied by dotted names."""

# One bitmap per distinct permitted set is kept; conversations usually share a few sets.
_MASK_CACHE_SIZE = 1024


@dataclass(frozen=True, kw_only=True)
class _Catalog:
    fingerprint: str
    categories_key: tuple[tuple[str, tuple[str, ...]], ...]
    names: tuple[str, ...]
    positions: Mapping[str, int]
    summaries: tuple[str, ...]
    categories: Mapping[str, npt.NDArray[np.bool_]]
    links: Links | None
    payload: Any
    masks: dict[frozenset[str], npt.NDArray[np.bool_]] = field(default_factory=dict)

    def allowed_mask(self, allowed: frozenset[str]) -> npt.NDArray[np.bool_]:
        mask = self.masks.get(allowed)
        if mask is None:
            mask = np.zeros(len(self.names), dtype=np.bool_)
            positions = [self.positions[n] for n in allowed if n in self.positions]
            mask[positions] = True
            if len(self.masks) >= _MASK_CACHE_SIZE:
                self.masks.clear()
            self.masks[allowed] = mask
        return mask


class ScoringToolIndex(ABC):
    """Base class of the indexes that score every tool of a catalog for a query.

    Subclasses set :attr:`search_type` and implement :meth:`_build` and :meth:`_score`;
    :meth:`_matches` says which scores count as a match (positive ones, by default). A
    backend whose build takes long overrides :meth:`_build_reporting` to report its progress,
    and one that loads a model overrides :meth:`load_models`.

    Args:
        prerequisite_lift: When set, a tool that finds what another tool requires (a
            ``search_movie`` for a ``get_movie_credits(movie_id)``) scores at least this
            fraction of that tool's score, so both come back together (see
            :mod:`toolrelay.search.prerequisites`). ``None`` ranks tools independently.
    """

    search_type: ClassVar[str] = "abstract"

    def __init__(self, *, prerequisite_lift: float | None = None) -> None:
        self.prerequisite_lift = prerequisite_lift
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
        return catalog.names if catalog else ()

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
            progress: Told how far the build is, as ``progress(done, total)`` (see
                :data:`~toolrelay.search.base.IndexProgress`); not called when nothing is
                rebuilt.

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
            names = tuple(d.name for d in definitions)
            # Assigning one attribute is atomic: searches see the old or the new catalog.
            self._catalog = _Catalog(
                fingerprint=fingerprint,
                categories_key=categories_key,
                names=names,
                positions={name: i for i, name in enumerate(names)},
                summaries=tuple(summarize(d.description) for d in definitions),
                categories=_category_masks(names, dict(categories_key)),
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

    def scores(self, query: str) -> Scores:
        """One score per indexed tool for ``query``, in catalog order.

        Empty when nothing is indexed; before prerequisites are lifted. Fusing indexes read
        this.
        """
        catalog = self._catalog
        if catalog is None or catalog.payload is None:
            return np.zeros(0, dtype=np.float32)
        return self._score(catalog.payload, query)

    def search(self, request: SearchRequest) -> SearchResponse:
        """The best permitted tools for ``request``; see :class:`SearchRequest`."""
        started = time.perf_counter()
        catalog = self._catalog
        hits: list[SearchHit] = []
        total = 0
        if catalog is not None and catalog.payload is not None:
            scores = self._score(catalog.payload, request.query)
            if self.prerequisite_lift is not None and catalog.links is not None:
                lift_providers(scores, catalog.links, self.prerequisite_lift)
            keep = self._matches(scores)
            if request.min_score is not None:
                keep &= scores >= request.min_score
            if request.category is not None:
                category_mask = catalog.categories.get(request.category)
                if category_mask is None:
                    keep[:] = False
                else:
                    keep &= category_mask
            allowed = request.allowed
            if isinstance(allowed, frozenset):
                keep &= catalog.allowed_mask(allowed)
            candidates = np.flatnonzero(keep)
            if callable(allowed):
                candidates = _filter_by(candidates, catalog.names, allowed)
            total = int(candidates.size)
            top = _top(scores, candidates, request.max_results)
            if request.min_relative_score is not None and len(top):
                floor = float(scores[top[0]]) * request.min_relative_score
                top = top[scores[top] >= floor]
            for i in top:
                hits.append(
                    SearchHit(
                        name=catalog.names[i],
                        score=float(scores[i]),
                        summary=catalog.summaries[i],
                    )
                )
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
    def _score(self, payload: Any, query: str) -> Scores:
        """One float32 score per tool for ``query``, from what :meth:`_build` returned."""

    def _matches(self, scores: Scores) -> npt.NDArray[np.bool_]:
        """Which tools match at all; positive scores by default."""
        return scores > 0.0


def _categories_key(categories: Categories | None) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not categories:
        return ()
    items = []
    for name, value in categories.items():
        values = (value,) if isinstance(value, str) else tuple(value)
        items.append((name, tuple(sorted(values))))
    return tuple(sorted(items))


def _category_masks(
    names: Sequence[str], explicit: Mapping[str, tuple[str, ...]]
) -> dict[str, npt.NDArray[np.bool_]]:
    members: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        for category in {*dotted_categories(name), *explicit.get(name, ())}:
            members.setdefault(category, []).append(i)
    masks = {}
    for category, positions in members.items():
        mask = np.zeros(len(names), dtype=np.bool_)
        mask[positions] = True
        masks[category] = mask
    return masks


def _filter_by(
    candidates: npt.NDArray[np.intp], names: Sequence[str], allowed: Callable[[str], bool]
) -> npt.NDArray[np.intp]:
    keep = np.fromiter(
        (bool(allowed(names[i])) for i in candidates), dtype=np.bool_, count=candidates.size
    )
    return candidates[keep]


def _top(scores: Scores, candidates: npt.NDArray[np.intp], k: int) -> npt.NDArray[np.intp]:
    """The ``k`` best candidates, best first; equal scores keep catalog order."""
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
