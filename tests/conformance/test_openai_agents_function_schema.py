"""The OpenAI Agents SDK's tests/test_function_schema.py, in toolrelay's API.

Each test names the case it ports. Where toolrelay differs on purpose, the test asserts
toolrelay's behaviour and docs/tools.md ("Differences from Spring AI / pydantic-ai / the OpenAI
Agents SDK") gives the reason.
"""

from __future__ import annotations

import enum
import warnings
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from toolrelay.exceptions import ConfigurationError, ToolArgumentError, ToolDefinitionError
from toolrelay.models._strict_schema import to_strict_schema
from toolrelay.tools import FunctionTool, ToolContext, tool
from toolrelay.tools._docstrings import parse_docstring


def make(fn: Any, **options: Any) -> FunctionTool:
    return FunctionTool.from_function(fn, **options)


def properties(fn: Any) -> dict[str, Any]:
    return dict(make(fn).definition.input_schema["properties"])


def no_args_function() -> str:
    """This function has no args."""
    return "ok"


def test_no_args_function() -> None:
    # ports test_no_args_function
    made = make(no_args_function)
    assert made.definition.description == "This function has no args."
    assert made.definition.input_schema["properties"] == {}
    assert made.definition.input_schema["required"] == []
    assert made.call_sync("") == "ok"


def no_args_function_with_context(context: ToolContext) -> str:
    return f"ok {context.tenant_id}"


def test_no_args_function_with_context() -> None:
    # ports test_no_args_function_with_context
    made = make(no_args_function_with_context)
    assert made.definition.input_schema["properties"] == {}
    assert made.call_sync("{}", {"tenant_id": "t1"}) == "ok t1"


def simple_function(a: int, b: int = 5) -> int:
    """
    Args:
        a: The first argument
        b: The second argument

    Returns:
        The sum of a and b
    """
    return a + b


def test_simple_function() -> None:
    # ports test_simple_function (the docstring starts with its Args section)
    made = make(simple_function)
    assert properties(simple_function) == {
        "a": {"description": "The first argument", "type": "integer"},
        "b": {"default": 5, "description": "The second argument", "type": "integer"},
    }
    assert made.definition.input_schema["required"] == ["a"]
    assert made.definition.description == "Returns: The sum of a and b"
    assert made.call_sync('{"a": 3}') == "8"
    assert made.call_sync('{"a": 3, "b": 10}') == "13"
    with pytest.raises(ToolArgumentError, match="a: Input should be a valid integer"):
        made.call_sync('{"a": "not an integer"}')


def varargs_function(x: int, *numbers: float, flag: bool = False, **kwargs: Any) -> Any:
    return x, numbers, flag, kwargs


def test_varargs_function() -> None:
    # ports test_varargs_function: *args/**kwargs are refused (a documented difference)
    with pytest.raises(ToolDefinitionError) as caught:
        make(varargs_function)
    assert caught.value.problems == (
        "parameter 'numbers': *numbers is not supported; declare each argument explicitly",
        "parameter 'kwargs': **kwargs is not supported; declare each argument explicitly",
    )


class Foo(TypedDict):
    a: int
    b: str


class InnerModel(BaseModel):
    a: int
    b: str


class OuterModel(BaseModel):
    inner: InnerModel
    foo: Foo


def complex_args_function(model: OuterModel) -> str:
    return f"{model.inner.a}, {model.inner.b}, {model.foo['a']}, {model.foo['b']}"


def test_nested_data_function() -> None:
    # ports test_nested_data_function
    made = make(complex_args_function)
    schema = made.definition.input_schema
    assert schema["properties"] == {"model": {"$ref": "#/$defs/OuterModel"}}
    assert set(schema["$defs"]) == {"OuterModel", "InnerModel", "Foo"}
    value = OuterModel(inner=InnerModel(a=1, b="hello"), foo=Foo(a=2, b="world"))
    arguments = '{"model": ' + value.model_dump_json() + "}"
    assert made.call_sync(arguments) == "1, hello, 2, world"


def complex_args_and_docs_function(model: OuterModel, some_flag: int = 0) -> str:
    """
    This function takes a model and a flag, and returns a string.

    Args:
        model: A model with an inner and foo field
        some_flag: An optional flag with a default of 0

    Returns:
        A string with the values of the model and flag
    """
    return f"{model.inner.a}, {model.inner.b}, {model.foo['a']}, {model.foo['b']}, {some_flag}"


def test_complex_args_and_docs_function() -> None:
    # ports test_complex_args_and_docs_function
    made = make(complex_args_and_docs_function)
    props = made.definition.input_schema["properties"]
    assert props["model"]["description"] == "A model with an inner and foo field"
    assert props["some_flag"]["description"] == "An optional flag with a default of 0"
    assert made.definition.description == (
        "This function takes a model and a flag, and returns a string.\n\n"
        "Returns: A string with the values of the model and flag"
    )
    model = '{"inner": {"a": 1, "b": "hello"}, "foo": {"a": 2, "b": "world"}}'
    assert made.call_sync('{"model": ' + model + "}") == "1, hello, 2, world, 0"
    with pytest.raises(ToolArgumentError, match="some_flag: Input should be a valid integer"):
        made.call_sync('{"model": ' + model + ', "some_flag": "not an int"}')


def function_with_context(context: ToolContext, a: int, b: int = 5) -> int:
    return a + b


def test_function_with_context() -> None:
    # ports test_function_with_context
    made = make(function_with_context)
    assert list(made.definition.input_schema["properties"]) == ["a", "b"]
    assert made.call_sync('{"a": 1, "b": 2}', {"tenant_id": "t"}) == "3"


class MyClass:
    def foo(self, a: int, b: int = 5) -> int:
        return a + b

    def foo_ctx(self, ctx: ToolContext, a: int, b: int = 5) -> int:
        return a + b

    @classmethod
    def bar(cls, a: int, b: int = 5) -> int:
        return a + b

    @classmethod
    def bar_ctx(cls, ctx: ToolContext, a: int, b: int = 5) -> int:
        return a + b

    @staticmethod
    def baz(a: int, b: int = 5) -> int:
        return a + b

    @staticmethod
    def baz_ctx(ctx: ToolContext, a: int, b: int = 5) -> int:
        return a + b


def test_class_based_functions() -> None:
    # ports test_class_based_functions
    instance = MyClass()
    for fn in (
        instance.foo,
        instance.foo_ctx,
        MyClass.bar,
        MyClass.bar_ctx,
        MyClass.baz,
        MyClass.baz_ctx,
    ):
        made = make(fn)
        assert made.name == fn.__name__
        assert list(made.definition.input_schema["properties"]) == ["a", "b"]
        assert made.call_sync('{"a": 1, "b": 2}', {"tenant_id": "t"}) == "3"


class MyEnum(enum.StrEnum):
    FOO = "foo"
    BAR = "bar"
    BAZ = "baz"


def enum_and_literal_function(a: MyEnum, b: Literal["a", "b", "c"]) -> str:
    return f"{a.value} {b}"


def test_enum_and_literal_function() -> None:
    # ports test_enum_and_literal_function
    made = make(enum_and_literal_function)
    schema = made.definition.input_schema
    assert schema["$defs"]["MyEnum"]["enum"] == ["foo", "bar", "baz"]
    assert schema["properties"]["a"] == {"$ref": "#/$defs/MyEnum"}
    assert schema["properties"]["b"]["enum"] == ["a", "b", "c"]
    assert made.call_sync('{"a": "foo", "b": "a"}') == "foo a"
    with pytest.raises(ToolArgumentError, match="a: Input should be 'foo', 'bar' or 'baz'"):
        made.call_sync('{"a": "not an enum value", "b": "a"}')
    with pytest.raises(ToolArgumentError, match="b: Input should be 'a', 'b' or 'c'"):
        made.call_sync('{"a": "foo", "b": "not a literal value"}')


def test_run_context_in_non_first_position_raises_value_error() -> None:
    # ports test_run_context_in_non_first_position_raises_value_error: the context is found
    # by its type wherever it stands (a documented difference), and still hidden.
    def func(a: int, context: ToolContext) -> str:
        return f"{a} {context.tenant_id}"

    made = make(func)
    assert list(made.definition.input_schema["properties"]) == ["a"]
    assert made.call_sync('{"a": 1}', {"tenant_id": "t"}) == "1 t"


def test_var_positional_tuple_annotation() -> None:
    # ports test_var_positional_tuple_annotation: *args are refused
    def func(*args: tuple[int, ...]) -> int:
        return 0

    with pytest.raises(ToolDefinitionError, match=r"\*args is not supported"):
        make(func)


def test_var_keyword_dict_annotation() -> None:
    # ports test_var_keyword_dict_annotation: **kwargs are refused
    def func(**kwargs: dict[str, int]) -> Any:
        return kwargs

    with pytest.raises(ToolDefinitionError, match=r"\*\*kwargs is not supported"):
        make(func)


def test_schema_with_mapping_raises_strict_mode_error() -> None:
    # ports test_schema_with_mapping_raises_strict_mode_error: toolrelay's schemas are not
    # strict by default; the strict form (OpenAI strict_tools) refuses the map.
    def func_with_mapping(test_one: Mapping[str, int]) -> str:
        return "foo"

    schema = make(func_with_mapping).definition.input_schema
    assert schema["properties"]["test_one"] == {
        "additionalProperties": {"type": "integer"},
        "type": "object",
    }
    with pytest.raises(ConfigurationError, match=r"free-form map at properties\.test_one"):
        to_strict_schema(schema)


def test_name_override_without_docstring() -> None:
    # ports test_name_override_without_docstring
    def foo(x: int) -> int:
        return x

    made = make(foo, name="custom")
    assert made.name == "custom"
    assert made.definition.description == "custom"  # the name in words


def test_function_with_field_required_constraints() -> None:
    # ports test_function_with_field_required_constraints
    def func_with_field_constraints(my_number: int = Field(..., gt=10, le=100)) -> int:
        return my_number * 2

    made = make(func_with_field_constraints)
    assert properties(func_with_field_constraints)["my_number"] == {
        "exclusiveMinimum": 10,
        "maximum": 100,
        "type": "integer",
    }
    assert made.definition.input_schema["required"] == ["my_number"]
    assert made.call_sync('{"my_number": 50}') == "100"
    with pytest.raises(ToolArgumentError, match="greater than 10"):
        made.call_sync('{"my_number": 5}')
    with pytest.raises(ToolArgumentError, match="less than or equal to 100"):
        made.call_sync('{"my_number": 150}')
    with pytest.raises(ToolArgumentError, match="my_number: Field required"):
        made.call_sync("{}")


def test_function_with_field_optional_with_default() -> None:
    # ports test_function_with_field_optional_with_default
    def func_with_optional_field(
        required_param: str, optional_param: float = Field(default=5.0, ge=0.0)
    ) -> str:
        return f"{required_param}: {optional_param}"

    made = make(func_with_optional_field)
    assert properties(func_with_optional_field)["optional_param"] == {
        "default": 5.0,
        "minimum": 0.0,
        "type": "number",
    }
    assert made.call_sync('{"required_param": "test"}') == "test: 5.0"
    assert made.call_sync('{"required_param": "test", "optional_param": 10.5}') == "test: 10.5"
    with pytest.raises(ToolArgumentError, match="greater than or equal to 0"):
        made.call_sync('{"required_param": "test", "optional_param": -1.0}')


def test_function_uses_annotated_descriptions_without_docstring() -> None:
    # ports test_function_uses_annotated_descriptions_without_docstring
    def add(a: Annotated[int, "First number to add"], b: Annotated[int, "Second number"]) -> int:
        return a + b

    props = properties(add)
    assert props["a"]["description"] == "First number to add"
    assert props["b"]["description"] == "Second number"


def test_function_prefers_docstring_descriptions_over_annotated_metadata() -> None:
    # ports test_function_prefers_docstring_descriptions_over_annotated_metadata
    def add(
        a: Annotated[int, "Annotated description for a"],
        b: Annotated[int, "Annotated description for b"],
    ) -> int:
        """Adds two integers.

        Args:
            a: Docstring provided description.
        """
        return a + b

    props = properties(add)
    assert props["a"]["description"] == "Docstring provided description."
    assert props["b"]["description"] == "Annotated description for b"


def test_function_with_field_description_merge() -> None:
    # ports test_function_with_field_description_merge: an explicit Field(description=...)
    # wins over the docstring in toolrelay (a documented difference), in both spellings.
    def func_with_field_and_docstring(
        param_with_field_desc: int = Field(..., description="Field description"),
        param_with_both: str = Field(default="hello", description="Field description"),
    ) -> str:
        """
        Function with both field and docstring descriptions.

        Args:
            param_with_field_desc: Docstring description
            param_with_both: Docstring description
        """
        return f"{param_with_field_desc}: {param_with_both}"

    props = properties(func_with_field_and_docstring)
    assert props["param_with_field_desc"]["description"] == "Field description"
    assert props["param_with_both"]["description"] == "Field description"
    assert props["param_with_both"]["default"] == "hello"


def test_function_with_field_description_only() -> None:
    # ports test_function_with_field_description_only
    def func_with_field_desc_only(
        param_with_field_desc: int = Field(..., description="Field description only"),
        param_without_desc: str = Field(default="hello"),
    ) -> str:
        return f"{param_with_field_desc}: {param_without_desc}"

    props = properties(func_with_field_desc_only)
    assert props["param_with_field_desc"]["description"] == "Field description only"
    assert "description" not in props["param_without_desc"]


def _check_string_constraints(made: FunctionTool) -> None:
    assert made.definition.input_schema["properties"]["name"] == {
        "maxLength": 20,
        "minLength": 3,
        "pattern": "^[A-Za-z]+$",
        "type": "string",
    }
    assert made.call_sync('{"name": "Alice"}') == "Hello, Alice!"
    for bad in ("Al", "A" * 25, "Alice123"):
        with pytest.raises(ToolArgumentError):
            made.call_sync('{"name": "' + bad + '"}')


def test_function_with_field_string_constraints() -> None:
    # ports test_function_with_field_string_constraints
    def func_with_string_field(
        name: str = Field(..., min_length=3, max_length=20, pattern=r"^[A-Za-z]+$"),
    ) -> str:
        return f"Hello, {name}!"

    _check_string_constraints(make(func_with_string_field))


def test_function_with_annotated_field_string_constraints() -> None:
    # ports test_function_with_annotated_field_string_constraints
    def func_with_annotated_string_field(
        name: Annotated[str, Field(..., min_length=3, max_length=20, pattern=r"^[A-Za-z]+$")],
    ) -> str:
        return f"Hello, {name}!"

    _check_string_constraints(make(func_with_annotated_string_field))


def _check_multiple_constraints(made: FunctionTool) -> None:
    props = made.definition.input_schema["properties"]
    assert props["score"] == {
        "description": "Score from 0 to 100",
        "maximum": 100,
        "minimum": 0,
        "type": "integer",
    }
    assert props["name"] == {
        "default": "Unknown",
        "maxLength": 50,
        "minLength": 1,
        "type": "string",
    }
    assert props["factor"] == {
        "default": 1.0,
        "description": "Positive multiplier",
        "exclusiveMinimum": 0.0,
        "type": "number",
    }
    assert made.definition.input_schema["required"] == ["score"]
    assert made.call_sync('{"score": 85}') == "Unknown scored 85.0"
    assert made.call_sync('{"score": 90, "name": "Alice", "factor": 1.5}') == "Alice scored 135.0"
    for bad in ('{"score": 150}', '{"score": 50, "name": ""}', '{"score": 50, "factor": 0.0}'):
        with pytest.raises(ToolArgumentError):
            made.call_sync(bad)


def test_function_with_field_multiple_constraints() -> None:
    # ports test_function_with_field_multiple_constraints
    def func(
        score: int = Field(..., ge=0, le=100, description="Score from 0 to 100"),
        name: str = Field(default="Unknown", min_length=1, max_length=50),
        factor: float = Field(default=1.0, gt=0.0, description="Positive multiplier"),
    ) -> str:
        return f"{name} scored {score * factor}"

    _check_multiple_constraints(make(func))


def test_function_with_annotated_field_multiple_constraints() -> None:
    # ports test_function_with_annotated_field_multiple_constraints
    def func(
        score: Annotated[int, Field(..., ge=0, le=100, description="Score from 0 to 100")],
        name: Annotated[str, Field(default="Unknown", min_length=1, max_length=50)],
        factor: Annotated[float, Field(default=1.0, gt=0.0, description="Positive multiplier")],
    ) -> str:
        return f"{name} scored {score * factor}"

    _check_multiple_constraints(make(func))


def test_function_with_annotated_field_required_constraints() -> None:
    # ports test_function_with_annotated_field_required_constraints
    def func(my_number: Annotated[int, Field(..., gt=10, le=100)]) -> int:
        return my_number * 2

    made = make(func)
    assert properties(func)["my_number"] == {
        "exclusiveMinimum": 10,
        "maximum": 100,
        "type": "integer",
    }
    assert made.call_sync('{"my_number": 50}') == "100"
    for bad in ('{"my_number": 5}', '{"my_number": 150}'):
        with pytest.raises(ToolArgumentError):
            made.call_sync(bad)


def test_function_with_annotated_field_optional_with_default() -> None:
    # ports test_function_with_annotated_field_optional_with_default
    def func(
        required_param: str, optional_param: Annotated[float, Field(default=5.0, ge=0.0)]
    ) -> str:
        return f"{required_param}: {optional_param}"

    made = make(func)
    assert properties(func)["optional_param"] == {"default": 5.0, "minimum": 0.0, "type": "number"}
    assert made.call_sync('{"required_param": "test"}') == "test: 5.0"
    assert made.call_sync('{"required_param": "test", "optional_param": 10.5}') == "test: 10.5"
    with pytest.raises(ToolArgumentError):
        made.call_sync('{"required_param": "test", "optional_param": -1.0}')


def missing_blank_line_google_function(city: str, units: str) -> str:
    """Get the weather for a city.
    Args:
        city: The city to get weather for.
        units: Temperature units to use.
    """
    return f"{city} {units}"


def blank_line_google_function(city: str, units: str) -> str:
    """Get the weather for a city.

    Args:
        city: The city to get weather for.
        units: Temperature units to use.
    """
    return f"{city} {units}"


WEATHER_PROPERTIES = {
    "city": {"description": "The city to get weather for.", "type": "string"},
    "units": {"description": "Temperature units to use.", "type": "string"},
}


def test_google_docstring_missing_blank_line_before_args() -> None:
    # ports test_google_docstring_missing_blank_line_before_args
    made = make(missing_blank_line_google_function)
    assert made.definition.input_schema["properties"] == WEATHER_PROPERTIES
    assert made.definition.description == "Get the weather for a city."


def test_google_docstring_missing_blank_line_matches_blank_line_form() -> None:
    # ports test_google_docstring_missing_blank_line_matches_blank_line_form
    fixed = make(missing_blank_line_google_function).definition
    control = make(blank_line_google_function).definition
    assert fixed.description == control.description
    assert fixed.input_schema == control.input_schema


def test_google_docstring_blank_line_form_is_unchanged() -> None:
    # ports test_google_docstring_blank_line_form_is_unchanged
    doc = parse_docstring(blank_line_google_function)
    assert doc.description == "Get the weather for a city."
    assert dict(doc.parameters) == {
        "city": "The city to get weather for.",
        "units": "Temperature units to use.",
    }


def test_google_docstring_missing_blank_line_function_tool() -> None:
    # ports test_google_docstring_missing_blank_line_function_tool
    @tool
    def weather(city: str, units: str) -> str:
        """Get the weather for a city.
        Args:
            city: The city to get weather for.
            units: Temperature units to use.
        """
        return f"{city} {units}"

    made = make(weather)
    assert made.definition.input_schema["properties"] == WEATHER_PROPERTIES
    assert "Args:" not in made.definition.description


def section_body_before_args_google_function(city: str, units: str) -> str:
    """Get the weather for a city.

    Note:
        Results are cached.
    Args:
        city: The city to get weather for.
        units: Temperature units to use.
    """
    return f"{city} {units}"


def section_body_before_args_blank_line_google_function(city: str, units: str) -> str:
    """Get the weather for a city.

    Note:
        Results are cached.

    Args:
        city: The city to get weather for.
        units: Temperature units to use.
    """
    return f"{city} {units}"


def test_google_docstring_missing_blank_line_after_section_body() -> None:
    # ports test_google_docstring_missing_blank_line_after_section_body
    made = make(section_body_before_args_google_function)
    assert made.definition.input_schema["properties"] == WEATHER_PROPERTIES
    assert "Args:" not in made.definition.description


def test_google_docstring_after_section_body_matches_blank_line_form() -> None:
    # ports test_google_docstring_after_section_body_matches_blank_line_form
    fixed = make(section_body_before_args_google_function).definition
    control = make(section_body_before_args_blank_line_google_function).definition
    assert fixed.description == control.description
    assert fixed.input_schema == control.input_schema


def test_variadic_param_descriptions_preserved() -> None:
    # ports test_variadic_param_descriptions_preserved: variadic parameters are refused, so
    # only the explicit parameter's description can be checked, once the signature is fixed.
    def add(x: int, numbers: list[float], options: dict[str, str]) -> str:
        """Add numbers to a base.

        Args:
            x: The base value.
            numbers: The numbers to add.
            options: Extra options.
        """
        return ""

    props = properties(add)
    assert [props[n]["description"] for n in ("x", "numbers", "options")] == [
        "The base value.",
        "The numbers to add.",
        "Extra options.",
    ]


class _ElementwiseEqual:
    """``==`` returns a container whose truthiness raises, like numpy arrays."""

    def __eq__(self, other: object) -> Any:
        return _ElementwiseEqual()

    def __ne__(self, other: object) -> Any:
        return _ElementwiseEqual()

    def __bool__(self) -> bool:
        raise ValueError("The truth value of an elementwise comparison is ambiguous.")

    def __hash__(self) -> int:
        return 0


class _AlwaysEqual:
    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return 0


@pytest.mark.parametrize("default_type", [_ElementwiseEqual, _AlwaysEqual])
def test_default_equality_is_not_used_for_sentinel_comparison(default_type: type[Any]) -> None:
    # ports test_default_equality_is_not_used_for_sentinel_comparison
    default = default_type()

    def func(x: int, value: Any = default) -> str:
        return type(value).__name__

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic: the default is not JSON serializable
        made = make(func)
    assert made.definition.input_schema["required"] == ["x"]
    assert made.call_sync('{"x": 1}') == default_type.__name__
