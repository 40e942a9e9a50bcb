"""The OpenAI Agents SDK's tests/test_function_tool.py, in toolrelay's API.

The SDK's ``FunctionTool.on_invoke_tool`` validates, runs and turns failures into text in one
step; in toolrelay a ``FunctionTool`` validates and runs (raising on bad input), and the
``ToolCallingManager`` turns every failure into the response the model reads. Cases about the
SDK's namespaces, enablement flags, hosted tool search, copying tool objects, logging switches
and guardrail arguments have no counterpart and are not ported (see docs/tools.md).
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
import time
from collections.abc import Mapping
from typing import Any

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from toolrelay.exceptions import (
    ConfigurationError,
    InvalidJsonError,
    ToolArgumentError,
    ToolContextError,
)
from toolrelay.execution import ToolCallingManager, ToolCallStatus, ToolExecutionResult
from toolrelay.messages import ToolCall, UserMessage
from toolrelay.models._strict_schema import to_strict_schema
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import tool_call_response
from toolrelay.tools import (
    FunctionTool,
    Tool,
    ToolContext,
    ToolDefinition,
    ToolMetadata,
    as_tools,
    tool,
)


async def run_round(
    tools: list[Tool], *calls: tuple[str, str], manager: ToolCallingManager | None = None
) -> ToolExecutionResult:
    """One round of ``calls`` (name, arguments) over ``tools``, as a model would send them."""
    prompt = Prompt(messages=(UserMessage(text="go"),), options=ChatOptions(tools=tuple(tools)))
    response = tool_call_response(
        *(ToolCall(id=f"c{i}", name=name, arguments=args) for i, (name, args) in enumerate(calls))
    )
    return await (manager or ToolCallingManager()).execute_tool_calls(prompt, response)


def argless_function() -> str:
    return "ok"


async def test_argless_function() -> None:
    # ports test_argless_function
    made = FunctionTool.from_function(argless_function)
    assert made.name == "argless_function"
    assert await made.call("") == "ok"


def argless_with_context(context: ToolContext) -> str:
    return "ok"


async def test_argless_with_context() -> None:
    # ports test_argless_with_context: an argument the schema does not list is an error the
    # model is told about, not ignored (a documented difference).
    made = FunctionTool.from_function(argless_with_context)
    assert await made.call("", {"tenant_id": "t"}) == "ok"
    with pytest.raises(ToolArgumentError, match="a: Extra inputs are not permitted"):
        await made.call('{"a": 1}', {"tenant_id": "t"})
    with pytest.raises(ToolContextError):
        await made.call("")


def simple_function(a: int, b: int = 5) -> int:
    return a + b


async def test_simple_function() -> None:
    # ports test_simple_function
    made = FunctionTool.from_function(simple_function)
    assert await made.call('{"a": 1}') == "6"
    assert await made.call('{"a": 1, "b": 2}') == "3"
    with pytest.raises(ToolArgumentError, match="a: Field required"):
        await made.call("")


async def test_sync_function_runs_via_to_thread() -> None:
    # ports test_sync_function_runs_via_to_thread: a sync function runs off the loop's thread
    threads: list[int] = []

    def sync_func() -> str:
        threads.append(threading.get_ident())
        return "ok"

    assert await FunctionTool.from_function(sync_func).call("") == "ok"
    assert len(threads) == 1
    assert threads[0] != threading.get_ident()


async def test_sync_function_does_not_block_event_loop() -> None:
    # ports test_sync_function_does_not_block_event_loop
    def sync_func() -> str:
        time.sleep(0.2)
        return "ok"

    tool_task = asyncio.create_task(FunctionTool.from_function(sync_func).call(""))
    background = asyncio.create_task(asyncio.sleep(0.01))
    done, pending = await asyncio.wait({tool_task, background}, return_when="FIRST_COMPLETED")
    assert background in done
    assert tool_task in pending
    assert await tool_task == "ok"


class Foo(BaseModel):
    a: int
    b: int = 5


class Bar(TypedDict):
    x: str
    y: int


def complex_args_function(foo: Foo, bar: Bar, baz: str = "hello") -> str:
    return f"{foo.a + foo.b} {bar['x']}{bar['y']} {baz}"


async def test_complex_args_function() -> None:
    # ports test_complex_args_function
    made = FunctionTool.from_function(complex_args_function)
    bar = {"x": "hello", "y": 10}
    assert await made.call(json.dumps({"foo": {"a": 1}, "bar": bar})) == "6 hello10 hello"
    assert await made.call(json.dumps({"foo": {"a": 1, "b": 2}, "bar": bar})) == "3 hello10 hello"
    assert (
        await made.call(json.dumps({"foo": {"a": 1, "b": 2}, "bar": bar, "baz": "world"}))
        == "3 hello10 world"
    )
    with pytest.raises(ToolArgumentError, match="bar: Field required"):
        await made.call('{"foo": {"a": 1}}')


def test_function_config_overrides() -> None:
    # ports test_function_config_overrides
    assert FunctionTool.from_function(simple_function, name="custom_name").name == "custom_name"
    described = FunctionTool.from_function(simple_function, description="custom description")
    assert described.definition.description == "custom description"
    both = FunctionTool.from_function(
        simple_function, name="custom_name", description="custom description"
    )
    assert (both.name, both.definition.description) == ("custom_name", "custom description")


def test_func_schema_is_strict() -> None:
    # ports test_func_schema_is_strict: unknown arguments are refused at the top level
    for fn in (simple_function, complex_args_function):
        assert (
            FunctionTool.from_function(fn).definition.input_schema["additionalProperties"] is False
        )


def test_manual_function_tool_normalizes_typeless_object_schemas() -> None:
    # ports test_manual_function_tool_normalizes_typeless_object_schemas (strict form); a
    # property its object does not require becomes nullable rather than silently required.
    schema = {
        "properties": {
            "config": {"properties": {"key": {"type": "string"}}},
            "optional": {"type": ["object", "null"], "properties": {"value": {"type": "integer"}}},
        },
        "required": ["config", "optional"],
    }
    assert to_strict_schema(schema) == {
        "type": "object",
        "properties": {
            "config": {
                "type": "object",
                "properties": {"key": {"type": ["string", "null"]}},
                "required": ["key"],
                "additionalProperties": False,
            },
            "optional": {
                "type": ["object", "null"],
                "properties": {"value": {"type": ["integer", "null"]}},
                "required": ["value"],
                "additionalProperties": False,
            },
        },
        "required": ["config", "optional"],
        "additionalProperties": False,
    }


def test_manual_function_tool_rejects_root_union() -> None:
    # ports test_manual_function_tool_rejects_root_union (strict form)
    schema = {"anyOf": [{"properties": {"value": {"type": "string"}}}, {"type": "null"}]}
    with pytest.raises(ConfigurationError, match="root of a strict JSON schema"):
        to_strict_schema(schema)


def test_manual_function_tool_rejects_nested_typeless_open_map() -> None:
    # ports test_manual_function_tool_rejects_nested_typeless_open_map (strict form)
    schema = {
        "type": "object",
        "properties": {"metadata": {"additionalProperties": {"type": "string"}}},
    }
    with pytest.raises(ConfigurationError, match=r"free-form map at properties\.metadata"):
        to_strict_schema(schema)


class FunctionArgs(BaseModel):
    data: str


class ManualTool:
    """A tool written by hand: its own definition, validation and call."""

    def __init__(self, *, forbid_extra: bool) -> None:
        schema = FunctionArgs.model_json_schema()
        if forbid_extra:
            schema = {**schema, "additionalProperties": False}
        self.definition = ToolDefinition(
            name="test", description="Processes extracted user data", input_schema=schema
        )
        self.metadata = ToolMetadata()
        self.forbid_extra = forbid_extra

    async def call(self, arguments_json: str, context: Mapping[str, Any] | None = None) -> str:
        raw = json.loads(arguments_json)
        if self.forbid_extra and set(raw) - {"data"}:
            raise ValueError(f"unexpected arguments {sorted(set(raw) - {'data'})}")
        return f"{FunctionArgs.model_validate(raw).data}_done"


async def test_manual_function_tool_creation_works() -> None:
    # ports test_manual_function_tool_creation_works
    strict, lenient = ManualTool(forbid_extra=True), ManualTool(forbid_extra=False)
    assert isinstance(strict, Tool)
    for key, value in FunctionArgs.model_json_schema().items():
        assert strict.definition.input_schema[key] == value
    result = await run_round([strict], ("test", '{"data": "hello"}'))
    assert result.responses[0].data == "hello_done"
    assert "additionalProperties" not in lenient.definition.input_schema
    result = await run_round([lenient], ("test", '{"data": "hello", "bar": "baz"}'))
    assert result.responses[0].data == "hello_done"
    # The schema forbids "bar": the round refuses the call before the tool sees it.
    result = await run_round([strict], ("test", '{"data": "hello", "bar": "baz"}'))
    assert result.outcomes[0].status is ToolCallStatus.INVALID_ARGUMENTS


def failing(a: int, b: int = 5) -> int:
    raise ValueError("test")


async def test_function_tool_default_error_works() -> None:
    # ports test_function_tool_default_error_works: blank arguments mean {} in toolrelay, so
    # "" and "{}" both miss 'a'; the tool's own exception becomes its message.
    tools = as_tools(failing)
    result = await run_round(
        tools,
        ("failing", ""),
        ("failing", "{}"),
        ("failing", '{"a": 1}'),
        ("failing", '{"a": 1, "b": 2}'),
    )
    statuses = [o.status for o in result.outcomes]
    assert statuses == [
        ToolCallStatus.INVALID_ARGUMENTS,
        ToolCallStatus.INVALID_ARGUMENTS,
        ToolCallStatus.ERROR,
        ToolCallStatus.ERROR,
    ]
    assert "- a: Field required" in result.responses[0].data
    assert [r.data for r in result.responses[2:]] == ["test", "test"]


class ErrorNames:
    """An exception processor: the text the model reads is the exception's type."""

    def process(self, tool_name: str, exc: Exception) -> str:
        return f"error_{type(exc).__name__}"


async def failing_async(a: int, b: int = 5) -> int:
    raise ValueError("test")


@pytest.mark.parametrize("fn", [failing, failing_async], ids=["sync", "async"])
async def test_custom_error_function_works(fn: Any) -> None:
    # ports test_sync_custom_error_function_works and test_async_custom_error_function_works:
    # the processor sees the tool's exceptions; invalid arguments are answered before the
    # tool runs, with the problems listed (a documented difference).
    manager = ToolCallingManager(exception_processor=ErrorNames())
    name = fn.__name__
    result = await run_round(
        as_tools(fn), (name, ""), (name, '{"a": 1}'), (name, '{"a": 1, "b": 2}'), manager=manager
    )
    assert result.outcomes[0].status is ToolCallStatus.INVALID_ARGUMENTS
    assert [r.data for r in result.responses[1:]] == ["error_ValueError", "error_ValueError"]


async def test_manual_function_tool_uses_default_failure_error_function() -> None:
    # ports test_manual_function_tool_uses_default_failure_error_function
    class Broken:
        definition = ToolDefinition(name="broken", description="Always fails.")
        metadata = ToolMetadata()

        async def call(self, arguments_json: str, context: Mapping[str, Any] | None = None) -> str:
            raise RuntimeError("manual failure")

    result = await run_round([Broken()], ("broken", "{}"))
    assert result.outcomes[0].status is ToolCallStatus.ERROR
    assert result.responses[0].data == "manual failure"


async def test_failure_error_function_normalizes_cancelled_error_to_exception() -> None:
    # ports test_failure_error_function_normalizes_cancelled_error_to_exception: a tool's own
    # CancelledError (the round is not being cancelled) is an error of that call.
    @tool
    async def cancelled() -> str:
        raise asyncio.CancelledError

    result = await run_round(as_tools(cancelled), ("cancelled", "{}"))
    assert result.outcomes[0].status is ToolCallStatus.ERROR
    assert "CancelledError" in result.responses[0].data


def echo(value: str) -> str:
    return value


@pytest.mark.parametrize("name", ["original_tool", "copied_tool"])
async def test_copied_function_tool_invalid_input_uses_current_name(name: str) -> None:
    # ports test_copied_function_tool_invalid_input_uses_current_name: the error names the
    # tool by the name it was given
    made = FunctionTool.from_function(echo, name=name)
    with pytest.raises(ToolArgumentError, match=f"invalid arguments for tool '{name}'"):
        await made.call("{}")


def test_function_tool_does_not_mutate_params_json_schema() -> None:
    # ports test_function_tool_does_not_mutate_params_json_schema
    schema = {"type": "object", "properties": {"x": {"type": "string"}}}
    snapshot = copy.deepcopy(schema)
    strict = to_strict_schema(schema)
    assert schema == snapshot
    assert strict is not schema
    assert strict["additionalProperties"] is False
    assert strict["required"] == ["x"]
    first, second = FunctionTool.from_function(echo), FunctionTool.from_function(echo)
    assert first.definition.input_schema is not second.definition.input_schema


def _nested_object_schema(depth: int) -> dict[str, Any]:
    root: dict[str, Any] = {"type": "object", "properties": {}}
    current = root
    for _ in range(depth):
        child: dict[str, Any] = {"type": "object", "properties": {}}
        current["properties"]["child"] = child
        current = child
    return root


def test_function_tool_rejects_deep_schema_before_copying() -> None:
    # ports test_function_tool_rejects_deep_schema_before_copying
    with pytest.raises(ConfigurationError, match="nested too deeply"):
        to_strict_schema(_nested_object_schema(1_000))


def test_function_tool_rejects_deeply_chained_refs_before_conversion() -> None:
    # ports test_function_tool_rejects_deeply_chained_refs_before_conversion: the strict form
    # rewrites each definition where it stands and never follows a $ref, so a long chain is
    # converted without recursion (a documented difference).
    definitions: dict[str, Any] = {f"L{i}": {"$ref": f"#/$defs/L{i + 1}"} for i in range(1_000)}
    definitions["L1000"] = {"type": "string"}
    schema = {
        "$defs": definitions,
        "type": "object",
        "properties": {"value": {"$ref": "#/$defs/L0", "description": "value"}},
        "required": ["value"],
    }
    strict = to_strict_schema(schema)
    assert strict["$defs"]["L999"] == {"$ref": "#/$defs/L1000"}
    assert strict["properties"]["value"] == {"$ref": "#/$defs/L0", "description": "value"}


@pytest.mark.parametrize(
    ("input_json", "kind"),
    [("[]", "an array"), ('"value"', "a string"), ("123", "a number"), ("null", "null"),
     ("true", "a boolean")],
)  # fmt: skip
async def test_function_tool_rejects_non_object_json_input(input_json: str, kind: str) -> None:
    # ports test_function_tool_rejects_non_object_json_input
    made = FunctionTool.from_function(echo, name="echo_tool")
    with pytest.raises(InvalidJsonError) as caught:
        await made.call(input_json)
    assert caught.value.problems[0].message == f"Arguments must be a JSON object, not {kind}."


async def test_invoke_function_tool_timeout_returns_default_message() -> None:
    # ports test_invoke_function_tool_timeout_returns_default_message
    @tool(timeout=0.01)
    async def slow_tool() -> str:
        await asyncio.sleep(0.5)
        return "slow"

    result = await run_round(as_tools(slow_tool), ("slow_tool", "{}"))
    assert result.outcomes[0].status is ToolCallStatus.TIMEOUT
    assert "timed out" in result.responses[0].data
    assert "0.01" in result.responses[0].data


async def test_invoke_function_tool_does_not_rewrite_tool_raised_timeout_error() -> None:
    # ports test_invoke_function_tool_does_not_rewrite_tool_raised_timeout_error
    @tool(timeout=1.0)
    async def timeout_tool() -> str:
        raise TimeoutError("tool_internal_timeout")

    result = await run_round(as_tools(timeout_tool), ("timeout_tool", "{}"))
    assert result.outcomes[0].status is ToolCallStatus.ERROR
    assert result.responses[0].data == "tool_internal_timeout"


async def test_invoke_function_tool_does_not_rewrite_manual_tool_raised_timeout_error() -> None:
    # ports test_invoke_function_tool_does_not_rewrite_manual_tool_raised_timeout_error
    class ManualTimeout:
        definition = ToolDefinition(name="manual_timeout_tool", description="manual timeout")
        metadata = ToolMetadata(timeout=1.0)

        async def call(self, arguments_json: str, context: Mapping[str, Any] | None = None) -> str:
            raise TimeoutError("manual_tool_internal_timeout")

    result = await run_round([ManualTimeout()], ("manual_timeout_tool", "{}"))
    assert result.outcomes[0].status is ToolCallStatus.ERROR
    assert result.responses[0].data == "manual_tool_internal_timeout"


@pytest.mark.parametrize("seconds", [0.0, "1", float("inf"), float("nan")])
def test_function_tool_timeout_seconds_must_be_positive_number(seconds: Any) -> None:
    # ports test_function_tool_timeout_seconds_must_be_positive_number
    with pytest.raises(ConfigurationError, match="timeout must be"):
        ToolMetadata(timeout=seconds)
    with pytest.raises(ConfigurationError, match="timeout must be"):
        tool(timeout=seconds)


async def test_function_tool_timeout_not_supported_for_sync_handlers() -> None:
    # ports test_function_tool_timeout_not_supported_for_sync_handlers: sync tools take a
    # timeout in toolrelay (the round stops waiting; a documented difference).
    @tool(timeout=0.05)
    def sync_tool() -> str:
        time.sleep(0.3)
        return "late"

    result = await run_round(as_tools(sync_tool), ("sync_tool", "{}"))
    assert result.outcomes[0].status is ToolCallStatus.TIMEOUT
