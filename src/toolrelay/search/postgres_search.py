"""Running one search of :class:`~toolrelay.search.postgres.PostgresToolIndex` in the database.

:func:`run_search` applies the request's permissions in SQL where it can (a frozenset of
names, a category), runs the keyword, vector or hybrid query of
:class:`~toolrelay.search.postgres_schema.Schema`, fuses hybrid candidates with the hybrid
index's :func:`~toolrelay.search.hybrid.score_fusion` (given the catalog's median similarity,
estimated on a sample, since the candidates are only a subset), and filters by a predicate in
Python, fetching deeper while too few candidates pass.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from psycopg import Connection, sql

from toolrelay.search.base import SearchHit, SearchRequest, SearchResponse
from toolrelay.search.documents import dotted_categories, summarize
from toolrelay.search.hybrid import score_fusion
from toolrelay.search.postgres_schema import TOOL_WEIGHTS, Schema, tsquery_text
from toolrelay.search.prerequisites import prerequisite_links
from toolrelay.tools.base import ToolDefinition

__all__ = [
    "AttachedCatalog",
    "SearchPlan",
    "best_hits",
    "response_of",
    "run_search",
]

_MAX_TERMS = 12
_COMMON = 0.05  # a term in more than this share of the tools is left out of the query,
_FEW = 1000  # unless it is in at most this many (ranking that many costs a few ms)


@dataclass(frozen=True, kw_only=True)
class AttachedCatalog:
    """The catalog an index serves: its stored id, and what ranking needs of it locally."""

    catalog_id: int
    fingerprint: str
    categories_key: str
    positions: Mapping[str, int]
    summaries: Sequence[str]
    categories: Mapping[str, frozenset[str]]
    providers: Mapping[str, tuple[str, ...]]
    dims: int | None

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
        links: bool,
    ) -> AttachedCatalog:
        """Derive the local part from the catalog's definitions (``links``: prerequisites)."""
        names = [d.name for d in definitions]
        providers: dict[str, list[str]] = {}
        if links and definitions:
            for consumer, provider in zip(*prerequisite_links(definitions), strict=True):
                providers.setdefault(names[consumer], []).append(names[provider])
        return cls(
            catalog_id=catalog_id,
            fingerprint=fingerprint,
            categories_key=categories_key,
            positions={name: i for i, name in enumerate(names)},
            summaries=[summarize(d.description) for d in definitions],
            categories={
                name: frozenset({*dotted_categories(name), *explicit.get(name, ())})
                for name in names
            },
            providers={k: tuple(v) for k, v in providers.items()},
            dims=dims,
        )


@dataclass(frozen=True, kw_only=True)
class SearchPlan:
    """What one search asks of the database (the request supplies the filters)."""

    schema: Schema
    mode: Literal["keyword", "vector", "hybrid"]
    catalog_id: int
    dims: int | None
    terms: tuple[str, ...]
    catalog_size: int
    query_vector: str | None
    semantic_weight: float
    candidates: int
    max_candidates: int


def run_search(
    conn: Connection[Any], plan: SearchPlan, request: SearchRequest
) -> tuple[dict[str, float], int]:
    """Scores of the best permitted candidates by name, and how many tools matched.

    A predicate in ``request.allowed`` filters the fetched candidates here; while fewer than
    ``max_results`` pass and more rows may exist, the fetch is repeated twice as deep, up to
    ``plan.max_candidates`` rows per side.
    """
    allowed = request.allowed
    if isinstance(allowed, frozenset) and not allowed:
        return {}, 0
    conditions: list[sql.Composable] = []
    params: dict[str, Any] = {
        "catalog": plan.catalog_id,
        "terms": tsquery_text(_telling_terms(conn, plan)) if plan.terms else "",
        "vector": plan.query_vector,
    }
    if isinstance(allowed, frozenset):
        conditions.append(sql.SQL("AND name = ANY(%(allowed)s)"))
        params["allowed"] = list(allowed)
    if request.category is not None:
        conditions.append(sql.SQL("AND %(category)s = ANY(categories)"))
        params["category"] = request.category
    filters = sql.SQL(" ").join(conditions)
    predicate = allowed if callable(allowed) else None
    limit = plan.candidates
    while True:
        scored, total, fetched = _fetch(conn, plan, filters, {**params, "limit": limit})
        if predicate is None:
            return scored, total
        scored = {name: score for name, score in scored.items() if predicate(name)}
        matched = sum(score > 0 for score in scored.values())
        if matched >= request.max_results or fetched < limit or limit >= plan.max_candidates:
            return scored, matched
        limit = min(2 * limit, plan.max_candidates)


def _fetch(
    conn: Connection[Any], plan: SearchPlan, filters: sql.Composable, params: dict[str, Any]
) -> tuple[dict[str, float], int, int]:
    """(scores by name, matches, rows fetched) for one depth."""
    if plan.mode == "keyword" or plan.dims is None:
        if not params["terms"]:
            return {}, 0, 0
        rows = conn.execute(_keyword_query(plan.schema, filters), params).fetchall()
        total = int(rows[0][2]) if rows else 0
        return {name: float(score) for name, score, _ in rows}, total, len(rows)
    if plan.query_vector is None:
        return {}, 0, 0
    # Iterative scans keep the HNSW walk going until enough rows pass the filters.
    with conn.transaction():
        conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        conn.execute(
            sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.Literal(max(40, params["limit"])))
        )
        if plan.mode == "vector":
            rows = conn.execute(_vector_query(plan.schema, plan.dims, filters), params).fetchall()
            scored = {name: float(score) for name, score in rows}
            return scored, sum(s > 0 for s in scored.values()), len(rows)
        rows = conn.execute(_hybrid_query(plan.schema, plan.dims, filters), params).fetchall()
    if not rows:
        return {}, 0, 0
    median = rows[0][3]
    fused = score_fusion(
        np.array([float(r[1]) for r in rows]),
        np.array([float(r[2]) for r in rows]),
        plan.semantic_weight,
        median=float(median) if median is not None else 0.0,
    )
    scored = {row[0]: float(score) for row, score in zip(rows, fused, strict=True)}
    return scored, sum(s > 0 for s in scored.values()), len(rows)


# --- the statements ---------------------------------------------------------------------


def _terms_query(schema: Schema) -> sql.Composed:
    """``(term, tools)`` of the given terms found in a catalog, rarest first."""
    return schema.compose(
        "SELECT term, tools FROM {schema}.terms WHERE catalog_id = %s AND term = ANY(%s) "
        "ORDER BY tools, term"
    )


def _keyword_query(schema: Schema, filters: sql.Composable) -> sql.Composed:
    """Best keyword matches: ``name, score, total``."""
    return schema.compose(
        """SELECT name, ts_rank({weights}, document, query, 1) AS score,
            count(*) OVER () AS total
        FROM {schema}.tools, to_tsquery('simple', %(terms)s) AS query
        WHERE catalog_id = %(catalog)s AND document @@ query {filters}
        ORDER BY score DESC, position
        LIMIT %(limit)s""",
        weights=sql.Literal(TOOL_WEIGHTS),
        filters=filters,
    )


def _vector_query(schema: Schema, dims: int, filters: sql.Composable) -> sql.Composed:
    """Nearest embeddings: ``name, score`` (cosine similarity)."""
    return schema.compose(
        """SELECT name, 1 - (embedding::vector({dims}) <=> %(vector)s::vector({dims}))
        FROM {schema}.tools
        WHERE catalog_id = %(catalog)s AND dims = {dims} {filters}
        ORDER BY embedding::vector({dims}) <=> %(vector)s::vector({dims})
        LIMIT %(limit)s""",
        dims=sql.Literal(dims),
        filters=filters,
    )


def _hybrid_query(schema: Schema, dims: int, filters: sql.Composable) -> sql.Composed:
    """Both candidate lists, scored on both sides, and the catalog's median similarity.

    Rows: ``name, lexical, semantic, median``. The tsquery is written out in each part
    (not shared through a CTE), so that the planner sees a constant and uses the GIN index.
    """
    return schema.compose(
        """WITH lexical AS (
            SELECT name FROM {schema}.tools
            WHERE catalog_id = %(catalog)s
                AND document @@ to_tsquery('simple', %(terms)s) {filters}
            ORDER BY ts_rank({weights}, document, to_tsquery('simple', %(terms)s), 1) DESC,
                position
            LIMIT %(limit)s),
        semantic AS (
            SELECT name FROM {schema}.tools
            WHERE catalog_id = %(catalog)s AND dims = {dims} {filters}
            ORDER BY embedding::vector({dims}) <=> %(vector)s::vector({dims})
            LIMIT %(limit)s),
        median AS MATERIALIZED (
            SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY
                1 - (embedding::vector({dims}) <=> %(vector)s::vector({dims}))) AS m
            FROM {schema}.tools
            WHERE catalog_id = %(catalog)s AND sample AND dims = {dims})
        SELECT t.name,
            CASE WHEN t.document @@ to_tsquery('simple', %(terms)s)
                THEN ts_rank({weights}, t.document, to_tsquery('simple', %(terms)s), 1)
                ELSE 0 END,
            1 - (t.embedding::vector({dims}) <=> %(vector)s::vector({dims})),
            median.m
        FROM {schema}.tools t, median
        WHERE t.catalog_id = %(catalog)s
            AND t.name IN (SELECT name FROM lexical UNION SELECT name FROM semantic)""",
        weights=sql.Literal(TOOL_WEIGHTS),
        dims=sql.Literal(dims),
        filters=filters,
    )


def _telling_terms(conn: Connection[Any], plan: SearchPlan) -> list[str]:
    """The query's terms worth matching: those in the catalog, rarest first, common ones out.

    PostgreSQL's ``ts_rank`` knows no inverse document frequency, so a term found in most
    tools ("get", "data") would rank by noise and make every tool a match to rank. Keeping
    the rarest terms (at most ``_MAX_TERMS``; none in more than ``_COMMON`` of a large
    catalog's tools unless nothing else is left) does what IDF does for BM25, and keeps the
    matches few.
    """
    rows = conn.execute(_terms_query(plan.schema), (plan.catalog_id, list(plan.terms))).fetchall()
    limit = max(_COMMON * plan.catalog_size, _FEW)
    telling = [term for term, df in rows if df <= limit] or [term for term, _ in rows[:1]]
    return telling[:_MAX_TERMS]


def best_hits(
    scored: dict[str, float],
    attached: AttachedCatalog,
    request: SearchRequest,
    prerequisite_lift: float | None,
) -> list[SearchHit]:
    """The best ``max_results`` hits of the scored candidates, ties in catalog order."""
    if prerequisite_lift is not None and attached.providers:
        _lift(scored, attached, prerequisite_lift, request)
    return _best(scored, attached, request)


def _permitted(name: str, attached: AttachedCatalog, request: SearchRequest) -> bool:
    allowed = request.allowed
    if isinstance(allowed, frozenset) and name not in allowed:
        return False
    if callable(allowed) and not allowed(name):
        return False
    return request.category is None or request.category in attached.categories.get(name, ())


def _lift(
    scored: dict[str, float], attached: AttachedCatalog, factor: float, request: SearchRequest
) -> None:
    """Raise each permitted provider of a scored consumer to ``factor`` × its score."""
    for consumer, score in list(scored.items()):
        for provider in attached.providers.get(consumer, ()):
            lifted = factor * score
            if lifted > scored.get(provider, 0.0) and _permitted(provider, attached, request):
                scored[provider] = lifted


def _best(
    scored: Mapping[str, float], attached: AttachedCatalog, request: SearchRequest
) -> list[SearchHit]:
    floor = request.min_score
    kept = [
        (score, attached.positions[name], name)
        for name, score in scored.items()
        if score > 0 and (floor is None or score >= floor) and name in attached.positions
    ]
    kept.sort(key=lambda item: (-item[0], item[1]))
    best = kept[: request.max_results]
    if best and request.min_relative_score is not None:
        relative = best[0][0] * request.min_relative_score
        best = [item for item in best if item[0] >= relative]
    return [
        SearchHit(name=name, score=score, summary=attached.summaries[position])
        for score, position, name in best
    ]


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
