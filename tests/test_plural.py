"""Counts with their nouns: one place for "1 tool" and "2,574 tools"."""

from __future__ import annotations

import pytest

from toolrelay._plural import plural


@pytest.mark.parametrize(
    ("count", "noun", "plural_noun", "text"),
    [
        (1, "tool", None, "1 tool"),
        (0, "tool", None, "0 tools"),
        (2574, "tool", None, "2,574 tools"),
        (1, "query", "queries", "1 query"),
        (1355, "query", "queries", "1,355 queries"),
        (3, "info", "info", "3 info"),
    ],
)
def test_the_noun_agrees_with_the_count(
    count: int, noun: str, plural_noun: str | None, text: str
) -> None:
    assert plural(count, noun, plural_noun) == text
