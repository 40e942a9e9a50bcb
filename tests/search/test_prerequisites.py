from __future__ import annotations

import numpy as np

from toolrelay.search._prerequisites import lift_providers, prerequisite_links
from toolrelay.tools._base import ToolDefinition


def tool(name: str, *required: str) -> ToolDefinition:
    return ToolDefinition(
        name=name,
        description="",
        input_schema={
            "type": "object",
            "properties": {r: {"type": "string"} for r in required},
            "required": list(required),
        },
    )


def links_of(*definitions: ToolDefinition) -> set[tuple[str, str]]:
    consumers, providers = prerequisite_links(definitions)
    return {
        (definitions[c].name, definitions[p].name)
        for c, p in zip(consumers, providers, strict=True)
    }


def test_an_id_requirement_links_to_the_finder_of_that_thing() -> None:
    links = links_of(
        tool("tmdb_get_movie_movie_id_credits", "movie_id"),
        tool("tmdb_get_search_movie", "query"),
        tool("tmdb_get_search_person", "query"),
        tool("tmdb_get_person_person_id", "person_id"),
        tool("tmdb_get_movie_popular"),
        tool("tmdb.movies.findMovie", "title"),
    )
    assert links == {
        ("tmdb_get_movie_movie_id_credits", "tmdb_get_search_movie"),
        ("tmdb_get_movie_movie_id_credits", "tmdb.movies.findMovie"),
        ("tmdb_get_person_person_id", "tmdb_get_search_person"),
    }


def test_stems_match_and_camel_case_ids_count() -> None:
    links = links_of(tool("crm.getCompany", "companyId"), tool("crm.searchCompanies", "q"))
    assert links == {("crm.getCompany", "crm.searchCompanies")}


def test_no_link_across_prefixes_without_id_or_to_a_finder_needing_the_same_id() -> None:
    assert links_of(tool("shop_get_order", "order_id"), tool("blog_search_orders", "q")) == set()
    assert links_of(tool("shop_get_order", "id"), tool("shop_search_orders", "q")) == set()
    assert (
        links_of(tool("shop_get_order", "order_id"), tool("shop_search_order_items", "order_id"))
        == set()
    )
    assert links_of(tool("shop_get_order", "order"), tool("shop_search_orders", "q")) == set()


def test_lift_raises_providers_to_a_share_of_their_best_consumer() -> None:
    scores = np.array([2.0, 0.5, 1.0, 3.0], dtype=np.float32)
    links = (np.array([0, 2, 3], dtype=np.intp), np.array([1, 1, 2], dtype=np.intp))
    lift_providers(scores, links, 0.5)
    assert np.allclose(scores, [2.0, 1.0, 1.5, 3.0])


def test_lift_among_a_mask_uses_links_inside_it_only() -> None:
    links = (np.array([0, 2, 3], dtype=np.intp), np.array([1, 1, 2], dtype=np.intp))
    scores = np.array([2.0, 0.5, 1.0, 3.0], dtype=np.float32)
    # tool 3 is outside: it lifts nobody; tool 1 is inside and lifted by 0 and 2 only
    lift_providers(scores, links, 0.5, among=np.array([True, True, True, False]))
    assert np.allclose(scores, [2.0, 1.0, 1.0, 3.0])
    scores = np.array([2.0, 0.5, 1.0, 3.0], dtype=np.float32)
    lift_providers(scores, links, 0.5, among=np.array([True, False, True, True]))
    assert np.allclose(scores, [2.0, 0.5, 1.5, 3.0])  # tool 1 is outside: never lifted
