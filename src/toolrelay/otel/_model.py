"""``TracedChatModel``: a chat model that makes a ``chat {model}`` span of every call and stream.

Wrap the model before building the client, so each model call of the tool loop gets its own
span, a child of the request's span::

    client = ChatClient.builder(TracedChatModel(model, telemetry)).build()

The span (kind ``CLIENT``) carries the operation (``chat``), the provider, the requested model
(``options.model``, else the wrapped model's ``model`` attribute), temperature and max tokens,
how many tools were offered, and from the answer the responding model and response id (from
the response metadata, when the adapter reports them), the finish reasons, the token usage
(with cache and reasoning tokens when reported) and how many tool calls were asked for. Each
call also adds its duration to ``gen_ai.client.operation.duration`` and its tokens to
``gen_ai.client.token.usage``. Inside a traced client request, the span is numbered
(``toolrelay.turn.model_call``). Messages are recorded only with content capture.

Everything else (``name``, ``supports_tools``, adapter attributes) is the wrapped model's.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from time import perf_counter
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind
from opentelemetry.util.types import AttributeValue

from toolrelay.messages import ChatResponse
from toolrelay.models import _metadata as keys
from toolrelay.models._base import ChatModel
from toolrelay.models._chunks import ChunkMerger
from toolrelay.otel import _content
from toolrelay.otel._attributes import (
    CHAT,
    ERROR_TYPE,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OPERATION_NAME,
    GEN_AI_OUTPUT_MESSAGES,
    GEN_AI_PROVIDER_NAME,
    GEN_AI_REQUEST_MAX_TOKENS,
    GEN_AI_REQUEST_MODEL,
    GEN_AI_REQUEST_TEMPERATURE,
    GEN_AI_RESPONSE_FINISH_REASONS,
    GEN_AI_RESPONSE_ID,
    GEN_AI_RESPONSE_MODEL,
    GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
    GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
    GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS,
    GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
    TOOLRELAY_REQUEST_TOOL_COUNT,
    TOOLRELAY_RESPONSE_TOOL_CALL_COUNT,
    TOOLRELAY_TURN_MODEL_CALL,
)
from toolrelay.otel._context import (
    attached,
    current_turn,
    mark_failed,
    present,
    traced_stream,
)
from toolrelay.otel._instruments import Instruments
from toolrelay.prompt import Prompt

__all__ = ["TracedChatModel", "finish_reasons", "usage_attributes"]


class TracedChatModel:
    """A chat model whose calls and streams are traced and measured (see the module docs).

    Args:
        model: The model to wrap.
        telemetry: Where spans and metrics go, a :class:`~toolrelay.otel.Telemetry`; the
            global providers, without content, when omitted.
        provider_name: ``gen_ai.provider.name`` (``"openai"``, ...); by default the part of
            the model's ``name`` before ``":"`` (``"openai:gpt-4o"`` gives ``"openai"``), or
            none.

    Attributes:
        wrapped: The wrapped model.
    """

    def __init__(
        self,
        model: ChatModel,
        telemetry: Instruments | None = None,
        *,
        provider_name: str | None = None,
    ) -> None:
        self.wrapped = model
        self.telemetry = telemetry if telemetry is not None else Instruments()
        self.provider_name = provider_name if provider_name is not None else _provider_of(model)

    @property
    def supports_tools(self) -> bool:
        """The wrapped model's ``supports_tools``."""
        return bool(getattr(self.wrapped, "supports_tools", True))

    @supports_tools.setter
    def supports_tools(self, value: bool) -> None:
        self.wrapped.supports_tools = value

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes this class lacks: the wrapped model answers.
        if name == "wrapped":  # not set yet (during unpickling): never recurse
            raise AttributeError(name)
        return getattr(self.wrapped, name)

    def __repr__(self) -> str:
        return f"TracedChatModel({self.wrapped!r})"

    async def call(self, prompt: Prompt) -> ChatResponse:
        """The wrapped model's answer, inside a ``chat`` span."""
        span, metric = self._start(prompt)
        started = perf_counter()
        try:
            with attached(trace.set_span_in_context(span)):
                response = await self.wrapped.call(prompt)
        except BaseException as exc:
            self._fail(span, exc, metric, started)
            raise
        self._finish(span, response, metric, started)
        return response

    async def stream(self, prompt: Prompt) -> AsyncGenerator[ChatResponse, None]:
        """The wrapped model's chunks, inside a ``chat`` span that ends with the stream."""
        span, metric = self._start(prompt)
        started = perf_counter()
        merger = ChunkMerger()
        chunks = traced_stream(
            span,
            trace.set_span_in_context(span),
            lambda: self.wrapped.stream(prompt),
            add=merger.add,
            finish=lambda: self._finish(span, merger.response(), metric, started),
            fail=lambda error: self._fail(span, error, metric, started),
        )
        async with aclosing(chunks):
            async for chunk in chunks:
                yield chunk

    # --- spans ------------------------------------------------------------------------------

    def _request_model(self, prompt: Prompt) -> str | None:
        if prompt.options.model:
            return prompt.options.model
        default = getattr(self.wrapped, "model", None)
        return default if isinstance(default, str) and default else None

    def _start(self, prompt: Prompt) -> tuple[Span, dict[str, AttributeValue | None]]:
        options = prompt.options
        model = self._request_model(prompt)
        metric: dict[str, AttributeValue | None] = {
            GEN_AI_OPERATION_NAME: CHAT,
            GEN_AI_PROVIDER_NAME: self.provider_name,
            GEN_AI_REQUEST_MODEL: model,
        }
        attributes = {
            **metric,
            GEN_AI_REQUEST_TEMPERATURE: options.temperature,
            GEN_AI_REQUEST_MAX_TOKENS: options.max_tokens,
            TOOLRELAY_REQUEST_TOOL_COUNT: len(options.tools),
        }
        turn = current_turn()
        if turn is not None:
            turn.model_calls += 1
            attributes[TOOLRELAY_TURN_MODEL_CALL] = turn.model_calls
        if self.telemetry.capture_content:
            attributes[GEN_AI_INPUT_MESSAGES] = _content.input_messages(prompt.messages)
        span = self.telemetry.tracer.start_span(
            f"{CHAT} {model}" if model else CHAT,
            kind=SpanKind.CLIENT,
            attributes=present(attributes),
        )
        return span, metric

    def _finish(
        self,
        span: Span,
        response: ChatResponse,
        metric: dict[str, AttributeValue | None],
        started: float,
    ) -> None:
        seconds = perf_counter() - started
        response_model = response.metadata.get(keys.MODEL)
        if isinstance(response_model, str) and response_model:
            metric[GEN_AI_RESPONSE_MODEL] = response_model
        attributes: dict[str, AttributeValue | None] = {
            GEN_AI_RESPONSE_MODEL: metric.get(GEN_AI_RESPONSE_MODEL),
            GEN_AI_RESPONSE_ID: _text(response.metadata.get(keys.ID)),
            GEN_AI_RESPONSE_FINISH_REASONS: finish_reasons(response),
            TOOLRELAY_RESPONSE_TOOL_CALL_COUNT: sum(
                len(g.message.tool_calls) for g in response.generations
            ),
            **usage_attributes(response),
        }
        if self.telemetry.capture_content:
            attributes[GEN_AI_OUTPUT_MESSAGES] = _content.output_messages(response)
        span.set_attributes(present(attributes))
        span.end()
        self.telemetry.record_operation(seconds, metric)
        if _reports_usage(response):
            self.telemetry.record_tokens(response.usage, metric)

    def _fail(
        self,
        span: Span,
        error: BaseException,
        metric: dict[str, AttributeValue | None],
        started: float,
    ) -> None:
        seconds = perf_counter() - started
        kind = mark_failed(span, error, capture_content=self.telemetry.capture_content)
        span.end()
        self.telemetry.record_operation(seconds, {**metric, ERROR_TYPE: kind})


# --- helpers -------------------------------------------------------------------------------


def finish_reasons(response: ChatResponse) -> tuple[str, ...] | None:
    """The generations' finish reasons, or ``None`` when none gave one."""
    reasons = tuple(g.finish_reason for g in response.generations if g.finish_reason)
    return reasons or None


def usage_attributes(response: ChatResponse) -> dict[str, AttributeValue | None]:
    """The ``gen_ai.usage.*`` attributes of a response (empty when it reports no usage)."""
    if not _reports_usage(response):
        return {}
    metadata = response.metadata
    return {
        GEN_AI_USAGE_INPUT_TOKENS: response.usage.prompt_tokens,
        GEN_AI_USAGE_OUTPUT_TOKENS: response.usage.completion_tokens,
        GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: _count(metadata.get(keys.CACHE_READ_TOKENS)),
        GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: _count(metadata.get(keys.CACHE_WRITE_TOKENS)),
        GEN_AI_USAGE_REASONING_OUTPUT_TOKENS: _count(metadata.get(keys.REASONING_TOKENS)),
    }


def _reports_usage(response: ChatResponse) -> bool:
    # All zeros is how a response says "not reported"; an answer costs at least one token.
    usage = response.usage
    return bool(usage.prompt_tokens or usage.completion_tokens or usage.total_tokens)


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _provider_of(model: object) -> str | None:
    name = getattr(model, "name", None)
    if isinstance(name, str) and ":" in name:
        provider = name.split(":", 1)[0]
        return provider or None
    return None
