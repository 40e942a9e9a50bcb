"""Checks that a search ranks its permitted tools alone, shared by the tests of every index.

An index over the permitted tools *and* forbidden ones, searched with the permitted subset
(as a set and as a predicate), must answer every query exactly as an index built on the
permitted tools alone: the same hits, in the same order, with the same scores and total.
The forbidden tools below are made to disturb anything computed over the whole catalog: they
share the queries' words (term statistics, score normalisation, the median similarity), one
is a prerequisite provider of a permitted tool, and their names are what an attacker reads
letter by letter through a pattern.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from toolrelay.search._base import SearchRequest, SearchResponse, ToolIndex
from toolrelay.tools._base import ToolDefinition

from ._catalog import CATALOG, CATALOG_ZH, tool

FORBIDDEN: tuple[ToolDefinition, ...] = (
    tool(
        "admin.secret_refund_override",
        "Refund any order at once, without approval. Weather, forecast, email, currency.",
        order_id={"type": "string", "description": "The order to refund", "required": True},
    ),
    tool("get_weather_internal", "Weather weather weather: the raw weather feed of a city."),
    tool(
        "shop_search_order",  # finds an order: a prerequisite provider of order_id tools
        "Search an order by its number, city or email.",
    ),
    tool("退款.内部审批", "内部退款审批：查询订单退款失败的原因"),
    tool("zz", "x"),
)

QUERIES: tuple[str, ...] = (
    "weather in Paris",
    "refund a failed payment",
    "send a message by email",
    "order details and status",
    "convert currency",
    "forecast forecast city",
    "secret override approval",
    "退款失败的订单",
    "查询天气",
    "",
    "the of and",
    # patterns, including those that used to read other tools' texts
    r"^get_\w+",
    r"\bemail\b",
    r"(?s)city.*secret",
    r"forecast[\s\S]*admin",
    r"city\.(?=[\s\S]*secret)",
    r"^(?=[\s\S]*\nadmin\.s)",
    r"[\s\S]*",
    r"\C*secret",
    r"(?m)^admin",
    r"refund|weather|email",
    r"(a+)+$",
)


def interleaved(
    permitted: Sequence[ToolDefinition], forbidden: Sequence[ToolDefinition], seed: int = 0
) -> list[ToolDefinition]:
    """``permitted`` in its order, with ``forbidden`` tools between them, first and last."""
    catalog = list(permitted)
    rng = random.Random(seed)
    for i, extra in enumerate(forbidden):
        position = 0 if i == 0 else len(catalog) if i == 1 else rng.randrange(len(catalog) + 1)
        catalog.insert(position, extra)
    return catalog


def answer(response: SearchResponse) -> tuple[object, ...]:
    return tuple((h.name, h.score, h.summary) for h in response.hits), response.total


# Both catalogs, names unique (the Chinese one repeats two English tools).
PERMITTED: tuple[ToolDefinition, ...] = CATALOG + tuple(
    t for t in CATALOG_ZH if t.name not in {c.name for c in CATALOG}
)


def assert_ranks_permitted_tools_alone(
    make: Callable[[], ToolIndex],
    permitted: Sequence[ToolDefinition] = PERMITTED,
    forbidden: Sequence[ToolDefinition] = FORBIDDEN,
    queries: Sequence[str] = QUERIES,
    **options: object,
) -> None:
    """A search of ``permitted`` among ``forbidden`` tools answers as if only they existed."""
    alone, mixed = make(), make()
    alone.index(list(permitted))
    mixed.index(interleaved(permitted, forbidden))
    names = frozenset(t.name for t in permitted)
    for query in queries:
        expected = answer(alone.search(SearchRequest(query=query, max_results=10, **options)))  # type: ignore[arg-type]
        for allowed in (names, names.__contains__):
            request = SearchRequest(query=query, max_results=10, allowed=allowed, **options)  # type: ignore[arg-type]
            assert answer(mixed.search(request)) == expected, (query, allowed)


def assert_equals_an_index_of_the_subset(
    make: Callable[[], ToolIndex],
    catalog: Sequence[ToolDefinition],
    queries: Sequence[str],
    subsets: int = 12,
    seed: int = 1,
) -> None:
    """For random permitted subsets, a search equals one of an index of the subset alone."""
    rng = random.Random(seed)
    whole = make()
    whole.index(list(catalog))
    for _ in range(subsets):
        share = rng.choice([0.05, 0.3, 0.5, 0.9, 1.0])
        subset = [t for t in catalog if rng.random() < share] or [catalog[0]]
        alone = make()
        alone.index(subset)
        names = frozenset(t.name for t in subset)
        for query in queries:
            expected = answer(alone.search(SearchRequest(query=query, max_results=10)))
            got = whole.search(SearchRequest(query=query, max_results=10, allowed=names))
            assert answer(got) == expected, (query, len(subset))
