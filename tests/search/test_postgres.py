"""PostgresToolIndex: catalogs stored once, ranked by full-text search and pgvector."""

from __future__ import annotations

import os
import random
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.extras import needs_extra
from toolrelay.exceptions import ConfigurationError, StorageUnavailableError
from toolrelay.search import BM25ToolIndex, SearchRequest, ToolIndex, UsageEntry, VectorToolIndex
from toolrelay.search._evaluation import load_dataset
from toolrelay.search._history import QueryHistory
from toolrelay.testing._embedders import HashingEmbedder
from toolrelay.tools._base import ToolDefinition

from ._catalog import CATALOG, CATALOG_ZH, NAMES
from ._permissions import FORBIDDEN, assert_ranks_permitted_tools_alone

pytest.importorskip("psycopg", reason=needs_extra("postgres"))

from toolrelay.search._postgres import PostgresToolIndex, PostingsCache

# The server comes from TOOLRELAY_TEST_POSTGRES_DSN (.ci/services.sh starts one); without it
# these tests skip. Each test gets a schema of its own, dropped afterwards.
DSN = os.environ.get("TOOLRELAY_TEST_POSTGRES_DSN")


def require_dsn() -> str:
    if not DSN:
        pytest.skip("set TOOLRELAY_TEST_POSTGRES_DSN to a PostgreSQL server (.ci/services.sh)")
    return DSN


def fresh_schema(dsn: str) -> Iterator[str]:
    import psycopg

    name = f"t_{uuid.uuid4().hex[:16]}"
    yield name
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


def has_pgvector(dsn: str) -> bool:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        return row.fetchone() is not None


@pytest.fixture
def postgres_dsn() -> str:
    return require_dsn()


@pytest.fixture
def schema(postgres_dsn: str) -> Iterator[str]:
    yield from fresh_schema(postgres_dsn)


@pytest.fixture
def index(postgres_dsn: str, schema: str) -> Iterator[PostgresToolIndex]:
    with PostgresToolIndex(postgres_dsn, schema=schema) as value:
        value.index(CATALOG)
        yield value


@pytest.fixture
def vectors(postgres_dsn: str) -> None:
    if not has_pgvector(postgres_dsn):
        pytest.skip("the PostgreSQL server has no pgvector extension")


def search(index: ToolIndex, query: str, **options: object) -> list[str]:
    return index.search(SearchRequest(query=query, **options)).names  # type: ignore[arg-type]


def rows_of(dsn: str, sql: str) -> list[tuple[object, ...]]:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        return conn.execute(sql).fetchall()


def test_it_is_a_tool_index(index: PostgresToolIndex) -> None:
    assert isinstance(index, ToolIndex)
    assert index.search_type == "postgres-keyword"
    assert len(index) == len(CATALOG)
    assert index.fingerprint is not None


def test_keywords_find_names_descriptions_and_split_identifiers(index: PostgresToolIndex) -> None:
    assert search(index, "weather forecast")[0] == "get_forecast"
    assert search(index, "find failed orders")[0] == "refund.find_failed_orders"
    assert search(index, "issue refund")[0] == "refund.issueRefund"
    assert search(index, "refunds")[:2] == ["refund.issueRefund", "refund.find_failed_orders"]
    assert search(index, "fahrenheit") == ["get_weather"]  # an enumerated parameter value
    assert search(index, "the of and") == []
    assert search(index, "") == []


def hits_of(index: ToolIndex, query: str, **options: object) -> list[tuple[str, float]]:
    request = SearchRequest(query=query, max_results=10, **options)  # type: ignore[arg-type]
    return [(h.name, h.score) for h in index.search(request).hits]


def test_keyword_ranking_equals_the_in_process_bm25_index(postgres_dsn: str, schema: str) -> None:
    dataset = load_dataset(Path(__file__).resolve().parents[2] / "benchmarks/data/restbench")
    queries = [q.query for q in dataset.queries[:30]]
    chinese = [t for t in CATALOG_ZH if t.name not in NAMES]
    cases = [
        (list(dataset.tools), queries),
        ([*CATALOG, *chinese], ["查询退款失败的订单", "weather in Paris", "refund 订单"]),
    ]
    rng = random.Random(5)
    with PostgresToolIndex(postgres_dsn, schema=schema) as index:
        for catalog, asked in cases:
            bm25 = BM25ToolIndex()
            bm25.index(catalog)
            index.index(catalog)
            subset = frozenset(t.name for t in catalog if rng.random() < 0.4)
            for query in asked:
                assert hits_of(index, query) == hits_of(bm25, query), query
                assert hits_of(index, query, allowed=subset) == hits_of(
                    bm25, query, allowed=subset
                ), query
                assert index.search(SearchRequest(query=query)).total == (
                    bm25.search(SearchRequest(query=query)).total
                )


@pytest.fixture
def make_index(postgres_dsn: str, schema: str) -> Iterator[Callable[..., PostgresToolIndex]]:
    made: list[PostgresToolIndex] = []

    def make(**options: object) -> PostgresToolIndex:
        index = PostgresToolIndex(postgres_dsn, schema=schema, cache=False, **options)  # type: ignore[arg-type]
        made.append(index)
        return index

    yield make
    for index in made:
        index.close()


def test_a_forbidden_tool_changes_no_keyword_answer(
    make_index: Callable[..., PostgresToolIndex],
) -> None:
    assert_ranks_permitted_tools_alone(make_index)
    assert_ranks_permitted_tools_alone(make_index, category="refund")


def test_a_catalog_is_stored_once_whoever_indexes_it(postgres_dsn: str, schema: str) -> None:
    workers = [PostgresToolIndex(postgres_dsn, schema=schema) for _ in range(4)]
    results: list[bool] = []
    threads = [
        threading.Thread(target=lambda w=w: results.append(w.index(CATALOG))) for w in workers
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 4  # each worker now serves the catalog
    assert rows_of(postgres_dsn, f"SELECT count(*) FROM {schema}.catalogs") == [(1,)]
    assert rows_of(postgres_dsn, f"SELECT count(*) FROM {schema}.tools") == [(len(CATALOG),)]
    assert {tuple(search(w, "refund an order")) for w in workers} == {
        tuple(search(workers[0], "refund an order"))
    }
    assert workers[0].index(list(reversed(CATALOG))) is False  # same tools, same fingerprint
    changed = [*CATALOG[:-1], ToolDefinition(name="convert_units", description="Convert units.")]
    assert workers[0].index(changed) is True
    assert search(workers[0], "convert") == ["convert_units"]
    assert search(workers[1], "convert") == ["convert_currency"]  # still on the old catalog
    assert rows_of(postgres_dsn, f"SELECT count(*) FROM {schema}.catalogs") == [(2,)]
    for w in workers:
        w.close()


def test_permitted_names_are_applied_in_the_query(index: PostgresToolIndex) -> None:
    allowed = frozenset({"shop_search_orders", "send_email"})
    assert search(index, "orders email", allowed=allowed) == ["shop_search_orders", "send_email"]
    assert search(index, "refund", allowed=allowed) == []
    assert search(index, "refund", allowed=frozenset()) == []
    response = index.search(SearchRequest(query="order", allowed=allowed))
    assert response.total == 1


def test_a_predicate_permits_tools_anywhere_in_the_catalog(postgres_dsn: str, schema: str) -> None:
    catalog = [
        ToolDefinition(name=f"svc{i:03d}.get_weather", description=f"Weather report {i}.")
        for i in range(300)
    ]
    with PostgresToolIndex(postgres_dsn, schema=schema, candidates=10) as index:
        index.index(catalog)
        late = {f"svc{i:03d}.get_weather" for i in range(250, 300)}
        found = search(index, "weather", allowed=lambda n: n in late, max_results=7)
        assert len(found) == 7
        assert set(found) <= late
        assert search(index, "weather", allowed=lambda n: False) == []


def test_categories_min_score_and_max_results(postgres_dsn: str, schema: str) -> None:
    with PostgresToolIndex(postgres_dsn, schema=schema) as index:
        index.index(CATALOG, categories={"send_email": ["messaging"]})
        assert search(index, "refund orders", category="refund")[0].startswith("refund.")
        assert set(search(index, "refund orders", category="refund")) <= {
            "refund.find_failed_orders",
            "refund.issueRefund",
        }
        assert search(index, "email", category="messaging") == ["send_email"]
        assert search(index, "email", category="nothing") == []
        assert len(search(index, "order", max_results=1)) == 1
        best = index.search(SearchRequest(query="order")).hits[0].score
        assert search(index, "order", min_score=best + 1) == []
        hits = index.search(SearchRequest(query="order", min_relative_score=0.9)).hits
        assert hits
        assert hits[0].score == best
        assert all(h.score >= 0.9 * best for h in hits)
        assert len(hits) < len(index.search(SearchRequest(query="order")).hits)


def test_a_provider_is_lifted_next_to_its_consumer(postgres_dsn: str, schema: str) -> None:
    catalog = [
        ToolDefinition(
            name="tmdb_get_movie_credits",
            description="Cast and crew of a movie: director, actors.",
            input_schema={
                "type": "object",
                "properties": {"movie_id": {"type": "integer"}},
                "required": ["movie_id"],
            },
        ),
        ToolDefinition(name="tmdb_search_movie", description="Search films by title."),
        ToolDefinition(name="tmdb_get_popular", description="Popular films this week."),
    ]
    with PostgresToolIndex(postgres_dsn, schema=schema) as index:
        index.index(catalog)
        assert search(index, "cast and crew of Twilight") == [
            "tmdb_get_movie_credits",
            "tmdb_search_movie",
        ]
    with PostgresToolIndex(postgres_dsn, schema=schema, prerequisite_lift=None) as plain:
        plain.index(catalog)
        assert search(plain, "cast and crew of Twilight") == ["tmdb_get_movie_credits"]


def test_clear_and_delete_catalog(index: PostgresToolIndex, postgres_dsn: str, schema: str) -> None:
    fingerprint = index.fingerprint
    index.clear()
    assert search(index, "weather") == []
    assert index.fingerprint is None
    index.index(CATALOG)
    assert index.fingerprint == fingerprint
    assert index.delete_catalog() == 1
    assert rows_of(postgres_dsn, f"SELECT count(*) FROM {schema}.tools") == [(0,)]
    assert search(index, "weather") == []


def test_bad_settings_are_rejected(postgres_dsn: str) -> None:
    with pytest.raises(ConfigurationError, match="embedder"):
        PostgresToolIndex(postgres_dsn, mode="hybrid")
    with pytest.raises(ConfigurationError, match="schema"):
        PostgresToolIndex(postgres_dsn, schema="Robert'); DROP TABLE x;--")
    with pytest.raises(ConfigurationError):
        PostgresToolIndex(postgres_dsn, semantic_weight=2)
    with pytest.raises(ConfigurationError):
        PostgresToolIndex(postgres_dsn, candidates=5)


# --- embeddings (pgvector) ------------------------------------------------------------------


@pytest.mark.usefixtures("vectors")
def test_vector_mode_ranks_like_the_in_process_vector_index(postgres_dsn: str, schema: str) -> None:
    embedder = HashingEmbedder(128)
    local = VectorToolIndex(embedder, cache=False, split_sentences=False, prerequisite_lift=None)
    local.index(CATALOG)
    with PostgresToolIndex(
        postgres_dsn,
        schema=schema,
        embedder=embedder,
        mode="vector",
        cache=False,
        prerequisite_lift=None,
    ) as index:
        index.index(CATALOG)
        assert index.search_type == "postgres-vector"
        for query in ["weather for a city", "refund the order", "send an email message"]:
            ours = index.search(SearchRequest(query=query)).hits
            theirs = local.search(SearchRequest(query=query)).hits
            assert [h.name for h in ours] == [h.name for h in theirs], query
            assert [h.score for h in ours] == pytest.approx([h.score for h in theirs], abs=1e-5)


@pytest.mark.usefixtures("vectors")
def test_hybrid_mode_is_the_default_with_an_embedder(postgres_dsn: str, schema: str) -> None:
    with PostgresToolIndex(
        postgres_dsn, schema=schema, embedder=HashingEmbedder(128), cache=False
    ) as index:
        index.index(CATALOG)
        assert index.search_type == "postgres-hybrid"
        hits = index.search(SearchRequest(query="weather forecast for a city")).hits
        assert hits[0].name == "get_forecast"
        assert all(0.0 < h.score <= 1.0 for h in hits)
        allowed = frozenset({"send_email"})
        assert search(index, "weather", allowed=allowed) == []
        assert search(index, "email", allowed=allowed) == ["send_email"]
        dims = rows_of(postgres_dsn, f"SELECT DISTINCT dims FROM {schema}.tools")
        assert dims == [(128,)]


def many_tools(count: int) -> list[ToolDefinition]:
    return [
        ToolDefinition(
            name=f"svc_{i}.tool_{i}",
            description=f"Tool {i} does thing {i % 37} with item {i % 101} for account {i % 13}.",
            input_schema={"type": "object", "properties": {}},
        )
        for i in range(count)
    ]


def vector_indexes(dsn: str, schema: str) -> set[str]:
    return {
        str(name)
        for (name,) in rows_of(
            dsn,
            f"SELECT indexname FROM pg_indexes WHERE schemaname = '{schema}' "
            "AND indexname LIKE 'tools_embedding%'",
        )
    }


def index_scans(dsn: str, schema: str, name: str) -> int:
    [(scans,)] = rows_of(
        dsn,
        f"SELECT idx_scan FROM pg_stat_user_indexes WHERE schemaname = '{schema}' "
        f"AND indexrelname = '{name}'",
    )
    return int(str(scans))


@pytest.mark.usefixtures("vectors")
def test_each_catalog_gets_a_vector_index_of_its_own_that_searches_walk(
    postgres_dsn: str, schema: str
) -> None:
    import time

    import psycopg

    embedder = HashingEmbedder(128)
    with PostgresToolIndex(
        postgres_dsn, schema=schema, embedder=embedder, mode="vector", cache=False
    ) as first:
        first.index(CATALOG)
        # An index over every catalog, as earlier versions kept: storing a catalog drops it.
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            conn.execute(
                f"CREATE INDEX tools_embedding_128 ON {schema}.tools USING hnsw "
                "((embedding::vector(128)) vector_cosine_ops) WHERE dims = 128"
            )
        with PostgresToolIndex(
            postgres_dsn, schema=schema, embedder=embedder, mode="vector", cache=False
        ) as second:
            # Large enough for the planner to walk the graph rather than scan and sort.
            second.index([*CATALOG, *many_tools(2000)])
            ids = [
                int(str(i)) for (i,) in rows_of(postgres_dsn, f"SELECT id FROM {schema}.catalogs")
            ]
            own = {f"tools_embedding_catalog_{i}" for i in ids}
            assert len(own) == 2
            assert vector_indexes(postgres_dsn, schema) == own
            # Every tool permitted: the search walks the second catalog's graph.
            walked = f"tools_embedding_catalog_{max(ids)}"
            before = index_scans(postgres_dsn, schema, walked)
            assert search(second, "weather for a city")
        # Closed: its connections have ended, and their backends published their counts.
        deadline = time.monotonic() + 10.0
        while index_scans(postgres_dsn, schema, walked) == before:
            assert time.monotonic() < deadline, f"{walked} was not used by the search"
            time.sleep(0.05)
        with PostgresToolIndex(
            postgres_dsn, schema=schema, embedder=embedder, mode="vector", cache=False
        ) as again:
            again.index([*CATALOG, *many_tools(2000)])  # attached: stored already
            assert again.delete_catalog() == 1
            assert vector_indexes(postgres_dsn, schema) == own - {walked}


def test_workers_attach_and_search_while_another_stores_a_catalog(
    postgres_dsn: str, schema: str
) -> None:
    import psycopg

    with PostgresToolIndex(postgres_dsn, schema=schema, statement_timeout=1) as first:
        first.index(CATALOG)
        with psycopg.connect(postgres_dsn) as writer:  # a long catalog build, not committed
            writer.execute(
                f"WITH c AS (INSERT INTO {schema}.catalogs (fingerprint, variant, tools) "
                "VALUES ('other', 'v', 1) RETURNING id) "
                f"INSERT INTO {schema}.tools (catalog_id, position, name, summary, categories) "
                "SELECT id, 0, 'x', '', '{}' FROM c"
            )
            with PostgresToolIndex(postgres_dsn, schema=schema, statement_timeout=1) as second:
                assert second.index(CATALOG) is True
                assert search(second, "weather forecast")[0] == "get_forecast"
            writer.rollback()


@pytest.mark.usefixtures("vectors")
@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_a_forbidden_tool_changes_no_answer_with_embeddings(
    make_index: Callable[..., PostgresToolIndex], mode: str
) -> None:
    def make() -> PostgresToolIndex:
        return make_index(embedder=HashingEmbedder(128), mode=mode)

    assert_ranks_permitted_tools_alone(make)


@pytest.mark.usefixtures("vectors")
def test_a_large_permitted_subset_walks_the_graph_and_returns_permitted_tools_only(
    make_index: Callable[..., PostgresToolIndex],
) -> None:
    index = make_index(embedder=HashingEmbedder(128), mode="vector", exact_below=0)
    exact = make_index(embedder=HashingEmbedder(128), mode="vector")
    catalog = [*CATALOG, *FORBIDDEN]
    index.index(catalog)
    exact.index(catalog)
    for query in ["weather for a city", "refund the order", "send an email message"]:
        found = search(index, query, allowed=frozenset(NAMES), max_results=10)
        assert found
        assert set(found) <= set(NAMES)
        # a catalog this small is walked whole: the same answer as the exact scan
        assert found == search(exact, query, allowed=frozenset(NAMES), max_results=10)


def test_cached_postings_answer_without_a_statement(postgres_dsn: str, schema: str) -> None:
    import psycopg

    with PostgresToolIndex(postgres_dsn, schema=schema, statement_timeout=0.5) as index:
        index.index(CATALOG)
        before = search(index, "refund an order")
        with psycopg.connect(postgres_dsn) as blocker:
            blocker.execute(f"LOCK TABLE {schema}.terms IN ACCESS EXCLUSIVE MODE")
            assert search(index, "refund an order") == before  # every term is cached
            assert search(index, "order refund") == before  # in any order
            with pytest.raises(StorageUnavailableError):
                search(index, "weather")  # a term not read yet
            blocker.rollback()
        assert search(index, "weather")


def test_the_postings_cache_keeps_the_most_recent_terms_within_its_size() -> None:
    row = (np.arange(100, dtype=np.int32), np.ones(100, dtype=np.float32))  # 800 bytes
    cache = PostingsCache(capacity=2000)
    cache.keep("a", row)
    cache.keep("b", row)
    cache.keep("nope", None)
    assert cache.lookup(["a", "b", "nope", "c"])[1] == ["c"]
    assert set(cache.lookup(["a", "b", "nope"])[0]) == {"a", "b"}  # "nope" is known: absent
    cache.lookup(["a"])  # now the most recent
    cache.keep("c", row)  # over 2,000 bytes: "b" goes, the least recently used
    assert cache.lookup(["a", "b", "c"])[1] == ["b"]
    PostingsCache(capacity=0).keep("a", row)  # keeps nothing, fails nothing
    assert PostingsCache(capacity=0).lookup(["a"])[1] == ["a"]


def test_a_search_with_usage_history_is_refused_not_ranked_without_it(
    index: PostgresToolIndex,
) -> None:
    history = QueryHistory.of([UsageEntry(query="weather", tool="get_weather", last_used=1.0)])
    with pytest.raises(ConfigurationError, match="does not rank with usage history"):
        index.search(SearchRequest(query="weather", history=history))
    # An empty history is no history.
    assert search(index, "weather forecast", history=QueryHistory.of([]))[0] == "get_forecast"
