"""Pooled evaluation: every source's dev queries against all the catalogs concatenated.

An application may put tools of unrelated services, in English and Chinese, behind one
index. Here the five benchmark catalogs are concatenated (their tool names are unique across
sources) and each source's dev queries are run against the whole pool with toolrelay's
default index and with BM25, next to the same index over the source's own catalog. The
difference is what the other sources' tools (and, for the embeddings, the model chosen for a
mixed catalog) cost each source. A third figure, the source in the pool of the catalogs of its
own language only (the three English ones, or the two Chinese ones), separates what mixing
languages costs from what more tools of the same language cost.

Used by ``run.py --pooled``; the result is the ``pooled`` entry of
``benchmarks/results/retrieval.json``.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from toolrelay.search import BM25ToolIndex, HybridToolIndex, ToolIndex
from toolrelay.search._auto_embedder import any_embedder_available
from toolrelay.search._evaluation import EvalDataset, evaluate, load_dataset
from toolrelay.tools._language import catalog_language

MAX_LOSS = 3.0
"""Target: the default index loses at most this many NDCG@10 points on any source."""

DEFAULT = "toolrelay hybrid (default)"


def systems() -> dict[str, Callable[[], ToolIndex]]:
    """The indexes compared alone and pooled: the default (when embeddings are installed) and
    BM25."""
    chosen: dict[str, Callable[[], ToolIndex]] = {}
    if any_embedder_available():
        chosen[DEFAULT] = HybridToolIndex
    chosen["toolrelay bm25"] = BM25ToolIndex
    return chosen


def embedder_name(index: ToolIndex) -> str | None:
    """The embedding model an indexed vector or hybrid index uses (``None``: no embeddings).

    With a language route over a mixed catalog, both models, English one first.
    """
    semantic = getattr(index, "semantic", index)
    route = getattr(semantic, "route", None)
    if route is not None:
        english, multilingual = _short(route.english), _short(route.multilingual)
        return f"{english} / {multilingual} by query language"
    embedder = getattr(semantic, "embedder", None)
    return _short(embedder) if embedder is not None else None


def _short(embedder: object) -> str:
    model = str(getattr(embedder, "model_id", None) or type(embedder).__name__)
    if "MiniLM" in model:
        return "MiniLM"
    if "e5" in model:
        return "e5"
    return model


def pool(datasets: Sequence[EvalDataset]) -> list[Any]:
    """The catalogs concatenated, in the given order.

    Raises:
        ValueError: Two sources share a tool name (their labels would be ambiguous).
    """
    tools: list[Any] = []
    owner: dict[str, str] = {}
    for dataset in datasets:
        for tool in dataset.tools:
            if tool.name in owner:
                raise ValueError(f"{tool.name!r} is in both {owner[tool.name]} and {dataset.name}")
            owner[tool.name] = dataset.name
            tools.append(tool)
    return tools


def _metrics(index: ToolIndex, tools: Sequence[Any], dataset: EvalDataset, lenient: bool) -> Any:
    """The metrics, plus (in a pool) the share of the top-5 slots the source's own tools hold."""
    found = evaluate(index, tools, dataset.queries, dataset.name_map if lenient else None)
    scores = {k: round(v, 1) for k, v in found.metrics().items()}
    if len(tools) > len(dataset.tools):
        own = {t.name for t in dataset.tools}
        top = [o.retrieved[:5] for o in found.outcomes]
        slots = sum(len(names) for names in top)
        held = sum(name in own for names in top for name in names)
        scores["own top-5 share"] = round(100.0 * held / slots, 1) if slots else 0.0
    return scores


def run_pooled(data: Path, names: Sequence[str], lenient: Collection[str]) -> dict[str, Any]:
    """Each source alone and in the pool, for every index of :func:`systems`.

    Args:
        data: The folder of the datasets.
        names: The sources, in pooling order.
        lenient: The sources scored through their name map (the others strictly).

    Returns:
        The ``pooled`` entry of the results file.
    """
    datasets = [load_dataset(data / name) for name in names]
    tools = pool(datasets)
    print(f"pooled: {len(tools):,} tools from {len(datasets)} catalogs", flush=True)
    out: dict[str, Any] = {
        "generated": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "tools": len(tools),
        "max_loss": MAX_LOSS,
        "sources": {
            d.name: {
                "tools": len(d.tools),
                "queries": len(d.queries),
                "scoring": "lenient" if d.name in lenient else "strict",
            }
            for d in datasets
        },
        "systems": {},
    }
    for label, make in systems().items():
        entry: dict[str, Any] = {"embedder": {}, "sources": {}}
        for dataset in datasets:
            alone = make()
            scores = _metrics(alone, dataset.tools, dataset, dataset.name in lenient)
            entry["sources"][dataset.name] = {"alone": scores}
            entry["embedder"][dataset.name] = embedder_name(alone)
        index = make()
        started = time.perf_counter()
        index.index(tools)
        entry["build_s"] = round(time.perf_counter() - started, 2)
        entry["embedder"]["pooled"] = embedder_name(index)
        for dataset in datasets:
            scores = _metrics(index, tools, dataset, dataset.name in lenient)
            entry["sources"][dataset.name]["pooled"] = scores
            before = entry["sources"][dataset.name]["alone"]
            print(
                f"  {label:28s} {dataset.name:16s} NDCG@10 {before['NDCG@10']:5.1f} → "
                f"{scores['NDCG@10']:5.1f}  Complete@5 {before['Complete@5']:5.1f} → "
                f"{scores['Complete@5']:5.1f}",
                flush=True,
            )
        for group in _by_language(datasets):
            if len(group) in (1, len(datasets)):
                continue  # the same as alone, or as the whole pool
            same = pool(group)
            index = make()
            index.index(same)
            for dataset in group:
                scores = _metrics(index, same, dataset, dataset.name in lenient)
                scores["tools"] = len(same)
                entry["sources"][dataset.name]["language_pool"] = scores
        out["systems"][label] = entry
    return out


def _by_language(datasets: Sequence[EvalDataset]) -> list[list[EvalDataset]]:
    groups: dict[str, list[EvalDataset]] = {}
    for dataset in datasets:
        groups.setdefault(catalog_language(dataset.tools), []).append(dataset)
    return list(groups.values())
