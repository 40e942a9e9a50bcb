"""Searching a catalog for each of its own tools: ranks, rivals and confusable clusters.

Every tool's description is a query that should find that tool first; so should the words of
its name. :func:`search_self` runs both queries for every tool through the catalog's own
index (N tools, 2N searches; each is one vectorised scoring of the whole catalog, so a
BM25 search costs well under a millisecond) and keeps, per query:

- the tool's own rank (ties are broken by catalog order, as the index does);
- the best three tools (who outranks it, and who turns up everywhere);
- for description queries, the tools scoring within ``margin`` of the tool's own score.

Two tools are *confusable* when each is within the margin of the other for the other's own
description; confusable pairs joined transitively form clusters (BFCL's thirty paraphrases
of ``get_current_weather`` make one).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from toolrelay.exceptions import ConfigurationError
from toolrelay.search._base import IndexProgress
from toolrelay.search._scoring import ScoringToolIndex, best_positions
from toolrelay.tools._base import ToolDefinition
from toolrelay.tools._names import split_name_words

__all__ = ["SelfSearch", "search_self"]

TOP = 3
"""How many of the best tools are kept per query."""

_MAX_CLOSE = 64  # rivals kept per query; a cluster links through its members anyway


@dataclass(frozen=True, kw_only=True)
class SelfSearch:
    """What searching a catalog for its own tools found (positions are catalog order).

    Attributes:
        search_type: The index that ranked (``"bm25"``, ``"hybrid"``, ...).
        names: The tool names, in catalog order.
        description_ranks: Each tool's rank for its own description; ``None`` when the
            description is empty or does not match the tool at all.
        name_ranks: Each tool's rank for the words of its name (``None``: no match).
        description_top: The best tools for each description query (up to 3, best first).
        name_top: The best tools for each name query.
        close: For each description query, the other tools scoring at least
            ``1 - margin`` of the tool's own score, as (position, score ratio), best first.
        top_counts: For each tool, how many *other* tools' descriptions rank it in their
            best 3 outright (a place shared by a tie with the 4th does not count: templated
            descriptions tie on their common words, and catalog order is no merit).
        seconds: Time spent indexing and searching.
    """

    search_type: str
    names: tuple[str, ...]
    description_ranks: tuple[int | None, ...]
    name_ranks: tuple[int | None, ...]
    description_top: tuple[tuple[int, ...], ...]
    name_top: tuple[tuple[int, ...], ...]
    close: tuple[tuple[tuple[int, float], ...], ...]
    top_counts: tuple[int, ...]
    seconds: float

    def clusters(self) -> list[tuple[int, ...]]:
        """Groups of mutually confusable tools, largest first, members in catalog order."""
        close_sets = [{j for j, _ in rivals} for rivals in self.close]
        parent = list(range(len(self.names)))

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        linked: set[int] = set()
        for i, rivals in enumerate(close_sets):
            for j in rivals:
                if i in close_sets[j]:
                    parent[root(i)] = root(j)
                    linked |= {i, j}
        groups: dict[int, list[int]] = {}
        for i in sorted(linked):
            groups.setdefault(root(i), []).append(i)
        return sorted((tuple(g) for g in groups.values()), key=lambda g: (-len(g), g[0]))


def search_self(
    definitions: Sequence[ToolDefinition],
    index: ScoringToolIndex,
    *,
    margin: float,
    prime: Callable[[Sequence[str]], None] | None = None,
    progress: IndexProgress | None = None,
) -> SelfSearch:
    """Index ``definitions`` and search them with each tool's description and name words.

    Args:
        definitions: The catalog; names must be unique.
        index: An index to (re)build with the catalog.
        margin: Rivals within this fraction of a tool's own score are kept in ``close``.
        prime: Given all queries before searching (to embed them in batches).
        progress: Told how far indexing is (see :data:`~toolrelay.search._base.IndexProgress`).

    Raises:
        ConfigurationError: The index does not score every tool of the catalog.
    """
    started = time.perf_counter()
    index.index(definitions, progress=progress)
    descriptions = [d.description.strip() for d in definitions]
    name_queries = [" ".join(split_name_words(d.name)) for d in definitions]
    if prime is not None:
        prime([q for q in (*descriptions, *name_queries) if q])
    size = len(definitions)
    description_ranks: list[int | None] = []
    description_top: list[tuple[int, ...]] = []
    close: list[tuple[tuple[int, float], ...]] = []
    top_counts = [0] * size
    for i, query in enumerate(descriptions):
        scores = _scores(index, query, size)
        rank, top = _rank_and_top(scores, i)
        description_ranks.append(rank)
        description_top.append(top)
        close.append(_close(scores, i, margin) if rank is not None else ())
        if len(top) == TOP and size > TOP:
            # The best score below the top 3: a tie with it is no place of one's own.
            below = float(np.partition(scores, size - TOP - 1)[size - TOP - 1])
            top = tuple(p for p in top if scores[p] > below)
        for position in top:
            if position != i:
                top_counts[position] += 1
    name_ranks: list[int | None] = []
    name_top: list[tuple[int, ...]] = []
    for i, query in enumerate(name_queries):
        rank, top = _rank_and_top(_scores(index, query, size), i)
        name_ranks.append(rank)
        name_top.append(top)
    return SelfSearch(
        search_type=index.search_type,
        names=tuple(d.name for d in definitions),
        description_ranks=tuple(description_ranks),
        name_ranks=tuple(name_ranks),
        description_top=tuple(description_top),
        name_top=tuple(name_top),
        close=tuple(close),
        top_counts=tuple(top_counts),
        seconds=time.perf_counter() - started,
    )


def _scores(index: ScoringToolIndex, query: str, size: int) -> npt.NDArray[np.float32]:
    if not query:
        return np.zeros(size, dtype=np.float32)
    scores = index.scores(query)
    if scores.shape != (size,):
        raise ConfigurationError(
            f"the {index.search_type} index scored {scores.shape[0]} tools of {size}"
        )
    return scores


def _rank_and_top(scores: npt.NDArray[np.float32], own: int) -> tuple[int | None, tuple[int, ...]]:
    """The 1-based rank of ``own`` (``None`` unless it scores above 0) and the best matches."""
    best = best_positions(scores, np.arange(scores.size), TOP)
    top = tuple(int(p) for p in best if scores[p] > 0)
    mine = scores[own]
    if not mine > 0:
        return None, top
    ahead = int(np.count_nonzero(scores > mine)) + int(np.count_nonzero(scores[:own] == mine))
    return ahead + 1, top


def _close(
    scores: npt.NDArray[np.float32], own: int, margin: float
) -> tuple[tuple[int, float], ...]:
    mine = float(scores[own])
    near = np.flatnonzero(scores >= (1.0 - margin) * mine)
    near = near[near != own]
    if near.size > _MAX_CLOSE:
        near = near[np.argsort(-scores[near], kind="stable")[:_MAX_CLOSE]]
    order = near[np.lexsort((near, -scores[near]))]
    return tuple((int(j), float(scores[j]) / mine) for j in order)
