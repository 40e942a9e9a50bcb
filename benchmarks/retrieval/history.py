"""Tool search that learns from use: the same index with and without a usage history.

Each dataset's dev queries are split in two halves (by position: even, odd). Each half in
turn is the *log* (one entry per relevant tool: ``{"query", "tool"}``, as tool search records
a query whose found tool was then called successfully) and the other the *test*: the test
queries are ranked by the index with no history and with the log's history, and both are
scored over all the dev queries (2-fold cross-validation). Each figure is NDCG@10 /
Complete@5, ×100, BFCL scored leniently.

Also measured:

- **poisoning**: 10% of the log's entries (fixed seed) replaced by pairs of their query with
  a random wrong tool of the catalog; the drop of NDCG@10 from the clean log;
- **repetition**: how much more a tool is lifted by one entry recorded 10,000 times than by
  the same entry recorded once (:func:`toolrelay.search._history.confidence`);
- **speed**: search latency (p50/p99, wall and CPU) of the default index over the three
  English catalogs (5,158 tools) with a 10,000-entry log, next to the same searches without
  (the 1,913 distinct dev queries of those catalogs, as ``speed.py`` searches them).

Writes ``benchmarks/results/history.json`` and the "Learning from use" section of
``docs/benchmarks.md``. Usage::

    python benchmarks/retrieval/history.py [--datasets bfcl restbench ...] [--no-speed]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from toolrelay.search import (
    BM25ToolIndex,
    HybridToolIndex,
    SearchRequest,
    UsageEntry,
    default_index,
)
from toolrelay.search._evaluation import (
    DEPTH,
    EvalDataset,
    EvalQuery,
    evaluate_ranking,
    load_dataset,
)
from toolrelay.search._history import HistoryEvidence, QueryHistory, confidence
from toolrelay.search._masks import Mask
from toolrelay.search._scoring import ScoringToolIndex

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DATA = ROOT / "benchmarks" / "data"
RESULTS = ROOT / "benchmarks" / "results" / "history.json"
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(HERE))
from docs_section import DOCS, Section, write_sections  # noqa: E402
from speed import latencies, load  # noqa: E402

DATASETS = ("bfcl", "stabletoolbench", "restbench", "acebench_zh", "hammerbench_zh")
LABELS = {
    "bfcl": "BFCL",
    "stabletoolbench": "StableToolBench",
    "restbench": "RestBench",
    "acebench_zh": "ACEBench-zh",
    "hammerbench_zh": "HammerBench-zh",
}
POISON = 0.10
LOG_SIZE = 10_000


class MeaningToo(HybridToolIndex):
    """The hybrid index comparing past queries by words *and* embeddings (the lesser of the
    two similarities): the variant the default was measured against."""

    search_type = "hybrid, past queries by words and meaning"

    def history_similarity(
        self, evidence: HistoryEvidence, query: str, permitted: Mask | None
    ) -> npt.NDArray[np.float32]:
        lexical = self.lexical.history_similarity(evidence, query, permitted)
        semantic = self.semantic.history_similarity(evidence, query, permitted)
        return np.minimum(lexical, semantic)


INDEXES: dict[str, Callable[[], ScoringToolIndex]] = {
    "default": default_index,
    "meaning": MeaningToo,
    "bm25": BM25ToolIndex,
}


def log_of(queries: Sequence[EvalQuery], now: float) -> list[UsageEntry]:
    """The usage entries a deployment would have recorded for ``queries``."""
    return [UsageEntry(query=q.query, tool=t, last_used=now) for q in queries for t in q.relevant]


def poisoned(entries: list[UsageEntry], names: Sequence[str], share: float) -> list[UsageEntry]:
    """``entries`` with ``share`` of them pointing at a random wrong tool (fixed seed)."""
    rng = random.Random(19)
    out = list(entries)
    for i in rng.sample(range(len(out)), int(len(out) * share)):
        wrong = out[i].tool
        while wrong == out[i].tool:
            wrong = rng.choice(names)
        out[i] = UsageEntry(query=out[i].query, tool=wrong, last_used=out[i].last_used)
    return out


def cross_validated(index: ScoringToolIndex, dataset: EvalDataset) -> dict[str, Any]:
    """NDCG@10 / Complete@5 without history, with the other half's, and with it poisoned."""
    now = time.time()
    queries = list(dataset.queries)
    halves = (queries[0::2], queries[1::2])
    names = [t.name for t in dataset.tools]
    rankings: dict[str, dict[str, list[str]]] = {"none": {}, "log": {}, "poisoned": {}}
    for test, log in ((halves[0], halves[1]), (halves[1], halves[0])):
        clean = log_of(log, now)
        histories = {
            "none": None,
            "log": QueryHistory.of(clean, now=now),
            "poisoned": QueryHistory.of(poisoned(clean, names, POISON), now=now),
        }
        for label, history in histories.items():
            for q in test:
                request = SearchRequest(query=q.query, max_results=DEPTH, history=history)
                rankings[label][q.id] = index.search(request).names
    covered = 0
    for test, log in ((halves[0], halves[1]), (halves[1], halves[0])):
        used = {_original(t, dataset) for q in log for t in q.relevant}
        covered += sum(all(_original(t, dataset) in used for t in q.relevant) for q in test)
    out: dict[str, Any] = {"queries": len(queries), "covered": round(100 * covered / len(queries))}
    for label, ranked in rankings.items():
        by_query = {q.query: ranked[q.id] for q in queries}
        report = evaluate_ranking(
            lambda query, k, by_query=by_query: by_query[query][:k], queries, dataset.name_map
        )
        out[label] = {
            "ndcg10": round(report.ndcg_at_10, 1),
            "complete5": round(report.complete_at_5, 1),
        }
    out["gain"] = round(out["log"]["ndcg10"] - out["none"]["ndcg10"], 1)
    out["poison_drop"] = round(out["log"]["ndcg10"] - out["poisoned"]["ndcg10"], 1)
    return out


def _original(name: str, dataset: EvalDataset) -> str:
    """A tool's name as lenient scoring counts it (BFCL's variants map to one original)."""
    return dataset.name_map.get(name, name) if dataset.name_map else name


def speed() -> dict[str, Any]:
    """Latency of the default index at 5k tools, without and with a 10,000-entry log."""
    tools, queries = load()
    names = [t.name for t in tools]
    rng = random.Random(23)
    now = time.time()
    # The dev queries and their tools, then reworded copies, up to LOG_SIZE entries.
    entries: list[UsageEntry] = []
    for name in ("bfcl", "stabletoolbench", "restbench"):
        entries += log_of(load_dataset(DATA / name).queries, now)
    seen = {(e.query, e.tool) for e in entries}
    originals = list(entries)
    while len(seen) < LOG_SIZE:
        words = rng.choice(originals).query.split()
        rng.shuffle(words)
        entry = UsageEntry(query=" ".join(words), tool=rng.choice(names), last_used=now)
        if (entry.query, entry.tool) not in seen:
            seen.add((entry.query, entry.tool))
            entries.append(entry)
    history = QueryHistory.of(entries, now=now)
    index = default_index()
    index.index(tools)
    asked = queries
    index.search(SearchRequest(query="load the model"))
    started = time.perf_counter()
    index.search(SearchRequest(query="build the history", history=history))
    first = time.perf_counter() - started
    # One entry more (the next turn's log): only the new query is cut into terms.
    grown = QueryHistory.of([*entries, UsageEntry(query="one more", tool=names[0])], now=now)
    started = time.perf_counter()
    index.search(SearchRequest(query="build the history", history=grown))
    changed = time.perf_counter() - started
    without = latencies(index, asked)
    with_log = _latencies_with(index, asked, history)
    return {
        "tools": len(tools),
        "index": index.search_type,
        "log_entries": len(history),
        "first_search_with_new_log_s": round(first, 2),
        "first_search_after_one_more_entry_s": round(changed, 3),
        "without": without,
        "with_log": with_log,
    }


def _latencies_with(
    index: ScoringToolIndex, queries: Sequence[str], history: QueryHistory
) -> dict[str, float]:
    walls, cpus = [], []
    for query in queries:
        request = SearchRequest(query=query, max_results=5, history=history)
        wall, cpu = time.perf_counter(), time.process_time()
        index.search(request)
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    out: dict[str, float] = {"queries": len(queries)}
    for label, values in (("wall", walls), ("cpu", cpus)):
        p50, p99 = np.percentile(values, [50, 99])
        out |= {f"{label}_p50_ms": round(float(p50), 3), f"{label}_p99_ms": round(float(p99), 3)}
    return out


def run(datasets: Sequence[str], indexes: Sequence[str], with_speed: bool) -> dict[str, Any]:
    results: dict[str, Any] = {
        "date": dt.date.today().isoformat(),
        "poison_share": POISON,
        "repetition_ratio": round(confidence(10_000, 0.0) / confidence(1, 0.0), 3),
        "datasets": {},
    }
    for name in datasets:
        dataset = load_dataset(DATA / name)
        results["datasets"][name] = {}
        for label in indexes:
            index = INDEXES[label]()
            index.index(dataset.tools)
            row = cross_validated(index, dataset)
            row["index"] = index.search_type
            results["datasets"][name][label] = row
            print(f"{name} {label}: {row}", flush=True)
    if with_speed:
        results["speed"] = speed()
        print(results["speed"], flush=True)
    return results


def cell(row: dict[str, float]) -> str:
    return f"{row['ndcg10']:.1f} / {row['complete5']:.1f}"


def markdown(results: dict[str, Any]) -> str:
    lines = [
        "## Learning from use",
        "",
        "Tool search with a usage log (`usage_log=`, docs/tool-search.md): each dataset's dev "
        "queries are split in two halves, each half in turn the log of the other (one entry "
        "per relevant tool, as tool search records a query whose found tool was then called "
        "successfully), and the same index ranks the test half without and with that history. "
        "*Poisoned*: 10% of the log's entries point at a random wrong tool instead. Tuned on "
        "these dev queries only.",
        "",
        "| dataset | covered | index | no history | with the other half's history "
        f"| NDCG@10 gain | {results['poison_share']:.0%} of the log poisoned "
        "| drop from the clean log |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for name, rows in results["datasets"].items():
        for row in rows.values():
            lines.append(
                f"| {LABELS.get(name, name)} | {row.get('covered', '–')}% | {row['index']} "
                f"| {cell(row['none'])} "
                f"| {cell(row['log'])} | {row['gain']:+.1f} | {cell(row['poisoned'])} "
                f"| {row['poison_drop']:.1f} |"
            )
    text = "\n".join(lines)
    text += (
        "\n\nNDCG@10 / Complete@5 ×100 over each dataset's dev queries, 2-fold cross-validated "
        "(each half the log of the other). *Covered*: the requests whose every relevant tool "
        "the other half used, all that history can help. One entry recorded 10,000 times "
        "lifts a tool "
        f"{results['repetition_ratio']:.2f}× as much as recorded once."
    )
    speed_row = results.get("speed")
    if speed_row:
        w, n = speed_row["with_log"], speed_row["without"]
        text += (
            f"\n\nSearch latency of the {speed_row['index']} index at "
            f"{speed_row['tools']:,} tools, query embedding included: p50 / p99 "
            f"{n['wall_p50_ms']:.1f} / {n['wall_p99_ms']:.1f} ms without history, "
            f"{w['wall_p50_ms']:.1f} / {w['wall_p99_ms']:.1f} ms with a "
            f"{speed_row['log_entries']:,}-entry log (CPU p99 {n['cpu_p99_ms']:.1f} / "
            f"{w['cpu_p99_ms']:.1f} ms): what the log adds is a keyword pass over its past "
            "queries; the rest, and the tail, is the query's embedding (see Retrieval speed). "
            "The first search with a log builds its postings in "
            f"{speed_row['first_search_with_new_log_s']:.2f} s, and the first after the log "
            "changed (one entry more, the next turn's log) in "
            f"{speed_row.get('first_search_after_one_more_entry_s', 0.0) * 1000:.0f} ms: only "
            "new queries are cut into terms again."
        )
    return text + f"\n\nMeasured {results['date']} by `python benchmarks/retrieval/history.py`."


def docs_sections(results: dict[str, Any] | None = None) -> list[Section]:
    """The "learning from use" section of docs/benchmarks.md."""
    if results is None:
        results = json.loads(RESULTS.read_text(encoding="utf-8"))
    return [Section(name="history", page=DOCS, text=markdown(results))]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--no-speed", action="store_true", help="Skip the latency runs.")
    parser.add_argument(
        "--speed-only",
        action="store_true",
        help="Run the latency runs alone, keeping the quality figures of the last run.",
    )
    parser.add_argument(
        "--indexes", nargs="+", default=list(INDEXES), choices=list(INDEXES), help="Which rows."
    )
    args = parser.parse_args(argv)
    if args.speed_only:
        results = json.loads(RESULTS.read_text(encoding="utf-8")) | {"speed": speed()}
    else:
        results = run(args.datasets, args.indexes, with_speed=not args.no_speed)
    RESULTS.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(markdown(results))
    write_sections(docs_sections(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
