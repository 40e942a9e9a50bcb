from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolrelay.exceptions import ConfigurationError
from toolrelay.mcp.names import HASH_LENGTH, mcp_tool_name, validate_prefix
from toolrelay.tools import is_provider_safe, provider_safe_name, validate_tool_name


def test_a_safe_name_is_prefixed_as_a_category() -> None:
    assert mcp_tool_name("get_transaction", "payments") == "payments.get_transaction"
    assert provider_safe_name(mcp_tool_name("get_transaction", "payments")) == (
        "payments__get_transaction"
    )


def test_no_prefix_keeps_a_safe_name() -> None:
    assert mcp_tool_name("get_transaction") == "get_transaction"
    assert mcp_tool_name("refund.find_orders") == "refund.find_orders"


def test_rejected_characters_are_replaced_and_the_name_made_unique() -> None:
    spaced = mcp_tool_name("search docs", "kb")
    underscored = mcp_tool_name("search_docs", "kb")
    assert underscored == "kb.search_docs"
    assert spaced.startswith("kb.search_docs_")
    assert len(spaced) == len("kb.search_docs_") + HASH_LENGTH
    assert spaced != underscored


def test_long_names_are_cut_with_a_hash_and_never_collide() -> None:
    stem = "get_the_monthly_revenue_breakdown_by_region_and_product_line_for_customer_"
    first, second = mcp_tool_name(stem + "a", "reports"), mcp_tool_name(stem + "b", "reports")
    assert first != second
    for name in (first, second):
        assert len(provider_safe_name(name)) <= 64
        assert name.startswith("reports.get_the_monthly_revenue")
    # Keeping the last 64 characters, as some libraries do, would keep them apart here but
    # not for names that differ only at the start; the hash covers both.
    early_a = mcp_tool_name("a_" + "x" * 80, "p")
    early_b = mcp_tool_name("b_" + "x" * 80, "p")
    assert early_a != early_b


def test_shortening_is_deterministic() -> None:
    name = "x" * 100
    assert mcp_tool_name(name, "p") == mcp_tool_name(name, "p")
    assert mcp_tool_name(name, "p") != mcp_tool_name(name, "q")


def test_a_cut_never_leaves_an_empty_dotted_segment() -> None:
    name = mcp_tool_name("a." * 40, "p")
    assert validate_tool_name(name) == name  # rejects empty segments
    assert not name.rsplit("_", 1)[0].endswith(".")


@given(st.text(min_size=1, max_size=150), st.sampled_from(["", "p", "payments", "a.b"]))
def test_every_name_is_valid_and_fits(original: str, prefix: str) -> None:
    name = mcp_tool_name(original, prefix)
    assert validate_tool_name(name) == name
    assert is_provider_safe(provider_safe_name(name))


@given(st.lists(st.text(min_size=1, max_size=120), min_size=2, max_size=8, unique=True))
def test_different_tools_get_different_names(originals: list[str]) -> None:
    names = [mcp_tool_name(original, "srv") for original in originals]
    assert len(set(names)) == len(names)


def test_prefix_validation() -> None:
    assert validate_prefix("") == ""
    assert validate_prefix("acme.payments") == "acme.payments"
    with pytest.raises(ConfigurationError, match="not usable"):
        validate_prefix("has space")
    with pytest.raises(ConfigurationError, match="not usable"):
        validate_prefix("a..b")
    with pytest.raises(ConfigurationError, match="too long"):
        validate_prefix("p" * 41)
