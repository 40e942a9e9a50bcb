"""``FunctionTool`` calls: validation, context injection, threads, and every callable shape."""

import asyncio
import contextvars
import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from typing import Annotated, Any

import pytest
from pydantic import AliasChoices, BaseModel, ConfigDict, Field
from pydantic.dataclasses import dataclass as pydantic_dataclass

from toolrelay.exceptions import (
    ArgumentProblem,
    InvalidJsonError,
    ToolArgumentError,
    ToolContextError,
    ToolDefinitionError,
)
from toolrelay.tools import (
    FunctionTool,
    Tool,
    ToolContext,
    ValidatedArguments,
    ValidatingTool,
    WorkerPool,
    tool,
    tools_from,
)
from toolrelay.tools._base import call_sync

REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("REQUEST_ID", default="none")


class Size(Enum):
    SMALL = "small"
    LARGE = "large"


class Line(BaseModel):
    sku: str
    quantity: int


class Order(BaseModel):
    lines: list[Line]
    express: bool = False


@dataclass
class Greeting:
    name: str
    excited: bool = False


@tool
def describe(when: datetime, size: Size, order: Order, count: int = 1) -> dict[str, Any]:
    return {
        "when_type": type(when).__name__,
        "year": when.year,
        "size_is_enum": isinstance(size, Size),
        "order_is_model": isinstance(order, Order),
        "lines": len(order.lines),
        "count": count,
    }


# --- validation -------------------------------------------------------------------------------


async def test_arguments_are_validated_and_coerced_before_the_call() -> None:
    made = FunctionTool.from_function(describe)
    text = await made.call(
        '{"when": "2024-05-01T10:00:00Z", "size": "large", "count": "3",'
        ' "order": {"lines": [{"sku": "A", "quantity": "2"}]}}'
    )
    assert text == (
        '{"when_type": "datetime", "year": 2024, "size_is_enum": true,'
        ' "order_is_model": true, "lines": 1, "count": 3}'
    )


async def test_invalid_json() -> None:
    made = FunctionTool.from_function(describe)
    with pytest.raises(InvalidJsonError) as caught:
        await made.call("{not json")
    assert str(caught.value) == (
        "invalid arguments for tool 'describe':\n"
        "- Arguments are not valid JSON: "
        "Expecting property name enclosed in double quotes at line 1, column 2."
    )
    assert caught.value.problems == (
        ArgumentProblem(
            location="",
            message="Arguments are not valid JSON: "
            "Expecting property name enclosed in double quotes at line 1, column 2.",
            input="{not json",
        ),
    )
    assert caught.value.__cause__ is not None


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [("[1, 2]", "an array", [1, 2]), ('"Paris"', "a string", "Paris"), ("null", "null", None)],
)
async def test_json_that_is_not_an_object(text: str, kind: str, value: Any) -> None:
    made = FunctionTool.from_function(describe)
    with pytest.raises(InvalidJsonError) as caught:
        await made.call(text)
    assert str(caught.value) == (
        f"invalid arguments for tool 'describe':\n- Arguments must be a JSON object, not {kind}."
    )
    assert caught.value.problems == (
        ArgumentProblem(
            location="", message=f"Arguments must be a JSON object, not {kind}.", input=value
        ),
    )


async def test_schema_violations_list_every_problem_with_its_location() -> None:
    made = FunctionTool.from_function(describe)
    with pytest.raises(ToolArgumentError) as caught:
        await made.call(
            '{"size": "medium", "order": {"lines": [{"sku": "A", "quantity": "two"}, {}]},'
            ' "colour": "red"}'
        )
    error = caught.value
    assert type(error) is ToolArgumentError
    assert error.tool == "describe"
    assert error.problems == (
        ArgumentProblem(location="when", message="Field required"),
        ArgumentProblem(
            location="size", message="Input should be 'small' or 'large'", input="medium"
        ),
        ArgumentProblem(
            location="order.lines.0.quantity",
            message="Input should be a valid integer, unable to parse string as an integer",
            input="two",
        ),
        ArgumentProblem(location="order.lines.1.sku", message="Field required"),
        ArgumentProblem(location="order.lines.1.quantity", message="Field required"),
        ArgumentProblem(location="colour", message="Extra inputs are not permitted", input="red"),
    )
    assert str(error) == (
        "invalid arguments for tool 'describe':\n"
        "- when: Field required\n"
        "- size: Input should be 'small' or 'large'\n"
        "- order.lines.0.quantity: Input should be a valid integer, unable to parse string as an"
        " integer\n"
        "- order.lines.1.sku: Field required\n"
        "- order.lines.1.quantity: Field required\n"
        "- colour: Extra inputs are not permitted"
    )
    assert error.__cause__ is not None


@pytest.mark.parametrize("blank", ["", "   ", "\n\t"])
async def test_blank_arguments_mean_an_empty_object(blank: str) -> None:
    @tool
    def ping(reply: str = "pong") -> str:
        return reply

    assert await FunctionTool.from_function(ping).call(blank) == "pong"


async def test_required_override_is_enforced() -> None:
    @tool(required=["limit"])
    def search(query: str, limit: int = 10) -> int:
        return limit

    made = FunctionTool.from_function(search)
    with pytest.raises(ToolArgumentError) as caught:
        await made.call('{"query": "x"}')
    assert caught.value.problems == (ArgumentProblem(location="limit", message="Field required"),)
    assert await made.call('{"query": "x", "limit": 3}') == "3"


# --- context ----------------------------------------------------------------------------------


@tool
def whoami(greeting: str, context: ToolContext) -> str:
    return f"{greeting} {context.user_id} of {context['tenant_id']}"


async def test_context_is_injected() -> None:
    made = FunctionTool.from_function(whoami)
    text = await made.call('{"greeting": "hi"}', ToolContext(tenant_id="t1", user_id="u1"))
    assert text == "hi u1 of t1"


async def test_plain_mapping_context_is_wrapped() -> None:
    made = FunctionTool.from_function(whoami)
    assert await made.call('{"greeting": "hi"}', {"tenant_id": "t2", "user_id": "u2"}) == (
        "hi u2 of t2"
    )


async def test_missing_context_is_a_tool_context_error() -> None:
    made = FunctionTool.from_function(whoami)
    with pytest.raises(ToolContextError) as caught:
        await made.call('{"greeting": "hi"}')
    assert str(caught.value) == (
        "tool 'whoami' requires a ToolContext, but the request has none; "
        "pass it with the request's tool context "
        "(ChatClient(..., context={'tenant_id': ...}) or .prompt(...).tool_context({...}))"
    )
    assert caught.value.tool == "whoami"


async def test_optional_context_receives_none() -> None:
    @tool
    def maybe(context: ToolContext | None = None) -> str:
        return "none" if context is None else str(context.tenant_id)

    made = FunctionTool.from_function(maybe)
    assert await made.call("") == "none"
    assert await made.call("", ToolContext(tenant_id="t9")) == "t9"


# --- how functions run ------------------------------------------------------------------------


async def test_sync_function_runs_in_a_worker_thread_with_contextvars() -> None:
    seen: dict[str, Any] = {}

    @tool
    def where() -> None:
        seen["thread"] = threading.get_ident()
        seen["request"] = REQUEST_ID.get()

    REQUEST_ID.set("r-42")
    assert await FunctionTool.from_function(where).call("") == "Done"
    assert seen["thread"] != threading.get_ident()
    assert seen["request"] == "r-42"


async def test_async_function_is_awaited_on_the_loop() -> None:
    seen: dict[str, Any] = {}

    @tool
    async def fetch(url: str) -> str:
        await asyncio.sleep(0)
        seen["thread"] = threading.get_ident()
        return f"fetched {url}"

    made = FunctionTool.from_function(fetch)
    assert await made.call('{"url": "x"}') == "fetched x"
    assert seen["thread"] == threading.get_ident()


async def test_async_callable_object() -> None:
    class Fetcher:
        __name__ = "fetcher"

        async def __call__(self, url: str) -> str:
            return url.upper()

    assert await FunctionTool.from_function(Fetcher()).call('{"url": "abc"}') == "ABC"


class Counter:
    def __init__(self, start: int) -> None:
        self.value = start

    @tool
    def increment(self, by: int = 1) -> int:
        self.value += by
        return self.value

    @tool
    async def peek(self) -> int:
        return self.value


async def test_bound_methods_receive_their_instance_state() -> None:
    counter = Counter(10)
    increment, peek = tools_from(counter)
    assert await increment.call('{"by": 5}') == "15"
    assert counter.value == 15
    assert await peek.call("") == "15"
    assert increment.source == f"{Counter.__module__}.Counter.increment"


async def test_function_exceptions_propagate_unchanged() -> None:
    class Boom(Exception):
        pass

    @tool
    def explode() -> None:
        raise Boom("no")

    with pytest.raises(Boom, match="no"):
        await FunctionTool.from_function(explode).call("")


def test_call_sync_without_a_running_loop() -> None:
    made = FunctionTool.from_function(whoami)
    assert made.call_sync('{"greeting": "hey"}', ToolContext(user_id="u", tenant_id="t")) == (
        "hey u of t"
    )
    assert call_sync(made, '{"greeting": "yo"}', ToolContext(user_id="a", tenant_id="b")) == (
        "yo a of b"
    )


async def test_call_sync_inside_a_running_loop() -> None:
    asyncio.get_running_loop()
    made = FunctionTool.from_function(whoami)
    assert made.call_sync('{"greeting": "hey"}', {"user_id": "u", "tenant_id": "t"}) == (
        "hey u of t"
    )
    with pytest.raises(ToolContextError):
        made.call_sync('{"greeting": "hey"}')


async def test_positional_only_parameters() -> None:
    def power(base: int, exponent: int = 2, /, *, scale: int = 1) -> int:
        return scale * base**exponent

    made = FunctionTool.from_function(power)
    assert await made.call('{"base": 3}') == "9"
    assert await made.call('{"base": 2, "exponent": 3, "scale": 10}') == "80"


async def test_partial_needs_a_name() -> None:
    def add(a: int, b: int) -> int:
        return a + b

    with pytest.raises(ToolDefinitionError) as caught:
        FunctionTool.from_function(functools.partial(add, b=1))
    assert caught.value.problems == (
        "this callable has no __name__; pass name=... to give the tool a name",
    )
    made = FunctionTool.from_function(functools.partial(add, b=1), name="add_one")
    assert await made.call('{"a": 41}') == "42"


def test_attributes_and_protocol() -> None:
    made = FunctionTool.from_function(whoami)
    assert isinstance(made, Tool)
    assert made.function is whoami
    assert made.name == "whoami"
    assert made.source == f"{whoami.__module__}.whoami"
    assert repr(made) == f"FunctionTool(name='whoami', source='{whoami.__module__}.whoami')"


# --- model functions --------------------------------------------------------------------------


async def test_model_function_receives_the_validated_model_and_context() -> None:
    received: list[Any] = []

    def place(order: Order, context: ToolContext) -> str:
        received.append((order, context))
        return f"{len(order.lines)} lines for {context.tenant_id}"

    made = FunctionTool.from_model_function(place, name="orders.place")
    text = await made.call(
        '{"lines": [{"sku": "A", "quantity": 1}], "express": true}', ToolContext(tenant_id="t")
    )
    assert text == "1 lines for t"
    assert received == [
        (Order(lines=[Line(sku="A", quantity=1)], express=True), ToolContext(tenant_id="t"))
    ]
    with pytest.raises(ToolContextError):
        await made.call('{"lines": []}')


async def test_model_function_problems_are_located_in_the_model() -> None:
    def place(order: Order) -> None: ...

    with pytest.raises(ToolArgumentError) as caught:
        await FunctionTool.from_model_function(place).call('{"lines": [{"sku": 5}]}')
    assert caught.value.problems == (
        ArgumentProblem(location="lines.0.sku", message="Input should be a valid string", input=5),
        ArgumentProblem(location="lines.0.quantity", message="Field required"),
    )


async def test_consumer_with_dataclass_input_returns_done() -> None:
    greeted: list[Greeting] = []

    async def greet(greeting: Greeting) -> None:
        greeted.append(greeting)

    made = FunctionTool.from_model_function(greet, description="Greet someone.")
    assert made.definition.description == "Greet someone."
    assert await made.call('{"name": "Ada"}') == "Done"
    assert greeted == [Greeting(name="Ada")]


async def test_supplier() -> None:
    def now() -> datetime:
        return datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)

    made = FunctionTool.from_model_function(now)
    assert made.definition.description == "now"
    assert await made.call("") == '"2024-01-02T03:04:05Z"'
    with pytest.raises(ToolArgumentError) as caught:
        await made.call('{"x": 1}')
    assert caught.value.problems == (
        ArgumentProblem(location="x", message="Extra inputs are not permitted", input=1),
    )


# --- unknown argument names -------------------------------------------------------------------


class Refund(BaseModel):
    order_id: str
    reason: str = "other"


@dataclass
class RefundData:
    order_id: str
    reason: str = "other"


@pydantic_dataclass
class RefundPydanticData:
    order_id: str
    reason: str = "other"


class StrictRefund(BaseModel):
    model_config = ConfigDict(extra="forbid")

    order_id: str
    reason: str = "other"


class OpenRefund(BaseModel):
    model_config = ConfigDict(extra="allow")

    order_id: str
    reason: str = "other"


class LenientRefund(BaseModel):
    model_config = ConfigDict(extra="ignore")

    order_id: str
    reason: str = "other"


@pydantic_dataclass(config=ConfigDict(extra="ignore"))
class LenientRefundData:
    order_id: str
    reason: str = "other"


def model_tool(kind: Any) -> tuple[FunctionTool, list[Any]]:
    """A refund tool whose single input is of type ``kind``, and the inputs it received."""
    received: list[Any] = []

    def refund(request: Any) -> str:
        received.append(request)
        return "ok"

    refund.__annotations__["request"] = kind
    return FunctionTool.from_model_function(refund), received


def parameters_tool() -> tuple[FunctionTool, list[Any]]:
    received: list[Any] = []

    def refund(order_id: str, reason: str = "other") -> str:
        received.append((order_id, reason))
        return "ok"

    return FunctionTool.from_function(refund), received


FORBIDDING = {
    "parameters": parameters_tool,
    "model": lambda: model_tool(Refund),
    "dataclass": lambda: model_tool(RefundData),
    "pydantic dataclass": lambda: model_tool(RefundPydanticData),
    "model with extra=forbid": lambda: model_tool(StrictRefund),
    "annotated model": lambda: model_tool(Annotated[Refund, "the refund"]),
}


@pytest.mark.parametrize("make", FORBIDDING.values(), ids=FORBIDDING.keys())
async def test_every_function_tool_reports_an_unknown_argument(
    make: Callable[[], tuple[FunctionTool, list[Any]]],
) -> None:
    made, received = make()
    assert made.definition.input_schema["additionalProperties"] is False
    with pytest.raises(ToolArgumentError) as caught:
        await made.call('{"order_id": "A-1", "amount": 5}')
    assert caught.value.problems == (
        ArgumentProblem(location="amount", message="Extra inputs are not permitted", input=5),
    )
    with pytest.raises(ToolArgumentError) as caught:
        await made.call('{"amount": 5, "reason": "late"}')
    assert caught.value.problems == (
        ArgumentProblem(location="order_id", message="Field required"),
        ArgumentProblem(location="amount", message="Extra inputs are not permitted", input=5),
    )
    assert received == []
    assert await made.call('{"order_id": "A-1"}') == "ok"
    assert len(received) == 1


@pytest.mark.parametrize("kind", [OpenRefund, LenientRefund, LenientRefundData])
async def test_an_input_type_that_declares_extra_keys_welcome_is_respected(kind: Any) -> None:
    made, received = model_tool(kind)
    assert made.definition.input_schema["additionalProperties"] is True
    assert await made.call('{"order_id": "A-1", "amount": 5}') == "ok"
    (request,) = received
    assert request.order_id == "A-1"
    assert getattr(request, "amount", None) == (5 if kind is OpenRefund else None)


class AliasedRefund(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    order_id: str = Field(alias="orderId")
    note: str = Field("", validation_alias=AliasChoices("note", "comment"))


async def test_every_key_pydantic_reads_into_a_field_is_known() -> None:
    made, received = model_tool(AliasedRefund)
    assert list(made.definition.input_schema["properties"]) == ["orderId", "note"]
    # The alias, the field name (populate_by_name) and a second alias choice all fill a field.
    assert await made.call('{"orderId": "A-1", "comment": "late"}') == "ok"
    assert await made.call('{"order_id": "A-2"}') == "ok"
    assert [(r.order_id, r.note) for r in received] == [("A-1", "late"), ("A-2", "")]
    with pytest.raises(ToolArgumentError) as caught:
        await made.call('{"orderId": "A-3", "remark": "x"}')
    assert caught.value.problems == (
        ArgumentProblem(location="remark", message="Extra inputs are not permitted", input="x"),
    )


async def test_unknown_keys_of_nested_models_follow_the_nested_config() -> None:
    # Only the top level is held to the schema; a nested model keeps pydantic's own rule.
    made, received = model_tool(Order)
    assert await made.call('{"lines": [{"sku": "A", "quantity": 1, "colour": "red"}]}') == "ok"
    assert received == [Order(lines=[Line(sku="A", quantity=1)])]


def test_model_function_uses_the_attached_options() -> None:
    @tool(name="orders.quote", read_only=True)
    def quote(order: Order) -> float:
        return 1.0

    made = FunctionTool.from_model_function(quote)
    assert made.definition.name == "orders.quote"
    assert made.metadata.read_only is True


# --- validation ahead of the call ----------------------------------------------------------------


def test_validate_arguments_returns_coerced_json_values_with_defaults() -> None:
    @tool
    def refund(refund_id: int, reason: str = "duplicate") -> str:
        """Refund."""
        return f"{refund_id} {reason}"

    made = FunctionTool.from_function(refund)
    assert isinstance(made, ValidatingTool)
    for given in (5, "5", 5.0, "05"):
        validated = made.validate_arguments({"refund_id": given})
        assert dict(validated.values) == {"refund_id": 5, "reason": "duplicate"}
        assert validated.text == '{"refund_id": 5, "reason": "duplicate"}'
    with pytest.raises(ToolArgumentError):
        made.validate_arguments({"refund_id": "five"})


async def test_call_validated_runs_with_the_validated_input_in_the_given_workers() -> None:
    seen: list[Any] = []

    @tool
    def when(at: datetime) -> str:
        """When."""
        seen.append(at)
        return threading.current_thread().name

    made = FunctionTool.from_function(when)
    validated = made.validate_arguments({"at": "2025-01-02T03:04:05Z"})
    assert validated.values == {"at": "2025-01-02T03:04:05Z"}
    name = await made.call_validated(validated, workers=WorkerPool(1, name="mine"))
    assert name.startswith("mine-")
    assert seen == [datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)]
    # Arguments made elsewhere, without the validated input, are validated first.
    by_hand = ValidatedArguments(values={"at": "2025-01-02T03:04:05Z"}, text="")
    assert (await made.call_validated(by_hand)).startswith("toolrelay-tool-")
    with pytest.raises(ToolArgumentError):
        await made.call_validated(ValidatedArguments(values={"at": "soon"}, text=""))
