"""The exception tree: its shape (as drawn in the module docstring) and message shapes."""

import inspect
import re

import pytest

from toolrelay import exceptions
from toolrelay.exceptions import (
    ArgumentProblem,
    ConfigurationError,
    DuplicateToolError,
    InvalidJsonError,
    InvalidToolNameError,
    LimitError,
    ModelCallLimitError,
    ModelError,
    ModelResponseError,
    ToolArgumentError,
    ToolCallLimitError,
    ToolContextError,
    ToolDefinitionError,
    ToolExecutionError,
    ToolNotFoundError,
    ToolRelayError,
    ToolsNotSupportedError,
)

# child → parent for the core of the tree; the drawing may grow, never lose these.
TREE: dict[type[Exception], type[Exception]] = {
    ToolRelayError: Exception,
    ToolDefinitionError: ToolRelayError,
    InvalidToolNameError: ToolDefinitionError,
    DuplicateToolError: ToolDefinitionError,
    ToolArgumentError: ToolRelayError,
    InvalidJsonError: ToolArgumentError,
    ToolNotFoundError: ToolRelayError,
    ToolContextError: ToolRelayError,
    ToolExecutionError: ToolRelayError,
    ModelError: ToolRelayError,
    ToolsNotSupportedError: ModelError,
    ModelResponseError: ModelError,
    LimitError: ToolRelayError,
    ToolCallLimitError: LimitError,
    ModelCallLimitError: LimitError,
    ConfigurationError: ToolRelayError,
}


def exported_error_classes() -> dict[str, type[BaseException]]:
    return {
        name: obj
        for name in exceptions.__all__
        if inspect.isclass(obj := getattr(exceptions, name)) and issubclass(obj, BaseException)
    }


def drawn_tree() -> dict[str, str]:
    """Child name → parent name, read from the drawing in the module docstring."""
    lines = (exceptions.__doc__ or "").splitlines()
    root_index = next(i for i, line in enumerate(lines) if line.strip() == "ToolRelayError")
    indent = len(lines[root_index]) - len(lines[root_index].lstrip())
    parents: dict[str, str] = {}
    stack = ["ToolRelayError"]
    for line in lines[root_index + 1 :]:
        match = re.match(r"((?:│   |    )*)[├└]── (\w+)", line[indent:])
        if match is None:
            break
        depth = len(match.group(1)) // 4 + 1
        stack = [*stack[:depth], match.group(2)]
        parents[match.group(2)] = stack[depth - 1]
    return parents


def test_drawing_matches_the_classes() -> None:
    classes = exported_error_classes()
    drawn = drawn_tree()
    assert set(drawn) | {"ToolRelayError"} == set(classes)
    for child, parent in drawn.items():
        assert classes[child].__bases__ == (classes[parent],), child
    assert ToolRelayError.__bases__ == (Exception,)


def test_every_error_derives_from_the_root() -> None:
    for cls in exported_error_classes().values():
        assert issubclass(cls, ToolRelayError)


@pytest.mark.parametrize(("child", "parent"), list(TREE.items()))
def test_core_hierarchy(child: type[Exception], parent: type[Exception]) -> None:
    assert child.__bases__ == (parent,)
    if child is not ToolRelayError:
        assert drawn_tree()[child.__name__] == parent.__name__


def test_definition_error_lists_all_problems() -> None:
    error = ToolDefinitionError("search", ["first problem", "second problem"])
    assert str(error) == "invalid tool 'search': first problem; second problem"
    assert error.tool == "search"
    assert error.problems == ("first problem", "second problem")


def test_invalid_name_error() -> None:
    error = InvalidToolNameError("bad name", "spaces are not allowed")
    assert str(error) == "invalid tool 'bad name': spaces are not allowed"
    assert (error.name, error.tool, error.problems) == (
        "bad name",
        "bad name",
        ("spaces are not allowed",),
    )


def test_duplicate_error_names_both_sources() -> None:
    error = DuplicateToolError("lookup", "pkg.a.lookup", "pkg.b.lookup")
    assert str(error) == (
        "invalid tool 'lookup': defined twice, by pkg.a.lookup and by pkg.b.lookup; give each "
        "tool its own name"
    )
    assert (error.first_source, error.second_source) == ("pkg.a.lookup", "pkg.b.lookup")


def test_argument_error_lists_one_line_per_problem() -> None:
    error = ToolArgumentError(
        "order",
        [
            ArgumentProblem(location="items.0.sku", message="Field required"),
            ArgumentProblem(location="", message="arguments must be a JSON object", input=[1]),
        ],
    )
    assert str(error) == (
        "invalid arguments for tool 'order':\n"
        "- items.0.sku: Field required\n"
        "- arguments must be a JSON object"
    )
    assert error.problems[1].input == [1]


def test_invalid_json_error_is_an_argument_error() -> None:
    error = InvalidJsonError("t", [ArgumentProblem(location="", message="not JSON")])
    assert isinstance(error, ToolArgumentError)
    assert str(error) == "invalid arguments for tool 't':\n- not JSON"


def test_tool_not_found_with_and_without_suggestions() -> None:
    assert str(ToolNotFoundError("get_wether", ["get_weather", "set_weather"])) == (
        "Unknown tool 'get_wether'. Did you mean: get_weather, set_weather?"
    )
    assert str(ToolNotFoundError("x")) == "Unknown tool 'x'."
    assert ToolNotFoundError("x", ["y"]).suggestions == ("y",)


def test_context_error() -> None:
    error = ToolContextError("whoami")
    assert str(error) == (
        "tool 'whoami' requires a ToolContext, but the request has none; "
        "pass it with the request's tool context "
        "(ChatClient(..., context={'tenant_id': ...}) or .prompt(...).tool_context({...}))"
    )
    assert error.tool == "whoami"
    assert error.key is None
    keyed = ToolContextError("list_invoices", "tenant_id")
    assert str(keyed) == (
        "tool 'list_invoices' requires 'tenant_id' in its ToolContext, but the request has "
        "none; pass it with the request's tool context "
        "(ChatClient(..., context={'tenant_id': ...}) or .prompt(...).tool_context({...}))"
    )
    assert (keyed.tool, keyed.key) == ("list_invoices", "tenant_id")


def test_execution_error_keeps_the_cause() -> None:
    def run() -> None:
        try:
            raise KeyError("k")
        except KeyError as exc:
            raise ToolExecutionError("lookup", "tool 'lookup' failed: 'k'") from exc

    with pytest.raises(ToolExecutionError) as caught:
        run()
    assert str(caught.value) == "tool 'lookup' failed: 'k'"
    assert caught.value.tool == "lookup"
    assert isinstance(caught.value.__cause__, KeyError)


def test_tool_call_limit_keeps_partial_results() -> None:
    error = ToolCallLimitError("too many tool calls", partial=["r1"])
    assert str(error) == "too many tool calls"
    assert error.partial == ["r1"]
    assert ToolCallLimitError("x").partial is None


def test_argument_problem_str() -> None:
    assert str(ArgumentProblem(location="a.b", message="bad")) == "a.b: bad"
    assert str(ArgumentProblem(location="", message="bad")) == "bad"
