"""The tool contract's value types: ToolContext, ToolDefinition, ToolMetadata, call_sync."""

import asyncio
import dataclasses
import threading

import pytest

from toolrelay.exceptions import ConfigurationError, ToolDefinitionError
from toolrelay.tools import Tool, ToolContext, ToolDefinition, ToolMetadata, ValidatedArguments
from toolrelay.tools._base import call_sync, check_seconds


class Recorder:
    def __init__(self) -> None:
        self.definition = ToolDefinition(name="rec", description="Records.")
        self.metadata = ToolMetadata()
        self.threads: list[int] = []

    async def call(self, arguments_json: str, context: ToolContext | None = None) -> str:
        self.threads.append(threading.get_ident())
        return f"{arguments_json}|{context.tenant_id if context else None}"


def test_context_is_a_read_only_mapping() -> None:
    context = ToolContext({"tenant_id": "t"}, user_id="u", extra=1)
    assert dict(context) == {"tenant_id": "t", "user_id": "u", "extra": 1}
    assert (context.tenant_id, context.user_id, context.session_id) == ("t", "u", None)
    assert len(context) == 3
    assert context == {"tenant_id": "t", "user_id": "u", "extra": 1}
    assert repr(context) == "ToolContext({'tenant_id': 't', 'user_id': 'u', 'extra': 1})"
    with pytest.raises(TypeError):
        context["x"] = 1  # type: ignore[index]


def test_definition_defaults_and_metadata_defaults() -> None:
    definition = ToolDefinition(name="n", description="d")
    assert definition.input_schema == {"type": "object", "properties": {}}
    assert ToolMetadata() == ToolMetadata(
        return_direct=False,
        timeout=None,
        read_only=False,
        destructive=False,
        requires_approval=False,
        extra={},
    )


def test_call_sync_outside_a_loop() -> None:
    recorder = Recorder()
    assert isinstance(recorder, Tool)
    assert call_sync(recorder, "{}", ToolContext(tenant_id="t")) == "{}|t"


async def test_call_sync_inside_a_running_loop_uses_another_thread() -> None:
    asyncio.get_running_loop()
    recorder = Recorder()
    assert call_sync(recorder, "{}") == "{}|None"
    assert recorder.threads[0] != threading.get_ident()


@pytest.mark.parametrize("seconds", [float("inf"), float("-inf"), float("nan"), 0, -1.5])
def test_metadata_refuses_a_timeout_that_cannot_fire(seconds: float) -> None:
    with pytest.raises(ConfigurationError, match="finite number of seconds above 0"):
        ToolMetadata(timeout=seconds)


@pytest.mark.parametrize("seconds", [True, "30"])
def test_metadata_refuses_a_timeout_that_is_not_a_number(seconds: object) -> None:
    with pytest.raises(ConfigurationError, match="must be a number of seconds"):
        ToolMetadata(timeout=seconds)  # type: ignore[arg-type]


def test_check_seconds_accepts_none_and_positive_seconds_and_names_the_option() -> None:
    assert ToolMetadata(timeout=0.01).timeout == 0.01
    assert ToolMetadata(timeout=None).timeout is None
    check_seconds("timeout", 30)
    with pytest.raises(ConfigurationError, match=r"^default_timeout must be"):
        check_seconds("default_timeout", float("nan"))


def test_a_definition_with_an_invalid_input_schema_is_refused() -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        ToolDefinition(name="get_weather", description="d", input_schema={"type": "string"})
    assert caught.value.tool == "get_weather"
    assert caught.value.problems[0].startswith("input schema at /type: the top level must be ")
    valid = ToolDefinition(name="n", description="d", input_schema={"type": "object"})
    with pytest.raises(ToolDefinitionError, match=r"at /required: \"required\" must be an array"):
        dataclasses.replace(valid, input_schema={"type": "object", "required": "city"})


def test_validated_arguments_are_read_only_and_compare_by_values() -> None:
    first = ValidatedArguments(values={"x": 1}, text='{"x": 1}', native=object())
    second = ValidatedArguments(values={"x": 1}, text='{"x": 1}', native=object())
    assert first == second
    with pytest.raises(TypeError):
        first.values["x"] = 2  # type: ignore[index]
