from __future__ import annotations

from ._catalogs import findings, flagged, run, target

SAME = "Returns the exchange rate between two currencies for a given day and market."


def test_tools_outside_the_top_five_for_their_own_description_are_hard_to_find() -> None:
    tools = [target(f"rate_source_{i}", SAME) for i in range(7)]
    found = findings(tools, "hard-to-find")
    assert [f.tool for f in found] == ["rate_source_5", "rate_source_6"]
    assert "ranks 6 of 7" in found[0].message
    assert found[0].related == ("rate_source_0", "rate_source_1", "rate_source_2")
    assert flagged(tools, "hard-to-find", top_k=7) == []


def test_a_description_that_matches_nothing_is_not_found() -> None:
    tools = [target("mystery", "Do it for me, then do it when you can."), target("x")]
    [found] = findings(tools, "hard-to-find")
    assert "not found" in found.message


def test_names_whose_words_others_claim_are_hard_to_find_by_name() -> None:
    others = [
        target(f"zeta_lookup_{k}", f"Zeta lookup number {k}: returns zeta lookup values.")
        for k in ("alpha", "beta", "gamma", "delta", "epsilon", "omega")
    ]
    tools = [*others, target("zeta_lookup")]
    assert flagged(tools, "hard-to-find-by-name") == ["zeta_lookup"]


def test_distinct_tools_are_all_found() -> None:
    tools = [
        target("get_weather"),
        target("convert_currency", "Converts an amount between two currencies at today's rate."),
        target("translate_text", "Translates a text into another language, keeping markup."),
    ]
    report = run(tools)
    assert not [f for f in report.findings if f.rule.startswith("hard-to-find")]
    assert report.retrieval is not None
    assert report.retrieval.found_within(5) == 1.0


FRUITS = "apple banana cherry damson elderberry fig grape honeydew kiwi lemon mango nectarine"


def test_a_description_in_the_top_three_for_most_others_dominates() -> None:
    tools = [
        target(f"{fruit}_prices", f"Returns {fruit} prices from the {fruit} exchange for traders.")
        for fruit in FRUITS.split()
    ]
    hub = target("market_everything", "Returns prices of " + FRUITS + " and more, every market.")
    [found] = findings([*tools, hub], "description-dominates")
    assert found.tool == "market_everything"
    assert "of 12 other tools' descriptions" in found.message
    assert flagged([*tools, hub], "description-dominates", dominance_min=13) == []
    assert flagged(tools, "description-dominates") == []
