from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from toolrelay.messages import AssistantMessage, ChatResponse, Generation, ToolCall, Usage
from toolrelay.models import ChunkMerger
from toolrelay.models._chunks import TOOL_CALL_INDEXES, merge_chunks
from toolrelay.testing._responses import split_response


def fragment(
    *calls: tuple[str, str, str], indexes: tuple[int, ...] | None = None, text: str | None = None
) -> ChatResponse:
    message = AssistantMessage(
        text=text, tool_calls=tuple(ToolCall(id=i, name=n, arguments=a) for i, n, a in calls)
    )
    metadata = {TOOL_CALL_INDEXES: indexes} if indexes is not None else {}
    return ChatResponse(generations=(Generation(message=message, metadata=metadata),))


def calls_of(response: ChatResponse) -> list[ToolCall]:
    return list(response.generations[0].message.tool_calls)


def test_fragments_merge_by_index_even_when_interleaved() -> None:
    merged = merge_chunks(
        [
            fragment(("a", "ping", '{"ho'), indexes=(0,)),
            fragment(("b", "pong", '{"x"'), indexes=(1,)),
            fragment(("", "", 'st": 1}'), ("", "", ": 2}"), indexes=(0, 1)),
        ]
    )
    assert calls_of(merged) == [
        ToolCall(id="a", name="ping", arguments='{"host": 1}'),
        ToolCall(id="b", name="pong", arguments='{"x": 2}'),
    ]


def test_calls_without_ids_get_ids_from_their_index() -> None:
    merged = merge_chunks(
        [fragment(("", "ping", "{}"), indexes=(0,)), fragment(("", "pong", ""), indexes=(3,))]
    )
    assert [c.id for c in calls_of(merged)] == ["call_0", "call_3"]


def test_repeated_ids_and_names_on_later_fragments_are_not_duplicated() -> None:
    merged = merge_chunks(
        [
            fragment(("a", "ping", '{"h":'), indexes=(0,)),
            fragment(("a", "ping", "1}"), indexes=(0,)),
        ]
    )
    assert calls_of(merged) == [ToolCall(id="a", name="ping", arguments='{"h":1}')]


def test_without_indexes_ids_and_names_decide() -> None:
    merged = merge_chunks(
        [
            fragment(("a", "ping", '{"h"')),
            fragment(("", "", ": 1}")),  # continues the latest call
            fragment(("b", "pong", "{")),  # a new id starts a call
            fragment(("a", "", "")),  # a known id continues that call
            fragment(("", "", "}")),  # the latest call is now "a"... its arguments are done
        ]
    )
    assert calls_of(merged) == [
        ToolCall(id="a", name="ping", arguments='{"h": 1}}'),
        ToolCall(id="b", name="pong", arguments="{"),
    ]


def test_a_complete_response_is_a_valid_one_chunk_stream() -> None:
    response = ChatResponse(
        generations=(
            Generation(
                message=AssistantMessage(
                    text="hi",
                    tool_calls=(
                        ToolCall(id="", name="a", arguments="{}"),
                        ToolCall(id="", name="b"),
                    ),
                ),
                finish_reason="tool_calls",
            ),
        ),
        usage=Usage(prompt_tokens=1, completion_tokens=2, total_tokens=3),
    )
    merged = merge_chunks([response])
    assert [(c.id, c.name) for c in calls_of(merged)] == [("call_0", "a"), ("call_1", "b")]
    assert merged.text == "hi"
    assert merged.usage == response.usage


def test_text_usage_finish_reason_and_metadata() -> None:
    merger = ChunkMerger()
    hel = Generation(message=AssistantMessage(text="Hel"))
    merger.add(ChatResponse(generations=(hel,), metadata={"model": "m"}))
    merger.add(
        ChatResponse(
            generations=(
                Generation(
                    message=AssistantMessage(text="lo"),
                    finish_reason="stop",
                    metadata={"logprobs": None},
                ),
            ),
            usage=Usage(prompt_tokens=4, completion_tokens=2, total_tokens=6),
            metadata={"id": "r1"},
        )
    )
    merged = merger.response()
    assert merger.chunk_count == 2
    assert merged.text == "Hello"
    assert merged.generations[0].finish_reason == "stop"
    assert merged.generations[0].metadata == {"logprobs": None}
    assert merged.usage.total_tokens == 6
    assert merged.metadata == {"model": "m", "id": "r1"}


def test_no_text_stays_none_and_empty_text_stays_empty() -> None:
    assert merge_chunks([fragment(("a", "t", "{}"))]).text is None
    assert merge_chunks([fragment(text="")]).text == ""


def test_generations_merge_by_position() -> None:
    first = ChatResponse(
        generations=(
            Generation(message=AssistantMessage(text="a")),
            Generation(message=AssistantMessage(text="x")),
        )
    )
    second = ChatResponse(
        generations=(
            Generation(message=AssistantMessage(text="b")),
            Generation(message=AssistantMessage(text="y")),
        )
    )
    assert [g.message.text for g in merge_chunks([first, second]).generations] == ["ab", "xy"]


texts = st.one_of(st.none(), st.text(max_size=30))
json_ish = st.text(alphabet='{}[]":, abc123', max_size=40)
tool_calls = st.lists(
    st.builds(
        ToolCall,
        id=st.text(alphabet="abcdef0123", min_size=1, max_size=6),
        name=st.from_regex(r"[a-z][a-z_.]{0,12}", fullmatch=True),
        arguments=json_ish,
    ),
    max_size=4,
    unique_by=lambda c: c.id,
)
generations = st.builds(
    Generation,
    message=st.builds(AssistantMessage, text=texts, tool_calls=tool_calls),
    finish_reason=st.one_of(st.none(), st.sampled_from(["stop", "tool_calls", "length"])),
    metadata=st.dictionaries(st.sampled_from(["a", "b"]), st.integers(), max_size=2),
)
responses = st.builds(
    ChatResponse,
    generations=st.lists(generations, max_size=3),
    usage=st.builds(Usage, prompt_tokens=st.integers(0, 999), completion_tokens=st.integers(0, 99)),
    metadata=st.dictionaries(st.sampled_from(["model", "id"]), st.text(max_size=5), max_size=2),
)


@given(response=responses, size=st.integers(1, 7))
def test_splitting_then_merging_gives_the_response_back(response: ChatResponse, size: int) -> None:
    chunks = split_response(response, size)
    assert merge_chunks(chunks) == response
