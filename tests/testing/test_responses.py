from __future__ import annotations

import pytest

from toolrelay.messages import ToolCall, Usage
from toolrelay.models._chunks import TOOL_CALL_INDEXES, merge_chunks
from toolrelay.testing import text_response, tool_call_response
from toolrelay.testing._responses import make_usage, split_response


def test_text_response() -> None:
    response = text_response("Done.", usage=(10, 2), metadata={"model": "m"})
    assert response.text == "Done."
    assert response.generations[0].finish_reason == "stop"
    assert response.usage == Usage(prompt_tokens=10, completion_tokens=2, total_tokens=12)
    assert response.metadata == {"model": "m"}


def test_tool_call_response_encodes_arguments_and_leaves_ids_to_the_model() -> None:
    response = tool_call_response(
        ("refund.retry", {"order": "A1", "force": False}),
        ("raw", '{"not": "re-encoded"}'),
        ToolCall(id="mine", name="explicit", arguments="{}"),
        text="On it.",
    )
    calls = response.generations[0].message.tool_calls
    assert calls == (
        ToolCall(id="", name="refund.retry", arguments='{"order": "A1", "force": false}'),
        ToolCall(id="", name="raw", arguments='{"not": "re-encoded"}'),
        ToolCall(id="mine", name="explicit", arguments="{}"),
    )
    assert response.text == "On it."
    assert response.generations[0].finish_reason == "tool_calls"


def test_make_usage() -> None:
    assert make_usage(None) == Usage()
    usage = Usage(prompt_tokens=1, completion_tokens=1, total_tokens=5)
    assert make_usage(usage) is usage
    assert make_usage((3, 4)).total_tokens == 7


def test_split_response_cuts_text_and_fragments_tool_calls() -> None:
    response = tool_call_response(
        ("ping", {"host": "abc"}), text="Checking", usage=(5, 5), metadata={"id": "r"}
    )
    chunks = split_response(response, chunk_size=4)
    texts = [c.generations[0].message.text for c in chunks]
    assert texts[:2] == ["Chec", "king"]
    fragments = [c.generations[0].message.tool_calls[0] for c in chunks[2:]]
    assert fragments[0] == ToolCall(id="", name="ping", arguments='{"ho')
    assert all(f.id == "" and f.name == "" for f in fragments[1:])
    assert all(c.generations[0].metadata[TOOL_CALL_INDEXES] == (0,) for c in chunks[2:])
    assert [c.usage for c in chunks[:-1]] == [Usage()] * (len(chunks) - 1)
    assert chunks[-1].usage == response.usage
    assert chunks[0].metadata == {"id": "r"}
    assert chunks[-1].generations[0].finish_reason == "tool_calls"
    merged = merge_chunks(chunks).generations[0].message
    # Merging names the id-less call after its index.
    assert merged.tool_calls == (ToolCall(id="call_0", name="ping", arguments='{"host": "abc"}'),)
    assert merged.text == "Checking"


def test_split_response_needs_a_positive_chunk_size() -> None:
    with pytest.raises(ValueError, match="chunk_size"):
        split_response(text_response("x"), 0)
