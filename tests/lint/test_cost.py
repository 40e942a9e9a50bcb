from __future__ import annotations

from toolrelay.tools._tokens import tool_tokens

from ._catalogs import GOOD_DESCRIPTION, findings, flagged, run, target


def _big_params(count: int) -> dict[str, dict[str, str]]:
    return {
        f"field_{i}": {"type": "string", "description": f"Value of field number {i}, any text."}
        for i in range(count)
    }


def test_large_definitions_are_flagged_with_their_size() -> None:
    big = target("bulk_import", params=_big_params(80))
    small = target("get_weather")
    [found] = findings([big, small], "schema-too-large")
    assert found.tool == "bulk_import"
    assert f"{tool_tokens(big.definition):,} tokens" in found.message
    assert flagged([big, small], "schema-too-large", max_tool_tokens=100_000) == []


def test_the_catalog_total_is_reported_and_flagged_above_the_limit() -> None:
    tools = [target(f"tool_{i}", GOOD_DESCRIPTION + f" Variant {i}.") for i in range(5)]
    report = run(tools)
    assert report.cost.total == sum(tool_tokens(t.definition) for t in tools)
    assert [name for name, _ in report.cost.sizes] == [t.name for t in tools]
    assert report.cost.largest[0][1] == max(size for _, size in report.cost.sizes)
    assert not [f for f in report.findings if f.rule == "catalog-too-large"]
    [found] = findings(tools, "catalog-too-large", max_catalog_tokens=100)
    assert found.tool is None
    assert f"{report.cost.total:,} tokens per request" in found.message
