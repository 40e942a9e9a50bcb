"""Search latency of PostgresToolIndex over a 100,000-tool catalog, beside the in-process indexes.

The catalog is synthetic: the real tools of ``benchmarks/data`` (BFCL, StableToolBench,
RestBench; ~5,100 tools) copied until there are ``--tools`` of them, every copy after the first
renamed (``<service>_<n>.<name>``) and its description perturbed (words dropped, a domain word
added), deterministically. The queries are the datasets' dev requests. Each system is indexed
once, warmed up with every query, then timed over ``--repeats`` passes; vector and hybrid
times include embedding the query, on both sides.

Writes ``benchmarks/results/postgres_search.json`` and ``.md`` and the PostgreSQL section of
``docs/benchmarks.md`` (between its markers)::

    bash .ci/services.sh start .venv/bin/python > /tmp/services.env && . /tmp/services.env
    .venv/bin/python benchmarks/postgres_search.py              # MiniLM embeddings if installed
    .venv/bin/python benchmarks/postgres_search.py --quick      # 20k tools, hashing, temp dir
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from toolrelay.search import (
    BM25ToolIndex,
    HybridToolIndex,
    SearchRequest,
    ToolIndex,
    VectorToolIndex,
    embeddings_available,
    minilm_embedder,
)
from toolrelay.testing._embedders import HashingEmbedder
from toolrelay.tools import ToolDefinition

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"
RESULTS = ROOT / "benchmarks" / "results"
START, END = "<!-- postgres:start -->", "<!-- postgres:end -->"

sys.path.insert(0, str(ROOT / "benchmarks"))
from docs_section import DOCS, Section, write_sections  # noqa: E402

DATASETS = ("bfcl", "stabletoolbench", "restbench")
HASHING = (
    "toolrelay.testing's HashingEmbedder (384 dimensions, hashed bag of words: search times "
    "are those of any 384-dimension model, hit rates are not)"
)
EXTRA_WORDS = ("service", "account", "record", "request", "details", "data", "info", "api")


def real_tools() -> list[ToolDefinition]:
    tools: dict[str, ToolDefinition] = {}
    for dataset in DATASETS:
        for line in (DATA / dataset / "tools.jsonl").read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            schema = item.get("parameters") or {"type": "object", "properties": {}}
            tools.setdefault(
                item["name"],
                ToolDefinition(
                    name=item["name"], description=item.get("description", ""), input_schema=schema
                ),
            )
    return list(tools.values())


def synthetic_catalog(size: int, seed: int = 7) -> list[ToolDefinition]:
    rng = random.Random(seed)
    base = real_tools()
    catalog = {t.name: t for t in base[:size]}
    copy = 1
    while len(catalog) < size:
        for tool in base:
            if len(catalog) >= size:
                break
            words = tool.description.split()
            if len(words) > 4:
                del words[rng.randrange(len(words))]
            words.insert(rng.randrange(len(words) + 1), rng.choice(EXTRA_WORDS))
            service = tool.name.split(".")[0].split("_")[0] or "svc"
            name = f"{service}_{copy}.{tool.name}"[:64].rstrip(".")
            if name not in catalog:  # names cut at 64 characters may collide: skip those
                catalog[name] = ToolDefinition(
                    name=name, description=" ".join(words), input_schema=tool.input_schema
                )
        copy += 1
    return list(catalog.values())


def queries(limit: int) -> list[tuple[str, set[str]]]:
    found = []
    for dataset in DATASETS:
        for line in (DATA / dataset / "queries.dev.jsonl").read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            found.append((item["query"], set(item.get("relevant", ()))))
    random.Random(3).shuffle(found)
    return found[:limit]


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def measure(
    name: str,
    build: Callable[[], ToolIndex],
    catalog: Sequence[ToolDefinition],
    workload: Sequence[tuple[str, set[str]]],
    repeats: int,
    allowed: frozenset[str] | None = None,
) -> dict[str, Any]:
    index = build()
    started = time.perf_counter()
    index.index(catalog)
    indexed = time.perf_counter() - started
    requests = [SearchRequest(query=q, allowed=allowed) for q, _ in workload]
    hits = 0
    for request, (_, relevant) in zip(requests, workload, strict=True):  # warm-up
        names = index.search(request).names
        hits += bool(relevant & set(names))
    times = []
    for _ in range(repeats):
        for request in requests:
            started = time.perf_counter()
            index.search(request)
            times.append((time.perf_counter() - started) * 1000)
    close = getattr(index, "close", None)
    if close is not None:
        close()
    row = {
        "system": name,
        "index_s": round(indexed, 1),
        "p50_ms": round(percentile(times, 0.5), 2),
        "p99_ms": round(percentile(times, 0.99), 2),
        "mean_ms": round(statistics.fmean(times), 2),
        "hit_at_5": round(100 * hits / len(requests), 1),
        "searches": len(times),
    }
    print(json.dumps(row), file=sys.stderr, flush=True)
    return row


def markdown(meta: dict[str, Any], rows: Sequence[dict[str, Any]]) -> list[str]:
    lines = [
        "| system | index build (s) | search p50 (ms) | search p99 (ms) | hit@5 |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['system']} | {row['index_s']:,} | {row['p50_ms']:.2f} | "
            f"{row['p99_ms']:.2f} | {row['hit_at_5']:.1f}% |"
        )
    return lines


def docs_sections(data: dict[str, Any] | None = None) -> list[Section]:
    """The section of docs/benchmarks.md, from ``data`` (default: the committed results)."""
    if data is None:
        data = json.loads((RESULTS / "postgres_search.json").read_text(encoding="utf-8"))
    return [Section.from_marked(DOCS, section(data["meta"], data["results"]))]


def section(meta: dict[str, Any], rows: Sequence[dict[str, Any]]) -> str:
    if meta.get("keyword_only"):
        embedder = (
            "This run measured the systems without embeddings only (`--keyword-only`); a full "
            "run adds the vector and hybrid rows. "
        )
    else:
        embedder = (
            f"Embedder: {meta['embedder']}; vector and hybrid times include embedding the query "
            "(on both sides; the indexes remember 256 recent queries, fewer than the workload). "
            + (
                f"The catalog was embedded once before the builds ({meta['embedding_s']:,} s), "
                "into the embedding cache they all read: a build stores and indexes. "
                if meta.get("embedding_s") is not None
                else ""
            )
        )
    return "\n".join(
        [
            START,
            "## PostgreSQL tool index at 100k tools",
            "",
            f"`PostgresToolIndex` beside the in-process indexes over a synthetic catalog of "
            f"{meta['tools']:,} tools (the {meta['real_tools']:,} real tools of "
            "`benchmarks/data`, copied with renamed services and perturbed descriptions), "
            f"{meta['queries']} dev requests × {meta['repeats']} passes after a warm-up. "
            f"{embedder}PostgreSQL {meta['postgres']} with pgvector {meta['pgvector']} on the same "
            f"machine (loopback TCP), Python {meta['python']}, {meta['cpus']} CPUs"
            f"{meta.get('conditions', '')}. *Index "
            "build*: storing the catalog (BM25 postings, embeddings, and an HNSW index of its "
            "own, built in bulk after its rows) or building the in-process index. *hit@5*: "
            "requests whose relevant tool (by the datasets' names) is among the first five; "
            "most relevant tools have look-alike copies in this catalog, so it is a sanity "
            "check, not a quality benchmark (see the retrieval section for that).",
            "",
            *markdown(meta, rows),
            "",
            "PostgreSQL searches cost a round trip per statement: a keyword search reads the "
            "postings of its query's terms (one indexed read) and ranks them in the worker with "
            "the in-process index's BM25, so both find the same tools (the same hit@5). Each "
            "worker keeps the postings of recently searched terms (32 MB; a stored catalog never "
            "changes): after the warm-up most terms are there, and a search whose terms all are "
            "sends no statement; the *no postings cache* row reads every term from the database. "
            "A hybrid search adds an HNSW walk and the similarities of the keyword candidates and "
            "of a sample of permitted tools (one more statement). The in-process "
            "indexes score every tool in numpy. *allowed*: the request's permitted subset is a "
            "frozenset of that share of the catalog (every tenth tool, or every hundredth); every "
            "index ranks those tools alone (BM25 statistics over them; hybrid normalisation over "
            "them). PostgreSQL ranks a permitted subset of at most 1,000 tools (`exact_below`) "
            "by an exact scan of its vectors, a larger one by walking the HNSW graph with the "
            "subset as a filter. "
            + (
                "The keyword rows attach to the catalog the first keyword row stored, so their "
                "build is an attach."
                if meta.get("keyword_only")
                else "The hybrid rows attach to the catalog the vector row stored (same model), "
                "and the keyword rows to that of the first keyword row, so their build is an "
                "attach."
            ),
            "",
            "Details: `benchmarks/results/postgres_search.md`. Regenerate with "
            "`.venv/bin/python benchmarks/postgres_search.py` against a server in "
            "`TOOLRELAY_TEST_POSTGRES_DSN` (`.ci/services.sh` starts one).",
            END,
        ]
    )


def drop_schema(dsn: str, schema: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def server_versions(dsn: str) -> tuple[str, str]:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        version = conn.execute("SHOW server_version").fetchone()
        vector = conn.execute(
            "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
        ).fetchone()
    return (version[0] if version else "?"), (vector[0] if vector else "none")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--embedder", choices=("minilm", "hashing"), default=None)
    parser.add_argument("--quick", action="store_true", help="20k tools, hashing embedder")
    parser.add_argument(
        "--keyword-only",
        action="store_true",
        help="only the systems without embeddings (minutes instead of the HNSW build's half hour)",
    )
    parser.add_argument("--dsn", default=os.environ.get("TOOLRELAY_TEST_POSTGRES_DSN"))
    args = parser.parse_args()
    if not args.dsn:
        parser.error("give --dsn or set TOOLRELAY_TEST_POSTGRES_DSN")
    # Imported here: rendering the docs section from the results needs no postgres extra.
    from toolrelay.search._postgres import PostgresToolIndex

    if args.quick:
        args.tools, args.embedder = 20_000, args.embedder or "hashing"
    kind = args.embedder or ("minilm" if embeddings_available() else "hashing")
    embedder: Any = minilm_embedder() if kind == "minilm" else HashingEmbedder(384)
    load = os.getloadavg()[0]
    catalog = synthetic_catalog(args.tools)
    workload = queries(args.queries)
    postgres, pgvector = server_versions(args.dsn)
    schema = f"bench_{len(catalog)}"
    tenth = frozenset(t.name for i, t in enumerate(catalog) if i % 10 == 0)
    hundredth = frozenset(t.name for i, t in enumerate(catalog) if i % 100 == 0)

    def pg(mode: str, postings_cache: int = 32 * 1024 * 1024) -> Callable[[], ToolIndex]:
        return lambda: PostgresToolIndex(
            args.dsn,
            schema=schema,
            mode=mode,  # type: ignore[arg-type]
            embedder=None if mode == "keyword" else embedder,
            statement_timeout=30,
            postings_cache=postings_cache,
        )

    def vector() -> VectorToolIndex:
        return VectorToolIndex(embedder, split_sentences=False)

    def hybrid() -> HybridToolIndex:
        return HybridToolIndex(BM25ToolIndex(), vector())

    systems: list[tuple[str, Callable[[], ToolIndex], frozenset[str] | None]] = [
        ("PostgreSQL keyword (BM25)", pg("keyword"), None),
        ("PostgreSQL keyword, no postings cache", pg("keyword", postings_cache=0), None),
        ("PostgreSQL keyword, allowed 10%", pg("keyword"), tenth),
        ("PostgreSQL vector (HNSW)", pg("vector"), None),
        ("PostgreSQL hybrid", pg("hybrid"), None),
        ("PostgreSQL hybrid, allowed 10%", pg("hybrid"), tenth),
        ("PostgreSQL hybrid, allowed 1% (exact vectors)", pg("hybrid"), hundredth),
        ("in-process BM25", BM25ToolIndex, None),
        ("in-process BM25, allowed 10%", BM25ToolIndex, tenth),
        ("in-process vector", vector, None),
        ("in-process hybrid", hybrid, None),
        ("in-process hybrid, allowed 10%", hybrid, tenth),
    ]
    if args.keyword_only:
        systems = [s for s in systems if "vector" not in s[0] and "hybrid" not in s[0]]
    # Every build below is measured from scratch: a schema of an earlier run would be an attach.
    drop_schema(args.dsn, schema)
    embedding_s = None
    if not args.keyword_only:
        # Embedded once, into the embedding cache that every later build reads: the builds
        # measure storing and indexing, as a deployment's rebuild of a changed catalog does.
        started = time.perf_counter()
        vector().index(catalog)
        embedding_s = round(time.perf_counter() - started, 1)
        print(json.dumps({"embedding_s": embedding_s}), file=sys.stderr, flush=True)
    rows = [
        measure(name, build, catalog, workload, args.repeats, allow)
        for name, build, allow in systems
    ]
    meta = {
        "tools": len(catalog),
        "real_tools": len(real_tools()),
        "queries": len(workload),
        "repeats": args.repeats,
        "embedder": "all-MiniLM-L6-v2 (384 dimensions)" if kind == "minilm" else HASHING,
        "keyword_only": args.keyword_only,
        "embedding_s": embedding_s,
        "postgres": postgres,
        "pgvector": pgvector,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "conditions": f", load average {load:.1f} at the start",
    }
    # A quick run is a smoke test: its figures go to a temporary folder, not the results.
    out = Path(tempfile.mkdtemp(prefix="postgres-search-")) if args.quick else RESULTS
    out.mkdir(parents=True, exist_ok=True)
    (out / "postgres_search.json").write_text(
        json.dumps({"meta": meta, "results": rows}, indent=2) + "\n", encoding="utf-8"
    )
    text = section(meta, rows)
    (out / "postgres_search.md").write_text(
        "# PostgreSQL tool index\n\n" + "\n".join(text.splitlines()[2:-1]) + "\n", encoding="utf-8"
    )
    if not args.quick:
        write_sections(docs_sections({"meta": meta, "results": rows}))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
