"""OpenTelemetry traces and metrics for client requests, model calls, tool runs and searches.

Needs the ``otel`` extra (``pip install -e '.[otel]'``: the OpenTelemetry API; the
application installs and configures the SDK and its exporters). Four explicit pieces, each
optional, follow the semantic conventions for generative AI:

- :class:`TracingAdvisor`: an ``invoke_agent`` span around each client request (outermost);
- :class:`TracedChatModel`: a ``chat {model}`` span around each model call or stream, with
  token usage;
- :class:`TracingInterceptor`: an ``execute_tool {tool}`` span around each tool execution
  (first among the execution manager's interceptors);
- :class:`TracedToolIndex`: a ``toolrelay.search`` span around each search of a tool index.

:class:`Telemetry` holds the tracer provider, the meter provider and the content policy, and
hands the pieces out::

    telemetry = Telemetry(tracer_provider=tracer_provider, meter_provider=meter_provider)
    manager = ToolCallingManager(interceptors=[telemetry.interceptor()])
    client = (
        ChatClient.builder(telemetry.model(model))
        .default_advisors(telemetry.advisor(agent_name="support"))
        .tool_calling_manager(manager)
        .build()
    )
    # with progressive disclosure, the traced index goes to the advisor, which runs its
    # calls with the client's manager (give the advisor none of its own):
    search = ToolSearchAdvisor(catalog, index=telemetry.index(BM25ToolIndex()))
    # ... .default_advisors(telemetry.advisor(agent_name="support"), search) ...

Spans nest through OpenTelemetry's context, which follows the request across tasks and the
worker threads of sync tools: the model calls and tool runs of a request are children of its
span, a search is a child of its ``tool_search`` run, and each span says which model call of
the turn it belongs to (``toolrelay.turn.model_call``).

Metrics (histograms): ``gen_ai.client.operation.duration`` (seconds, by
``gen_ai.operation.name``: ``chat``, ``execute_tool``, ``invoke_agent``),
``gen_ai.client.token.usage`` (tokens per model call, by ``gen_ai.token.type``: ``input`` and
``output``) and ``toolrelay.search.duration`` (seconds). Attribute names other than
the semantic conventions' start with ``toolrelay.``.

**Content stays out by default.** Spans carry names, ids, counts, statuses and error types,
never what people, models or tools wrote: no messages, tool arguments or results, search
queries or exception messages. ``Telemetry(capture_content=True)`` adds them
(``gen_ai.input.messages``, ``gen_ai.output.messages``, ``gen_ai.tool.call.arguments``,
``gen_ai.tool.call.result``, ``toolrelay.search.query``, exception events).
"""

from __future__ import annotations

try:
    import opentelemetry.metrics
    import opentelemetry.trace  # noqa: F401
except ImportError as exc:  # pragma: no cover - the extra is installed wherever this is tested
    from toolrelay.exceptions import ConfigurationError

    raise ConfigurationError(
        f"toolrelay.otel needs the OpenTelemetry API ({exc.name} is missing); "
        "pip install -e '.[otel]'"
    ) from exc

from toolrelay.otel._advisor import TracingAdvisor
from toolrelay.otel._index import TracedToolIndex
from toolrelay.otel._interceptor import TracingInterceptor
from toolrelay.otel._model import TracedChatModel
from toolrelay.otel._telemetry import Telemetry

__all__ = [
    "Telemetry",
    "TracedChatModel",
    "TracedToolIndex",
    "TracingAdvisor",
    "TracingInterceptor",
]
