"""Fixed prompts and the Responses request bodies ``OpenAIResponsesModel`` builds for them.

The cases cover what the adapter sends: a plain call, a tool round with its results (a
failed one too), each tool choice, options, strict tools and a stream; then the six bodies of
tool search's two turns on the native channel (``_responses_channels.py``). The prompts are fixed,
so the bodies are too (no network: :meth:`~toolrelay.models.OpenAIResponsesModel.request_body`
builds them).
"""

from __future__ import annotations

from typing import Any, Literal

from toolrelay.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.models._openai_responses import OpenAIResponsesModel
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.tools import FunctionTool, tool

from . import _responses_channels


@tool(name="weather.current")
def current_weather(city: str, unit: Literal["c", "f"] = "c") -> dict[str, Any]:
    """Current weather of a city.

    Args:
        city: The city.
        unit: Celsius or Fahrenheit.
    """
    return {"city": city, "temperature": 21 if unit == "c" else 70, "unit": unit}


@tool
def local_time(city: str) -> str:
    """Local time of a city."""
    return f"12:00 in {city}"


WEATHER = FunctionTool.from_function(current_weather)
TIME = FunctionTool.from_function(local_time)

_QUESTION: tuple[Message, ...] = (
    SystemMessage(text="You answer questions about cities. Be brief."),
    UserMessage(text="Weather and time in Paris?"),
)
_ROUND: tuple[Message, ...] = (
    AssistantMessage(
        text="Checking both.",
        tool_calls=(
            ToolCall(id="call_w", name="weather.current", arguments='{"city": "Paris"}'),
            ToolCall(id="call_t", name="local_time", arguments=""),
        ),
    ),
    ToolResponseMessage(
        responses=(
            ToolResponse(id="call_w", name="weather.current", data='{"temperature": 21}'),
            ToolResponse(
                id="call_t", name="local_time", data="Invalid arguments: city", is_error=True
            ),
        )
    ),
)


def _prompt(messages: tuple[Message, ...], **options: Any) -> Prompt:
    return Prompt(messages=messages, options=ChatOptions(**options))


CASES: dict[str, tuple[dict[str, Any], Prompt, bool]] = {
    # name: (adapter arguments, prompt, stream)
    "plain": ({}, _prompt((UserMessage(text="hi"),)), False),
    "tools offered": ({}, _prompt(_QUESTION, tools=(WEATHER, TIME)), False),
    "tool round with results": ({}, _prompt(_QUESTION + _ROUND, tools=(WEATHER, TIME)), False),
    "tool choice required": (
        {},
        _prompt(_QUESTION, tools=(WEATHER, TIME), extras={"tool_choice": "required"}),
        False,
    ),
    "tool choice named, one call at a time": (
        {"tool_choice": "weather.current", "parallel_tool_calls": False},
        _prompt(_QUESTION, tools=(WEATHER, TIME)),
        False,
    ),
    "tool choice none": (
        {},
        _prompt(_QUESTION + _ROUND, tools=(WEATHER, TIME), extras={"tool_choice": "none"}),
        False,
    ),
    "options and extras": (
        {},
        _prompt(
            _QUESTION,
            model="gpt-5-mini",
            temperature=0.2,
            max_tokens=300,
            extras={"reasoning": {"effort": "low"}, "top_p": 0.9},
        ),
        False,
    ),
    "strict tools": ({"strict_tools": True}, _prompt(_QUESTION, tools=(WEATHER,)), False),
    "stream": ({}, _prompt(_QUESTION + _ROUND, tools=(WEATHER, TIME)), True),
}
"""Each case of the golden file."""


def model(**kwargs: Any) -> OpenAIResponsesModel:
    """The adapter with a placeholder key (nothing is sent)."""
    return OpenAIResponsesModel("gpt-5", api_key="sk-test", **kwargs)


def bodies() -> dict[str, dict[str, Any]]:
    """The request body of each case, by name, then the native channel's two turns."""
    cases = {
        name: model(**kwargs).request_body(prompt, stream=stream)
        for name, (kwargs, prompt, stream) in CASES.items()
    }
    return cases | _responses_channels.native_bodies()
