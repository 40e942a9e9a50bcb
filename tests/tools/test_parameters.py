"""Reading parameters: inputs, the context parameter, receivers and type hints."""

import functools
from typing import Annotated, Optional

import pytest
from pydantic import BaseModel, Field, RootModel

from toolrelay.exceptions import ToolDefinitionError
from toolrelay.tools import ToolContext
from toolrelay.tools._parameters import (
    is_model_type,
    is_receiver_parameter,
    read_parameters,
    resolve_type_hints,
    type_name,
)


def test_inputs_context_and_positional_only() -> None:
    def f(a: int, /, b: str, *, ctx: ToolContext, c: float = 1.0) -> None: ...

    params = read_parameters(f, tool_name="f")
    assert [p.name for p in params.inputs] == ["a", "b", "c"]
    assert params.context is not None
    assert params.context.name == "ctx"
    assert params.context_required is True
    assert params.positional_only == ("a",)
    assert params.problems == ()


@pytest.mark.parametrize(
    "annotation",
    [ToolContext | None, Optional[ToolContext], Annotated[ToolContext | None, "meta"]],  # noqa: UP045
)
def test_optional_context_forms(annotation: object) -> None:
    def f(query: str, context: ToolContext) -> None: ...

    f.__annotations__["context"] = annotation
    params = read_parameters(f, tool_name="f")
    assert params.context is not None
    assert params.context_required is False
    assert [p.name for p in params.inputs] == ["query"]


def test_context_with_default_is_not_required() -> None:
    default = ToolContext(tenant_id="t")

    def f(context: ToolContext = default) -> None: ...

    assert read_parameters(f, tool_name="f").context_required is False


def test_skip_receiver() -> None:
    def method(self, x: int) -> None: ...  # type: ignore[no-untyped-def]

    assert read_parameters(method, tool_name="m").problems == (
        "parameter 'self' has no type annotation; annotate it (for example 'self: str')",
    )
    params = read_parameters(method, tool_name="m", skip_receiver=True)
    assert [p.name for p in params.inputs] == ["x"]
    assert params.problems == ()


class Holder:
    def method(self) -> None: ...

    @classmethod
    def cls_method(cls) -> None: ...

    @staticmethod
    def static(x: int) -> None: ...


def test_is_receiver_parameter() -> None:
    def local(self: int) -> None: ...

    assert is_receiver_parameter(Holder.method)
    assert is_receiver_parameter(Holder.__dict__["cls_method"].__func__)
    assert not is_receiver_parameter(Holder.static)
    assert not is_receiver_parameter(local)


def test_type_hints_skip_the_return_annotation() -> None:
    def f(x: "int", y: Annotated[str, Field(description="d")]) -> "Unknown":  # type: ignore[name-defined] # noqa: F821
        ...

    hints = resolve_type_hints(f)
    assert set(hints) == {"x", "y"}
    assert hints["x"] is int


def test_type_hints_of_partials_and_callable_objects() -> None:
    def add(a: int, b: int) -> int:
        return a + b

    class Adder:
        def __call__(self, a: int) -> int:
            return a

    assert resolve_type_hints(functools.partial(add, b=1)) == {"a": int, "b": int}
    assert resolve_type_hints(Adder()) == {"a": int}


def test_unresolvable_reference_keeps_the_name_error() -> None:
    def f(x: "Missing") -> None: ...  # type: ignore[name-defined] # noqa: F821

    with pytest.raises(ToolDefinitionError) as caught:
        read_parameters(f, tool_name="f")
    assert caught.value.problems == ("cannot read the signature: name 'Missing' is not defined",)
    assert isinstance(caught.value.__cause__, NameError)


def test_model_types() -> None:
    class M(BaseModel):
        a: int

    class Root(RootModel[list[int]]):
        pass

    assert is_model_type(M)
    assert is_model_type(Annotated[M, "x"])
    assert not is_model_type(Root)
    assert not is_model_type(int)
    assert not is_model_type(list[M])
    assert type_name(M) == "M"
    assert type_name(list[int]) == "list[int]"
