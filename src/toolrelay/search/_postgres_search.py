"""Running one search of :class:`~toolrelay.search.PostgresToolIndex`.

Every search starts from its permitted subset (``SearchRequest.allowed``, a set or a
predicate, made a mask over the catalog as in the in-process indexes; see
``_masks.py``), and ranks nothing else:

- **Keywords**: one indexed read fetches the BM25 postings of the query's terms from the
  ``terms`` table (those not in the worker's :class:`PostingsCache` already); the search
  package's ``BM25`` ranks them with statistics of the permitted
  tools alone. The database holds the in-process index's postings, so both give the same
  scores and the same order.
- **Embeddings**: with every tool permitted, an HNSW walk (pgvector, cosine). With a
  permitted subset (or a category) of at most ``exact_below`` tools, an exact scan of those
  tools' vectors, so that the graph, which the other tools shape too, plays no part; a larger
  subset walks the graph with the subset as a filter (iterative scans keep walking until enough
  permitted tools are found).
- **Hybrid**: the best ``candidates`` of each side, fused by the hybrid index's
  ``score_fusion``, normalised over those (permitted) candidates
  and the median similarity of up to 256 permitted tools, spread evenly over the catalog.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from psycopg import Connection, sql

from toolrelay.search._base import SearchHit, SearchRequest, SearchResponse
from toolrelay.search._bm25 import BM25, TermRow
from toolrelay.search._documents import summarize
from toolrelay.search._hybrid import score_fusion
from toolrelay.search._masks import CatalogMasks, Mask
from toolrelay.search._postgres_schema import Schema, int32_array
from toolrelay.search._prerequisites import Links, prerequisite_links
from toolrelay.search._scoring import Scores, best_hits, best_positions
from toolrelay.tools._base import ToolDefinition

__all__ = ["AttachedCatalog", "PostingsCache", "SearchPlan", "response_of", "run_search"]

_SAMPLE = 256  # permitted tools whose similarities give the median the fusion needs
_ENTRY = 100  # bytes a cached term costs besides its arrays (a rough share of the dict)


class PostingsCache:
    """The postings of recently searched terms of one stored catalog, up to a size in bytes.

    A stored catalog never changes, so a cached term is never stale; a search whose terms are
    all cached needs no statement at all. Terms the catalog does not have are remembered too.

    Args:
        capacity: Bytes of postings to keep (0: none); the least recently used go first.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._rows: OrderedDict[str, TermRow | None] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def lookup(self, terms: Sequence[str]) -> tuple[dict[str, TermRow], list[str]]:
        """The cached rows of ``terms`` (unknown terms left out) and the terms not cached."""
        found: dict[str, TermRow] = {}
        missing: list[str] = []
        with self._lock:
            for term in terms:
                if term not in self._rows:
                    missing.append(term)
                    continue
                self._rows.move_to_end(term)
                row = self._rows[term]
                if row is not None:
                    found[term] = row
        return found, missing

    def keep(self, term: str, row: TermRow | None) -> None:
        """Remember ``term``'s row (``None``: the catalog does not have the term)."""
        size = _size(row)
        if size > self.capacity:
            return
        with self._lock:
            if term in self._rows:
                return
            self._rows[term] = row
            self._size += size
            while self._size > self.capacity:
                _, old = self._rows.popitem(last=False)
                self._size -= _size(old)


def _size(row: TermRow | None) -> int:
    return _ENTRY + (0 if row is None else sum(a.nbytes for a in row if a is not None))


@dataclass(frozen=True, kw_only=True)
class AttachedCatalog:
    """The catalog an index serves: its stored id, and what ranking needs of it locally."""

    catalog_id: int
    fingerprint: str
    categories_key: str
    masks: CatalogMasks
    summaries: tuple[str, ...]
    links: Links | None
    lengths: npt.NDArray[np.int64]
    total_length: int
    dims: int | None
    postings: PostingsCache

    @classmethod
    def of(
        cls,
        *,
        catalog_id: int,
        fingerprint: str,
        categories_key: str,
        definitions: Sequence[ToolDefinition],
        explicit: Mapping[str, tuple[str, ...]],
        dims: int | None,
        lengths: npt.NDArray[np.int64],
        links: bool,
        postings_cache: int,
    ) -> AttachedCatalog:
        """Derive the local part from the catalog's definitions (``links``: prerequisites).

        ``postings_cache``: the bytes of postings to keep in memory (:class:`PostingsCache`).
        """
        return cls(
            catalog_id=catalog_id,
            fingerprint=fingerprint,
            categories_key=categories_key,
            masks=CatalogMasks([d.name for d in definitions], explicit),
            summaries=tuple(summarize(d.description) for d in definitions),
            links=prerequisite_links(definitions) if links and definitions else None,
            lengths=lengths,
            total_length=int(lengths.sum()),
            dims=dims,
            postings=PostingsCache(postings_cache),
        )


@dataclass(frozen=True, kw_only=True)
class SearchPlan:
    """What one search asks of the database (the request supplies the filters)."""

    schema: Schema
    mode: Literal["keyword", "vector", "hybrid"]
    terms: tuple[str, ...]
    query_vector: str | None
    semantic_weight: float
    candidates: int
    exact_below: int
    ranking: BM25
    lift: float | None


def run_search(
    conn: Connection[Any],
    attached: AttachedCatalog,
    plan: SearchPlan,
    request: SearchRequest,
    *,
    session: bool,
) -> tuple[list[SearchHit], int]:
    """The best permitted hits for ``request`` and how many permitted tools matched.

    ``session``: the connection's session is already set up for HNSW walks (the index's own
    pool); otherwise each walk sets them up in a transaction of its own.
    """
    masks = attached.masks
    permitted = masks.permitted(request.allowed)
    category = None if request.category is None else masks.category(request.category)
    if permitted is not None and not permitted.any():
        return [], 0
    if request.category is not None and category is None:
        return [], 0
    eligible = permitted
    if category is not None:
        eligible = category if permitted is None else category & permitted
    if plan.mode == "keyword" or attached.dims is None:
        scores = _keyword_scores(conn, attached, plan, permitted)
    elif plan.query_vector is None:
        return [], 0
    elif plan.mode == "vector":
        scores = np.zeros(len(masks), dtype=np.float32)
        nearest, _ = _similarities(conn, attached, plan, eligible, [], session)
        for position, similarity in nearest.items():
            scores[position] = similarity
    else:
        lexical = _keyword_scores(conn, attached, plan, permitted)
        scores = _hybrid_scores(conn, attached, plan, lexical, permitted, eligible, session)
    return best_hits(
        scores,
        request,
        permitted=permitted,
        masks=masks,
        summaries=attached.summaries,
        links=attached.links,
        lift=plan.lift,
    )


def _keyword_scores(
    conn: Connection[Any], attached: AttachedCatalog, plan: SearchPlan, permitted: Mask | None
) -> Scores:
    """BM25 over the permitted tools, from the stored postings of the query's terms."""
    if not plan.terms:
        return np.zeros(len(attached.masks), dtype=np.float32)
    rows, missing = attached.postings.lookup(list(dict.fromkeys(plan.terms)))
    if missing:
        # Binary results: postings travel as raw bytes (text would double them, as hex).
        fetched = conn.execute(
            plan.schema.compose(
                "SELECT term, positions, counts FROM {schema}.terms "
                "WHERE catalog_id = %s AND term = ANY(%s)"
            ),
            (attached.catalog_id, missing),
            binary=True,
        ).fetchall()
        new: dict[str, TermRow] = {}
        for term, tools, counts in fetched:
            positions = int32_array(bytes(tools))
            frequencies = int32_array(bytes(counts)).astype(np.float32)
            weights = plan.ranking.term_weights(
                positions, frequencies, attached.lengths, attached.total_length
            )
            new[term] = (positions, frequencies, weights)
        for term in missing:
            attached.postings.keep(term, new.get(term))
        rows.update(new)
    return plan.ranking.scores(
        rows, plan.terms, attached.lengths, permitted, total_length=attached.total_length
    )


def _hybrid_scores(
    conn: Connection[Any],
    attached: AttachedCatalog,
    plan: SearchPlan,
    lexical: Scores,
    permitted: Mask | None,
    eligible: Mask | None,
    session: bool,
) -> Scores:
    """Both sides' best candidates, fused (0 for every other tool)."""
    matches = lexical > 0
    if eligible is not None:
        matches &= eligible
    keyword_best = best_positions(lexical, np.flatnonzero(matches), plan.candidates).tolist()
    sample = _sample(permitted, len(attached.masks))
    nearest, looked_up = _similarities(
        conn, attached, plan, eligible, sorted({*keyword_best, *sample}), session
    )
    similarity = {**looked_up, **nearest}
    candidates = list(dict.fromkeys([*keyword_best, *nearest]))
    scores = np.zeros(len(attached.masks), dtype=np.float32)
    if not candidates:
        return scores
    known = [similarity[p] for p in sample if p in similarity]
    fused = score_fusion(
        lexical[candidates],
        np.array([similarity.get(p, 0.0) for p in candidates], dtype=np.float64),
        plan.semantic_weight,
        median=float(np.median(known)) if known else 0.0,
    )
    scores[candidates] = fused
    return scores


def _sample(permitted: Mask | None, size: int) -> list[int]:
    """Up to ``_SAMPLE`` permitted positions, spread evenly over the catalog."""
    positions = np.arange(size) if permitted is None else np.flatnonzero(permitted)
    if positions.size > _SAMPLE:
        positions = positions[np.linspace(0, positions.size - 1, _SAMPLE).astype(np.intp)]
    return [int(p) for p in np.unique(positions)]


def _similarities(
    conn: Connection[Any],
    attached: AttachedCatalog,
    plan: SearchPlan,
    eligible: Mask | None,
    lookup: Sequence[int],
    session: bool,
) -> tuple[dict[int, float], dict[int, float]]:
    """The nearest eligible tools (``plan.candidates``), and the ``lookup`` tools' similarities."""
    assert attached.dims is not None  # callers check that the catalog has embeddings
    dims = sql.Literal(attached.dims)
    params: dict[str, Any] = {
        "catalog": attached.catalog_id,
        "vector": plan.query_vector,
        "limit": plan.candidates,
        "lookup": list(lookup),
    }
    exact = eligible is not None and int(np.count_nonzero(eligible)) <= plan.exact_below
    if exact:
        assert eligible is not None
        params["eligible"] = np.flatnonzero(eligible).tolist()
        nearest = _EXACT
    else:
        nearest = _WALK
        if eligible is not None:
            params["bits"] = np.packbits(eligible, bitorder="little").tobytes()
            nearest = _FILTERED_WALK
    statement = plan.schema.compose(nearest + _LOOKUP, dims=dims)
    if exact or session:
        rows = conn.execute(statement, params, binary=True).fetchall()
    else:
        # Iterative scans keep the HNSW walk going until enough rows pass the filter.
        with conn.transaction():
            conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            ef_search = sql.Literal(max(40, plan.candidates))
            conn.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(ef_search))
            rows = conn.execute(statement, params, binary=True).fetchall()
    found: dict[int, float] = {}
    looked_up: dict[int, float] = {}
    for is_nearest, position, value in rows:
        (found if is_nearest else looked_up)[int(position)] = float(value)
    return found, looked_up


# --- the statements: nearest tools (tagged true), then looked-up tools (false) -------------

_SIMILARITY = "1 - (embedding::vector({dims}) <=> %(vector)s::vector({dims}))"

_WALK = f"""(SELECT true, position, {_SIMILARITY}
    FROM {{schema}}.tools
    WHERE catalog_id = %(catalog)s AND dims = {{dims}}
    ORDER BY embedding::vector({{dims}}) <=> %(vector)s::vector({{dims}})
    LIMIT %(limit)s)"""

# get_bit numbers a bytea's bits from the least significant of its first byte.
_FILTERED_WALK = f"""(SELECT true, position, {_SIMILARITY}
    FROM {{schema}}.tools
    WHERE catalog_id = %(catalog)s AND dims = {{dims}} AND get_bit(%(bits)s, position) = 1
    ORDER BY embedding::vector({{dims}}) <=> %(vector)s::vector({{dims}})
    LIMIT %(limit)s)"""

# Materialised, so that the planner cannot answer it from the HNSW index.
_EXACT = f"""WITH scanned AS MATERIALIZED (
    SELECT position, {_SIMILARITY} AS similarity
    FROM {{schema}}.tools
    WHERE catalog_id = %(catalog)s AND dims = {{dims}} AND position = ANY(%(eligible)s::int4[]))
(SELECT true, position, similarity FROM scanned ORDER BY similarity DESC, position
    LIMIT %(limit)s)"""

_LOOKUP = f"""
UNION ALL
SELECT false, position, {_SIMILARITY}
FROM {{schema}}.tools
WHERE catalog_id = %(catalog)s AND dims = {{dims}} AND position = ANY(%(lookup)s::int4[])"""


def response_of(
    search_type: str, request: SearchRequest, hits: list[SearchHit], total: int, started: float
) -> SearchResponse:
    """The response of a search that started at ``started`` (``perf_counter``)."""
    return SearchResponse(
        hits=tuple(hits),
        total=total,
        search_type=search_type,
        query=request.query,
        time_ms=(time.perf_counter() - started) * 1000.0,
    )
