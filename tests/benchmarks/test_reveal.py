"""benchmarks/reveal.py: the split, the cost model, the rules and the decision it publishes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from itertools import count
from pathlib import Path

import pytest

from toolrelay.models._billing import AnthropicCache, Block, PrefixCache, Prices
from toolrelay.search import SearchRequest
from toolrelay.search._evaluation import load_dataset
from toolrelay.toolsearch import SearchOptions
from toolrelay.toolsearch._reveal import DEFAULT_REVEAL, DEFAULT_REVEAL_MIN_RELATIVE_SCORE

from ._scripts import BENCHMARKS, load_script

reveal = load_script(BENCHMARKS / "reveal.py", "benchmark_reveal")


PRICES = {p.key: p for p in reveal.PRICES}


def _ids(dataset: str) -> list[str]:
    return [q.id for q in load_dataset(reveal.DATA / dataset).queries]


# --- the split --------------------------------------------------------------------------------


def test_the_split_is_the_same_in_another_process_and_keeps_out_about_thirty_percent() -> None:
    ids = _ids("restbench") + _ids("hammerbench_zh")
    here = [reveal.kept_out("hammerbench_zh", i) for i in ids]
    script = (
        "import json, sys; sys.path.insert(0, sys.argv[1]);"
        "from docs_section import load_script;"
        "m = load_script(__import__('pathlib').Path(sys.argv[1]) / 'reveal.py', 'r');"
        "print(json.dumps([m.kept_out('hammerbench_zh', i) for i in json.load(sys.stdin)]))"
    )
    other = subprocess.run(
        [sys.executable, "-c", script, str(BENCHMARKS)],
        input=json.dumps(ids),
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
    )
    assert json.loads(other.stdout) == here
    for dataset in reveal.DATASETS:
        share = sum(reveal.kept_out(dataset, i) for i in _ids(dataset)) / len(_ids(dataset))
        assert 0.25 < share < 0.35, (dataset, share)


def test_the_parts_are_disjoint_and_cover_every_query() -> None:
    ranked = [
        reveal.Ranked(
            id=str(i),
            kept_out=reveal.kept_out("restbench", str(i)),
            scores=(),
            tokens=(0,),
            complete=(False,),
            found=(False,),
        )
        for i in range(200)
    ]
    parts = reveal.split(ranked)
    tuning = {q.id for q in parts["tuning"]}
    kept = {q.id for q in parts["kept_out"]}
    assert tuning.isdisjoint(kept)
    assert tuning | kept == {q.id for q in ranked}
    assert kept
    assert tuning


def test_the_split_depends_on_the_dataset_too() -> None:
    ids = [str(i) for i in range(300)]
    assert [reveal.kept_out("bfcl", i) for i in ids] != [
        reveal.kept_out("restbench", i) for i in ids
    ]


# --- the rules --------------------------------------------------------------------------------


@pytest.mark.parametrize("key", list(reveal.INDEXES))
def test_a_rule_reveals_what_the_index_returns_with_the_same_settings(key: str) -> None:
    dataset = load_dataset(reveal.DATA / "restbench")
    index = reveal.INDEXES[key][1]()
    index.index(dataset.tools)
    checked = 0
    for query in dataset.queries[:15]:
        top = index.search(SearchRequest(query=query.query, max_results=reveal.DEPTH)).hits
        scores = tuple(h.score for h in top)
        for rule in reveal.RULES[1:]:
            request = SearchRequest(
                query=query.query,
                max_results=rule.max_results,
                min_relative_score=rule.min_relative_score,
            )
            assert rule.count(scores) == len(index.search(request).hits), (query.id, rule)
            checked += 1
    assert checked


def test_revealing_nothing_reveals_nothing() -> None:
    assert reveal.RULES[0].label == "none"
    assert reveal.RULES[0].count((3.0, 2.0, 1.0)) == 0


# --- the cost model ---------------------------------------------------------------------------

_tokens = count(1)


def block(size: int) -> Block:
    """``size`` tokens no other block shares, marked as a cache breakpoint."""
    return Block(tokens=tuple(next(_tokens) for _ in range(size)), breakpoint=True)


def billed(requests: list[list[Block]], key: str) -> float:
    """The input cost of a run of requests under the provider's cache rules."""
    price = PRICES[key]
    cache = (
        AnthropicCache(minimum=1024) if key == "anthropic" else PrefixCache(minimum=1024, step=1)
    )
    # In uncached input tokens, as the cost model counts: the prices as multiples of input.
    units = Prices(input=1.0, cache_write=price.write, cache_read=price.read, output=price.output)
    return sum(cache.send(r).cost(units) for r in requests) * 1_000_000


def requests(head: list[Block], later: list[Block]) -> list[list[Block]]:
    """A task's requests: ``head`` first, then each later request adding one block."""
    return [head + later[:i] for i in range(len(later) + 1)]


@pytest.mark.parametrize("key", ["anthropic", "openai"])
def test_the_cost_of_a_reveal_is_what_the_cache_rules_bill(key: str) -> None:
    price = PRICES[key]
    shape = reveal.Shape(later_requests=2, prefix_tokens=1500, search_call_tokens=10)
    prefix, revealed, answer, call = block(1500), block(100), block(300), block(10)
    steps = [block(50), block(70)]
    no_reveal = [[prefix], *requests([prefix, call, answer], steps)]
    all_revealed = requests([prefix, revealed], steps)
    saving = billed(all_revealed, key) - billed(no_reveal, key) - price.output * 10
    complete = reveal.Stats(
        complete=1.0, revealed_complete=100, revealed_missing=0, answer_complete=300
    )
    assert reveal.cost(complete, shape, price) == pytest.approx(saving)
    assert saving < 0

    # A needed tool not revealed: the search round happens anyway, with the reveal in it.
    missed = [[prefix, revealed], *requests([prefix, revealed, call, answer], steps)]
    extra = billed(missed, key) - billed(no_reveal, key)
    missing = reveal.Stats(
        complete=0.0, revealed_complete=0, revealed_missing=100, answer_complete=0
    )
    assert reveal.cost(missing, shape, price) == pytest.approx(extra)
    assert extra > 0


def test_the_cost_by_hand_on_anthropic() -> None:
    shape = reveal.Shape(later_requests=2, prefix_tokens=1000, search_call_tokens=10)
    stats = reveal.Stats(
        complete=0.5, revealed_complete=50, revealed_missing=80, answer_complete=150
    )
    kept = 1.25 + 0.1 * 2  # written once, read twice
    expected = kept * 50 + (kept + 0.1) * 80 - 0.5 * (100 + 5 * 10 + kept * 10) - kept * 150
    assert reveal.cost(stats, shape, PRICES["anthropic"]) == pytest.approx(expected)
    assert reveal.dollars_per_thousand(1_000_000, PRICES["anthropic"]) == pytest.approx(3000)


def test_a_rule_revealing_nothing_costs_nothing() -> None:
    nothing = reveal.Stats(complete=0, revealed_complete=0, revealed_missing=0, answer_complete=0)
    for price in reveal.PRICES:
        for shape in reveal.GRID:
            assert reveal.cost(nothing, shape, price) == 0


# --- the decision -----------------------------------------------------------------------------


def test_the_decision_is_the_cheapest_rule_when_the_providers_agree() -> None:
    costs = {
        "anthropic": {"none": 0.0, "top 1": -2.0, "top 2": -3.0, "top 3": 1.0},
        "openai": {"none": 0.0, "top 1": -1.0, "top 2": -1.5, "top 3": 0.5},
    }
    assert reveal.decide(costs) == "top 2"


def test_when_the_providers_disagree_the_decision_never_loses_on_either() -> None:
    costs = {
        # top 4 is cheapest on Anthropic but dearer than nothing on OpenAI.
        "anthropic": {"none": 0.0, "top 2": -2.0, "top 3": -3.0, "top 4": -4.0},
        "openai": {"none": 0.0, "top 2": -1.0, "top 3": -0.2, "top 4": 0.5},
    }
    # top 2 leaves half of Anthropic's best saving; top 3 leaves 80% of OpenAI's.
    assert reveal.decide(costs) == "top 2"
    costs["openai"]["top 2"] = 1.0
    assert reveal.decide(costs) == "top 3"


def test_a_single_hit_is_never_decided() -> None:
    costs = {
        "anthropic": {"none": 0.0, "top 1": -5.0, "top 2": -3.0, "top 2, cut 0.9": -4.0},
        "openai": {"none": 0.0, "top 1": -2.0, "top 2": -1.0, "top 2, cut 0.9": -1.5},
    }
    assert reveal.decide(costs) == "top 2, cut 0.9"
    assert reveal.decide({p: {"none": 0.0, "top 1": -1.0} for p in costs}) == "none"


def test_the_published_decision_is_the_cheapest_rule_of_the_published_figures() -> None:
    data = json.loads((reveal.RESULTS / "reveal.json").read_text(encoding="utf-8"))
    assert not data["quick"]
    decided = data["decision"]
    tuning = data["indexes"]["default"]["overall"]["tuning"]
    costs = {key: {r: row["cost"][key] for r, row in tuning.items()} for key in PRICES}
    assert decided["rule"] == reveal.decide(costs)
    # And the reveal's default (toolrelay.toolsearch._reveal).
    assert (decided["max_results"], decided["min_relative_score"]) == (
        DEFAULT_REVEAL,
        DEFAULT_REVEAL_MIN_RELATIVE_SCORE,
    )
    rule = reveal.as_rule(decided["rule"])
    assert decided["reveal"] == (rule.max_results > 0)
    assert decided["max_results"] == rule.max_results
    assert decided["min_relative_score"] == rule.min_relative_score
    assert decided["tuning"] == tuning[decided["rule"]]
    kept = data["indexes"]["default"]["overall"]["kept_out"][decided["rule"]]
    assert decided["kept_out"] == kept


def test_an_answer_costs_its_definitions_and_a_search_round_for_each_miss() -> None:
    price, shape = PRICES["anthropic"], reveal.SHAPE
    kept = price.write + price.read * shape.later_requests
    whole = reveal.Stats(complete=1, revealed_complete=300, revealed_missing=0, answer_complete=0)
    # Every needed tool shown: the definitions, in every later request.
    assert reveal.answer_cost(whole, shape, price) == pytest.approx(kept * 300)
    half = reveal.Stats(
        complete=0.5, revealed_complete=100, revealed_missing=100, answer_complete=0
    )
    again = price.read * shape.prefix_tokens + price.output * 40 + kept * (40 + 200)
    assert reveal.answer_cost(half, shape, price) == pytest.approx(kept * 200 + 0.5 * again)


def test_the_answer_rule_is_never_a_single_hit_and_is_the_cheapest_of_the_others() -> None:
    costs = {
        "anthropic": {"top 1": 1.0, "top 2": 3.0, "top 2, cut 0.9": 2.0, "top 3": 4.0},
        "openai": {"top 1": 0.5, "top 2": 1.5, "top 2, cut 0.9": 1.0, "top 3": 2.0},
    }
    assert reveal.decide_answer(costs) == "top 2, cut 0.9"
    # The providers disagree: the rule least above either's cheapest.
    costs["openai"]["top 2"] = 0.9
    costs["openai"]["top 2, cut 0.9"] = 1.8
    assert reveal.decide_answer(costs) == "top 2"


def test_the_published_answer_rule_is_the_decision_and_tool_searchs_default() -> None:
    data = json.loads((reveal.RESULTS / "reveal.json").read_text(encoding="utf-8"))
    decided = data["answer_decision"]
    default = decided["indexes"]["default"]
    assert decided["rule"] == reveal.decide_answer(default["costs"])
    options = SearchOptions()
    assert (decided["max_results"], decided["min_relative_score"]) == (
        options.max_results,
        options.min_relative_score,
    )
    # The reveal's saved search round was priced at that same answer.
    assert data["model"]["search_answer"] == decided["rule"]


# --- a run ------------------------------------------------------------------------------------


def test_quick_run_writes_the_results_and_no_docs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reveal.tempfile, "mkdtemp", lambda prefix: str(tmp_path))
    page = reveal.DOCS.read_text(encoding="utf-8")
    assert reveal.main(["--quick"]) == 0
    assert reveal.DOCS.read_text(encoding="utf-8") == page
    data = json.loads((tmp_path / "reveal.json").read_text(encoding="utf-8"))
    assert data["quick"]
    assert set(data["decision"]) >= {"reveal", "max_results", "min_relative_score", "tuning"}
    for key in reveal.INDEXES:
        entry = data["indexes"][key]["datasets"][reveal.QUICK_DATASET]
        assert sum(entry["queries"].values()) == reveal.QUICK_QUERIES
        rows = entry["tuning"]
        assert rows["none"]["tokens"] == 0
        assert rows["none"]["all_revealed"] == 0
        # Revealing more never finds fewer needed tools, and costs more tokens.
        shares = [rows[f"top {k}"]["all_revealed"] for k in range(1, 6)]
        tokens = [rows[f"top {k}"]["tokens"] for k in range(1, 6)]
        assert shares == sorted(shares)
        assert tokens == sorted(tokens)
        assert tokens[0] > 0
    assert "## Revealing tools before the first model call" in (tmp_path / "reveal.md").read_text(
        encoding="utf-8"
    )
