from __future__ import annotations

import pytest

from toolrelay.exceptions import DuplicateToolError
from toolrelay.mcp import LiveToolCatalog
from toolrelay.tools import FunctionTool


def ping() -> str:
    """Answer pong."""
    return "pong"


def tools(*names: str) -> list[tuple[FunctionTool, str]]:
    return [(FunctionTool.from_function(ping, name=n), f"source of {n}") for n in names]


def test_replace_all_swaps_the_contents_in_place() -> None:
    catalog = LiveToolCatalog()
    held = catalog  # what an advisor holds
    catalog.replace_all(tools("a.ping", "b.ping"))
    assert held.names() == ["a.ping", "b.ping"]
    assert held.get("b__ping") is not None
    assert held.source("a.ping") == "source of a.ping"
    catalog.replace_all(tools("c.ping"))
    assert held.names() == ["c.ping"]
    assert "a.ping" not in held


def test_a_duplicate_leaves_the_catalog_unchanged() -> None:
    catalog = LiveToolCatalog()
    catalog.replace_all(tools("a.ping"))
    with pytest.raises(DuplicateToolError, match=r"source of x\.ping"):
        catalog.replace_all(tools("x.ping", "x__ping"))
    assert catalog.names() == ["a.ping"]
