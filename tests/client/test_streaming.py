from __future__ import annotations

from toolrelay.client import ChatClientResponse
from toolrelay.client._streaming import FINAL_RESPONSE_KEY, StreamAggregator, text_chunk
from toolrelay.messages import AssistantMessage, ChatResponse, Generation, ToolCall, Usage
from toolrelay.testing import text_response


def chunk(
    text: str | None, *, calls: tuple[ToolCall, ...] = (), **context: object
) -> ChatClientResponse:
    response = ChatResponse(
        generations=(Generation(message=AssistantMessage(text=text, tool_calls=calls)),),
        usage=Usage(prompt_tokens=1, total_tokens=1),
    )
    return ChatClientResponse(chat_response=response, context=context)


def test_the_aggregator_merges_chunks_and_contexts() -> None:
    aggregator = StreamAggregator()
    aggregator.add(chunk("Hel", a=1))
    aggregator.add(chunk("lo", b=2))
    response = aggregator.response()
    assert response.chat_response.text == "Hello"
    assert response.chat_response.usage.prompt_tokens == 2
    assert response.context == {"a": 1, "b": 2}


def test_a_declared_final_response_wins_over_the_merged_chunks() -> None:
    aggregator = StreamAggregator()
    aggregator.add(chunk("thinking... "))
    final = text_response("The answer.")
    aggregator.add(chunk(None, **{FINAL_RESPONSE_KEY: final, "k": "v"}))
    response = aggregator.response()
    assert response.chat_response == final
    assert response.context == {"k": "v"}


def test_text_chunk_keeps_only_text() -> None:
    call = ToolCall(id="1", name="t", arguments="{")
    assert text_chunk(chunk(None, calls=(call,)).chat_response) is None
    assert text_chunk(chunk("", calls=(call,)).chat_response) is None
    only = text_chunk(chunk("hi", calls=(call,)).chat_response)
    assert only is not None
    assert only.generations == (Generation(message=AssistantMessage(text="hi")),)
    assert only.usage == Usage()
