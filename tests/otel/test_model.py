"""``TracedChatModel``: a ``chat`` span per call and per stream, usage, errors, forwarding."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing

import pytest
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode

from toolrelay.exceptions import ModelError, ToolsNotSupportedError
from toolrelay.messages import ChatResponse, UserMessage
from toolrelay.models._metadata import CACHE_READ_TOKENS, REASONING_TOKENS
from toolrelay.otel import TracedChatModel
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import FunctionModel, ScriptedModel, text_response, tool_call_response
from toolrelay.tools import as_tools, tool

from ._signals import Signals, attributes, parent_id, span_id

PROMPT = Prompt(messages=(UserMessage(text="hello SECRET"),))


class ProviderModel(ScriptedModel):
    """Looks like an adapter: a provider-prefixed name and a default model."""

    model = "gpt-test"


@tool
def ping(host: str) -> str:
    """Ping a host.

    Args:
        host: The host.
    """
    return "up"


async def test_a_call_makes_a_client_span_with_request_and_response_attributes(
    signals: Signals,
) -> None:
    model = ProviderModel(
        [text_response("hi", usage=(12, 3), metadata={"model": "gpt-test-0613", "id": "r1"})],
        name="openai:gpt-test",
    )
    traced = TracedChatModel(model, signals.telemetry())
    prompt = Prompt(
        messages=PROMPT.messages,
        options=ChatOptions(temperature=0.2, max_tokens=64, tools=tuple(as_tools(ping))),
    )

    assert (await traced.call(prompt)).text == "hi"

    span = signals.one("chat gpt-test")
    assert span.kind is SpanKind.CLIENT
    assert attributes(span) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-test",
        "gen_ai.request.temperature": 0.2,
        "gen_ai.request.max_tokens": 64,
        "toolrelay.request.tool_count": 1,
        "gen_ai.response.model": "gpt-test-0613",
        "gen_ai.response.id": "r1",
        "gen_ai.response.finish_reasons": ("stop",),
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 3,
        "toolrelay.response.tool_call_count": 0,
    }


async def test_the_options_model_wins_and_an_unknown_model_names_the_span_chat(
    signals: Signals,
) -> None:
    traced = TracedChatModel(ProviderModel(["a", "b"]), signals.telemetry())
    await traced.call(Prompt(messages=PROMPT.messages, options=ChatOptions(model="other")))
    assert attributes(signals.one("chat other"))["gen_ai.request.model"] == "other"

    await TracedChatModel(ScriptedModel(["c"]), signals.telemetry()).call(PROMPT)
    unnamed = signals.one("chat")
    assert "gen_ai.request.model" not in attributes(unnamed)
    assert "gen_ai.provider.name" not in attributes(unnamed)


async def test_provider_name_can_be_given(signals: Signals) -> None:
    traced = TracedChatModel(ScriptedModel(["a"]), signals.telemetry(), provider_name="local")
    await traced.call(PROMPT)
    assert attributes(signals.one("chat"))["gen_ai.provider.name"] == "local"


async def test_cache_and_reasoning_tokens_are_recorded_when_reported(signals: Signals) -> None:
    metadata = {CACHE_READ_TOKENS: 8, REASONING_TOKENS: 2}
    traced = TracedChatModel(
        ScriptedModel([text_response("a", usage=(10, 4), metadata=metadata)]), signals.telemetry()
    )
    await traced.call(PROMPT)
    found = attributes(signals.one("chat"))
    assert found["gen_ai.usage.cache_read.input_tokens"] == 8
    assert found["gen_ai.usage.reasoning.output_tokens"] == 2
    assert "gen_ai.usage.cache_creation.input_tokens" not in found


async def test_a_response_without_usage_records_no_tokens(signals: Signals) -> None:
    await TracedChatModel(ScriptedModel(["a"]), signals.telemetry()).call(PROMPT)

    assert "gen_ai.usage.input_tokens" not in attributes(signals.one("chat"))
    assert signals.points("gen_ai.client.token.usage") == []
    assert [p.count for p in signals.points("gen_ai.client.operation.duration")] == [1]


async def test_a_stream_passes_chunks_through_and_ends_its_span_with_the_stream(
    signals: Signals,
) -> None:
    answer = tool_call_response(
        ("ping", {"host": "example.org"}), text="Let me check.", usage=(9, 7)
    )
    plain = ScriptedModel([answer], chunk_size=3)
    traced = TracedChatModel(ScriptedModel([answer], chunk_size=3), signals.telemetry())

    chunks = [chunk async for chunk in traced.stream(PROMPT)]

    assert chunks == [chunk async for chunk in plain.stream(PROMPT)]
    found = attributes(signals.one("chat"))
    assert found["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert found["gen_ai.usage.output_tokens"] == 7
    assert found["toolrelay.response.tool_call_count"] == 1
    assert sum(p.count for p in signals.points("gen_ai.client.token.usage")) == 2


async def test_a_stream_stopped_early_ends_its_span_without_an_error(signals: Signals) -> None:
    traced = TracedChatModel(ScriptedModel(["a long answer"], chunk_size=2), signals.telemetry())

    async with aclosing(traced.stream(PROMPT)) as chunks:
        await anext(chunks)
        assert signals.spans() == []

    span = signals.one("chat")
    assert span.status.status_code is StatusCode.UNSET
    assert "gen_ai.response.finish_reasons" not in attributes(span)


@pytest.mark.parametrize("stream", [False, True], ids=["call", "stream"])
async def test_a_failing_model_marks_the_span_and_the_duration(
    signals: Signals, stream: bool
) -> None:
    traced = TracedChatModel(ScriptedModel([]), signals.telemetry())  # out of script: ModelError

    async def use() -> None:
        if stream:
            _ = [chunk async for chunk in traced.stream(PROMPT)]
        else:
            await traced.call(PROMPT)

    with pytest.raises(ModelError):
        await use()

    span = signals.one("chat")
    assert attributes(span)["error.type"] == "ModelError"
    assert span.status.status_code is StatusCode.ERROR
    assert span.events == ()  # the message stays out without content capture
    (point,) = signals.points("gen_ai.client.operation.duration")
    assert point.attributes is not None
    assert point.attributes["error.type"] == "ModelError"


async def test_spans_the_model_makes_nest_under_the_chat_span(signals: Signals) -> None:
    tracer = signals.tracer_provider.get_tracer("test")

    async def reply(prompt: Prompt) -> ChatResponse:
        with tracer.start_as_current_span("http request"):
            return text_response("ok")

    traced = TracedChatModel(FunctionModel(reply), signals.telemetry())
    await traced.call(PROMPT)
    _ = [chunk async for chunk in traced.stream(PROMPT)]

    chats = signals.named("chat")
    requests = signals.named("http request")
    assert [parent_id(r) for r in requests] == [span_id(c) for c in chats]


async def test_the_current_span_is_not_left_changed_between_chunks(signals: Signals) -> None:
    traced = TracedChatModel(ScriptedModel(["abcdef"], chunk_size=2), signals.telemetry())
    before = trace.get_current_span()
    async for _ in traced.stream(PROMPT):
        assert trace.get_current_span() is before


def test_everything_else_is_the_wrapped_models() -> None:
    model = ScriptedModel(["a"], supports_tools=False, name="scripted")
    traced = TracedChatModel(model)

    assert traced.supports_tools is False
    assert traced.name == "scripted"
    assert traced.prompts is model.prompts
    traced.supports_tools = True
    assert model.supports_tools is True
    with pytest.raises(AttributeError):
        _ = traced.no_such_attribute


async def test_a_model_that_cannot_take_tools_still_refuses_them(signals: Signals) -> None:
    traced = TracedChatModel(ScriptedModel(["a"], supports_tools=False), signals.telemetry())
    prompt = Prompt(messages=PROMPT.messages, options=ChatOptions(tools=tuple(as_tools(ping))))

    with pytest.raises(ToolsNotSupportedError):
        await traced.call(prompt)
    assert attributes(signals.one("chat"))["error.type"] == "ToolsNotSupportedError"


async def test_a_model_outside_a_traced_request_is_not_numbered(signals: Signals) -> None:
    await TracedChatModel(ScriptedModel(["a"]), signals.telemetry()).call(PROMPT)
    assert "toolrelay.turn.model_call" not in attributes(signals.one("chat"))


class EagerModel:
    """Refuses a stream before returning any iterator (as an adapter's checks may)."""

    supports_tools = True

    def __init__(self) -> None:
        self.current: list[trace.Span] = []

    async def call(self, prompt: Prompt) -> ChatResponse:
        raise ModelError("not used")

    def stream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        self.current.append(trace.get_current_span())
        raise ModelError("refused")


async def test_a_stream_refused_before_it_starts_is_a_failed_span(signals: Signals) -> None:
    model = EagerModel()
    traced = TracedChatModel(model, signals.telemetry())

    with pytest.raises(ModelError):
        await anext(traced.stream(PROMPT))

    span = signals.one("chat")
    assert attributes(span)["error.type"] == "ModelError"
    # the stream was opened inside the span
    assert [s.get_span_context().span_id for s in model.current] == [span_id(span)]
