"""A traced client wired with ``Telemetry``: the span tree of a tool loop, metrics, privacy."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.trace import SpanKind, StatusCode

from tests.search_only import SEARCH_ONLY
from toolrelay.client import ChatClient, ToolSearchAdvisor
from toolrelay.execution import ToolCallingManager
from toolrelay.otel import (
    Telemetry,
    TracedChatModel,
    TracedToolIndex,
    TracingAdvisor,
    TracingInterceptor,
)
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.search import BM25ToolIndex
from toolrelay.testing import ScriptedModel, text_response, tool_call_response
from toolrelay.tools import tool

from ._signals import (
    Signals,
    attributes,
    ended,
    everything_recorded,
    parent_id,
    span_id,
    started,
    trace_id,
)

SECRET_SKU = "SKU-SECRET-4711"
SECRET_USER = "my card ends in SECRET-0042"
SECRET_RESULT = "shelf SECRET-B7"
SECRET_ANSWER = "Stock SECRET-ANSWER is 3."


@tool
def check_stock(sku: str) -> dict[str, Any]:
    """Check how many units of a product are in stock.

    Args:
        sku: The product's stock keeping unit.
    """
    return {"sku": sku, "count": 3, "location": SECRET_RESULT}


@tool
def reserve(sku: str, quantity: int) -> str:
    """Reserve units of a product for a customer.

    Args:
        sku: The product's stock keeping unit.
        quantity: How many units.
    """
    raise RuntimeError(f"warehouse offline, cannot reserve {sku}")


def two_round_model() -> ScriptedModel:
    return ScriptedModel(
        [
            tool_call_response(
                ("check_stock", {"sku": SECRET_SKU}),
                ("reserve", {"sku": SECRET_SKU, "quantity": 2}),
                usage=(100, 20),
                metadata={"model": "scripted-1-2024", "id": "resp-1"},
            ),
            text_response(SECRET_ANSWER, usage=(150, 30)),
        ]
    )


def traced_client(telemetry: Telemetry, model: ScriptedModel) -> ChatClient:
    manager = ToolCallingManager(interceptors=[telemetry.interceptor()])
    return (
        ChatClient.builder(telemetry.model(model))
        .default_options(ChatOptions(model="scripted-1"))
        .default_advisors(telemetry.advisor(agent_name="desk"))
        .tool_calling_manager(manager)
        .default_tools(check_stock, reserve)
        .build()
    )


async def run_turn(signals: Signals, *, capture_content: bool = False, stream: bool = False) -> str:
    client = traced_client(signals.telemetry(capture_content=capture_content), two_round_model())
    spec = client.prompt(SECRET_USER).conversation("conv-1")
    response = await (spec.stream().collect() if stream else spec.acall())
    assert response.content() == SECRET_ANSWER
    return SECRET_ANSWER


# --- the span tree ---------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["call", "stream"])
async def test_a_two_round_loop_makes_one_request_span_with_chat_and_tool_children(
    signals: Signals, stream: bool
) -> None:
    await run_turn(signals, stream=stream)

    assert signals.names() == [
        "chat scripted-1",
        "chat scripted-1",
        "execute_tool check_stock",
        "execute_tool reserve",
        "invoke_agent desk",
    ]
    root = signals.one("invoke_agent desk")
    assert root.parent is None
    assert root.kind is SpanKind.INTERNAL
    children = [s for s in signals.spans() if s is not root]
    assert all(parent_id(s) == span_id(root) for s in children)
    assert {trace_id(s) for s in signals.spans()} == {trace_id(root)}


@pytest.mark.parametrize("stream", [False, True], ids=["call", "stream"])
async def test_tool_spans_belong_to_the_round_of_the_model_call_that_asked_for_them(
    signals: Signals, stream: bool
) -> None:
    await run_turn(signals, stream=stream)

    first, second = signals.named("chat scripted-1")
    assert attributes(first)["toolrelay.turn.model_call"] == 1
    assert attributes(second)["toolrelay.turn.model_call"] == 2
    for name in ("execute_tool check_stock", "execute_tool reserve"):
        run = signals.one(name)
        assert attributes(run)["toolrelay.turn.model_call"] == 1
        assert ended(first) <= started(run)
        assert ended(run) <= started(second)


async def test_chat_spans_follow_the_semantic_conventions(signals: Signals) -> None:
    await run_turn(signals)

    first, second = signals.named("chat scripted-1")
    assert first.kind is SpanKind.CLIENT
    one = attributes(first)
    assert one["gen_ai.operation.name"] == "chat"
    assert one["gen_ai.request.model"] == "scripted-1"
    assert one["gen_ai.response.model"] == "scripted-1-2024"
    assert one["gen_ai.response.id"] == "resp-1"
    assert one["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert one["gen_ai.usage.input_tokens"] == 100
    assert one["gen_ai.usage.output_tokens"] == 20
    assert one["toolrelay.request.tool_count"] == 2
    assert one["toolrelay.response.tool_call_count"] == 2
    two = attributes(second)
    assert two["gen_ai.response.finish_reasons"] == ("stop",)
    assert (two["gen_ai.usage.input_tokens"], two["gen_ai.usage.output_tokens"]) == (150, 30)
    assert "gen_ai.response.model" not in two  # the second answer did not say


async def test_tool_spans_carry_the_call_and_mark_the_failing_tool(signals: Signals) -> None:
    await run_turn(signals)

    ok = signals.one("execute_tool check_stock")
    failed = signals.one("execute_tool reserve")
    assert attributes(ok) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "check_stock",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": "call_1",
        "toolrelay.turn.model_call": 1,
        "toolrelay.tool.status": "ok",
    }
    assert ok.status.status_code is StatusCode.UNSET
    assert attributes(failed)["gen_ai.tool.call.id"] == "call_2"
    assert attributes(failed)["toolrelay.tool.status"] == "error"
    assert attributes(failed)["error.type"] == "RuntimeError"
    assert failed.status.status_code is StatusCode.ERROR


async def test_the_request_span_sums_the_turn(signals: Signals) -> None:
    await run_turn(signals)

    root = attributes(signals.one("invoke_agent desk"))
    assert root["gen_ai.operation.name"] == "invoke_agent"
    assert root["gen_ai.agent.name"] == "desk"
    assert root["gen_ai.conversation.id"] == "conv-1"
    assert root["gen_ai.request.model"] == "scripted-1"
    assert root["gen_ai.response.finish_reasons"] == ("stop",)
    assert (root["gen_ai.usage.input_tokens"], root["gen_ai.usage.output_tokens"]) == (250, 50)
    assert root["toolrelay.tool_loop.model_calls"] == 2
    assert root["toolrelay.tool_loop.rounds"] == 1
    assert root["toolrelay.tool_loop.tool_calls"] == 2
    assert root["toolrelay.tool_loop.failed_tool_calls"] == 1
    assert root["toolrelay.tool_loop.stop"] == "answer"


# --- metrics ---------------------------------------------------------------------------------


async def test_token_usage_is_recorded_per_model_call_by_token_type(signals: Signals) -> None:
    await run_turn(signals)

    totals: dict[str, tuple[int, float]] = {}
    for point in signals.points("gen_ai.client.token.usage"):
        found = point.attributes or {}
        assert found["gen_ai.operation.name"] == "chat"
        assert found["gen_ai.request.model"] == "scripted-1"
        count, total = totals.get(str(found["gen_ai.token.type"]), (0, 0.0))
        totals[str(found["gen_ai.token.type"])] = (count + point.count, total + point.sum)
    assert totals == {"input": (2, 250), "output": (2, 50)}


async def test_operation_durations_are_recorded_per_operation_and_tool(signals: Signals) -> None:
    await run_turn(signals)

    counts: dict[tuple[Any, ...], int] = {}
    for point in signals.points("gen_ai.client.operation.duration"):
        found = point.attributes or {}
        key = (
            found["gen_ai.operation.name"],
            found.get("gen_ai.tool.name"),
            found.get("error.type"),
        )
        counts[key] = counts.get(key, 0) + point.count
        assert point.sum >= 0
    assert counts == {
        ("chat", None, None): 2,
        ("execute_tool", "check_stock", None): 1,
        ("execute_tool", "reserve", "RuntimeError"): 1,
        ("invoke_agent", None, None): 1,
    }


# --- content ---------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["call", "stream"])
async def test_nothing_anyone_wrote_is_recorded_by_default(signals: Signals, stream: bool) -> None:
    await run_turn(signals, stream=stream)

    recorded = "\n".join(everything_recorded(signals))
    assert "SECRET" not in recorded
    assert "warehouse offline" not in recorded
    assert "tool.call.arguments" not in recorded
    assert "tool.call.result" not in recorded
    assert "gen_ai.input.messages" not in recorded


async def test_capture_content_records_arguments_results_and_messages(signals: Signals) -> None:
    await run_turn(signals, capture_content=True)

    ok = attributes(signals.one("execute_tool check_stock"))
    assert SECRET_SKU in ok["gen_ai.tool.call.arguments"]
    assert SECRET_RESULT in ok["gen_ai.tool.call.result"]
    failed = signals.one("execute_tool reserve")
    assert "warehouse offline" in attributes(failed)["gen_ai.tool.call.result"]
    assert [e.name for e in failed.events] == ["exception"]
    first, second = signals.named("chat scripted-1")
    assert SECRET_USER in attributes(first)["gen_ai.input.messages"]
    assert SECRET_RESULT in attributes(second)["gen_ai.input.messages"]
    assert SECRET_ANSWER in attributes(second)["gen_ai.output.messages"]
    root = attributes(signals.one("invoke_agent desk"))
    assert SECRET_USER in root["gen_ai.input.messages"]
    assert SECRET_ANSWER in root["gen_ai.output.messages"]


# --- tool search -----------------------------------------------------------------------------


def search_client(telemetry: Telemetry, model: ScriptedModel) -> ChatClient:
    manager = ToolCallingManager(interceptors=[telemetry.interceptor()])
    advisor = ToolSearchAdvisor(
        [check_stock, reserve],
        index=telemetry.index(BM25ToolIndex()),
        tool_calling_manager=manager,
        **SEARCH_ONLY,
    )
    return (
        ChatClient.builder(telemetry.model(model))
        .default_advisors(telemetry.advisor(), advisor)
        .build()
    )


QUERY = "how many units in stock SECRET-QUERY"


def search_model() -> ScriptedModel:
    return ScriptedModel(
        [
            tool_call_response(("tool_search", {"queries": [QUERY], "max_results": 1})),
            tool_call_response(("check_stock", {"sku": SECRET_SKU})),
            "done",
        ]
    )


async def test_a_tool_search_turn_makes_search_spans_under_their_tool_run(signals: Signals) -> None:
    client = search_client(signals.telemetry(), search_model())
    await client.prompt("stock?").conversation("c1").acall()

    root = signals.one("invoke_agent")
    run = signals.one("execute_tool tool_search")
    search = signals.one("toolrelay.search")
    index = signals.one("toolrelay.index")
    assert parent_id(run) == span_id(root)
    # tool_search is a sync function: it ran in a worker thread, and the span still nests
    assert parent_id(search) == span_id(run)
    assert parent_id(index) == span_id(root)
    found = attributes(search)
    assert found["toolrelay.search.type"] == "bm25"
    assert found["toolrelay.search.query_length"] == len(QUERY)
    assert found["toolrelay.search.max_results"] == 1
    assert found["toolrelay.search.hits"] == 1
    assert found["toolrelay.search.results"] == ("check_stock",)
    assert "toolrelay.search.query" not in found
    assert attributes(index)["toolrelay.index.tools"] == 2
    assert attributes(index)["toolrelay.index.rebuilt"] is True
    assert attributes(root)["toolrelay.tool_search.searches"] == 1
    assert attributes(root)["toolrelay.tool_search.discovered"] == 1
    assert attributes(root)["toolrelay.tool_search.pinned"] == 0  # no reveal here
    assert "SECRET" not in "\n".join(everything_recorded(signals))
    assert [p.count for p in signals.points("toolrelay.search.duration")] == [1]


async def test_a_turn_records_the_tools_its_first_reveal_pinned(signals: Signals) -> None:
    telemetry = signals.telemetry()
    advisor = ToolSearchAdvisor(
        [check_stock, reserve], index=telemetry.index(BM25ToolIndex()), send_all_below=None
    )
    model = ScriptedModel(["In stock."])
    client = (
        ChatClient.builder(telemetry.model(model))
        .default_advisors(telemetry.advisor(), advisor)
        .build()
    )
    response = await client.prompt(QUERY).conversation("c1").acall()
    assert response.tool_search is not None
    assert response.tool_search.pinned == ("check_stock",)
    root = signals.one("invoke_agent")
    assert attributes(root)["toolrelay.tool_search.pinned"] == 1
    assert attributes(root)["toolrelay.tool_search.discovered"] == 0


async def test_a_tool_search_turn_records_the_query_only_with_capture(signals: Signals) -> None:
    client = search_client(signals.telemetry(capture_content=True), search_model())
    await client.prompt("stock?").conversation("c1").acall()

    assert attributes(signals.one("toolrelay.search"))["toolrelay.search.query"] == QUERY


# --- the pieces ------------------------------------------------------------------------------


def test_telemetry_hands_out_pieces_that_share_it(signals: Signals) -> None:
    telemetry = signals.telemetry()
    model = ScriptedModel(["hi"])
    advisor = telemetry.advisor(agent_name="a", order=5)
    assert isinstance(advisor, TracingAdvisor)
    assert (advisor.telemetry, advisor.agent_name, advisor.order) == (telemetry, "a", 5)
    traced = telemetry.model(model, provider_name="scripted")
    assert isinstance(traced, TracedChatModel)
    assert (traced.wrapped, traced.telemetry, traced.provider_name) == (
        model,
        telemetry,
        "scripted",
    )
    assert telemetry.interceptor().telemetry is telemetry
    assert isinstance(telemetry.interceptor(), TracingInterceptor)
    index = BM25ToolIndex()
    traced_index = telemetry.index(index)
    assert isinstance(traced_index, TracedToolIndex)
    assert traced_index.wrapped is index


async def test_pieces_without_telemetry_use_the_global_providers() -> None:
    # The global providers are no-op here: nothing to check but that every piece works.
    model = TracedChatModel(ScriptedModel(["hi"]))
    assert (await model.call(Prompt(messages=()))).text == "hi"
    assert TracingAdvisor().telemetry.capture_content is False
    assert TracingInterceptor().telemetry.capture_content is False
