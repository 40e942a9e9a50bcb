"""``TracedToolIndex``: a span per search and per indexing; the query stays out by default."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from opentelemetry.trace import StatusCode

from toolrelay.exceptions import ConfigurationError
from toolrelay.otel import TracedToolIndex
from toolrelay.search import BM25ToolIndex, SearchRequest, SearchResponse, ToolIndex
from toolrelay.tools import ToolDefinition

from ._signals import Signals, attributes

DEFINITIONS = [
    ToolDefinition(name="billing.refund_payment", description="Refund a card payment in full."),
    ToolDefinition(name="billing.get_invoice", description="Look up one invoice by number."),
    ToolDefinition(name="mail.send_email", description="Send an email to a customer."),
]
QUERY = "refund the card payment of SECRET customer"


def traced(signals: Signals, *, capture_content: bool = False) -> TracedToolIndex:
    index = TracedToolIndex(BM25ToolIndex(), signals.telemetry(capture_content=capture_content))
    index.index(DEFINITIONS)
    signals.exporter.clear()
    return index


def test_a_search_span_counts_and_names_the_hits_but_not_the_query(signals: Signals) -> None:
    index = traced(signals)
    plain = BM25ToolIndex()
    plain.index(DEFINITIONS)
    request = SearchRequest(query=QUERY, max_results=2, category="billing")

    response = index.search(request)

    assert response.names == plain.search(request).names
    span = signals.one("toolrelay.search")
    assert span.parent is None
    found = attributes(span)
    assert found == {
        "toolrelay.search.type": "bm25",
        "toolrelay.search.query_length": len(QUERY),
        "toolrelay.search.max_results": 2,
        "toolrelay.search.hits": len(response.hits),
        "toolrelay.search.total": response.total,
        "toolrelay.search.results": tuple(response.names),
        "toolrelay.search.top_score": pytest.approx(response.hits[0].score),
    }
    assert response.names[0] == "billing.refund_payment"
    (point,) = signals.points("toolrelay.search.duration")
    assert (point.count, dict(point.attributes or {})) == (1, {"toolrelay.search.type": "bm25"})


def test_capture_records_the_query_and_category(signals: Signals) -> None:
    index = traced(signals, capture_content=True)
    index.search(SearchRequest(query=QUERY, category="billing"))

    found = attributes(signals.one("toolrelay.search"))
    assert found["toolrelay.search.query"] == QUERY
    assert found["toolrelay.search.category"] == "billing"


def test_a_search_finding_nothing_has_no_results_or_score(signals: Signals) -> None:
    index = traced(signals)
    index.search(SearchRequest(query="zzzz qqqq"))

    found = attributes(signals.one("toolrelay.search"))
    assert found["toolrelay.search.hits"] == 0
    assert "toolrelay.search.results" not in found
    assert "toolrelay.search.top_score" not in found


def test_indexing_makes_a_span_saying_whether_it_rebuilt(signals: Signals) -> None:
    index = TracedToolIndex(BM25ToolIndex(), signals.telemetry())

    assert index.index(DEFINITIONS) is True
    assert index.index(DEFINITIONS) is False

    first, second = signals.named("toolrelay.index")
    assert attributes(first) == {
        "toolrelay.search.type": "bm25",
        "toolrelay.index.tools": 3,
        "toolrelay.index.rebuilt": True,
    }
    assert attributes(second)["toolrelay.index.rebuilt"] is False


class BrokenIndex:
    """Indexes nothing and fails every search, with the query in the message."""

    search_type = "broken"
    fingerprint: str | None = None
    extra = "reachable"

    def index(self, definitions: Sequence[ToolDefinition]) -> bool:
        raise ConfigurationError("index store unavailable")

    def search(self, request: SearchRequest) -> SearchResponse:
        raise ConfigurationError(f"cannot search for {request.query}")

    def clear(self) -> None:
        self.extra = "cleared"


def test_a_failing_search_marks_its_span_and_duration(signals: Signals) -> None:
    index = TracedToolIndex(BrokenIndex(), signals.telemetry())

    with pytest.raises(ConfigurationError):
        index.search(SearchRequest(query=QUERY))
    with pytest.raises(ConfigurationError):
        index.index(DEFINITIONS)

    search = signals.one("toolrelay.search")
    assert attributes(search)["error.type"] == "ConfigurationError"
    assert search.status.status_code is StatusCode.ERROR
    assert search.events == ()
    assert attributes(signals.one("toolrelay.index"))["error.type"] == "ConfigurationError"
    (point,) = signals.points("toolrelay.search.duration")
    assert point.attributes is not None
    assert point.attributes["error.type"] == "ConfigurationError"


def test_it_is_a_tool_index_that_forwards_everything_else() -> None:
    wrapped = BrokenIndex()
    index = TracedToolIndex(wrapped)

    assert isinstance(index, ToolIndex)
    assert index.search_type == "broken"
    assert index.fingerprint is None
    assert index.extra == "reachable"
    index.clear()
    assert wrapped.extra == "cleared"


def test_the_fingerprint_is_the_wrapped_indexs(signals: Signals) -> None:
    index = traced(signals)
    assert index.fingerprint is not None
    assert index.fingerprint == index.wrapped.fingerprint
