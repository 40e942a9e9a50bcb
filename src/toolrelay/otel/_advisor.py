"""``TracingAdvisor``: one ``invoke_agent`` span around each client request.

Put it outermost (the default order, ``HIGHEST_PRECEDENCE``), so its span holds the whole
turn: the ``chat`` spans of a :class:`~toolrelay.otel.TracedChatModel` and the
``execute_tool`` spans of a :class:`~toolrelay.otel.TracingInterceptor` become its children,
numbered by ``toolrelay.turn.model_call``::

    invoke_agent support                     (this advisor)
    ├── chat gpt-4o                          toolrelay.turn.model_call = 1
    ├── execute_tool refund.find_orders      toolrelay.turn.model_call = 1
    ├── execute_tool refund.retry            toolrelay.turn.model_call = 1
    └── chat gpt-4o                          toolrelay.turn.model_call = 2

The span (kind ``INTERNAL``) carries the agent name (if given), the conversation id (the
``conversation_id`` advisor parameter), the requested model, and from the final answer the
finish reasons and the usage summed over the turn; with a tool loop, its model calls, rounds,
answered and failed tool calls and why it stopped; with a tool search, its searches, the
conversation's discovered and pinned tools and whether the catalog was re-indexed. Messages
are recorded only with content capture. Each request also adds its duration to
``gen_ai.client.operation.duration``. Streams work the same; the span ends with the stream.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from time import perf_counter

from opentelemetry.trace import Span, SpanKind
from opentelemetry.util.types import AttributeValue

from toolrelay.client._advisor import HIGHEST_PRECEDENCE, AdvisorChain
from toolrelay.client._requests import ChatClientRequest, ChatClientResponse
from toolrelay.client._streaming import StreamAggregator
from toolrelay.memory import CONVERSATION_ID
from toolrelay.models import _metadata as keys
from toolrelay.otel import _content
from toolrelay.otel._attributes import (
    ERROR_TYPE,
    GEN_AI_AGENT_NAME,
    GEN_AI_CONVERSATION_ID,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OPERATION_NAME,
    GEN_AI_OUTPUT_MESSAGES,
    GEN_AI_REQUEST_MODEL,
    GEN_AI_RESPONSE_FINISH_REASONS,
    GEN_AI_RESPONSE_MODEL,
    INVOKE_AGENT,
    TOOLRELAY_LOOP_FAILED_TOOL_CALLS,
    TOOLRELAY_LOOP_MODEL_CALLS,
    TOOLRELAY_LOOP_ROUNDS,
    TOOLRELAY_LOOP_STOP,
    TOOLRELAY_LOOP_TOOL_CALLS,
    TOOLRELAY_SEARCH_DISCOVERED,
    TOOLRELAY_SEARCH_PINNED,
    TOOLRELAY_SEARCH_REINDEXED,
    TOOLRELAY_SEARCH_SEARCHES,
)
from toolrelay.otel._context import (
    attached,
    mark_failed,
    present,
    traced_stream,
    turn_context,
)
from toolrelay.otel._instruments import Instruments
from toolrelay.otel._model import finish_reasons, usage_attributes

__all__ = ["TracingAdvisor"]

_Attributes = dict[str, AttributeValue | None]


class TracingAdvisor:
    """Traces and measures each client request (see the module docs).

    Args:
        telemetry: Where spans and metrics go, a :class:`~toolrelay.otel.Telemetry`; the
            global providers, without content, when omitted.
        agent_name: ``gen_ai.agent.name``; the span is named ``invoke_agent {agent_name}``.
        order: Position in the chain; keep it lower than every other advisor's.
        name: For messages.
    """

    def __init__(
        self,
        telemetry: Instruments | None = None,
        *,
        agent_name: str | None = None,
        order: int = HIGHEST_PRECEDENCE,
        name: str = "tracing",
    ) -> None:
        self.telemetry = telemetry if telemetry is not None else Instruments()
        self.agent_name = agent_name
        self.order = order
        self.name = name

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, order={self.order})"

    async def advise_call(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> ChatClientResponse:
        """Run the rest of the chain inside the request's span."""
        span, metric = self._start(request)
        started = perf_counter()
        try:
            with attached(turn_context(span)):
                response = await chain.next_call(request)
        except BaseException as exc:
            self._fail(span, exc, metric, started)
            raise
        self._finish(span, response, metric, started)
        return response

    async def advise_stream(
        self, request: ChatClientRequest, chain: AdvisorChain
    ) -> AsyncGenerator[ChatClientResponse, None]:
        """Pass the chunks on; the span ends with the stream."""
        span, metric = self._start(request)
        started = perf_counter()
        aggregator = StreamAggregator()
        chunks = traced_stream(
            span,
            turn_context(span),
            lambda: chain.next_stream(request),
            add=aggregator.add,
            finish=lambda: self._finish(span, aggregator.response(), metric, started),
            fail=lambda error: self._fail(span, error, metric, started),
        )
        async with aclosing(chunks):
            async for chunk in chunks:
                yield chunk

    # --- spans ------------------------------------------------------------------------------

    def _start(self, request: ChatClientRequest) -> tuple[Span, _Attributes]:
        model = request.prompt.options.model
        metric: _Attributes = {GEN_AI_OPERATION_NAME: INVOKE_AGENT, GEN_AI_REQUEST_MODEL: model}
        conversation = request.context.get(CONVERSATION_ID)
        attributes: _Attributes = {
            **metric,
            GEN_AI_AGENT_NAME: self.agent_name,
            GEN_AI_CONVERSATION_ID: str(conversation) if conversation is not None else None,
        }
        if self.telemetry.capture_content:
            attributes[GEN_AI_INPUT_MESSAGES] = _content.input_messages(request.prompt.messages)
        name = f"{INVOKE_AGENT} {self.agent_name}" if self.agent_name else INVOKE_AGENT
        span = self.telemetry.tracer.start_span(
            name, kind=SpanKind.INTERNAL, attributes=present(attributes)
        )
        return span, metric

    def _finish(
        self, span: Span, response: ChatClientResponse, metric: _Attributes, started: float
    ) -> None:
        seconds = perf_counter() - started
        chat_response = response.chat_response
        response_model = chat_response.metadata.get(keys.MODEL)
        attributes: _Attributes = {
            GEN_AI_RESPONSE_MODEL: response_model if isinstance(response_model, str) else None,
            GEN_AI_RESPONSE_FINISH_REASONS: finish_reasons(chat_response),
            **usage_attributes(chat_response),
            **_loop_attributes(response),
        }
        if self.telemetry.capture_content:
            attributes[GEN_AI_OUTPUT_MESSAGES] = _content.output_messages(chat_response)
        span.set_attributes(present(attributes))
        span.end()
        self.telemetry.record_operation(seconds, metric)

    def _fail(self, span: Span, error: BaseException, metric: _Attributes, started: float) -> None:
        seconds = perf_counter() - started
        kind = mark_failed(span, error, capture_content=self.telemetry.capture_content)
        span.end()
        self.telemetry.record_operation(seconds, {**metric, ERROR_TYPE: kind})


def _loop_attributes(response: ChatClientResponse) -> _Attributes:
    """What the tool loop and the tool search reported about the turn."""
    attributes: _Attributes = {}
    loop = response.tool_loop
    if loop is not None:
        outcomes = [o for r in loop.rounds for o in r.outcomes]
        attributes |= {
            TOOLRELAY_LOOP_MODEL_CALLS: loop.model_calls,
            TOOLRELAY_LOOP_ROUNDS: len(loop.rounds),
            TOOLRELAY_LOOP_STOP: loop.stop.value,
            TOOLRELAY_LOOP_TOOL_CALLS: len(outcomes),
            TOOLRELAY_LOOP_FAILED_TOOL_CALLS: sum(1 for o in outcomes if o.response.is_error),
        }
    search = response.tool_search
    if search is not None:
        attributes |= {
            TOOLRELAY_SEARCH_SEARCHES: len(search.searches),
            TOOLRELAY_SEARCH_DISCOVERED: len(search.discovered),
            TOOLRELAY_SEARCH_PINNED: len(search.pinned),
            TOOLRELAY_SEARCH_REINDEXED: search.reindexed,
        }
    return attributes
