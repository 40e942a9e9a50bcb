"""Text from a model in a form every store accepts: lone surrogates kept, read back exactly."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from toolrelay._storable import (
    from_bytes,
    from_store,
    json_text,
    to_bytes,
    to_store,
    valid_unicode,
    valid_unicode_data,
)

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


@given(ANY_TEXT)
def test_valid_unicode_is_encodable_and_keeps_text_that_needed_nothing(text: str) -> None:
    fixed = valid_unicode(text)
    fixed.encode("utf-8")  # never raises
    if not any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        assert fixed == text


def test_valid_unicode_replaces_lone_surrogates_and_joins_pairs() -> None:
    assert valid_unicode("a\ud83d b\ud83d\ude00 c\udc00") == "a\ufffd b\U0001f600 c\ufffd"
    data = {"k\ud83d": ["x\ud83d", ("y",), 3]}
    assert valid_unicode_data(data) == {"k\ufffd": ["x\ufffd", ("y",), 3]}
