from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolrelay.exceptions import ConfigurationError, InvalidToolNameError
from toolrelay.mcp._names import HASH_LENGTH, mcp_tool_name, validate_prefix
from toolrelay.tools import provider_safe_name
from toolrelay.tools._names import is_provider_safe, validate_tool_name


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


@pytest.mark.parametrize("original", ["查询天气", "Navigation.查询火车票", "météo_actuelle"])
@pytest.mark.parametrize("prefix", ["", "weather"])
def test_names_in_any_script_are_kept_as_tools_name_them(original: str, prefix: str) -> None:
    name = mcp_tool_name(original, prefix)
    assert name == (f"{prefix}.{original}" if prefix else original)
    # Sent as every other tool name is: ASCII letters plus a hash, within 64 characters.
    sent = provider_safe_name(name)
    assert is_provider_safe(sent)
    assert sent.startswith(prefix)


def test_a_long_chinese_name_is_kept_and_still_sent_within_64_characters() -> None:
    original = "查询" * 60
    name = mcp_tool_name(original, "weather")
    assert name == f"weather.{original}"
    assert len(provider_safe_name(name)) <= 64


def test_rejected_characters_in_a_chinese_name_keep_its_letters() -> None:
    name = mcp_tool_name("查询 天气!", "weather")
    assert name.startswith("weather.查询_天气_")
    assert len(name) == len("weather.查询_天气__") + HASH_LENGTH
    assert validate_tool_name(name) == name
    assert name != mcp_tool_name("查询_天气_", "weather")


def test_chinese_names_that_differ_in_one_character_stay_apart_when_sent() -> None:
    names = [mcp_tool_name(original, "srv") for original in ("查询天气", "查询天氣", "查询 天气")]
    assert len(set(names)) == 3
    assert len({provider_safe_name(name) for name in names}) == 3


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


_MIXED = st.text(st.sampled_from("ab_-.查询天气é Ω!"), min_size=1, max_size=80)


@given(_MIXED, st.sampled_from(["", "p", "a.b"]))
def test_a_name_tools_accept_is_kept_and_any_other_is_cleaned(original: str, prefix: str) -> None:
    name = mcp_tool_name(original, prefix)
    joined = f"{prefix}.{original}" if prefix else original
    try:
        validate_tool_name(joined)
    except InvalidToolNameError:
        assert name != joined
        assert validate_tool_name(name) == name
    else:
        assert name == joined
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
