"""Every figure a page quotes from a benchmark is what the benchmark's writer renders from its JSON.

Each generated section (between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` on
docs/*.md and README.md) must be exactly what its writer's ``docs_sections()`` renders from the
committed results in ``benchmarks/results/``; ``python benchmarks/docs_section.py`` (part of
``python -m tests.docs.regenerate``) rewrites them.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from ._scripts import docs_section

ROOT = Path(__file__).resolve().parents[2]
SECTIONS = docs_section.all_sections()
PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
_START = re.compile(r"<!-- (?P<name>[\w-]+):start -->")


@pytest.mark.parametrize("section", SECTIONS, ids=lambda s: s.label)
def test_a_generated_section_is_what_its_writer_renders(section: object) -> None:
    assert section.on_page() is not None, f"{section.label}: the page has no such markers"
    assert section.on_page() == section.text.strip("\n"), (
        f"{section.label} differs from what {section.name}'s writer renders from the results: "
        "run `python -m tests.docs.regenerate` (or the benchmark) and review the diff"
    )


def test_every_generated_section_on_a_page_has_a_writer() -> None:
    written = {(s.page, s.name) for s in SECTIONS}
    on_pages = {
        (page, found["name"])
        for page in PAGES
        for found in _START.finditer(page.read_text(encoding="utf-8"))
    }
    assert on_pages - written == set()
    assert len(written) == len(SECTIONS)  # one writer per section


def test_quoted_figures_come_from_the_results() -> None:
    tokens = docs_section.load_writer("tokens.py")
    data = json.loads((ROOT / "benchmarks" / "results" / "tokens.json").read_text("utf-8"))
    changed = copy.deepcopy(data)
    refund = next(s for s in changed["scenarios"] if s["key"] == "refund_desk")
    refund["default_run"]["billed"]["anthropic"]["saved_percent"] = 12.34
    refund["default"]["billed"]["anthropic"]["saved_percent"] = 12.34
    texts = {(s.page.name, s.name): s.text for s in tokens.docs_sections(changed)}
    assert "**12.34%**" in texts[("README.md", "tokens")]
    assert "12.3% / " in texts[("tool-search.md", "tokens")]
    assert texts != {(s.page.name, s.name): s.text for s in tokens.docs_sections(data)}

    report = docs_section.load_writer("retrieval/report.py")
    results = json.loads((ROOT / "benchmarks" / "results" / "retrieval.json").read_text("utf-8"))
    bm25 = results["datasets"]["acebench_zh"]["systems"]["toolrelay bm25"]
    bm25[results["datasets"]["acebench_zh"]["headline"]]["NDCG@10"] = 12.3
    texts = {(s.page.name, s.name): s.text for s in report.docs_sections(results)}
    assert "| 12.3 / " in texts[("README.md", "retrieval")]
    assert "**12.3 / " in texts[("tool-search.md", "retrieval-chinese")]


def test_a_section_is_written_between_its_markers_and_nowhere_else(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Page\n\nBefore.\n\n<!-- x:start -->\nold\n<!-- x:end -->\n\nAfter.\n")
    section = docs_section.Section(name="x", page=page, text="new\nlines")
    assert section.on_page() == "old"
    section.write()
    assert page.read_text() == (
        "# Page\n\nBefore.\n\n<!-- x:start -->\nnew\nlines\n<!-- x:end -->\n\nAfter.\n"
    )
    marked = docs_section.Section.from_marked(page, section.marked())
    assert (marked.name, marked.text) == ("x", "new\nlines")
    other = docs_section.Section(name="y", page=page, text="appended")
    assert other.on_page() is None
    other.write()
    assert page.read_text().endswith("After.\n\n<!-- y:start -->\nappended\n<!-- y:end -->\n")
