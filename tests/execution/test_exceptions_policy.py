from __future__ import annotations

import pytest

from toolrelay.exceptions import ToolExecutionError
from toolrelay.execution import DefaultToolExceptionProcessor, ToolExceptionProcessor


class QuotaError(Exception):
    pass


def test_message_becomes_the_error_text() -> None:
    processor = DefaultToolExceptionProcessor()
    assert isinstance(processor, ToolExceptionProcessor)
    assert processor.process("get_weather", ValueError("city not found")) == "city not found"


@pytest.mark.parametrize("exc", [ValueError(), RuntimeError("   "), QuotaError("")])
def test_empty_message_names_tool_and_type(exc: Exception) -> None:
    text = DefaultToolExceptionProcessor().process("get_weather", exc)
    assert text == f"Exception occurred in tool: get_weather ({type(exc).__name__})"


def test_rethrow_types_are_raised_unwrapped_including_subclasses() -> None:
    processor = DefaultToolExceptionProcessor(rethrow=(OSError,))
    error = PermissionError("no")
    with pytest.raises(PermissionError) as info:
        processor.process("t", error)
    assert info.value is error
    assert processor.process("t", ValueError("fine")) == "fine"


def test_always_raise_wraps_with_cause() -> None:
    processor = DefaultToolExceptionProcessor(always_raise=True)
    error = ValueError("boom")
    with pytest.raises(ToolExecutionError) as info:
        processor.process("t", error)
    assert info.value.tool == "t"
    assert str(info.value) == "boom"
    assert info.value.__cause__ is error


def test_always_raise_keeps_rethrow_types_unwrapped() -> None:
    processor = DefaultToolExceptionProcessor(rethrow=(QuotaError,), always_raise=True)
    with pytest.raises(QuotaError):
        processor.process("t", QuotaError("over quota"))


def test_memory_error_is_always_raised() -> None:
    with pytest.raises(MemoryError):
        DefaultToolExceptionProcessor().process("t", MemoryError())


def test_repr_names_the_policy() -> None:
    processor = DefaultToolExceptionProcessor(rethrow=(QuotaError,))
    assert (
        repr(processor) == "DefaultToolExceptionProcessor(rethrow=(QuotaError), always_raise=False)"
    )
