"""Writing one generated section of ``docs/benchmarks.md``, leaving the other sections alone.

Each benchmark script owns the part of the page between its two HTML comment markers and
rewrites only that part; a page without the markers gets the section appended.
"""

from __future__ import annotations

from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"


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
