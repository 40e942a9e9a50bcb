from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from toolrelay.exceptions import ConfigurationError
from toolrelay.lint._self_search import search_self
from toolrelay.search._documents import ToolText
from toolrelay.search._masks import Mask
from toolrelay.search._scoring import Scores, ScoringToolIndex
from toolrelay.tools import ToolDefinition


class ScriptedIndex(ScoringToolIndex):
    """Scores from a table: query -> one score per tool (zeros for unknown queries)."""

    search_type = "scripted"

    def __init__(self, table: Mapping[str, Sequence[float]], size: int | None = None) -> None:
        super().__init__()
        self.table = table
        self.size = size
        self.queries: list[str] = []

    def _build(self, definitions: Sequence[ToolDefinition], texts: Sequence[ToolText]) -> Any:
        return len(definitions) if self.size is None else self.size

    def _score(self, payload: Any, query: str, permitted: Mask | None) -> Scores:
        self.queries.append(query)
        return np.asarray(self.table.get(query, [0.0] * payload), dtype=np.float32)


def _defs(*descriptions: str) -> list[ToolDefinition]:
    return [ToolDefinition(name=f"tool_{i}", description=d) for i, d in enumerate(descriptions)]


def test_ranks_break_ties_by_catalog_order_and_need_a_positive_score() -> None:
    table = {
        "A": [3.0, 3.0, 1.0],  # tool_0 first (tie, earlier)
        "B": [3.0, 3.0, 1.0],  # tool_1 second (tie, later)
        "C": [0.0, 0.0, 0.0],  # tool_2 not found
    }
    found = search_self(_defs("A", "B", "C"), ScriptedIndex(table), margin=0.2)
    assert found.description_ranks == (1, 2, None)
    assert found.description_top[1] == (0, 1, 2)
    assert found.description_top[2] == ()  # nothing matched at all
    assert found.search_type == "scripted"


def test_name_queries_are_the_words_of_the_name() -> None:
    index = ScriptedIndex({})
    search_self(
        [ToolDefinition(name="refund.findFailedOrders", description="x")], index, margin=0.1
    )
    assert "refund find failed orders" in index.queries


def test_close_rivals_are_within_the_margin_and_clusters_need_both_directions() -> None:
    table = {
        "A": [10.0, 9.0, 8.5, 1.0],  # 1 within 10%, 2 within 15%
        "B": [9.5, 10.0, 1.0, 1.0],  # 0 within 10%
        "C": [8.0, 1.0, 10.0, 1.0],  # 0 within 20% (but A sees C at 15%)
        "D": [1.0, 1.0, 1.0, 10.0],
    }
    found = search_self(_defs("A", "B", "C", "D"), ScriptedIndex(table), margin=0.1)
    assert [j for j, _ in found.close[0]] == [1]
    assert found.close[0][0][1] == pytest.approx(0.9)
    assert found.clusters() == [(0, 1)]
    wider = search_self(_defs("A", "B", "C", "D"), ScriptedIndex(table), margin=0.2)
    assert wider.clusters() == [(0, 1, 2)]


def test_top_counts_count_only_other_tools_queries() -> None:
    table = {"A": [5.0, 4.0, 3.0], "B": [5.0, 6.0, 0.0], "C": [5.0, 0.0, 6.0]}
    found = search_self(_defs("A", "B", "C"), ScriptedIndex(table), margin=0.1)
    assert found.top_counts == (2, 1, 1)


def test_a_top_three_place_tied_with_the_fourth_does_not_count() -> None:
    table = {
        "A": [9.0, 5.0, 1.0, 1.0],  # tool_2 ties tool_3 for third: only tool_1 counts
        "B": [5.0, 9.0, 4.0, 1.0],
        "C": [0.0, 0.0, 9.0, 0.0],
        "D": [0.0, 0.0, 0.0, 9.0],
    }
    found = search_self(_defs("A", "B", "C", "D"), ScriptedIndex(table), margin=0.1)
    assert found.description_top[0] == (0, 1, 2)
    assert found.top_counts == (1, 1, 1, 0)


def test_an_index_that_scores_another_catalog_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="scored 2 tools of 3"):
        search_self(_defs("A", "B", "C"), ScriptedIndex({"A": [1.0, 1.0]}, size=2), margin=0.1)


def test_prime_gets_every_query_before_the_searches() -> None:
    primed: list[str] = []
    index = ScriptedIndex({})
    search_self(_defs("alpha", "", "gamma"), index, margin=0.1, prime=primed.extend)
    assert primed == ["alpha", "gamma", "tool 0", "tool 1", "tool 2"]
