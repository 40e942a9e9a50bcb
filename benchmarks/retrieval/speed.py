"""Speed of toolrelay's indexes: build time and search latency at 5k and 100k tools.

Catalog: the three English benchmark catalogs concatenated (5,158 tools; names are unique
across them), and a 100,000-tool catalog made from them by perturbing copies (each copy gets
a new name suffix and a description with some words dropped and some replaced by words drawn
from the whole catalog's vocabulary; fixed seed). Queries: the dev queries of the three
datasets (1,925), each searched once with ``max_results=5``.

Each latency is measured twice: wall-clock time, and the CPU time of the process
(``time.process_time``), which does not count the time spent waiting for a core when the
machine is shared. Writes ``benchmarks/results/speed.json`` and the "Retrieval speed"
section of ``docs/benchmarks.md``.

Usage::

    python benchmarks/retrieval/speed.py [--no-hybrid] [--no-100k]
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import platform
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from toolrelay.search import (
    BM25ToolIndex,
    EmbeddingCache,
    HybridToolIndex,
    SearchRequest,
    ToolIndex,
    VectorToolIndex,
    embeddings_available,
    minilm_embedder,
)
from toolrelay.search._evaluation import load_dataset
from toolrelay.tools._base import ToolDefinition

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "benchmarks" / "data"
RESULTS = ROOT / "benchmarks" / "results" / "speed.json"
sys.path.insert(0, str(ROOT / "benchmarks"))
from docs_section import DOCS, Section, write_sections  # noqa: E402

DATASETS = ("bfcl", "stabletoolbench", "restbench")
START, END = "<!-- retrieval-speed:start -->", "<!-- retrieval-speed:end -->"
TARGETS = {
    "bm25_5k_build_s": 1.0,
    "bm25_5k_search_p99_ms": 2.0,
    "hybrid_5k_search_p99_ms": 25.0,
    "hybrid_5k_second_build_s": 2.0,
    "bm25_100k_search_p99_ms": 20.0,
}


def load() -> tuple[list[ToolDefinition], list[str]]:
    tools: list[ToolDefinition] = []
    queries: list[str] = []
    for name in DATASETS:
        dataset = load_dataset(DATA / name)
        tools += dataset.tools
        queries += [q.query for q in dataset.queries]
    return tools, list(dict.fromkeys(queries))


def synthetic(tools: Sequence[ToolDefinition], size: int, seed: int = 7) -> list[ToolDefinition]:
    """``size`` tools: the originals, then perturbed copies with unique names."""
    rng = random.Random(seed)
    vocabulary = sorted({w for t in tools for w in t.description.split()})
    out = list(tools)
    i = 0
    while len(out) < size:
        base = tools[i % len(tools)]
        words = [w for w in base.description.split() if rng.random() > 0.15]
        words = [rng.choice(vocabulary) if rng.random() < 0.1 else w for w in words]
        out.append(
            ToolDefinition(
                name=f"{base.name}_s{i}",
                description=" ".join(words),
                input_schema=base.input_schema,
            )
        )
        i += 1
    return out


def timed(action: Callable[[], Any]) -> tuple[float, float]:
    """(wall seconds, process CPU seconds) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return time.perf_counter() - wall, time.process_time() - cpu


def latencies(index: ToolIndex, queries: Sequence[str]) -> dict[str, float]:
    gc.collect()
    walls, cpus = [], []
    for query in queries:
        request = SearchRequest(query=query, max_results=5)
        wall, cpu = timed(lambda request=request: index.search(request))
        walls.append(wall * 1000)
        cpus.append(cpu * 1000)
    out: dict[str, float] = {"queries": len(queries)}
    for label, values in (("wall", walls), ("cpu", cpus)):
        p50, p90, p99 = np.percentile(values, [50, 90, 99])
        out |= {f"{label}_p50_ms": p50, f"{label}_p90_ms": p90, f"{label}_p99_ms": p99}
        out[f"{label}_mean_ms"] = float(np.mean(values))
    return {k: round(float(v), 3) for k, v in out.items()}


def builds(make: Callable[[], ToolIndex], tools: Sequence[ToolDefinition], repeat: int) -> Any:
    runs = []
    index = make()
    for _ in range(repeat):
        index = make()
        gc.collect()
        wall, cpu = timed(lambda index=index: index.index(tools))
        runs.append((wall, cpu))
    best_wall = min(r[0] for r in runs)
    best_cpu = min(r[1] for r in runs)
    return index, {"build_wall_s": round(best_wall, 3), "build_cpu_s": round(best_cpu, 3)}


def bm25_section(tools: Sequence[ToolDefinition], queries: Sequence[str]) -> dict[str, Any]:
    BM25ToolIndex().index(tools[:10])  # import bm25s (and scipy) outside the timings
    index, build = builds(BM25ToolIndex, tools, repeat=3)
    return {"tools": len(tools), **build, **latencies(index, queries)}


class CountingEmbedder:
    """The default embedder, counting the documents it embeds."""

    def __init__(self) -> None:
        self.inner = minilm_embedder()
        self.model_id = self.inner.model_id
        self.documents = 0

    def embed(self, texts: Sequence[str], *, kind: Literal["query", "document"]) -> Any:
        if kind == "document":
            self.documents += len(texts)
        return self.inner.embed(texts, kind=kind)


def hybrid_section(tools: Sequence[ToolDefinition], queries: Sequence[str]) -> dict[str, Any]:
    counting = CountingEmbedder()
    first = HybridToolIndex(BM25ToolIndex(), VectorToolIndex(counting, cache=EmbeddingCache()))
    first_wall, first_cpu = timed(lambda: first.index(tools))
    embedded = counting.documents
    # A new index object (as in a new process): everything comes from the disk cache, and
    # the model is not even loaded until the first query.
    second, build = builds(HybridToolIndex, tools, repeat=2)
    second.search(SearchRequest(query="load the model"))  # model load is not a search
    semantic = second.semantic
    assert isinstance(semantic, VectorToolIndex)
    searched = latencies(second, queries)
    # The same last queries again: their vectors are remembered, so this is the index alone.
    recent = queries[-200:]
    index_only = latencies(second, recent)
    return {
        "tools": len(tools),
        "first_build_wall_s": round(first_wall, 2),
        "first_build_cpu_s": round(first_cpu, 2),
        "first_build_embedded": embedded,
        "second_build_wall_s": build["build_wall_s"],
        "second_build_cpu_s": build["build_cpu_s"],
        "embedder": _engine(semantic.embedder),
        **searched,
        "without_embedding": index_only,
    }


def _engine(embedder: Any) -> dict[str, Any]:
    """How the index's MiniLM runs: engine, precisions, query threads, document batches."""
    return {
        "model_id": embedder.model_id,
        "backend": embedder.backend,
        "quantize_queries": embedder.quantize_queries,
        "query_threads": embedder.query_threads,
        "quantize_documents": embedder.quantize_documents,
        "document_max_seq_length": embedder.document_max_seq_length,
        "batch_size": embedder.batch_size,
        "document_threads": embedder.document_threads or os.cpu_count(),
    }


def _engine_text(e: dict[str, Any]) -> str:
    runtime = "ONNX Runtime" if e["backend"] == "onnx" else "PyTorch"
    precision = {True: "int8", False: "float32"}
    cut = e["document_max_seq_length"]
    return (
        f"run by {runtime}: queries in {precision[e['quantize_queries']]} on "
        f"{e['query_threads']} thread{'s' if e['query_threads'] != 1 else ''}, documents in "
        f"{precision[e['quantize_documents']]}"
        + (f" cut to {cut} word pieces" if cut else "")
        + f", {e['document_threads']} batches of {e['batch_size']} at a time, one thread each"
    )


def docs_sections(results: dict[str, Any] | None = None) -> list[Section]:
    """The section of docs/benchmarks.md, from ``results`` (default: the committed ones)."""
    if results is None:
        results = json.loads(RESULTS.read_text(encoding="utf-8"))
    return [Section.from_marked(DOCS, markdown(results))]


def markdown(results: dict[str, Any]) -> str:
    r = results
    rows = []
    bm25 = r["bm25_5k"]
    rows.append(
        (
            f"BM25, {bm25['tools']:,} tools",
            bm25,
            f"{bm25['build_wall_s']:.2f} s / {bm25['build_cpu_s']:.2f} s",
        )
    )
    if "hybrid_5k" in r:
        h = r["hybrid_5k"]
        rows.append(
            (
                f"Hybrid (BM25 + MiniLM), {h['tools']:,} tools",
                h,
                f"second build {h['second_build_wall_s']:.2f} s / {h['second_build_cpu_s']:.2f} s",
            )
        )
    if "bm25_100k" in r:
        b = r["bm25_100k"]
        rows.append(
            (
                f"BM25, {b['tools']:,} tools",
                b,
                f"{b['build_wall_s']:.1f} s / {b['build_cpu_s']:.1f} s",
            )
        )
    lines = [
        START,
        "## Retrieval speed",
        "",
        f"Catalog: the three English benchmark catalogs concatenated ({bm25['tools']:,} tools), "
        f"and {r.get('bm25_100k', {}).get('tools', 100_000):,} tools made by perturbing copies "
        f"of them. Each of the {int(bm25['queries']):,} distinct "
        "dev queries is searched once (`max_results=5`); the query embedding is part of every "
        "hybrid search. Each "
        "figure is wall-clock / process CPU time: CPU time leaves out waiting for a core, "
        f"which matters on a shared machine (load average {r['load_average']} on "
        f"{r['cpus']} cores when this ran). Generated {r['generated']}, Python {r['python']}, "
        "by `python benchmarks/retrieval/speed.py`; raw figures in "
        "`benchmarks/results/speed.json`.",
        "",
        "| index | build (wall / CPU) | search p50 | search p90 | search p99 |",
        "|---|---|---:|---:|---:|",
    ]
    for label, data, build in rows:
        cells = [
            f"{data[f'wall_{p}_ms']:.2f} / {data[f'cpu_{p}_ms']:.2f} ms"
            for p in ("p50", "p90", "p99")
        ]
        lines.append(f"| {label} | {build} | " + " | ".join(cells) + " |")
    if "hybrid_5k" in r:
        h = r["hybrid_5k"]
        e = h["embedder"]
        alone = h["without_embedding"]
        first = (
            f"embedded {h['first_build_embedded']:,} passages"
            if h["first_build_embedded"]
            else "found every vector in the embedding cache already"
        )
        lines += [
            "",
            f"The hybrid index's first build took {h['first_build_wall_s']:.1f} s and {first}; "
            "a second build of the unchanged catalog (a new index object, as in a new process) "
            "reads every vector from the cache and does not load the model. Almost all of a "
            f"hybrid search is embedding the query with MiniLM on the CPU ({_engine_text(e)}): "
            "with the query's vectors remembered, a "
            f"hybrid search takes {alone['cpu_p50_ms']:.2f} ms (p50) / "
            f"{alone['cpu_p99_ms']:.2f} ms (p99) of CPU.",
        ]
    lines += ["", "Targets: " + ", ".join(f"{k} ≤ {v:g}" for k, v in TARGETS.items()) + ".", END]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--no-hybrid", action="store_true", help="skip the embedding index")
    parser.add_argument("--no-100k", action="store_true", help="skip the 100k-tool catalog")
    parser.add_argument("--no-write", action="store_true", help="print, write no file")
    args = parser.parse_args(argv)
    tools, queries = load()
    results: dict[str, Any] = {
        "generated": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average": " / ".join(f"{x:.1f}" for x in os.getloadavg()),
        "targets": TARGETS,
    }
    print(f"{len(tools)} tools, {len(queries)} queries", flush=True)
    results["bm25_5k"] = bm25_section(tools, queries)
    print("bm25 5k", results["bm25_5k"], flush=True)
    if not args.no_hybrid and embeddings_available():
        results["hybrid_5k"] = hybrid_section(tools, queries)
        print("hybrid 5k", results["hybrid_5k"], flush=True)
    if not args.no_100k:
        big = synthetic(tools, 100_000)
        results["bm25_100k"] = bm25_section(big, queries)
        print("bm25 100k", results["bm25_100k"], flush=True)
    results["load_average_after"] = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    if not args.no_write:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        write_sections(docs_sections(results))
        print(f"wrote {RESULTS.relative_to(ROOT)} and {DOCS.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
