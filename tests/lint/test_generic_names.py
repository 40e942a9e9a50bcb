from __future__ import annotations

from toolrelay.lint import LintConfig

from ._catalogs import flagged, run, target


def test_generic_names_are_flagged_when_the_catalog_spans_several_domains() -> None:
    targets = [
        target("search"),
        target("get_data"),
        target("create"),
        target("ticket.search"),
        target("github.create_issue"),
        target("github_search"),
    ]
    assert flagged(targets, "name-generic") == ["search", "get_data", "create"]


def test_single_source_catalogs_are_not_checked() -> None:
    assert flagged([target("search"), target("get_data")], "name-generic") == []


def test_sources_of_targets_count_as_several_sources() -> None:
    targets = [target("search", source="crm"), target("lookup_invoice", source="billing")]
    assert flagged(targets, "name-generic") == ["search"]


def test_the_setting_overrides_detection() -> None:
    targets = [target("search"), target("query")]
    report = run(targets, config=LintConfig(several_sources=True, index="bm25"))
    assert [f.tool for f in report.findings if f.rule == "name-generic"] == ["search", "query"]
    spread = [target("search"), target("a.one"), target("b.two")]
    report = run(spread, config=LintConfig(several_sources=False))
    assert not [f for f in report.findings if f.rule == "name-generic"]
