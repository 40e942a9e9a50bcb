"""Measuring retrieval quality: is the right tool found, and how high?

A benchmark is a catalog (``tools.jsonl``: ``{"name", "description", "parameters"}`` per
line) and queries (``queries.*.jsonl``: ``{"id", "query", "relevant": [names]}``). Every
query is run against the whole catalog and its top 10 is scored:

- ``R@k``: the share of a query's relevant tools found in the top ``k`` (k = 1, 3, 5, 10);
- ``NDCG@10`` with binary gains; ``MRR``: the reciprocal rank of the first relevant tool
  (0 when none is in the top 10);
- ``Complete@5``: 1 when every relevant tool is in the top 5 (what a model needs to act).

All are averaged over queries and reported ×100. With a *name map* (variant name → original
name, as BFCL's ``name_map.json``) scoring is lenient: retrieved and relevant names are both
mapped, and only the first occurrence of an original name in a ranking can count as a hit.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolrelay.search._base import SearchRequest, ToolIndex
from toolrelay.tools._base import ToolDefinition

__all__ = [
    "DEPTH",
    "EvalDataset",
    "EvalQuery",
    "EvalReport",
    "QueryOutcome",
    "evaluate",
    "evaluate_ranking",
    "load_dataset",
    "load_name_map",
    "load_queries",
    "load_tools",
    "unknown_relevant",
]

DEPTH = 10
"""How many results per query are scored."""

Ranker = Callable[[str, int], Sequence[str]]
"""``rank(query, k)`` → the best ``k`` tool names, best first."""


@dataclass(frozen=True, kw_only=True)
class EvalQuery:
    """One benchmark query.

    Attributes:
        id: The query's identifier (its prefix often names a subset).
        query: The user's request, as the model would see it.
        relevant: The tools that answer it, ordered, without repeats.
    """

    id: str
    query: str
    relevant: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class EvalDataset:
    """A catalog with its queries and optional name map, as loaded by :func:`load_dataset`."""

    name: str
    tools: tuple[ToolDefinition, ...]
    queries: tuple[EvalQuery, ...]
    name_map: Mapping[str, str] | None = None


@dataclass(frozen=True, kw_only=True)
class QueryOutcome:
    """How one query fared.

    Attributes:
        id: The query's identifier.
        retrieved: The names returned, best first.
        hit_ranks: 1-based ranks of the results that counted as hits.
        relevant: How many distinct relevant tools the query has (after name mapping).
    """

    id: str
    retrieved: tuple[str, ...]
    hit_ranks: tuple[int, ...]
    relevant: int

    def recall(self, k: int) -> float:
        """Share of relevant tools in the top ``k``."""
        return sum(1 for r in self.hit_ranks if r <= k) / self.relevant

    def ndcg(self, k: int = DEPTH) -> float:
        """NDCG@k with binary gains."""
        dcg = sum(1.0 / math.log2(r + 1) for r in self.hit_ranks if r <= k)
        ideal = sum(1.0 / math.log2(r + 1) for r in range(1, min(self.relevant, k) + 1))
        return dcg / ideal

    def reciprocal_rank(self) -> float:
        """1 / rank of the first hit, or 0."""
        return 1.0 / self.hit_ranks[0] if self.hit_ranks else 0.0

    def complete(self, k: int) -> bool:
        """Whether every relevant tool is in the top ``k``."""
        return sum(1 for r in self.hit_ranks if r <= k) == self.relevant


@dataclass(frozen=True, kw_only=True)
class EvalReport:
    """Averaged metrics of one run, ×100, plus the outcome of every query.

    Attributes:
        queries: Number of queries.
        recall: ``{k: R@k}`` for k = 1, 3, 5, 10.
        ndcg_at_10: Mean NDCG@10.
        mrr: Mean reciprocal rank (within the top 10).
        complete_at_5: Share of queries with every relevant tool in the top 5.
        lenient: Whether a name map was applied.
        search_ms: Mean time per query, in milliseconds.
        outcomes: One :class:`QueryOutcome` per query, in query order.
    """

    queries: int
    recall: Mapping[int, float]
    ndcg_at_10: float
    mrr: float
    complete_at_5: float
    lenient: bool
    search_ms: float
    outcomes: tuple[QueryOutcome, ...]

    def metrics(self) -> dict[str, float]:
        """The headline numbers as a flat mapping (``"R@1"`` ... ``"Complete@5"``)."""
        out = {f"R@{k}": v for k, v in self.recall.items()}
        out |= {"NDCG@10": self.ndcg_at_10, "MRR": self.mrr, "Complete@5": self.complete_at_5}
        return out

    def subset(self, prefix: str) -> EvalReport:
        """The report over the queries whose id starts with ``prefix``."""
        chosen = [o for o in self.outcomes if o.id.startswith(prefix)]
        return _report(chosen, lenient=self.lenient, search_ms=self.search_ms)


def evaluate(
    index: ToolIndex,
    tools: Sequence[ToolDefinition],
    queries: Sequence[EvalQuery],
    name_map: Mapping[str, str] | None = None,
) -> EvalReport:
    """Index ``tools`` with ``index`` and score its top 10 for every query.

    Args:
        index: Any :class:`~toolrelay.search.ToolIndex`; it is (re)built for ``tools``.
        tools: The whole catalog.
        queries: The queries to run.
        name_map: Variant name → original name, for lenient scoring.

    Returns:
        The averaged metrics and per-query outcomes.
    """
    index.index(tools)

    def rank(query: str, k: int) -> list[str]:
        return index.search(SearchRequest(query=query, max_results=k)).names

    return evaluate_ranking(rank, queries, name_map)


def evaluate_ranking(
    rank: Ranker, queries: Sequence[EvalQuery], name_map: Mapping[str, str] | None = None
) -> EvalReport:
    """Score any ranking function (``rank(query, k) -> names``) on ``queries``."""
    outcomes = []
    elapsed = 0.0
    for q in queries:
        started = time.perf_counter()
        retrieved = tuple(rank(q.query, DEPTH))[:DEPTH]
        elapsed += time.perf_counter() - started
        outcomes.append(_outcome(q, retrieved, name_map))
    search_ms = elapsed * 1000.0 / len(queries) if queries else 0.0
    return _report(outcomes, lenient=name_map is not None, search_ms=search_ms)


def _outcome(
    query: EvalQuery, retrieved: Sequence[str], name_map: Mapping[str, str] | None
) -> QueryOutcome:
    def mapped(name: str) -> str:
        return name_map.get(name, name) if name_map else name

    relevant = {mapped(n) for n in query.relevant}
    seen: set[str] = set()
    hit_ranks = []
    for rank, name in enumerate(retrieved, start=1):
        original = mapped(name)
        # Only the first occurrence of an original name counts; later variants do not.
        if original in relevant and original not in seen:
            hit_ranks.append(rank)
        seen.add(original)
    return QueryOutcome(
        id=query.id, retrieved=tuple(retrieved), hit_ranks=tuple(hit_ranks), relevant=len(relevant)
    )


def unknown_relevant(
    queries: Sequence[EvalQuery],
    names: Iterable[str],
    name_map: Mapping[str, str] | None = None,
) -> list[tuple[EvalQuery, tuple[str, ...]]]:
    """The queries naming relevant tools the catalog does not hold, with those names.

    No index can find such a tool, so the query scores as a miss whatever the index does:
    usually a renamed tool, or queries written for another catalog. With a name map a
    relevant name counts as held when the catalog holds any variant of its original.

    Args:
        queries: The benchmark's queries.
        names: The catalog's tool names.
        name_map: Variant name → original name, as for :func:`evaluate`.
    """

    def mapped(name: str) -> str:
        return name_map.get(name, name) if name_map else name

    held = {mapped(n) for n in names}
    found = []
    for query in queries:
        missing = tuple(n for n in query.relevant if mapped(n) not in held)
        if missing:
            found.append((query, missing))
    return found


def _report(outcomes: Sequence[QueryOutcome], *, lenient: bool, search_ms: float) -> EvalReport:
    n = len(outcomes)

    def mean(values: Sequence[float]) -> float:
        return 100.0 * sum(values) / n if n else 0.0

    return EvalReport(
        queries=n,
        recall={k: mean([o.recall(k) for o in outcomes]) for k in (1, 3, 5, 10)},
        ndcg_at_10=mean([o.ndcg() for o in outcomes]),
        mrr=mean([o.reciprocal_rank() for o in outcomes]),
        complete_at_5=mean([float(o.complete(5)) for o in outcomes]),
        lenient=lenient,
        search_ms=search_ms,
        outcomes=tuple(outcomes),
    )


# --- loading ---------------------------------------------------------------------------------


def load_tools(path: str | Path) -> list[ToolDefinition]:
    """Read a catalog JSONL file (``{"name", "description", "parameters"}`` per line)."""
    tools = []
    for row in _jsonl(path):
        tools.append(
            ToolDefinition(
                name=row["name"],
                description=row.get("description") or "",
                input_schema=row.get("parameters") or {"type": "object", "properties": {}},
            )
        )
    return tools


def load_queries(path: str | Path) -> list[EvalQuery]:
    """Read a queries JSONL file (``{"id", "query", "relevant": [...]}`` per line)."""
    return [
        EvalQuery(id=str(row["id"]), query=row["query"], relevant=tuple(row["relevant"]))
        for row in _jsonl(path)
    ]


def load_name_map(path: str | Path) -> dict[str, str]:
    """Read a name map (``{variant name: original name}``)."""
    with Path(path).open(encoding="utf-8") as fh:
        data = json.load(fh)
    return {str(k): str(v) for k, v in data.items()}


def load_dataset(folder: str | Path, split: str = "dev") -> EvalDataset:
    """Load ``tools.jsonl``, ``queries.{split}.jsonl`` and ``name_map.json`` (if present)."""
    folder = Path(folder)
    name_map_path = folder / "name_map.json"
    return EvalDataset(
        name=folder.name,
        tools=tuple(load_tools(folder / "tools.jsonl")),
        queries=tuple(load_queries(folder / f"queries.{split}.jsonl")),
        name_map=load_name_map(name_map_path) if name_map_path.exists() else None,
    )


def _jsonl(path: str | Path) -> list[dict[str, Any]]:
    rows = []
    with Path(path).open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rows.append(json.loads(line))
    return rows
