"""``Telemetry``: the shared instruments, and the methods that hand out the traced pieces."""

from __future__ import annotations

from toolrelay.client._advisor import HIGHEST_PRECEDENCE
from toolrelay.models import ChatModel
from toolrelay.otel._advisor import TracingAdvisor
from toolrelay.otel._index import TracedToolIndex
from toolrelay.otel._instruments import Instruments
from toolrelay.otel._interceptor import TracingInterceptor
from toolrelay.otel._model import TracedChatModel
from toolrelay.search import ToolIndex

__all__ = ["Telemetry"]


class Telemetry(Instruments):
    """Where spans and metrics go, and whether they may carry content; hands out the pieces.

    Every piece it hands out records with this object, so they share one tracer, one set of
    metric instruments and one content policy.

    Example::

        telemetry = Telemetry(tracer_provider=provider, meter_provider=meter_provider)
        manager = ToolCallingManager(interceptors=[telemetry.interceptor()])
        client = (
            ChatClient.builder(telemetry.model(model))
            .default_advisors(telemetry.advisor())
            .tool_calling_manager(manager)
            .build()
        )

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

    def advisor(
        self, *, agent_name: str | None = None, order: int = HIGHEST_PRECEDENCE
    ) -> TracingAdvisor:
        """A :class:`~toolrelay.otel.TracingAdvisor` (one span per client request)."""
        return TracingAdvisor(self, agent_name=agent_name, order=order)

    def model(self, model: ChatModel, *, provider_name: str | None = None) -> TracedChatModel:
        """``model`` wrapped in a :class:`~toolrelay.otel.TracedChatModel` (a span per call)."""
        return TracedChatModel(model, self, provider_name=provider_name)

    def interceptor(self) -> TracingInterceptor:
        """A :class:`~toolrelay.otel.TracingInterceptor` (a span per tool execution)."""
        return TracingInterceptor(self)

    def index(self, index: ToolIndex) -> TracedToolIndex:
        """``index`` wrapped in a :class:`~toolrelay.otel.TracedToolIndex` (a span per search)."""
        return TracedToolIndex(index, self)
