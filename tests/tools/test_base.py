"""The tool contract's value types: ToolContext, ToolDefinition, ToolMetadata, call_sync."""

import asyncio
import threading
from typing import Any

import pytest

from toolrelay.exceptions import ConfigurationError
from toolrelay.tools import (
    Tool,
    ToolContext,
    ToolDefinition,
    ToolMetadata,
    ValidatedArguments,
    call_sync,
)


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


@pytest.mark.parametrize("seconds", [float("nan"), float("inf"), 0, -2.0, "5"])
def test_metadata_refuses_timeouts_that_are_not_finite_positive_seconds(seconds: Any) -> None:
    with pytest.raises(ConfigurationError, match="timeout must be"):
        ToolMetadata(timeout=seconds)


def test_validated_arguments_are_read_only_and_compare_by_values() -> None:
    first = ValidatedArguments(values={"x": 1}, text='{"x": 1}', native=object())
    second = ValidatedArguments(values={"x": 1}, text='{"x": 1}', native=object())
    assert first == second
    with pytest.raises(TypeError):
        first.values["x"] = 2  # type: ignore[index]
