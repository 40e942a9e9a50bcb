"""pydantic-ai's tool schema tests (tests/test_tools.py), in toolrelay's API.

pydantic-ai's cases run an ``Agent`` and read the tool definition the model was given; here the
definition is read from the ``FunctionTool``, and calls go through the ``ToolCallingManager``
as a model's would. Cases about agents' retries, deferred calls, approvals, argument
validators, ``prepare`` hooks, return schemas and capabilities concern machinery toolrelay
builds differently (or not at all) and are not ported; docs/tools.md lists the differences.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import json
import logging
import warnings
from dataclasses import dataclass
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field, WithJsonSchema
from typing_extensions import TypedDict

from toolrelay.client import ChatClient
from toolrelay.exceptions import (
    ConfigurationError,
    DuplicateToolError,
    ToolArgumentError,
    ToolDefinitionError,
)
from toolrelay.execution import ToolCallingManager, ToolCallStatus, ToolExecutionResult
from toolrelay.lint._rules.parameters import undocumented_parameters
from toolrelay.messages import ToolCall, UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import ScriptedModel, tool_call_response
from toolrelay.tools import (
    FunctionTool,
    Tool,
    ToolCatalog,
    ToolContext,
    ToolDefinition,
    ToolMetadata,
    as_tools,
    tool,
)
from toolrelay.tools._arguments import decode_arguments

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def definition_of(fn: Any, **options: Any) -> dict[str, Any]:
    """The name, description and schema the model is shown, as pydantic-ai's tests read them."""
    made = FunctionTool.from_function(fn, **options)
    return {
        "name": made.definition.name,
        "description": made.definition.description,
        "parameters_json_schema": dict(made.definition.input_schema),
    }


def object_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "$schema": DIALECT,
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


async def run_round(tools: list[Tool], *calls: tuple[str, str]) -> ToolExecutionResult:
    options = ChatOptions(tools=tuple(tools), tool_context={"deps": 1})
    prompt = Prompt(messages=(UserMessage(text="go"),), options=options)
    response = tool_call_response(
        *(ToolCall(id=f"c{i}", name=name, arguments=args) for i, (name, args) in enumerate(calls))
    )
    return await ToolCallingManager().execute_tool_calls(prompt, response)


def test_the_context_parameter_is_found_by_type_in_any_position() -> None:
    # ports test_tool_no_ctx, test_tool_plain_with_ctx, test_tool_ctx_second,
    # test_init_ctx_tool_invalid, test_init_plain_tool_invalid, test_init_tool_ctx: toolrelay
    # has one kind of tool; a ToolContext parameter, wherever it stands, receives the context
    # and is never in the schema (a documented difference).
    def first(context: ToolContext, x: int) -> str:
        return f"{context.tenant_id} {x}"

    def second(x: int, context: ToolContext) -> str:
        return f"{context.tenant_id} {x}"

    for fn in (first, second):
        made = FunctionTool.from_function(fn)
        assert made.definition.input_schema["properties"] == {"x": {"type": "integer"}}
        assert made.call_sync('{"x": 5}', {"tenant_id": "t"}) == "t 5"


def test_two_context_parameters_are_refused() -> None:
    # ports test_tool_ctx_second (the declaration error half)
    def both(a: ToolContext, b: ToolContext) -> None: ...

    with pytest.raises(ToolDefinitionError, match="only one ToolContext parameter is allowed"):
        FunctionTool.from_function(both)


def test_builtin_tool_registration() -> None:
    # ports test_builtin_tool_registration
    for builtin in (min, max):
        with pytest.raises(ToolDefinitionError, match="no signature found for builtin"):
            FunctionTool.from_function(builtin)


async def google_style_docstring(foo: int, bar: str) -> str:
    """Do foobar stuff, a lot.

    Args:
        foo: The foo thing.
        bar: The bar thing.
    """
    return f"{foo} {bar}"


FOO_BAR = {
    "foo": {"description": "The foo thing.", "type": "integer"},
    "bar": {"description": "The bar thing.", "type": "string"},
}


def test_docstring_google() -> None:
    # ports test_docstring_google[google] and [auto] (the style is always detected)
    assert definition_of(google_style_docstring) == {
        "name": "google_style_docstring",
        "description": "Do foobar stuff, a lot.",
        "parameters_json_schema": object_schema(FOO_BAR, ["foo", "bar"]),
    }


def sphinx_style_docstring(foo: int, /) -> str:
    """Sphinx style docstring.

    :param foo: The foo thing.
    """
    return str(foo)


def test_docstring_sphinx() -> None:
    # ports test_docstring_sphinx[sphinx] and [auto]
    assert definition_of(sphinx_style_docstring) == {
        "name": "sphinx_style_docstring",
        "description": "Sphinx style docstring.",
        "parameters_json_schema": object_schema({"foo": FOO_BAR["foo"]}, ["foo"]),
    }
    # A positional-only parameter is still passed positionally.
    assert FunctionTool.from_function(sphinx_style_docstring).call_sync('{"foo": 3}') == "3"


def numpy_style_docstring(*, foo: int, bar: str) -> str:
    """Numpy style docstring.

    Parameters
    ----------
    foo : int
        The foo thing.
    bar : str
        The bar thing.
    """
    return f"{foo} {bar}"


def test_docstring_numpy() -> None:
    # ports test_docstring_numpy[numpy] and [auto]
    assert definition_of(numpy_style_docstring) == {
        "name": "numpy_style_docstring",
        "description": "Numpy style docstring.",
        "parameters_json_schema": object_schema(FOO_BAR, ["foo", "bar"]),
    }


X_INPUT = {"x": {"description": "The input value.", "type": "integer"}}


def test_google_style_with_returns() -> None:
    # ports test_google_style_with_returns: the Returns section ends the description as a
    # sentence, not in XML tags (a documented difference)
    def my_tool(x: int) -> str:
        """A function that does something.

        Args:
            x: The input value.

        Returns:
            str: The result as a string.
        """
        return str(x)

    assert my_tool(1) == "1"
    assert definition_of(my_tool) == {
        "name": "my_tool",
        "description": "A function that does something.\n\nReturns: The result as a string.",
        "parameters_json_schema": object_schema(X_INPUT, ["x"]),
    }


def test_sphinx_style_with_returns() -> None:
    # ports test_sphinx_style_with_returns
    def my_tool(x: int) -> str:
        """A sphinx function with returns.

        :param x: The input value.
        :rtype: str
        :return: The result as a string with type.
        """
        return str(x)

    assert definition_of(my_tool)["description"] == (
        "A sphinx function with returns.\n\nReturns: The result as a string with type."
    )
    assert definition_of(my_tool)["parameters_json_schema"] == object_schema(X_INPUT, ["x"])


def test_numpy_style_with_returns() -> None:
    # ports test_numpy_style_with_returns
    def my_tool(x: int) -> str:
        """A numpy function with returns.

        Parameters
        ----------
        x : int
            The input value.

        Returns
        -------
        str
            The result as a string with type.
        """
        return str(x)

    assert definition_of(my_tool)["description"] == (
        "A numpy function with returns.\n\nReturns: The result as a string with type."
    )
    assert definition_of(my_tool)["parameters_json_schema"] == object_schema(X_INPUT, ["x"])


def only_returns_type() -> str:
    """

    Returns:
        str: The result as a string.
    """
    return "foo"


def test_only_returns_type() -> None:
    # ports test_only_returns_type
    assert definition_of(only_returns_type) == {
        "name": "only_returns_type",
        "description": "Returns: The result as a string.",
        "parameters_json_schema": object_schema({}, []),
    }


def test_docstring_unknown() -> None:
    # ports test_docstring_unknown: **kwargs are refused (a documented difference)
    def unknown_docstring(**kwargs: int) -> str:
        """Unknown style docstring."""
        return str(kwargs)

    with pytest.raises(ToolDefinitionError, match=r"\*\*kwargs is not supported"):
        FunctionTool.from_function(unknown_docstring)


async def google_style_docstring_no_body(
    foo: int, bar: Annotated[str, Field(description="from fields")]
) -> str:
    """
    Args:
        foo: The foo thing.
        bar: The bar thing.
    """
    return f"{foo} {bar}"


def test_docstring_google_no_body() -> None:
    # ports test_docstring_google_no_body[google] and [auto]: without a summary the
    # description is the name in words (pydantic-ai sends an empty one)
    assert definition_of(google_style_docstring_no_body) == {
        "name": "google_style_docstring_no_body",
        "description": "google style docstring no body",
        "parameters_json_schema": object_schema(
            {"foo": FOO_BAR["foo"], "bar": {"description": "from fields", "type": "string"}},
            ["foo", "bar"],
        ),
    }


class Foo(BaseModel):
    x: int
    y: str


def test_takes_just_model() -> None:
    # ports test_takes_just_model: a single model parameter is the whole schema with
    # from_model_function; from_function keeps it a parameter (a documented difference)
    def takes_just_model(model: Foo) -> str:
        return f"{model.x} {model.y}"

    whole = FunctionTool.from_model_function(takes_just_model)
    assert whole.definition.input_schema == object_schema(
        {"x": {"type": "integer"}, "y": {"type": "string"}}, ["x", "y"]
    )
    assert whole.call_sync('{"x": 0, "y": "a"}') == "0 a"
    nested = FunctionTool.from_function(takes_just_model)
    assert nested.definition.input_schema["properties"] == {"model": {"$ref": "#/$defs/Foo"}}
    assert nested.call_sync('{"model": {"x": 0, "y": "a"}}') == "0 a"


def test_takes_model_and_int() -> None:
    # ports test_takes_model_and_int
    def takes_just_model(model: Foo, z: int) -> str:
        return f"{model.x} {model.y} {z}"

    assert definition_of(takes_just_model)["parameters_json_schema"] == {
        "$schema": DIALECT,
        "type": "object",
        "$defs": {
            "Foo": {
                "properties": {"x": {"type": "integer"}, "y": {"type": "string"}},
                "required": ["x", "y"],
                "type": "object",
            }
        },
        "properties": {"model": {"$ref": "#/$defs/Foo"}, "z": {"type": "integer"}},
        "required": ["model", "z"],
        "additionalProperties": False,
    }
    made = FunctionTool.from_function(takes_just_model)
    assert made.call_sync('{"model": {"x": 0, "y": "a"}, "z": 0}') == "0 a 0"


def test_init_tool_plain() -> None:
    # ports test_init_tool_plain
    calls: list[int] = []

    def plain_tool(x: int) -> int:
        calls.append(x)
        return x + 1

    made = FunctionTool.from_function(plain_tool)
    assert made.call_sync('{"x": 0}') == "1"
    assert calls == [0]


def test_repeat_tool_and_name_conflicts() -> None:
    # ports test_repeat_tool_by_rename, test_repeat_tool, test_tool_return_conflict and
    # test_tool_name_conflict_hint: two tools under one name are refused, naming both sources
    def bar(x: int, y: str) -> str:
        return f"{x} {y}"

    def foo(x: int, y: str) -> str:
        return f"{x} {y}"

    with pytest.raises(DuplicateToolError) as caught:
        ToolCatalog([FunctionTool.from_function(bar), FunctionTool.from_function(foo, name="bar")])
    assert caught.value.name == "bar"
    assert caught.value.first_source.endswith(".bar")
    assert caught.value.second_source.endswith(".foo")
    client = ChatClient.builder(ScriptedModel(["x"])).default_tools(bar).build()
    with pytest.raises(DuplicateToolError):
        client.prompt("go").tools(FunctionTool.from_function(foo, name="bar")).call()


@pytest.mark.parametrize(
    ("args", "expected"),
    [("", {}), ('{"x": 42, "y": "value"}', {"x": 42, "y": "value"}), ('{"a": 1, "b": "c"}',
     {"a": 1, "b": "c"})],
)  # fmt: skip
def test_tool_call_part_args_as_dict(args: str, expected: dict[str, Any]) -> None:
    # ports test_tool_call_part_args_as_dict
    assert decode_arguments("foo", args) == expected


def test_return_pydantic_model() -> None:
    # ports test_return_pydantic_model
    @tool
    def return_pydantic_model(x: int) -> Foo:
        return Foo(x=x, y="a")

    made = FunctionTool.from_function(return_pydantic_model)
    assert json.loads(made.call_sync('{"x": 0}')) == {"x": 0, "y": "a"}


def test_return_bytes() -> None:
    # ports test_return_bytes and test_return_bytes_invalid: bytes are sent as base64 with a
    # MIME type, whatever they hold (a documented difference: no guessing at text)
    def returning(data: bytes) -> FunctionTool:
        def returns_bytes() -> bytes:
            return data

        return FunctionTool.from_function(returns_bytes)

    for data in ("🐈 Hello".encode(), b"\x00 \x81"):
        text = json.loads(returning(data).call_sync("{}"))
        assert text == {
            "mime_type": "application/octet-stream",
            "data": base64.b64encode(data).decode("ascii"),
        }


def test_return_unknown() -> None:
    # ports test_return_unknown: a value JSON cannot represent is sent as its str()
    class Foobar:
        def __str__(self) -> str:
            return "a Foobar"

    def returns_unknown() -> Foobar:
        return Foobar()

    assert FunctionTool.from_function(returns_unknown).call_sync("") == "a Foobar"


def test_plain_tool_name() -> None:
    # ports test_plain_tool_name and test_tool_name
    def my_tool(arg: str) -> str:
        return arg

    def my_context_tool(context: ToolContext, arg: str) -> str:
        return arg

    assert definition_of(my_tool, name="foo_tool")["name"] == "foo_tool"
    assert tool(name="foo_tool")(my_context_tool) is my_context_tool
    assert FunctionTool.from_function(my_context_tool).name == "foo_tool"


def test_future_run_context() -> None:
    # ports test_future_run_context: this module uses `from __future__ import annotations`,
    # so every hint here is a string until resolved; the context is still recognised.
    def ctx_tool(context: ToolContext, x: int) -> int:
        return x + context["deps"]

    assert isinstance(ctx_tool.__annotations__["context"], str)
    made = FunctionTool.from_function(ctx_tool)
    assert list(made.definition.input_schema["properties"]) == ["x"]
    assert made.call_sync('{"x": 0}', {"deps": 5}) == "5"


def test_suppress_griffe_logging(caplog: pytest.LogCaptureFixture) -> None:
    # ports test_suppress_griffe_logging: a docstring that speaks of returns without a
    # Returns section is plain text, and reading it logs and warns nothing
    async def tool_without_return_annotation_in_docstring() -> str:
        """A tool that documents what it returns but doesn't have a return annotation."""
        return ""

    with caplog.at_level(logging.DEBUG), warnings.catch_warnings():
        warnings.simplefilter("error")
        described = definition_of(tool_without_return_annotation_in_docstring)
    assert described["description"] == (
        "A tool that documents what it returns but doesn't have a return annotation."
    )
    assert caplog.messages == []


def test_enforce_parameter_descriptions() -> None:
    # ports test_enforce_parameter_descriptions and _noraise: toolrelay's check is the
    # catalog lint rule parameter-undocumented, not an option of the tool
    async def missing_parameter_descriptions_docstring(foo: int, bar: str) -> str:
        """Describes function ops, but missing parameter descriptions."""
        return f"{foo} {bar}"

    async def complete_parameter_descriptions_docstring(context: ToolContext, foo: int) -> str:
        """Describes function ops, missing ctx description, describing a non-existent one.

        :param foo: The foo thing.
        :param bar: The bar thing.
        """
        return f"{foo}"

    missing = FunctionTool.from_function(missing_parameter_descriptions_docstring)
    assert undocumented_parameters(missing.definition.input_schema) == (["foo", "bar"], 2)
    complete = FunctionTool.from_function(complete_parameter_descriptions_docstring)
    assert undocumented_parameters(complete.definition.input_schema) == ([], 1)


def test_json_schema_required_parameters() -> None:
    # ports test_json_schema_required_parameters
    def my_tool(context: ToolContext, a: int, b: int = 1) -> int:
        raise NotImplementedError

    def my_tool_plain(*, a: int = 1, b: int) -> int:
        raise NotImplementedError

    assert definition_of(my_tool)["parameters_json_schema"] == object_schema(
        {"a": {"type": "integer"}, "b": {"default": 1, "type": "integer"}}, ["a"]
    )
    assert definition_of(my_tool_plain)["parameters_json_schema"] == object_schema(
        {"a": {"default": 1, "type": "integer"}, "b": {"type": "integer"}}, ["b"]
    )


async def test_call_tool_without_unrequired_parameters() -> None:
    # ports test_call_tool_without_unrequired_parameters
    def no_args_tool() -> None:
        return None

    def my_tool(context: ToolContext, a: int, b: int = 2) -> int:
        return a + b

    def my_tool_plain(*, a: int = 3, b: int) -> int:
        return a * b

    result = await run_round(
        as_tools(no_args_tool, my_tool, my_tool_plain),
        ("my_tool", '{"a": 13}'),
        ("my_tool", '{"a": 13, "b": 4}'),
        ("my_tool_plain", '{"b": 17}'),
        ("my_tool_plain", '{"a": 4, "b": 17}'),
        ("no_args_tool", ""),
    )
    assert [r.data for r in result.responses] == ["15", "17", "51", "68", "Done"]


def test_schema_generator() -> None:
    # ports test_schema_generator: WithJsonSchema applies; a schema generator of one's own
    # is not an option (the schema is pydantic's, tidied), and **kwargs are refused
    def my_tool(x: Annotated[str | None, WithJsonSchema({"type": "string"})] = None) -> Any:
        return x

    assert definition_of(my_tool, name="my_tool_1")["parameters_json_schema"] == object_schema(
        {"x": {"default": None, "type": "string"}}, []
    )


class Data(TypedDict):
    a: int
    """The first parameter"""
    b: int
    """The second parameter"""


def test_tool_parameters_with_attribute_docstrings() -> None:
    # ports test_tool_parameters_with_attribute_docstrings
    def get_score(data: Data) -> int:
        return data["a"] + data["b"]

    described = {
        "a": {"description": "The first parameter", "type": "integer"},
        "b": {"description": "The second parameter", "type": "integer"},
    }
    whole = FunctionTool.from_model_function(get_score)
    assert whole.definition.input_schema == object_schema(described, ["a", "b"])
    assert whole.call_sync('{"a": 1, "b": 2}') == "3"
    nested = FunctionTool.from_function(get_score).definition.input_schema
    assert nested["$defs"]["Data"]["properties"] == described


class HandWritten:
    """A tool with a JSON schema of its own and a function taking the arguments as keywords."""

    def __init__(self) -> None:
        self.definition = ToolDefinition(
            name="foobar",
            description="does foobar stuff",
            input_schema={
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "one": {"description": "first argument", "type": "string"},
                    "two": {"description": "second argument", "type": "object"},
                },
                "required": ["one", "two"],
            },
        )
        self.metadata = ToolMetadata()

    async def call(self, arguments_json: str, context: ToolContext | None = None) -> str:
        kwargs = json.loads(arguments_json)
        assert set(kwargs) == {"one", "two"}
        return "I like being called like this"


async def test_function_tool_consistent_with_schema() -> None:
    # ports test_function_tool_consistent_with_schema and
    # test_async_function_tool_consistent_with_schema (Tool.from_schema is a hand-written Tool)
    result = await run_round([HandWritten()], ("foobar", '{"one": "a", "two": {}}'))
    assert result.responses[0].data == "I like being called like this"


def test_positional_or_keyword_with_var_args() -> None:
    # ports test_positional_or_keyword_with_var_args: *values is refused
    def f(r0: int, *values: int) -> dict[str, Any]:
        return {"r0": r0, "values": list(values)}

    with pytest.raises(ToolDefinitionError, match=r"\*values is not supported"):
        FunctionTool.from_function(f)


async def test_tool_failed_parallel() -> None:
    # ports test_tool_failed and test_tool_failed_parallel: a failing tool's message is its
    # response, and the round's other calls keep their results
    def ok_tool() -> str:
        return "ok"

    def failing_tool() -> str:
        raise RuntimeError("Disk full")

    result = await run_round(as_tools(ok_tool, failing_tool), ("ok_tool", ""), ("failing_tool", ""))
    assert [(o.status, o.response.data) for o in result.outcomes] == [
        (ToolCallStatus.OK, "ok"),
        (ToolCallStatus.ERROR, "Disk full"),
    ]


def test_tool_metadata() -> None:
    # ports test_tool_metadata
    def simple_tool(context: ToolContext, x: int) -> int:
        return x * 2

    metadata = ToolMetadata(extra={"category": "test", "version": "1.0"})
    made = FunctionTool.from_function(simple_tool, metadata=metadata)
    assert made.metadata.extra == {"category": "test", "version": "1.0"}


def test_tool_timeout_definition() -> None:
    # ports test_tool_timeout_definition and test_tool_timeout_default_none
    @tool(timeout=30.0)
    def tool_with_timeout() -> str:
        return "done"

    def tool_without_timeout() -> str:
        return "done"

    assert FunctionTool.from_function(tool_with_timeout).metadata.timeout == 30.0
    assert FunctionTool.from_function(tool_without_timeout).metadata.timeout is None


async def test_tool_timeout_message_format() -> None:
    # ports test_tool_timeout_message_format, test_tool_with_timeout_completes_successfully,
    # test_agent_level_tool_timeout and test_per_tool_timeout_overrides_agent_timeout
    @tool(timeout=0.05)
    async def slow() -> str:
        await asyncio.sleep(1)
        return "never"

    @tool(timeout=5.0)
    async def patient() -> str:
        await asyncio.sleep(0.1)
        return "done"

    async def unbounded() -> str:
        await asyncio.sleep(1)
        return "never"

    tools = as_tools(slow, patient, unbounded)
    prompt = Prompt(messages=(UserMessage(text="go"),), options=ChatOptions(tools=tuple(tools)))
    calls = tool_call_response(
        ToolCall(id="1", name="slow", arguments=""),
        ToolCall(id="2", name="patient", arguments=""),
        ToolCall(id="3", name="unbounded", arguments=""),
    )
    manager = ToolCallingManager(default_timeout=0.05)
    result = await manager.execute_tool_calls(prompt, calls)
    assert [o.status for o in result.outcomes] == [
        ToolCallStatus.TIMEOUT,
        ToolCallStatus.OK,  # its own 5 s wins over the manager's 0.05 s
        ToolCallStatus.TIMEOUT,
    ]
    assert result.responses[0].data == "Tool 'slow' timed out after 0.05 s and was cancelled."


@pytest.mark.parametrize("seconds", [0, -1])
def test_tool_rejects_non_positive_timeout(seconds: float) -> None:
    # ports test_tool_rejects_non_positive_timeout, test_tool_rejects_negative_timeout and
    # test_tool_accepts_none_timeout
    with pytest.raises(ConfigurationError, match="timeout must be a finite number of seconds"):
        tool(timeout=seconds)
    assert ToolMetadata(timeout=None).timeout is None


def test_tool_return_part_serializes_with_serialization_alias() -> None:
    # ports test_tool_return_part_serializes_with_serialization_alias
    class OutputModel(BaseModel):
        value: int = Field(serialization_alias="wireOut")

    def my_tool() -> OutputModel:
        return OutputModel(value=1)

    assert json.loads(FunctionTool.from_function(my_tool).call_sync("")) == {"wireOut": 1}


@dataclass
class Point:
    x: int
    """Metres east"""


def test_single_base_model_arg_wrapped_input_is_feedback() -> None:
    # ports test_single_base_model_arg_validator_accepts_wrapped_input and
    # test_single_base_model_arg_tool_call_accepts_wrapped_input_with_defaults: arguments
    # wrapped in the parameter's name are not unwrapped; the model is told what is wrong
    # (a documented difference)
    def my_tool(argument: Point) -> str:
        return str(argument.x)

    made = FunctionTool.from_model_function(my_tool)
    assert made.call_sync('{"x": 5}') == "5"
    with pytest.raises(ToolArgumentError) as caught:
        made.call_sync('{"argument": {"x": 5}}')
    assert [str(p) for p in caught.value.problems] == [
        "x: Field required",
        "argument: Extra inputs are not permitted",
    ]


# --- tests/test_function_schema.py: where the context parameter is found -------------------


def _ctx_first(context: ToolContext, x: int, y: str = "") -> str:
    return f"{context['k']} {x} {y}"


def _no_ctx(x: int, y: str = "", z: float = 0.0) -> str:
    return f"{x} {y} {z}"


class _CallableWithCtx:
    def __call__(self, context: ToolContext, x: int) -> str:
        return f"{context['k']} {x}"


class _CallableWithout:
    def __call__(self, x: int) -> str:
        return str(x)


class _Methods:
    def with_ctx(self, context: ToolContext, x: int) -> str:
        return f"{context['k']} {x}"

    def without_ctx(self, x: int) -> str:
        return str(x)

    @staticmethod
    def static_with_ctx(context: ToolContext, x: int) -> str:
        return f"{context['k']} {x}"

    @classmethod
    def class_with_ctx(cls, context: ToolContext, x: int) -> str:
        return f"{context['k']} {x}"


@pytest.mark.parametrize(
    ("fn", "takes_context"),
    [
        (_ctx_first, True),
        (_no_ctx, False),
        (functools.partial(_ctx_first, y="bound"), True),
        (functools.partial(_no_ctx, z=3.14), False),
        (_CallableWithCtx(), True),
        (_CallableWithout(), False),
        (_Methods().with_ctx, True),
        (_Methods().without_ctx, False),
        (_Methods.static_with_ctx, True),
        (_Methods.class_with_ctx, True),
    ],
)
def test_takes_ctx(fn: Any, takes_context: bool) -> None:
    # ports tests/test_function_schema.py: test_regular_function_with_ctx,
    # test_regular_function_without_ctx, test_regular_function_no_params,
    # test_regular_function_ctx_not_first, test_partial_function_with_ctx,
    # test_partial_function_without_ctx, test_callable_class_with_ctx,
    # test_callable_class_without_ctx, test_callable_class_ctx_not_first, test_method_with_ctx,
    # test_method_without_ctx, test_static_method_with_ctx, test_static_method_without_ctx,
    # test_class_method_with_ctx and test_class_method_without_ctx
    made = FunctionTool.from_function(fn, name="t")
    assert "x" in made.definition.input_schema["properties"]
    assert "context" not in made.definition.input_schema["properties"]
    expected = "v 1" if takes_context else "1"
    assert made.call_sync('{"x": 1}', {"k": "v"}).startswith(expected)


def test_partial_function_ctx_bound() -> None:
    # ports tests/test_function_schema.py::test_partial_function_ctx_bound: a context bound
    # by the partial is the partial's business; the tool then takes none
    made = FunctionTool.from_function(
        functools.partial(_ctx_first, context=ToolContext(k="bound")), name="t"
    )
    assert made.call_sync('{"x": 1}') == "bound 1 "


@pytest.mark.parametrize("fn", [lambda ctx, x: x, min])
def test_functions_without_annotations(fn: Any) -> None:
    # ports tests/test_function_schema.py: test_function_no_annotations, test_lambda_with_ctx
    # and test_builtin_function: parameters must be annotated (a documented difference from
    # guessing); a builtin has no readable signature
    with pytest.raises(ToolDefinitionError):
        FunctionTool.from_function(fn, name="t")


def test_function_wrong_annotation_type() -> None:
    # ports tests/test_function_schema.py::test_function_wrong_annotation_type
    def func_wrong_annotation(ctx: str, x: int) -> str:
        return f"{ctx} {x}"

    made = FunctionTool.from_function(func_wrong_annotation)
    assert list(made.definition.input_schema["properties"]) == ["ctx", "x"]
