"""Cold builds and query embedding of the default hybrid index: this code against a baseline.

What a newcomer waits for: the first hybrid build of a catalog that was never embedded
(model load + embedding every tool, no embedding cache), and then how long a search takes
with the query embedding included. Each figure is measured for two versions of toolrelay in
the same run, side by side: this checkout's ``src`` and the ``src`` of a baseline commit
(``--baseline``, by default the last commit that exported MiniLM with PyTorch), each in a fresh
Python process with only that version on its path, one after the other for every measurement.

Measured, each as wall-clock and process CPU time (CPU time leaves out waiting for a core,
which dominates on a shared machine; the thread count of the process is recorded too):

- *cold build*: ``HybridToolIndex()`` over a dataset's catalog with an empty embedding cache:
  ``load_models`` (the model as the index chooses it for the catalog), then ``index``, with a
  progress callback whose reports are kept (count and timing: what a progress bar with an
  ETA is drawn from); StableToolBench (English, MiniLM) and ACEBench-zh (Chinese, e5);
- *second build*: a new index object over the same catalog and the now filled cache;
- *first use*: the baseline's one-time ONNX export (with PyTorch), in a process with an empty
  user cache, so that its cold builds find the export on disk as its later processes do (this
  version has no such step: it writes the graph in memory when it loads the model, which the
  cold build's load includes);
- *hybrid search*: the three English catalogs concatenated (5,158 tools), every distinct
  English dev query searched once, query embedding included;
- *e5 query embedding*: every distinct ACEBench-zh dev query embedded by the e5 model the
  Chinese catalog gets;
- with ``--quality``, what that costs: NDCG@10 of the default hybrid index on the five
  datasets for both versions, and for this one with each choice for MiniLM's documents
  undone (``TRADE_OFFS``), scored as ``benchmarks/retrieval/run.py`` scores.

Writes ``benchmarks/results/embedding_speed.json`` and the "Cold builds" section of
``docs/benchmarks.md``. On a busy machine ``--tools N`` keeps each catalog to its first N
tools and ``--queries N`` to N queries (recorded in the JSON and the table).

Usage::

    python benchmarks/retrieval/embedding_speed.py            # the whole measurement
    python benchmarks/retrieval/embedding_speed.py --tools 500 --queries 300
    python benchmarks/retrieval/embedding_speed.py --quality   # and NDCG@10, before and now
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "benchmarks" / "data"
RESULTS = ROOT / "benchmarks" / "results" / "embedding_speed.json"
START, END = "<!-- embedding-speed:start -->", "<!-- embedding-speed:end -->"
BASELINE = "b5bff3f"  # the last commit that exported MiniLM to ONNX with PyTorch
ENGLISH = ("bfcl", "stabletoolbench", "restbench")
COLD = (("stabletoolbench", "English, MiniLM"), ("acebench_zh", "Chinese, e5"))
QUALITY = ("bfcl", "stabletoolbench", "restbench", "acebench_zh", "hammerbench_zh")
TRADE_OFFS = {
    # Each of this version's choices for MiniLM's documents undone alone (queries stay int8).
    "float32 documents": {"backend": "onnx", "quantize_documents": False},
    "documents not cut": {"backend": "onnx", "document_max_seq_length": 256},
}
TARGETS = {
    "cold_build_s": 10.0,
    "second_build_s": 2.0,
    "hybrid_search_p99_ms": 10.0,
    "e5_query_p99_ms": 15.0,
}


# --- the worker: one measurement in a process of its own ----------------------------------


def _threads() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 0


def _catalog(names: Sequence[str], limit: int | None) -> tuple[list[Any], list[str]]:
    from toolrelay.search._evaluation import load_dataset

    tools: list[Any] = []
    queries: list[str] = []
    for name in names:
        dataset = load_dataset(DATA / name)
        tools += dataset.tools[:limit] if limit else dataset.tools
        queries += [q.query for q in dataset.queries]
    return tools, list(dict.fromkeys(queries))


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float]) -> dict[str, float]:
    wall, cpu = _clock()
    return {"wall_s": round(wall - start[0], 3), "cpu_s": round(cpu - start[1], 3)}


def _elapsed_ms(start: tuple[float, float]) -> tuple[float, float]:
    """Wall and CPU milliseconds since ``start``, unrounded (a search takes a few of them)."""
    wall, cpu = _clock()
    return (wall - start[0]) * 1000, (cpu - start[1]) * 1000


def _percentiles(values: Sequence[float]) -> dict[str, float]:
    import numpy as np

    p50, p90, p99 = np.percentile(values, [50, 90, 99])
    return {"p50_ms": round(p50, 2), "p90_ms": round(p90, 2), "p99_ms": round(p99, 2)}


def work(task: dict[str, Any]) -> dict[str, Any]:
    """One measurement, in this process (which has one version of toolrelay on its path)."""
    from toolrelay.search import (
        BM25ToolIndex,
        EmbeddingCache,
        HybridToolIndex,
        SearchRequest,
        VectorToolIndex,
    )

    cache = EmbeddingCache(task["cache"])
    if task["kind"] == "build":
        tools, _ = _catalog(task["datasets"], task.get("tools"))
        out: dict[str, Any] = {"tools": len(tools), "threads_at_start": _threads()}
        index = HybridToolIndex(BM25ToolIndex(), VectorToolIndex(cache=cache))
        started = _clock()
        index.load_models(tools)
        out["load"] = _since(started)
        reports: list[tuple[float, int, int]] = []
        threads = [_threads()]

        def report(done: int, total: int) -> None:
            reports.append((time.perf_counter(), done, total))
            threads.append(_threads())

        started = _clock()
        index.index(tools, progress=report)
        out["index"] = _since(started)
        out["total"] = {k: round(out["load"][k] + out["index"][k], 3) for k in out["load"]}
        out["threads_max"] = max(threads)
        out["progress_reports"] = len(reports)
        if len(reports) > 2:
            # The ETA a bar would show after a tenth of the work, against the real rest.
            first, last = reports[0], reports[-1]
            tenth = next(r for r in reports if r[1] >= first[1] + (last[2] - first[1]) / 10)
            rate = (tenth[1] - first[1]) / max(tenth[0] - first[0], 1e-9)
            out["eta_at_tenth_s"] = round((last[2] - tenth[1]) / rate, 2)
            out["rest_at_tenth_s"] = round(last[0] - tenth[0], 2)
        semantic = index.semantic
        embedder = getattr(semantic, "embedder", None)
        out["model_id"] = getattr(embedder, "model_id", None)
        return out
    if task["kind"] == "search":
        tools, queries = _catalog(ENGLISH, None)
        queries = queries[: task.get("queries")]
        index = HybridToolIndex(BM25ToolIndex(), VectorToolIndex(cache=cache))
        index.index(tools)
        index.search(SearchRequest(query="load the model"))
        walls, cpus = [], []
        for query in queries:
            request = SearchRequest(query=query, max_results=5)
            started = _clock()
            index.search(request)
            wall, cpu = _elapsed_ms(started)
            walls.append(wall)
            cpus.append(cpu)
        return {
            "tools": len(tools),
            "queries": len(queries),
            "wall": _percentiles(walls),
            "cpu": _percentiles(cpus),
            "threads": _threads(),
        }
    if task["kind"] == "e5_query":
        from toolrelay.search._auto_embedder import catalog_embedder

        tools, queries = _catalog(("acebench_zh",), None)
        queries = queries[: task.get("queries")]
        embedder: Any = catalog_embedder(tools)
        embedder.load()
        embedder.embed(["加载模型"], kind="query")
        walls, cpus = [], []
        for query in queries:
            started = _clock()
            embedder.embed([query], kind="query")
            wall, cpu = _elapsed_ms(started)
            walls.append(wall)
            cpus.append(cpu)
        return {
            "queries": len(queries),
            "model_id": embedder.model_id,
            "wall": _percentiles(walls),
            "cpu": _percentiles(cpus),
        }
    if task["kind"] == "first_use":
        from toolrelay.search import minilm_embedder

        started = _clock()
        minilm_embedder().load()
        return {"load": _since(started)}
    if task["kind"] == "quality":
        return {"ndcg_at_10": _quality(task, cache)}
    raise ValueError(f"unknown task {task['kind']!r}")


def _quality(task: dict[str, Any], cache: Any) -> dict[str, float]:
    """NDCG@10 of the default hybrid index per dataset, scored as the retrieval benchmark does.

    ``task["embedder"]``, when given, are ``minilm_embedder`` options for the English
    datasets (a trade-off undone); the Chinese ones always get the default model.
    """
    import importlib.util

    from toolrelay.search import BM25ToolIndex, HybridToolIndex, VectorToolIndex, minilm_embedder
    from toolrelay.search._evaluation import load_dataset

    spec = importlib.util.spec_from_file_location(
        "retrieval_run", Path(__file__).with_name("run.py")
    )
    if spec is None or spec.loader is None:
        raise ImportError("benchmarks/retrieval/run.py")
    run: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    scores = {}
    for name in task["datasets"]:
        dataset = load_dataset(DATA / name)
        options = task.get("embedder")
        embedder = minilm_embedder(**options) if options and name in ENGLISH else None
        index = HybridToolIndex(BM25ToolIndex(), VectorToolIndex(embedder, cache=cache))
        rankings, _, _ = run.rank_with_index(index, dataset)
        report = run.score(dataset, rankings, lenient=name in run.LENIENT)
        scores[name] = round(report.metrics()["NDCG@10"], 1)
    return scores


# --- the driver -----------------------------------------------------------------------------


def baseline_source(ref: str, folder: Path) -> Path:
    """``src`` of commit ``ref``, extracted into ``folder``."""
    archive = folder / "baseline.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "archive", ref, "src"], cwd=ROOT, stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder / "baseline", filter="data")
    return folder / "baseline" / "src"


def in_process(source: Path, task: dict[str, Any], xdg: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(source), "XDG_CACHE_HOME": str(xdg)}
    result = subprocess.run(
        [sys.executable, __file__, "--worker", json.dumps(task)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"worker {task} failed:\n{result.stderr[-3000:]}")
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def measure(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {
        "generated": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average": " / ".join(f"{x:.1f}" for x in os.getloadavg()),
        "baseline": args.baseline,
        "tools_limit": args.tools,
        "queries_limit": args.queries,
        "targets": TARGETS,
    }
    with tempfile.TemporaryDirectory(prefix="embedding-speed-") as name:
        folder = Path(name)
        versions = {"baseline": baseline_source(args.baseline, folder), "this": ROOT / "src"}
        xdg = folder / "xdg"  # an empty user cache: the baseline's first use exports into it
        first = in_process(versions["baseline"], {"kind": "first_use", "cache": ""}, xdg)
        results["first_use"] = first
        print("first use", first, flush=True)
        for dataset, _ in COLD:
            entry: dict[str, Any] = {}
            for version, source in versions.items():
                # English vectors stay for the search below, which embeds only the rest.
                name = "english" if dataset in ENGLISH else dataset
                cache = str(folder / f"{version}-{name}.sqlite3")
                task = {"kind": "build", "datasets": [dataset], "cache": cache}
                task["tools"] = args.tools
                cold = in_process(source, task, xdg)
                second = in_process(source, task, xdg)
                entry[version] = {"cold": cold, "second": second}
                print(dataset, version, entry[version], flush=True)
            results[f"build_{dataset}"] = entry
        for kind in ("search", "e5_query"):
            entry = {}
            for version, source in versions.items():
                cache = str(folder / f"{version}-english.sqlite3")
                task = {"kind": kind, "cache": cache, "queries": args.queries}
                entry[version] = in_process(source, task, xdg)
                print(kind, version, entry[version], flush=True)
            results[kind] = entry
        if args.quality:
            results["quality"] = quality(args, versions, xdg, folder)
    results["load_average_after"] = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    return results


def quality(
    args: argparse.Namespace, versions: dict[str, Path], xdg: Path, folder: Path
) -> dict[str, Any]:
    """NDCG@10 of both versions' default hybrid index, and this one's with a trade-off undone."""
    cache = args.quality_cache or str(folder / "quality.sqlite3")
    runs: dict[str, Any] = {
        "baseline": (versions["baseline"], QUALITY, None),
        "this": (versions["this"], QUALITY, None),
    }
    for label, options in TRADE_OFFS.items():
        runs[label] = (versions["this"], ENGLISH, options)
    out: dict[str, Any] = {"cache": "given" if args.quality_cache else "empty at the start"}
    for label, (source, datasets, options) in runs.items():
        task = {"kind": "quality", "datasets": list(datasets), "cache": cache, "embedder": options}
        out[label] = in_process(source, task, xdg)["ndcg_at_10"]
        print("quality", label, out[label], flush=True)
    return out


# --- the docs section -----------------------------------------------------------------------


def docs_sections(results: dict[str, Any] | None = None) -> list[Any]:
    """The section of docs/benchmarks.md, from ``results`` (default: the committed ones)."""
    from docs_section import DOCS, Section

    if results is None:
        results = json.loads(RESULTS.read_text(encoding="utf-8"))
    return [Section.from_marked(DOCS, markdown(results))]


def _pair(entry: dict[str, Any], pick: Any, unit: str, digits: int = 1) -> list[str]:
    cells = []
    for version in ("baseline", "this"):
        wall, cpu = pick(entry[version])
        cells.append(f"{wall:,.{digits}f} / {cpu:,.{digits}f} {unit}")
    return cells


def _timing(run: str, part: str) -> Any:
    return lambda v: (v[run][part]["wall_s"], v[run][part]["cpu_s"])


def _met(value: float, target: float) -> str:
    return f"≤ {target:g} " + ("✓" if value <= target else "✗")


def markdown(results: dict[str, Any]) -> str:
    r = results
    limit = f" (first {r['tools_limit']:,} tools)" if r.get("tools_limit") else ""
    lines = [
        START,
        "## Cold builds and query embedding",
        "",
        "The default hybrid index (`HybridToolIndex()`, model chosen per catalog) in two "
        "versions side by side, each measurement in a fresh process with only that version on "
        f"its path: *before* is commit `{r['baseline']}` (MiniLM exported to ONNX with PyTorch "
        "once per user account, quantized by ONNX Runtime's tool, the files kept on disk), "
        "*now* this code (no PyTorch: the int8 graph written from the weights in memory by each "
        "process, documents embedded in batches of 16 side by side, one thread each; both run "
        "in int8 by ONNX Runtime, documents cut to 128 word pieces). Each "
        "cell is wall-clock / process "
        "CPU time; CPU time leaves out waiting for a core, which dominates on a shared "
        f"machine (load average {r['load_average']} at the start, {r['load_average_after']} "
        f"at the end, {r['cpus']} cores). Generated {r['generated']}, Python {r['python']}, "
        "by `python benchmarks/retrieval/embedding_speed.py`; raw figures, thread counts and "
        "progress reports in `benchmarks/results/embedding_speed.json`.",
        "",
        "| measure | before | now | target (now, wall) |",
        "|---|---:|---:|---:|",
    ]
    for dataset, what in COLD:
        entry = r[f"build_{dataset}"]
        tools = entry["this"]["cold"]["tools"]
        name = f"{dataset} ({tools:,} tools{limit}, {what})"
        for label, run, part, target in (
            ("cold build", "cold", "total", "cold_build_s"),
            ("… of which loading the model", "cold", "load", None),
            ("second build", "second", "total", "second_build_s"),
        ):
            cells = _pair(entry, _timing(run, part), "s", 1 if run == "cold" else 2)
            met = ""
            if target is not None:
                met = _met(entry["this"][run][part]["wall_s"], TARGETS[target]) + " s"
            title = label if target is None else f"{label}, {name}"
            lines.append(f"| {title} | {cells[0]} | {cells[1]} | {met} |")
    search = r["search"]
    cells = _pair(search, lambda v: (v["wall"]["p99_ms"], v["cpu"]["p99_ms"]), "ms", 2)
    now = search["this"]["wall"]["p99_ms"]
    lines.append(
        f"| hybrid search p99, {search['this']['tools']:,} English tools, query embedding "
        f"included ({search['this']['queries']:,} queries) | {cells[0]} | {cells[1]} | "
        f"{_met(now, TARGETS['hybrid_search_p99_ms'])} ms |"
    )
    cells = _pair(search, lambda v: (v["wall"]["p50_ms"], v["cpu"]["p50_ms"]), "ms", 2)
    lines.append(f"| … p50 | {cells[0]} | {cells[1]} | |")
    e5 = r["e5_query"]
    cells = _pair(e5, lambda v: (v["wall"]["p99_ms"], v["cpu"]["p99_ms"]), "ms", 2)
    now = e5["this"]["wall"]["p99_ms"]
    lines.append(
        f"| e5 query embedding p99 ({e5['this']['queries']:,} ACEBench-zh queries) | "
        f"{cells[0]} | {cells[1]} | {_met(now, TARGETS['e5_query_p99_ms'])} ms |"
    )
    cells = _pair(e5, lambda v: (v["wall"]["p50_ms"], v["cpu"]["p50_ms"]), "ms", 2)
    lines.append(f"| … p50 | {cells[0]} | {cells[1]} | |")
    lines += _quality_table(r)
    first = r["first_use"]["load"]
    english = r["build_stabletoolbench"]["this"]["cold"]
    lines += [
        "",
        "Before, the first load of MiniLM in a user account exported it to ONNX and quantized "
        f"it ({first['wall_s']:.1f} s / {first['cpu_s']:.1f} s of CPU here, PyTorch imported "
        "that once), and its cold builds above found that export on disk; now there is no "
        "such step, and the cold build's load (writing the graph, opening it) is all a first "
        "use costs. The English cold build ran with at most "
        f"{english['threads_max']} threads and reported its progress "
        f"{english['progress_reports']:,} times"
        + (
            "; after a tenth of the tools the rate so far predicted "
            f"{english['eta_at_tenth_s']:.1f} s for the rest, which took "
            f"{english['rest_at_tenth_s']:.1f} s"
            if "eta_at_tenth_s" in english
            else ""
        )
        + ". Targets are for a quiet machine; what each choice costs in quality is in "
        "[the retrieval section](#retrieval-quality-is-the-right-tool-found) and "
        "[tool-search.md](tool-search.md#embeddings).",
        END,
    ]
    return "\n".join(lines) + "\n"


def _quality_table(r: dict[str, Any]) -> list[str]:
    if "quality" not in r:
        return []
    q = r["quality"]
    labels = ["baseline", "this", *TRADE_OFFS]
    heads = ["before", "now", *(f"now with {label}" for label in TRADE_OFFS)]
    lines = [
        "",
        "What the choices cost in retrieval quality: NDCG@10 of the default hybrid index on "
        "the dev queries of each dataset, scored as in "
        "[the retrieval section](#retrieval-quality-is-the-right-tool-found), before and "
        "now, and now with one of MiniLM's choices undone (the Chinese catalogs get e5, whose "
        f"vectors are the same before and now; embedding cache {q['cache']}).",
        "",
        "| dataset | " + " | ".join(heads) + " |",
        "|---|" + "---:|" * len(heads),
    ]
    for name in QUALITY:
        cells = [f"{q[label][name]:.1f}" if name in q[label] else "" for label in labels]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--baseline", default=BASELINE, help="the commit to compare against")
    parser.add_argument("--tools", type=int, default=None, help="first N tools of each catalog")
    parser.add_argument("--queries", type=int, default=None, help="first N queries")
    parser.add_argument(
        "--quality",
        action="store_true",
        help="also score NDCG@10 of both versions' default hybrid index on every dataset",
    )
    parser.add_argument(
        "--quality-cache",
        help="embedding cache file for --quality (default: an empty one, so all is embedded)",
    )
    parser.add_argument("--no-write", action="store_true", help="print, write no file")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(work(json.loads(args.worker))))
        return 0
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from docs_section import write_sections

    results = measure(args)
    if not args.no_write:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        write_sections(docs_sections(results))
        print(f"wrote {RESULTS.relative_to(ROOT)} and docs/benchmarks.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
