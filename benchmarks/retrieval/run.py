"""Retrieval quality of toolrelay's indexes, side by side with other projects' tool search.

Runs every index of ``toolrelay.search`` (and, unless ``--no-peers``, every peer of
``benchmarks/retrieval/peers.py`` that loads) on the dev queries of the datasets under
``benchmarks/data``, over each dataset's whole catalog, and writes

- ``benchmarks/results/retrieval.json``: every metric of every system on every dataset;
- the "Retrieval quality" section of ``docs/benchmarks.md`` (between its markers).

The raw user request is the query. Metrics come from ``toolrelay.search.evaluation``; BFCL is
scored leniently through its ``name_map.json`` (see ``benchmarks/data/bfcl/SOURCE.md``), and
strictly as well.

Usage::

    python benchmarks/retrieval/run.py                # ours + peers that load
    python benchmarks/retrieval/run.py --no-peers     # ours only
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
from typing import Any

from toolrelay.search import (
    BM25ToolIndex,
    HybridToolIndex,
    RegexToolIndex,
    SearchRequest,
    ToolIndex,
    VectorToolIndex,
    embeddings_available,
)
from toolrelay.search.evaluation import (
    DEPTH,
    EvalDataset,
    EvalReport,
    evaluate_ranking,
    load_dataset,
)

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "benchmarks" / "data"
RESULTS = ROOT / "benchmarks" / "results" / "retrieval.json"
DOCS = ROOT / "docs" / "benchmarks.md"
DATASETS = ("bfcl", "stabletoolbench", "restbench")
START, END = "<!-- retrieval:start -->", "<!-- retrieval:end -->"
METRICS = ("R@1", "R@3", "R@5", "R@10", "NDCG@10", "MRR", "Complete@5")
DEFAULT = "toolrelay hybrid (default)"

# Reference figures of the peers on the same dev queries (NDCG@10 / Complete@5), used in the
# table when a peer cannot run in the current environment.
REFERENCE = {
    "bfcl": {
        "FastMCP BM25": (73.1, 77.4),
        "langgraph-bigtool + MiniLM": (68.8, 74.9),
        "Spring AI Lucene": (60.3, 63.4),
    },
    "stabletoolbench": {"plain bm25s": (67.4, 50.2), "FastMCP BM25": (61.0, 40.3)},
    "restbench": {"langgraph-bigtool + MiniLM": (53.5, 19.4), "plain bm25s": (49.1, 12.2)},
}

Rankings = list[list[str]]


def our_indexes() -> dict[str, Callable[[], ToolIndex]]:
    systems: dict[str, Callable[[], ToolIndex]] = {
        "toolrelay regex": RegexToolIndex,
        "toolrelay bm25": BM25ToolIndex,
    }
    if embeddings_available():
        systems["toolrelay vector"] = VectorToolIndex
        systems[DEFAULT] = HybridToolIndex
    return systems


def load_peers() -> dict[str, Callable[[list[dict[str, Any]]], Callable[[str, int], list[str]]]]:
    path = Path(__file__).with_name("peers.py")
    if not path.exists():
        return {}
    spec = importlib.util.spec_from_file_location("retrieval_peers", path)
    if spec is None or spec.loader is None:
        return {}
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
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


def run(names: Sequence[str], with_peers: bool) -> dict[str, Any]:
    ours = our_indexes()
    peers = load_peers() if with_peers else {}
    results: dict[str, Any] = {
        "generated": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "split": "dev",
        "depth": DEPTH,
        "datasets": {},
    }
    for name in names:
        dataset = load_dataset(DATA / name)
        print(f"{name}: {len(dataset.tools)} tools, {len(dataset.queries)} queries", flush=True)
        systems: dict[str, Any] = {}
        labels = [(label, "ours") for label in ours] + [(label, "peer") for label in peers]
        for label, kind in labels:
            if kind == "ours":
                rankings, build_s, search_ms = rank_with_index(ours[label](), dataset)
            else:
                rankings, build_s, search_ms = rank_with_peer(peers[label], dataset)
            entry: dict[str, Any] = {
                "kind": kind,
                "build_s": round(build_s, 2),
                "search_ms": round(search_ms, 2),
            }
            if dataset.name_map is not None:
                entry["lenient"] = rounded(score(dataset, rankings, lenient=True))
            entry["strict"] = rounded(score(dataset, rankings, lenient=False))
            systems[label] = entry
            headline = entry.get("lenient", entry["strict"])
            print(
                f"  {label:32s} NDCG@10 {headline['NDCG@10']:5.1f}  "
                f"Complete@5 {headline['Complete@5']:5.1f}  build {build_s:6.1f}s  "
                f"search {search_ms:6.2f}ms",
                flush=True,
            )
        results["datasets"][name] = {
            "tools": len(dataset.tools),
            "queries": len(dataset.queries),
            "headline": "lenient" if dataset.name_map is not None else "strict",
            "systems": systems,
        }
    return results


def keep_peers(results: dict[str, Any], previous: dict[str, Any]) -> None:
    """Carry the peers' entries of an earlier run over into ``results``."""
    for name, data in results["datasets"].items():
        earlier = previous.get("datasets", {}).get(name, {}).get("systems", {})
        for label, entry in earlier.items():
            if entry.get("kind") == "peer":
                data["systems"].setdefault(label, {**entry, "from_run": previous["generated"]})


def markdown(results: dict[str, Any]) -> str:
    lines = [
        START,
        "## Retrieval quality: is the right tool found?",
        "",
        "Each system ranks the **whole catalog** of a dataset for every dev query (the raw user "
        "request is the query) and its top 10 is scored: R@k = share of the relevant tools in "
        "the top k, NDCG@10 with binary gains, MRR of the first relevant tool, Complete@5 = "
        "every relevant tool in the top 5 (what a model needs to act). Mean ×100. BFCL is "
        "scored leniently (paraphrased `__vN` variants of a function count as the function; "
        "see `benchmarks/data/bfcl/SOURCE.md`). Datasets and licences: `benchmarks/data/`. "
        f"Generated {results['generated']}, Python {results['python']}, by "
        "`python benchmarks/retrieval/run.py`; every number is in "
        "`benchmarks/results/retrieval.json`. How the defaults were chosen: "
        "`benchmarks/retrieval/TUNING.md`.",
        "",
    ]
    for name, data in results["datasets"].items():
        headline = data["headline"]
        lines += [
            f"### {name} ({data['tools']:,} tools, {data['queries']:,} dev queries, "
            f"{headline} scoring)",
            "",
            "| system | " + " | ".join(METRICS) + " | build s | search ms |",
            "|---|" + "---:|" * (len(METRICS) + 2),
        ]
        systems = data["systems"]
        for label, entry in systems.items():
            values = entry[headline]
            cells = [f"{values[m]:.1f}" for m in METRICS]
            name_cell = f"**{label}**" if label == DEFAULT else label
            if label == DEFAULT:
                cells = [f"**{c}**" for c in cells]
            lines.append(
                f"| {name_cell} | "
                + " | ".join(cells)
                + f" | {entry['build_s']:.1f} | {entry['search_ms']:.2f} |"
            )
        for peer, (ndcg, complete) in REFERENCE.get(name, {}).items():
            if peer not in systems:
                cells = ["–"] * len(METRICS)
                cells[METRICS.index("NDCG@10")] = f"{ndcg:.1f}"
                cells[METRICS.index("Complete@5")] = f"{complete:.1f}"
                lines.append(f"| {peer} (reference figure) | " + " | ".join(cells) + " | – | – |")
        lines.append("")
    carried = sorted(
        {
            entry["from_run"]
            for data in results["datasets"].values()
            for entry in data["systems"].values()
            if "from_run" in entry
        }
    )
    if carried:
        lines.append(f"The peers' rows are from the full run of {', '.join(carried)}.")
        lines.append("")
    lines.append(
        "Build time includes embedding the catalog; toolrelay's vector and hybrid indexes read "
        "vectors from the on-disk embedding cache when the catalog was embedded before. Times "
        "are indicative only: they were taken on a shared 2-core machine under other load (the "
        "*Retrieval speed* section measures latency properly). A *reference figure* is a "
        "system that cannot run in this environment (Spring AI is a Java library), as measured "
        "earlier on the same dev queries."
    )
    lines.append(END)
    return "\n".join(lines) + "\n"


def write_docs(section: str) -> None:
    text = DOCS.read_text(encoding="utf-8") if DOCS.exists() else "# Benchmarks\n\n"
    if START in text and END in text:
        head, rest = text.split(START, 1)
        tail = rest.split(END, 1)[1].lstrip("\n")
        text = head + section + ("\n" + tail if tail else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    DOCS.parent.mkdir(parents=True, exist_ok=True)
    DOCS.write_text(text, encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated names")
    parser.add_argument(
        "--no-peers",
        action="store_true",
        help="run toolrelay's indexes only (the peers' last results are kept in the output)",
    )
    parser.add_argument("--no-write", action="store_true", help="print, write no file")
    parser.add_argument(
        "--from-json", action="store_true", help="only re-render the docs from the last results"
    )
    args = parser.parse_args(argv)
    if args.from_json:
        write_docs(markdown(json.loads(RESULTS.read_text(encoding="utf-8"))))
        return 0
    names = [n.strip() for n in args.datasets.split(",") if n.strip()]
    results = run(names, with_peers=not args.no_peers)
    if args.no_peers and RESULTS.exists():
        keep_peers(results, json.loads(RESULTS.read_text(encoding="utf-8")))
    if not args.no_write:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        write_docs(markdown(results))
        print(f"wrote {RESULTS.relative_to(ROOT)} and {DOCS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
