"""benchmarks/postgres_search.py: its section says which systems a run measured."""

from __future__ import annotations

from tests.benchmarks._scripts import BENCHMARKS, load_script

postgres_search = load_script(BENCHMARKS / "postgres_search.py", "benchmark_postgres_search")

META = {
    "tools": 100_000,
    "real_tools": 5_158,
    "queries": 300,
    "repeats": 3,
    "embedder": "all-MiniLM-L6-v2 (384 dimensions)",
    "postgres": "16.4",
    "pgvector": "0.8.0",
    "python": "3.11.7",
    "cpus": 2,
}
ROW = {"system": "PostgreSQL keyword (BM25)", "index_s": 14.5, "p50_ms": 0.76, "p99_ms": 1.78}


def test_a_keyword_only_run_says_the_embedding_rows_are_missing() -> None:
    text = postgres_search.section({**META, "keyword_only": True}, [{**ROW, "hit_at_5": 44.0}])
    assert "`--keyword-only`" in text
    assert "Embedder:" not in text
    assert "hybrid rows attach" not in text
    assert "| PostgreSQL keyword (BM25) | 14.5 | 0.76 | 1.78 | 44.0% |" in text


def test_a_full_run_names_its_embedder_and_how_the_hybrid_rows_are_built() -> None:
    text = postgres_search.section(META, [{**ROW, "hit_at_5": 44.0}])
    assert "Embedder: all-MiniLM-L6-v2 (384 dimensions)" in text
    assert "hybrid rows attach" in text
    assert "--keyword-only" not in text
