"""The parts of the docs that benchmark results write: sections between two markers.

A writer (a benchmark script) owns sections of one or more pages, each between
``<!-- NAME:start -->`` and ``<!-- NAME:end -->``, and renders them from its results JSON in
``benchmarks/results/`` with its ``docs_sections()``. Running the benchmark writes the JSON
and then its sections, leaving the rest of each page alone; a page without the markers gets
the section appended.

``python benchmarks/docs_section.py`` renders every writer's sections again from the
committed JSON (after a change to a writer's text), and ``tests/benchmarks/test_docs_section.py``
fails when a page differs from what its writer renders, so a figure quoted on any page comes
from the same JSON as the benchmark's own table.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DOCS = ROOT / "docs" / "benchmarks.md"
README = ROOT / "README.md"

WRITERS = (
    "tokens.py",
    "loop_overhead.py",
    "eval_smollm2.py",
    "lint_catalogs.py",
    "postgres_search.py",
    "retrieval/report.py",
    "retrieval/speed.py",
    "retrieval/embedding_speed.py",
    "retrieval/history.py",
    "reveal.py",
    "reliability.py",
    "shape.py",
    "bridges.py",
    "schema_checks.py",
    "install.py",
)
"""The scripts with a ``docs_sections()``, relative to ``benchmarks/``."""

_MARKED = re.compile(r"<!-- (?P<name>[\w-]+):start -->\n(?P<text>.*)\n<!-- (?P=name):end -->", re.S)


@dataclass(frozen=True, kw_only=True)
class Section:
    """One generated part of a page: its name (the markers'), its page and its text."""

    name: str
    page: Path
    text: str  # between the markers, without them

    @classmethod
    def from_marked(cls, page: Path, marked: str) -> Section:
        """The section a writer's text holds, markers included (``<!-- NAME:start -->``...)."""
        found = _MARKED.fullmatch(marked.strip("\n"))
        if found is None:
            raise ValueError("a section starts with <!-- NAME:start --> and ends with its end")
        return cls(name=found["name"], page=page, text=found["text"])

    @property
    def start(self) -> str:
        return f"<!-- {self.name}:start -->"

    @property
    def end(self) -> str:
        return f"<!-- {self.name}:end -->"

    @property
    def label(self) -> str:
        return f"{self.page.relative_to(ROOT)}#{self.name}"

    def marked(self) -> str:
        return f"{self.start}\n{self.text.strip(chr(10))}\n{self.end}"

    def on_page(self) -> str | None:
        """What the page holds between the markers now (``None``: no such section)."""
        text = self.page.read_text(encoding="utf-8") if self.page.is_file() else ""
        if self.start not in text or self.end not in text:
            return None
        return text.split(self.start, 1)[1].split(self.end, 1)[0].strip("\n")

    def write(self) -> None:
        write_section(self.marked(), self.start, self.end, self.page)


_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def spelled(number: int) -> str:
    """A small count as prose writes it (``3`` -> ``three``; from 11 on, digits)."""
    return _WORDS[number] if 0 <= number < len(_WORDS) else f"{number:,}"


def write_section(section: str, start: str, end: str, docs: Path = DOCS) -> None:
    """Put ``section`` (which begins with ``start`` and ends with ``end``) into ``docs``."""
    text = docs.read_text(encoding="utf-8") if docs.is_file() else "# Benchmarks\n"
    section = section.strip("\n")
    if start in text and end in text:
        head, rest = text.split(start, 1)
        tail = rest.split(end, 1)[1].lstrip("\n")
        text = head + section + ("\n\n" + tail if tail else "\n")
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    docs.parent.mkdir(parents=True, exist_ok=True)
    docs.write_text(text, encoding="utf-8")


def write_sections(sections: Sequence[Section]) -> None:
    for section in sections:
        section.write()


def load_script(path: Path, name: str) -> ModuleType:
    """Import the script at ``path`` (a file, not a package module) as the module ``name``."""
    if name in sys.modules:
        return sys.modules[name]
    # Scripts import this module and their siblings by name.
    for folder in (str(HERE), str(path.parent)):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    sys.modules.setdefault("docs_section", sys.modules[__name__])
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_writer(relative: str) -> ModuleType:
    """A writer script, by its path under ``benchmarks/``."""
    name = "benchmark_writer_" + relative.removesuffix(".py").replace("/", "_")
    return load_script(HERE / relative, name)


def all_sections() -> list[Section]:
    """Every writer's sections, rendered from the committed results."""
    sections: list[Section] = []
    for writer in WRITERS:
        sections += load_writer(writer).docs_sections()
    return sections


def main() -> int:
    sections = all_sections()
    changed = [s for s in sections if s.on_page() != s.text.strip("\n")]
    write_sections(changed)
    for section in changed:
        print(f"rewrote {section.label}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
