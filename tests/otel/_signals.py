"""Collecting what the instrumentation emits, and reading it back in tests."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from toolrelay.otel import Telemetry


@dataclass
class Signals:
    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader
    tracer_provider: TracerProvider
    meter_provider: MeterProvider

    @classmethod
    def create(cls) -> Signals:
        exporter = InMemorySpanExporter()
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
        reader = InMemoryMetricReader()
        return cls(exporter, reader, tracer_provider, MeterProvider(metric_readers=[reader]))

    def telemetry(self, *, capture_content: bool = False) -> Telemetry:
        return Telemetry(
            tracer_provider=self.tracer_provider,
            meter_provider=self.meter_provider,
            capture_content=capture_content,
        )

    def spans(self) -> list[ReadableSpan]:
        """Finished spans, in the order they ended."""
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        """Finished spans called ``name``, in the order they started."""
        found = [s for s in self.spans() if s.name == name]
        return sorted(found, key=lambda s: s.start_time or 0)

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, f"{len(found)} spans named {name!r}: {self.names()}"
        return found[0]

    def names(self) -> list[str]:
        return sorted(s.name for s in self.spans())

    def points(self, metric: str) -> list[HistogramDataPoint]:
        """The histogram points of ``metric`` (empty when nothing was recorded)."""
        data = self.reader.get_metrics_data()
        found: list[HistogramDataPoint] = []
        if data is None:
            return found
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for item in scope.metrics:
                    if item.name == metric:
                        found.extend(p for p in item.data.data_points)  # type: ignore[misc]
        return found


def attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    found: int = span.context.span_id
    return found


def trace_id(span: ReadableSpan) -> int:
    assert span.context is not None
    found: int = span.context.trace_id
    return found


def started(span: ReadableSpan) -> int:
    assert span.start_time is not None
    return span.start_time


def ended(span: ReadableSpan) -> int:
    assert span.end_time is not None
    return span.end_time


def everything_recorded(signals: Signals) -> Iterator[str]:
    """Every span name, attribute and event of every span and metric point, as text."""
    for span in signals.spans():
        yield span.name
        yield str(span.status.description or "")
        for key, value in (span.attributes or {}).items():
            yield f"{key}={value!r}"
        for event in span.events:
            yield event.name
            for key, value in (event.attributes or {}).items():
                yield f"{key}={value!r}"
    data = signals.reader.get_metrics_data()
    if data is not None:
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for item in scope.metrics:
                    for point in item.data.data_points:
                        for key, value in (point.attributes or {}).items():
                            yield f"{key}={value!r}"
