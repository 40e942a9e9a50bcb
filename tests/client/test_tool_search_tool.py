"""The ``tool_search`` tool: its definition, its JSON answer and what it asks the index."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest

from toolrelay.exceptions import ConfigurationError, ToolArgumentError
from toolrelay.execution import ToolCallingManager
from toolrelay.messages import UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.search._base import SearchHit, SearchRequest, SearchResponse, ToolIndex
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.testing import tool_call_response
from toolrelay.tools import FunctionTool, ToolDefinition, WorkerPool, tool
from toolrelay.tools._names import validate_tool_name
from toolrelay.toolsearch import (
    ENGLISH,
    TOOL_SEARCH_NAME,
    SearchOptions,
    ToolSearcher,
)
from toolrelay.toolsearch._options import DEFAULT_MIN_RELATIVE_SCORE
from toolrelay.toolsearch._search_tool import (
    INLINE_SEARCH_BELOW,
    MAX_QUERIES,
    MAX_QUERY_LENGTH,
    SearchRunner,
    search_tool_schema,
)

DEFINITIONS = [
    ToolDefinition(
        name="billing.refund_payment",
        description="Refund a customer's card payment in full or in part. Money leaves today.",
    ),
    ToolDefinition(name="billing.get_invoice", description="Read one invoice by its number."),
    ToolDefinition(name="mail.send_email", description="Send an email to a customer."),
]


class RecordingIndex:
    """A ToolIndex that records its requests and answers with fixed hits."""

    search_type = "fake"

    def __init__(self, hits: Sequence[SearchHit] = ()) -> None:
        self.hits = tuple(hits)
        self.requests: list[SearchRequest] = []
        self.indexed: list[list[str]] = []

    @property
    def fingerprint(self) -> str | None:
        return "fp" if self.indexed else None

    def index(self, definitions: Sequence[ToolDefinition]) -> bool:
        self.indexed.append([d.name for d in definitions])
        return True

    def search(self, request: SearchRequest) -> SearchResponse:
        self.requests.append(request)
        return SearchResponse(
            hits=self.hits[: request.max_results],
            total=len(self.hits),
            search_type=self.search_type,
            query=request.query,
            time_ms=0.25,
        )

    def clear(self) -> None:
        self.indexed.clear()


def bm25() -> BM25ToolIndex:
    index = BM25ToolIndex()
    index.index(DEFINITIONS)
    return index


def test_the_tool_definition() -> None:
    tool = ToolSearcher(index=bm25(), allowed=None).as_tool()
    definition = tool.definition
    assert definition.name == TOOL_SEARCH_NAME == validate_tool_name("tool_search")
    assert definition.description == ENGLISH.description
    schema = definition.input_schema
    assert schema["required"] == ["queries"]
    assert set(schema["properties"]) == {"queries", "max_results", "category"}
    assert schema["properties"]["queries"]["type"] == "array"
    assert schema["properties"]["queries"]["items"] == {"type": "string"}
    assert tool.metadata.read_only
    custom = ToolSearcher(index=bm25(), allowed=None).as_tool("Find tools.")
    assert custom.definition.description == "Find tools."


def test_the_schema_shown_is_lean_and_the_arguments_still_take_null() -> None:
    tool = ToolSearcher(index=bm25(), allowed=None).as_tool()
    schema = tool.definition.input_schema
    # Plain optional parameters: no null unions, defaults or dialect marker to pay for.
    assert schema["properties"]["max_results"] == {
        "type": "integer",
        "description": ENGLISH.parameters["max_results"],
    }
    assert schema["properties"]["category"]["type"] == "string"
    text = json.dumps(schema)
    for costly in ("anyOf", "null", "default", "$schema"):
        assert costly not in text
    assert schema == search_tool_schema(ENGLISH.parameters)


async def test_null_optional_arguments_mean_the_defaults() -> None:
    index = RecordingIndex()
    searcher = ToolSearcher(index=index, allowed=None, options=SearchOptions(max_results=3))
    await searcher.as_tool().call('{"queries": ["invoice"], "max_results": null, "category": null}')
    [request] = index.requests
    assert (request.max_results, request.category) == (3, None)


async def test_answer_is_a_json_list_of_provider_safe_names_and_nothing_more() -> None:
    searcher = ToolSearcher(index=bm25(), allowed=None)
    tool = searcher.as_tool(call_id="call_1")
    text = await tool.call(json.dumps({"queries": ["refund a card payment"]}))
    answer = json.loads(text)
    # The descriptions arrive with the definitions, shown from the next call on.
    assert answer[0] == {"name": "billing__refund_payment"}
    assert all(set(item) == {"name"} for item in answer)
    assert " " not in text
    [record] = searcher.take_records(["call_0", "call_1"])  # only call_1 searched
    assert searcher.records == {}
    assert record.query == "refund a card payment"
    assert record.names[0] == "billing.refund_payment"
    assert record.response.search_type == "bm25"
    assert record.response.time_ms >= 0.0


async def test_one_call_searches_every_query_and_answers_each_ones_hits_a_tool_once() -> None:
    searcher = ToolSearcher(
        index=bm25(), allowed=None, options=SearchOptions(max_results=2, min_relative_score=None)
    )
    queries = ["refund a card payment", "send an email", "refund a card payment"]
    text = await searcher.as_tool(call_id="c").call(json.dumps({"queries": queries}))
    names = [hit["name"] for hit in json.loads(text)]
    records = searcher.take_records(["c"])
    assert [r.query for r in records] == queries  # a record per query, in order
    # Each query's hits in turn, best first; a tool another query gave is not repeated.
    expected = []
    for record in records:
        assert list(record.names) == record.response.names  # nothing shown: all is given
        expected += [n for n in record.response.names if n not in expected]
    assert names == [n.replace(".", "__") for n in expected]
    assert names[0] == "billing__refund_payment"
    assert "mail__send_email" in names
    assert len(names) == len(set(names))


async def test_a_lone_query_is_one_query_and_the_number_of_queries_is_bounded() -> None:
    index = RecordingIndex()
    tool = ToolSearcher(index=index, allowed=None).as_tool()
    assert await tool.call('{"queries": "invoice"}') == "[]"  # sent bare: one need
    assert [r.query for r in index.requests] == ["invoice"]
    for queries in ([], ["q"] * (MAX_QUERIES + 1)):
        with pytest.raises(ToolArgumentError) as caught:
            await tool.call(json.dumps({"queries": queries}))
        assert [p.location for p in caught.value.problems] == ["queries"]
    assert len(index.requests) == 1  # the index saw neither
    await tool.call(json.dumps({"queries": ["q"] * MAX_QUERIES}))
    assert len(index.requests) == 1 + MAX_QUERIES


async def test_the_answer_is_compact_json() -> None:
    searcher = ToolSearcher(
        index=bm25(), allowed=None, options=SearchOptions(min_relative_score=None)
    )
    text = await searcher.as_tool().call('{"queries": ["refund a card payment or invoice"]}')
    answer = json.loads(text)
    assert len(answer) > 1
    assert text == json.dumps(answer, ensure_ascii=False, separators=(",", ":"))


async def test_answers_leave_out_shown_tools_but_the_best() -> None:
    hits = [SearchHit(name=d.name, score=3.0 - i, summary="s") for i, d in enumerate(DEFINITIONS)]
    searcher = ToolSearcher(
        index=RecordingIndex(hits),
        allowed=None,
        options=SearchOptions(max_results=5, min_relative_score=None),
    )
    names = ["billing__refund_payment", "billing__get_invoice", "mail__send_email"]
    assert [h["name"] for h in json.loads(await searcher.tool_search(["q"]))] == names
    searcher.shown = frozenset({"billing.get_invoice", "billing.refund_payment"})
    answer, (record,) = await searcher.search(["q"])
    assert [h["name"] for h in json.loads(answer)] == [
        "billing__refund_payment",
        "mail__send_email",
    ]
    assert record.names == tuple(d.name for d in DEFINITIONS)  # the whole ranking is found


async def test_hits_below_the_relative_score_are_dropped_by_default() -> None:
    index = RecordingIndex()
    await (
        ToolSearcher(index=index, allowed=None, options=SearchOptions(max_results=5))
        .as_tool()
        .call('{"queries": ["q"]}')
    )
    assert index.requests[0].min_relative_score == DEFAULT_MIN_RELATIVE_SCORE
    # On a real index: the invoice scores under half the refund for this query.
    query = '{"queries": ["refund a card payment or invoice"]}'
    for ratio, expected in ((0.5, 1), (None, 2)):
        searcher = ToolSearcher(
            index=bm25(), allowed=None, options=SearchOptions(min_relative_score=ratio)
        )
        assert len(json.loads(await searcher.as_tool().call(query))) == expected


@pytest.mark.parametrize("options", [{"max_results": 0}, {"min_relative_score": -0.1}])
def test_options_out_of_range_are_refused(options: dict[str, Any]) -> None:
    settings: dict[str, Any] = {"max_results": 5, **options}
    with pytest.raises(ConfigurationError):
        ToolSearcher(index=bm25(), allowed=None, options=SearchOptions(**settings))


async def test_no_match_answers_an_empty_list() -> None:
    searcher = ToolSearcher(index=bm25(), allowed=None)
    assert await searcher.as_tool().call('{"queries": ["quantum teleportation"]}') == "[]"


async def test_max_results_category_and_defaults_reach_the_index() -> None:
    index = RecordingIndex()
    assert isinstance(index, ToolIndex)
    allowed = frozenset({"billing.get_invoice"})
    searcher = ToolSearcher(
        index=index, allowed=allowed, options=SearchOptions(max_results=3, min_score=1.5)
    )
    for call_id, arguments in enumerate(
        [
            '{"queries": ["invoice"], "max_results": 2, "category": "billing"}',
            '{"queries": ["invoice"]}',
            '{"queries": ["invoice"], "max_results": 99, "category": ""}',
        ]
    ):
        await searcher.as_tool(call_id=str(call_id)).call(arguments)
    first, second, third = index.requests
    assert (first.query, first.max_results, first.category) == ("invoice", 2, "billing")
    assert (second.max_results, second.category) == (3, None)
    assert (third.max_results, third.category) == (10, None)  # clamped; "" means none
    assert all(r.allowed == allowed and r.min_score == 1.5 for r in index.requests)
    records = searcher.take_records(["0", "1", "2"])
    assert [r.max_results for r in records] == [2, 3, 10]


async def test_a_query_with_a_lone_surrogate_reaches_the_index_as_valid_unicode() -> None:
    # Embedders and tokenizers refuse half an emoji ("\\ud83d" in the model's JSON).
    index = RecordingIndex()
    searcher = ToolSearcher(index=index, allowed=None, options=SearchOptions(max_results=3))
    await searcher.as_tool(call_id="c").call('{"queries": ["refund \\ud83d \\ud83d\\ude00"]}')
    assert index.requests[0].query == "refund \ufffd \U0001f600"
    (record,) = searcher.take_records(["c"])
    assert record.query == "refund \ud83d \U0001f600"  # the report keeps what the model wrote


async def test_the_permitted_view_limits_the_answer() -> None:
    searcher = ToolSearcher(
        index=bm25(),
        allowed=lambda name: not name.startswith("billing."),
        options=SearchOptions(max_results=5),
    )
    answer = json.loads(await searcher.as_tool().call('{"queries": ["billing.refund_payment"]}'))
    assert "billing__refund_payment" not in [a["name"] for a in answer]


async def test_bad_arguments_are_reported_with_every_problem() -> None:
    tool = ToolSearcher(index=bm25(), allowed=None).as_tool()
    with pytest.raises(ToolArgumentError) as caught:
        await tool.call('{"max_results": "many", "limit": 3}')
    locations = {p.location for p in caught.value.problems}
    assert {"queries", "max_results", "limit"} <= locations


async def test_records_are_taken_in_the_order_of_the_calls() -> None:
    hits = [SearchHit(name=d.name, score=1.0, summary=d.description) for d in DEFINITIONS]
    searcher = ToolSearcher(
        index=RecordingIndex(hits), allowed=None, options=SearchOptions(max_results=1)
    )
    await searcher.as_tool(call_id="one").call('{"queries": ["a"], "max_results": 1}')
    await searcher.as_tool(call_id="two").call('{"queries": ["b"], "max_results": 2}')
    taken = searcher.take_records(["two", "one", "not a search"])
    assert [r.query for r in taken] == ["b", "a"]
    assert searcher.records == {}


async def test_a_runaway_query_is_refused_before_the_index_sees_it() -> None:
    index = RecordingIndex()
    tool = ToolSearcher(index=index, allowed=None, options=SearchOptions(max_results=5)).as_tool()
    with pytest.raises(ToolArgumentError) as caught:
        await tool.call(json.dumps({"queries": ["fine", "refund " * 1_000_000]}))
    (problem,) = caught.value.problems
    assert problem.location == "queries.1"
    assert f"at most {MAX_QUERY_LENGTH} characters" in problem.message
    assert index.requests == []  # not even the fine one
    assert await tool.call(json.dumps({"queries": ["r" * MAX_QUERY_LENGTH]}))  # the limit itself


async def test_searches_run_apart_from_the_threads_of_sync_tools() -> None:
    release = threading.Event()
    where: list[str] = []

    class Index(RecordingIndex):
        def search(self, request: SearchRequest) -> SearchResponse:
            where.append(threading.current_thread().name)
            return super().search(request)

    @tool(timeout=0.05)
    def stuck() -> str:
        """Never returns in time."""
        release.wait(30)
        return "late"

    pool = WorkerPool(2, tool_share=2, max_threads=2)
    manager = ToolCallingManager(sync_workers=pool)
    search = ToolSearcher(index=Index(), allowed=None).as_tool()
    prompt = Prompt(
        messages=(UserMessage(text="go"),),
        options=ChatOptions(tools=(FunctionTool.from_function(stuck), search)),
    )
    try:
        stuck_round = tool_call_response(("stuck", {}), ("stuck", {}))
        await manager.execute_tool_calls(prompt, stuck_round)
        assert pool.status().stuck == 2  # every thread for sync tools is taken
        searched = await manager.execute_tool_calls(
            prompt, tool_call_response(("tool_search", {"queries": ["invoice"]}))
        )
    finally:
        release.set()
    assert searched.outcomes[0].ok
    assert where
    assert not where[0].startswith("toolrelay-tool")


async def test_each_bound_search_is_kept_by_its_call_whatever_order_they_finish() -> None:
    searcher = ToolSearcher(index=bm25(), allowed=None)
    first, second = searcher.as_tool(call_id="a"), searcher.as_tool(call_id="b")
    # The second call finishes first; the records still come back in the calls' order.
    await second.call(json.dumps({"queries": ["refund a card payment"]}))
    await first.call(json.dumps({"queries": ["refund a card payment"]}))
    records = searcher.take_records(["a", "b"])
    assert [r.query for r in records] == ["refund a card payment"] * 2
    assert searcher.records == {}
    unbound = await searcher.as_tool().call(json.dumps({"queries": ["invoice"]}))
    assert json.loads(unbound)
    assert searcher.records == {}  # an unbound tool keeps nothing


class ThreadNotingIndex(BM25ToolIndex):
    """A BM25 index that notes the thread of each search and can be made slow."""

    def __init__(self, delay: float = 0.0) -> None:
        super().__init__()
        self.delay = delay
        self.threads: list[int] = []

    def search(self, request: SearchRequest) -> SearchResponse:
        self.threads.append(threading.get_ident())
        if self.delay:
            time.sleep(self.delay)
        return super().search(request)


async def test_a_quick_in_process_index_searches_inline_after_its_first_search() -> None:
    index = ThreadNotingIndex()
    index.index(DEFINITIONS)
    runner = SearchRunner(index)
    request = SearchRequest(query="refund payment", max_results=2)
    first = await runner.search(request)
    second = await runner.search(request)
    loop_thread = threading.get_ident()
    # The first search went to a worker thread; timed under the limit, the next ran here.
    assert index.threads[0] != loop_thread
    assert index.threads[1] == loop_thread
    assert first.names == second.names == ["billing.refund_payment"]


async def test_a_slow_search_sends_the_next_one_back_to_a_thread() -> None:
    index = ThreadNotingIndex()
    index.index(DEFINITIONS)
    runner = SearchRunner(index)
    request = SearchRequest(query="refund payment", max_results=2)
    await runner.search(request)
    index.delay = INLINE_SEARCH_BELOW * 4
    await runner.search(request)  # inline, and slow
    index.delay = 0.0
    await runner.search(request)
    loop_thread = threading.get_ident()
    assert [t == loop_thread for t in index.threads] == [False, True, False]


async def test_an_index_that_may_do_io_always_searches_in_a_thread() -> None:
    threads: list[int] = []

    class Index(RecordingIndex):  # answers at once, but is no in-process scoring index
        def search(self, request: SearchRequest) -> SearchResponse:
            threads.append(threading.get_ident())
            return super().search(request)

    runner = SearchRunner(Index())
    for _ in range(3):
        await runner.search(SearchRequest(query="invoice", max_results=1))
    assert threading.get_ident() not in threads
    assert len(threads) == 3
