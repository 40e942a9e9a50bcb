"""Text from a model in a form every store accepts: lone surrogates kept, read back exactly."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from toolrelay._storable import from_bytes, from_store, json_text, to_bytes, to_store

# Every code point, surrogates included (text() leaves them out by default).
ANY_TEXT = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()))


@given(ANY_TEXT)
def test_every_string_round_trips_exactly_through_bytes_and_store_values(text: str) -> None:
    assert from_bytes(to_bytes(text)) == text
    assert from_store(to_store(text)) == text


def test_text_utf8_can_encode_stays_text_and_the_rest_becomes_bytes() -> None:
    assert to_store("退款 ✓") == "退款 ✓"
    assert to_store("half \ud83d") == b"half \xed\xa0\xbd"
    assert to_bytes("\ud83d\ude00") != to_bytes("😀")  # two code points stay two


@given(ANY_TEXT)
def test_json_text_is_valid_utf8_and_gives_the_text_back(text: str) -> None:
    written = json_text({"v": text})
    written.encode("utf-8")  # never raises
    back = json.loads(written)["v"]
    # JSON reads a high and a low surrogate side by side as the character they encode.
    assert back == text.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")


def test_json_text_keeps_non_ascii_and_escapes_only_surrogates() -> None:
    assert json_text(["退款", "a\ud83d"]) == '["退款", "a\\ud83d"]'
