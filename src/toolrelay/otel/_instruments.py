"""``Instruments``: the tracer, the metric instruments and the content policy of every piece."""

from __future__ import annotations

from collections.abc import Mapping

from opentelemetry import metrics, trace
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import TracerProvider
from opentelemetry.util.types import AttributeValue

from toolrelay._version import __version__
from toolrelay.messages import Usage
from toolrelay.otel._attributes import (
    DURATION_BUCKETS,
    GEN_AI_CLIENT_OPERATION_DURATION,
    GEN_AI_CLIENT_TOKEN_USAGE,
    GEN_AI_TOKEN_TYPE,
    SCOPE,
    SEARCH_DURATION,
    TOKEN_BUCKETS,
    TOKEN_INPUT,
    TOKEN_OUTPUT,
)
from toolrelay.otel._context import present

__all__ = ["Instruments"]


class Instruments:
    """Where spans and metrics go, and whether they may carry content.

    What every traced piece needs and nothing more; :class:`~toolrelay.otel.Telemetry` adds
    the methods that hand the pieces out. A piece built without one records with
    ``Instruments()``: the global providers, no content.

    Args:
        tracer_provider: Where spans go; the global provider when omitted.
        meter_provider: Where metrics go; the global provider when omitted.
        capture_content: Put what users, models and tools wrote on the spans: messages, tool
            arguments and results, search queries, exception messages. Off by default: these
            often hold personal data, and spans travel to places that should not keep it.

    Attributes:
        tracer: The tracer of every span.
        capture_content: As given.
    """

    def __init__(
        self,
        *,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        capture_content: bool = False,
    ) -> None:
        self.capture_content = capture_content
        self.tracer = trace.get_tracer(SCOPE, __version__, tracer_provider)
        meter = metrics.get_meter(SCOPE, __version__, meter_provider)
        self._operation_duration = meter.create_histogram(
            GEN_AI_CLIENT_OPERATION_DURATION,
            unit="s",
            description="Duration of GenAI operations: model calls, tool executions, requests.",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        self._token_usage = meter.create_histogram(
            GEN_AI_CLIENT_TOKEN_USAGE,
            unit="{token}",
            description="Tokens used per model call, by token type.",
            explicit_bucket_boundaries_advisory=TOKEN_BUCKETS,
        )
        self._search_duration = meter.create_histogram(
            SEARCH_DURATION,
            unit="s",
            description="Duration of tool index searches.",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(capture_content={self.capture_content})"

    def record_operation(
        self, seconds: float, attributes: Mapping[str, AttributeValue | None]
    ) -> None:
        """Add one operation's duration to ``gen_ai.client.operation.duration``."""
        self._operation_duration.record(seconds, present(attributes))

    def record_tokens(self, usage: Usage, attributes: Mapping[str, AttributeValue | None]) -> None:
        """Add one model call's input and output tokens to ``gen_ai.client.token.usage``."""
        base = present(attributes)
        self._token_usage.record(usage.prompt_tokens, {**base, GEN_AI_TOKEN_TYPE: TOKEN_INPUT})
        self._token_usage.record(usage.completion_tokens, {**base, GEN_AI_TOKEN_TYPE: TOKEN_OUTPUT})

    def record_search(
        self, seconds: float, attributes: Mapping[str, AttributeValue | None]
    ) -> None:
        """Add one search's duration to ``toolrelay.search.duration``."""
        self._search_duration.record(seconds, present(attributes))
