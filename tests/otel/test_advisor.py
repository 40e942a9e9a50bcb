"""``TracingAdvisor``: the request span, nesting across tasks and threads, errors, streams."""

from __future__ import annotations

import asyncio
from contextlib import aclosing

import pytest
from opentelemetry.trace import StatusCode

from toolrelay.client import (
    HIGHEST_PRECEDENCE,
    AdvisorChain,
    ChatClient,
    ChatClientRequest,
    MessageChatMemoryAdvisor,
    ToolCallingAdvisor,
)
from toolrelay.exceptions import ModelCallLimitError, ModelError
from toolrelay.execution import ToolCallingManager
from toolrelay.memory import MessageWindowChatMemory
from toolrelay.messages import UserMessage
from toolrelay.otel import Telemetry, TracingAdvisor
from toolrelay.prompt import Prompt
from toolrelay.testing import ScriptedModel, text_response, tool_call_response
from toolrelay.tools import tool

from ._signals import Signals, attributes, parent_id, span_id


@tool
async def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: The key.
    """
    await asyncio.sleep(0)  # let concurrent requests interleave
    return key.upper()


def looping_model() -> ScriptedModel:
    return ScriptedModel([tool_call_response(("lookup", {"key": "k"})), "done"])


def client(telemetry: Telemetry, model: ScriptedModel, *, max_model_calls: int = 50) -> ChatClient:
    loop = ToolCallingAdvisor(
        tool_calling_manager=ToolCallingManager(interceptors=[telemetry.interceptor()]),
        max_model_calls=max_model_calls,
    )
    return (
        ChatClient.builder(telemetry.model(model))
        .default_advisors(telemetry.advisor(), loop)
        .default_tools(lookup)
        .build()
    )


def tree(signals: Signals) -> dict[str, list[tuple[str, int | None]]]:
    """For each request span (by span id as text): its children's names and turn numbers."""
    roots = signals.named("invoke_agent")
    found: dict[str, list[tuple[str, int | None]]] = {}
    for root in roots:
        children = [s for s in signals.spans() if parent_id(s) == span_id(root)]
        children.sort(key=lambda s: s.start_time or 0)
        found[str(span_id(root))] = [
            (s.name, attributes(s).get("toolrelay.turn.model_call")) for s in children
        ]
    return found


EXPECTED_TURN = [
    ("chat", 1),
    ("execute_tool lookup", 1),
    ("chat", 2),
]


async def test_concurrent_requests_keep_their_own_trees_and_numbering(signals: Signals) -> None:
    telemetry = signals.telemetry()
    first, second = client(telemetry, looping_model()), client(telemetry, looping_model())

    await asyncio.gather(first.prompt("a").acall(), second.prompt("b").acall())

    found = tree(signals)
    assert len(found) == 2
    assert list(found.values()) == [EXPECTED_TURN, EXPECTED_TURN]


def test_a_blocking_call_nests_the_same_way(signals: Signals) -> None:
    assert client(signals.telemetry(), looping_model()).prompt("a").call().content() == "done"
    assert list(tree(signals).values()) == [EXPECTED_TURN]


async def test_the_request_span_is_a_child_of_the_callers_span(signals: Signals) -> None:
    tracer = signals.tracer_provider.get_tracer("test")
    with tracer.start_as_current_span("handle http request") as outer:
        await client(signals.telemetry(), looping_model()).prompt("a").acall()

    assert parent_id(signals.one("invoke_agent")) == outer.get_span_context().span_id


async def test_it_runs_outermost_by_default(signals: Signals) -> None:
    tracing = TracingAdvisor(signals.telemetry())
    memory = MessageChatMemoryAdvisor(MessageWindowChatMemory())
    chain = AdvisorChain.for_model(ScriptedModel([]), [memory, tracing])

    assert tracing.order == HIGHEST_PRECEDENCE
    assert chain.advisors[0] is tracing


async def test_a_failing_model_fails_the_request_span_too(signals: Signals) -> None:
    with pytest.raises(ModelError):
        await client(signals.telemetry(), ScriptedModel([])).prompt("a").acall()

    root = signals.one("invoke_agent")
    assert attributes(root)["error.type"] == "ModelError"
    assert root.status.status_code is StatusCode.ERROR
    assert attributes(signals.one("chat"))["error.type"] == "ModelError"
    errors = {
        (p.attributes or {}).get("gen_ai.operation.name"): (p.attributes or {}).get("error.type")
        for p in signals.points("gen_ai.client.operation.duration")
    }
    assert errors == {"chat": "ModelError", "invoke_agent": "ModelError"}


async def test_a_loop_limit_is_the_request_spans_error(signals: Signals) -> None:
    with pytest.raises(ModelCallLimitError):
        await client(signals.telemetry(), looping_model(), max_model_calls=1).prompt("a").acall()

    assert attributes(signals.one("invoke_agent"))["error.type"] == "ModelCallLimitError"
    assert signals.one("chat").status.status_code is StatusCode.UNSET


async def test_without_a_tool_loop_there_are_no_loop_attributes(signals: Signals) -> None:
    telemetry = signals.telemetry()
    plain = (
        ChatClient.builder(telemetry.model(ScriptedModel([text_response("hi", usage=(3, 1))])))
        .default_advisors(telemetry.advisor())
        .tool_calling(False)
        .build()
    )
    await plain.prompt("a").acall()

    found = attributes(signals.one("invoke_agent"))
    assert found["gen_ai.usage.input_tokens"] == 3
    assert not [key for key in found if key.startswith("toolrelay.tool_loop")]
    assert "gen_ai.conversation.id" not in found
    assert "gen_ai.agent.name" not in found


async def test_a_stream_stopped_early_ends_the_request_span_without_an_error(
    signals: Signals,
) -> None:
    telemetry = signals.telemetry()
    model = ScriptedModel(["a long answer in many chunks"], chunk_size=2)
    chain = AdvisorChain.for_model(telemetry.model(model), [telemetry.advisor()])
    request = ChatClientRequest(prompt=Prompt(messages=(UserMessage(text="hi"),)))

    async with aclosing(chain.next_stream(request)) as chunks:  # type: ignore[type-var]
        await anext(chunks)

    # (The model's own stream is closed when the chain's last link is finalized, later.)
    root = signals.one("invoke_agent")
    assert root.status.status_code is StatusCode.UNSET
    assert "gen_ai.response.finish_reasons" not in attributes(root)
