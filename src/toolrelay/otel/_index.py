"""``TracedToolIndex``: a tool index that makes a ``toolrelay.search`` span of every search.

Wrap the index given to the tool search advisor (or the gateway)::

    advisor = ToolSearchAdvisor(catalog, index=TracedToolIndex(BM25ToolIndex(), telemetry))

A search span carries the index type, the query's length (never its text, unless content
capture is on), ``max_results``, how many tools were returned and matched, their names (catalog
names, not content) and the best score; searches also add their duration to
``toolrelay.search.duration``. The model's ``tool_search`` calls run in a worker thread that
inherits the context, so each search span is a child of its ``execute_tool tool_search`` span.
Indexing a catalog makes a ``toolrelay.index`` span with the number of tools and whether the
index was rebuilt.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from time import perf_counter
from typing import Any

from opentelemetry.trace import Span, SpanKind
from opentelemetry.util.types import AttributeValue

from toolrelay.otel._attributes import (
    ERROR_TYPE,
    INDEX_SPAN,
    SEARCH_SPAN,
    TOOLRELAY_INDEX_REBUILT,
    TOOLRELAY_INDEX_TOOLS,
    TOOLRELAY_SEARCH_CATEGORY,
    TOOLRELAY_SEARCH_HITS,
    TOOLRELAY_SEARCH_MAX_RESULTS,
    TOOLRELAY_SEARCH_QUERY,
    TOOLRELAY_SEARCH_QUERY_LENGTH,
    TOOLRELAY_SEARCH_RESULTS,
    TOOLRELAY_SEARCH_TOP_SCORE,
    TOOLRELAY_SEARCH_TOTAL,
    TOOLRELAY_SEARCH_TYPE,
)
from toolrelay.otel._context import mark_failed, present
from toolrelay.otel._instruments import Instruments
from toolrelay.search._base import SearchRequest, SearchResponse, ToolIndex
from toolrelay.tools import ToolDefinition

__all__ = ["TracedToolIndex"]


class TracedToolIndex:
    """A :class:`~toolrelay.search.ToolIndex` whose searches are traced (see the module docs).

    Args:
        index: The index to wrap.
        telemetry: Where spans and metrics go, a :class:`~toolrelay.otel.Telemetry`; the
            global providers, without content, when omitted.

    Attributes:
        wrapped: The wrapped index; its other attributes are reachable through this object.
    """

    def __init__(self, index: ToolIndex, telemetry: Instruments | None = None) -> None:
        self.wrapped = index
        self.telemetry = telemetry if telemetry is not None else Instruments()

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes this class lacks: the wrapped index answers.
        if name == "wrapped":  # not set yet (during unpickling): never recurse
            raise AttributeError(name)
        return getattr(self.wrapped, name)

    def __repr__(self) -> str:
        return f"TracedToolIndex({self.wrapped!r})"

    @property
    def search_type(self) -> str:
        """The wrapped index's method."""
        return self.wrapped.search_type

    @property
    def fingerprint(self) -> str | None:
        """The wrapped index's fingerprint."""
        return self.wrapped.fingerprint

    def index(self, definitions: Sequence[ToolDefinition]) -> bool:
        """Index a catalog inside a ``toolrelay.index`` span."""
        attributes: dict[str, AttributeValue] = {
            TOOLRELAY_SEARCH_TYPE: self.search_type,
            TOOLRELAY_INDEX_TOOLS: len(definitions),
        }
        with self._span(INDEX_SPAN, attributes) as span:
            try:
                rebuilt = self.wrapped.index(definitions)
            except BaseException as exc:
                mark_failed(span, exc, capture_content=self.telemetry.capture_content)
                raise
            span.set_attribute(TOOLRELAY_INDEX_REBUILT, rebuilt)
        return rebuilt

    def _span(
        self, name: str, attributes: dict[str, AttributeValue]
    ) -> AbstractContextManager[Span]:
        # Failures are marked by mark_failed, which leaves messages out unless content is
        # captured; the tracer must not record them on its own.
        return self.telemetry.tracer.start_as_current_span(
            name,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        )

    def search(self, request: SearchRequest) -> SearchResponse:
        """The wrapped index's answer, inside a ``toolrelay.search`` span."""
        capture = self.telemetry.capture_content
        search_type = self.search_type
        metric = {TOOLRELAY_SEARCH_TYPE: search_type}
        attributes = present(
            {
                **metric,
                TOOLRELAY_SEARCH_QUERY_LENGTH: len(request.query),
                TOOLRELAY_SEARCH_MAX_RESULTS: request.max_results,
                TOOLRELAY_SEARCH_QUERY: request.query if capture else None,
                TOOLRELAY_SEARCH_CATEGORY: request.category if capture else None,
            }
        )
        started = perf_counter()
        with self._span(SEARCH_SPAN, attributes) as span:
            try:
                response = self.wrapped.search(request)
            except BaseException as exc:
                kind = mark_failed(span, exc, capture_content=capture)
                self.telemetry.record_search(perf_counter() - started, {**metric, ERROR_TYPE: kind})
                raise
            span.set_attributes(
                present(
                    {
                        TOOLRELAY_SEARCH_HITS: len(response.hits),
                        TOOLRELAY_SEARCH_TOTAL: response.total,
                        TOOLRELAY_SEARCH_RESULTS: tuple(response.names) or None,
                        TOOLRELAY_SEARCH_TOP_SCORE: (
                            float(response.hits[0].score) if response.hits else None
                        ),
                    }
                )
            )
        self.telemetry.record_search(perf_counter() - started, metric)
        return response

    def clear(self) -> None:
        """Forget the catalog (the wrapped index does)."""
        self.wrapped.clear()
