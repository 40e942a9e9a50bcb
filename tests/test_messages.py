"""Messages, responses and usage: exact JSON round trips and usage arithmetic."""

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolrelay.messages import (
    AssistantMessage,
    ChatResponse,
    Generation,
    Message,
    SystemMessage,
    ToolCall,
    ToolChangeMessage,
    ToolResponse,
    ToolResponseMessage,
    Usage,
    UserMessage,
    chat_response_from_dict,
    chat_response_to_dict,
    message_from_dict,
    message_to_dict,
)

CALL = ToolCall(id="call_1", name="refund.find", arguments='{"since": "2024-01-01"}')

MESSAGES: list[tuple[Message, dict[str, Any]]] = [
    (SystemMessage(text="Be brief."), {"role": "system", "text": "Be brief."}),
    (UserMessage(text="Wetter in Köln? 🌧"), {"role": "user", "text": "Wetter in Köln? 🌧"}),
    (
        AssistantMessage(text="Sure."),
        {"role": "assistant", "text": "Sure.", "tool_calls": []},
    ),
    (
        AssistantMessage(tool_calls=(CALL, ToolCall(id="call_2", name="ping"))),
        {
            "role": "assistant",
            "text": None,
            "tool_calls": [
                {"id": "call_1", "name": "refund.find", "arguments": '{"since": "2024-01-01"}'},
                {"id": "call_2", "name": "ping", "arguments": ""},
            ],
        },
    ),
    (
        ToolResponseMessage(
            responses=(
                ToolResponse(id="call_1", name="refund.find", data='["A1"]'),
                ToolResponse(id="call_2", name="ping", data="boom", is_error=True),
            )
        ),
        {
            "role": "tool",
            "responses": [
                {"id": "call_1", "name": "refund.find", "data": '["A1"]', "is_error": False},
                {"id": "call_2", "name": "ping", "data": "boom", "is_error": True},
            ],
        },
    ),
    (
        ToolChangeMessage(
            added=({"name": "refund.find", "input_schema": {"type": "object"}},),
            removed=("ping",),
        ),
        {
            "role": "tool_changes",
            "added": [{"name": "refund.find", "input_schema": {"type": "object"}}],
            "removed": ["ping"],
        },
    ),
]


def test_a_tool_change_names_each_tool_and_changes_something() -> None:
    with pytest.raises(ValueError, match="name"):
        ToolChangeMessage(added=({"description": "no name"},))
    with pytest.raises(ValueError, match="at least one tool"):
        ToolChangeMessage()
    change = ToolChangeMessage(added=[{"name": "a"}, {"name": "b"}], removed=["c"])  # type: ignore[arg-type]
    assert change.added_names == ("a", "b")
    assert change.removed == ("c",)


@pytest.mark.parametrize(("message", "data"), MESSAGES)
def test_message_dict_shape_and_round_trip(message: Message, data: dict[str, Any]) -> None:
    assert message_to_dict(message) == data
    assert message_from_dict(data) == message
    assert message_from_dict(json.loads(json.dumps(data))) == message


def test_sequences_become_tuples() -> None:
    message = AssistantMessage(tool_calls=[CALL])  # type: ignore[arg-type]
    assert message.tool_calls == (CALL,)
    assert message.has_tool_calls
    assert not AssistantMessage(text="x").has_tool_calls


def test_unknown_role() -> None:
    with pytest.raises(ValueError, match="unknown message role: 'robot'"):
        message_from_dict({"role": "robot", "text": "x"})


def test_generation_must_hold_an_assistant_message() -> None:
    data = {"generations": [{"message": {"role": "user", "text": "x"}}]}
    with pytest.raises(ValueError, match="a generation must hold an assistant message"):
        chat_response_from_dict(data)


def test_chat_response_round_trip() -> None:
    response = ChatResponse(
        generations=(
            Generation(
                message=AssistantMessage(text="Done.", tool_calls=(CALL,)),
                finish_reason="tool_calls",
                metadata={"index": 0},
            ),
        ),
        usage=Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15),
        metadata={"model": "gpt-x", "id": "resp_1"},
    )
    data = chat_response_to_dict(response)
    assert data == {
        "generations": [
            {
                "message": {
                    "role": "assistant",
                    "text": "Done.",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "name": "refund.find",
                            "arguments": '{"since": "2024-01-01"}',
                        }
                    ],
                },
                "finish_reason": "tool_calls",
                "metadata": {"index": 0},
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        "metadata": {"model": "gpt-x", "id": "resp_1"},
    }
    assert chat_response_from_dict(json.loads(json.dumps(data))) == response
    assert response.text == "Done."
    assert response.result == response.generations[0]
    assert response.has_tool_calls


def test_empty_chat_response() -> None:
    empty = ChatResponse()
    assert empty.text is None
    assert empty.result is None
    assert not empty.has_tool_calls
    assert chat_response_from_dict(chat_response_to_dict(empty)) == empty


def test_usage_addition() -> None:
    total = Usage(prompt_tokens=1, completion_tokens=2, total_tokens=3) + Usage(
        prompt_tokens=10, completion_tokens=20, total_tokens=30
    )
    assert total == Usage(prompt_tokens=11, completion_tokens=22, total_tokens=33)
    assert sum([Usage(total_tokens=1), Usage(total_tokens=2)], Usage()) == Usage(total_tokens=3)


def test_usage_addition_with_other_types_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        Usage() + 1  # type: ignore[operator]


# --- property tests ---------------------------------------------------------------------------

texts = st.text()
tool_calls = st.builds(ToolCall, id=texts, name=texts, arguments=texts)
tool_responses = st.builds(ToolResponse, id=texts, name=texts, data=texts, is_error=st.booleans())
messages: st.SearchStrategy[Message] = st.one_of(
    st.builds(SystemMessage, text=texts),
    st.builds(UserMessage, text=texts),
    st.builds(
        AssistantMessage,
        text=st.none() | texts,
        tool_calls=st.lists(tool_calls, max_size=3).map(tuple),
    ),
    st.builds(ToolResponseMessage, responses=st.lists(tool_responses, max_size=3).map(tuple)),
    st.builds(
        ToolChangeMessage,
        added=st.lists(
            st.fixed_dictionaries(
                {"name": texts.filter(bool), "input_schema": st.dictionaries(texts, texts)},
                optional={"description": texts},
            ),
            min_size=1,
            max_size=3,
        ).map(tuple),
        removed=st.lists(texts, max_size=3).map(tuple),
    ),
)
counts = st.integers(min_value=0, max_value=10**9)
usages = st.builds(Usage, prompt_tokens=counts, completion_tokens=counts, total_tokens=counts)


@given(messages)
def test_any_message_round_trips_through_json(message: Message) -> None:
    assert message_from_dict(json.loads(json.dumps(message_to_dict(message)))) == message


@given(
    st.lists(
        st.builds(
            Generation,
            message=st.builds(
                AssistantMessage,
                text=st.none() | texts,
                tool_calls=st.lists(tool_calls, max_size=2).map(tuple),
            ),
            finish_reason=st.none() | texts,
            metadata=st.dictionaries(texts, texts | st.integers(), max_size=3),
        ),
        max_size=3,
    ),
    usages,
    st.dictionaries(texts, texts, max_size=3),
)
def test_any_chat_response_round_trips_through_json(
    generations: list[Generation], usage: Usage, metadata: dict[str, str]
) -> None:
    response = ChatResponse(generations=tuple(generations), usage=usage, metadata=metadata)
    text = json.dumps(chat_response_to_dict(response), ensure_ascii=False)
    assert chat_response_from_dict(json.loads(text)) == response


@given(usages, usages, usages)
def test_usage_addition_is_associative_and_fieldwise(a: Usage, b: Usage, c: Usage) -> None:
    assert (a + b) + c == a + (b + c)
    assert (a + b).total_tokens == a.total_tokens + b.total_tokens
    assert a + Usage() == a
