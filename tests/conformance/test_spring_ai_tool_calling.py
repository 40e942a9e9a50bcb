"""Spring AI's tool-calling tests, in toolrelay's API.

Ported: DefaultToolCallingManagerTests, DefaultToolCallingManagerTest,
FunctionToolCallbackTest, MethodToolCallbackGenericTypesTest, MethodToolCallbackProviderTests,
MethodToolCallbackExceptionHandlingTest, ToolUtilsTests and
DefaultToolExecutionExceptionProcessorTests. Builder null checks (Python has no nulls to pass
by mistake), observation parents (toolrelay.otel has its own tests) and resolution beyond the
request's tools (the manager's resolution policy) are not ported; docs/tools.md lists the
differences.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from toolrelay.exceptions import (
    DuplicateToolError,
    InvalidJsonError,
    InvalidToolNameError,
    ModelResponseError,
    ToolArgumentError,
    ToolCallLimitError,
    ToolDefinitionError,
    ToolExecutionError,
)
from toolrelay.execution import (
    CallLimits,
    DefaultToolExceptionProcessor,
    ToolCallingManager,
    ToolCallStatus,
    ToolExecutionResult,
)
from toolrelay.messages import (
    AssistantMessage,
    ChatResponse,
    Generation,
    Message,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.tools import (
    FunctionTool,
    Tool,
    ToolCatalog,
    ToolContext,
    ToolDefinition,
    ToolMetadata,
    as_tools,
    tool,
    tools_from,
)
from toolrelay.tools._names import validate_tool_name


class MissionTool:
    """Spring AI's TestToolCallback: answers "Mission accomplished!"."""

    def __init__(self, name: str, return_direct: bool = False) -> None:
        self.definition = ToolDefinition(name=name, description=f"{name} tool")
        self.metadata = ToolMetadata(return_direct=return_direct)
        self.inputs: list[str] = []

    async def call(self, arguments_json: str, context: Mapping[str, Any] | None = None) -> str:
        self.inputs.append(arguments_json)
        return "Mission accomplished!"


class FailingTool:
    """Spring AI's FailingToolCallback."""

    def __init__(self, name: str) -> None:
        self.definition = ToolDefinition(name=name, description=f"{name} tool")
        self.metadata = ToolMetadata()

    async def call(self, arguments_json: str, context: Mapping[str, Any] | None = None) -> str:
        raise RuntimeError("You failed this city!")


def calls(*names: str, arguments: str = "{}") -> ChatResponse:
    message = AssistantMessage(
        tool_calls=tuple(ToolCall(id=name, name=name, arguments=arguments) for name in names)
    )
    return ChatResponse(generations=(Generation(message=message),))


def prompt_with(
    tools: list[Tool], *history: Message, context: Mapping[str, Any] | None = None
) -> Prompt:
    messages = history or (UserMessage(text="Hello"),)
    options = ChatOptions(tools=tuple(tools), tool_context=dict(context or {}))
    return Prompt(messages=tuple(messages), options=options)


def last_responses(result: ToolExecutionResult) -> list[tuple[str, str, str]]:
    last = result.conversation_history[-1]
    assert isinstance(last, ToolResponseMessage)
    return [(r.id, r.name, r.data) for r in last.responses]


def prior(*names: str) -> ToolResponseMessage:
    """Responses of earlier calls, as they stand in the history."""
    return ToolResponseMessage(
        responses=tuple(
            ToolResponse(id=f"prior{i}", name=n, data="Mission accomplished!")
            for i, n in enumerate(names)
        )
    )


# --- DefaultToolCallingManagerTests ----------------------------------------------------------


def test_when_tool_callback_exists_then_resolve() -> None:
    # ports DefaultToolCallingManagerTests.whenToolCallbackExistsThenResolve
    tool_a = MissionTool("toolA")
    resolved = ToolCallingManager().resolve_tool_definitions(ChatOptions(tools=(tool_a,)))
    assert resolved == [tool_a.definition]


async def test_when_no_tool_call_in_chat_response_then_throw() -> None:
    # ports DefaultToolCallingManagerTests.whenNoToolCallInChatResponseThenThrow
    with pytest.raises(ModelResponseError, match="no generation with tool calls"):
        await ToolCallingManager().execute_tool_calls(prompt_with([]), ChatResponse(generations=()))


async def test_when_single_tool_call_in_chat_response_then_execute() -> None:
    # ports DefaultToolCallingManagerTests.whenSingleToolCallInChatResponseThenExecute and
    # whenDuplicateMixedToolCallsInChatResponseThenExecute
    result = await ToolCallingManager().execute_tool_calls(
        prompt_with([MissionTool("toolA")]), calls("toolA")
    )
    assert last_responses(result) == [("toolA", "toolA", "Mission accomplished!")]
    assert result.return_direct is False


async def test_when_single_tool_call_with_return_direct_then_execute() -> None:
    # ports DefaultToolCallingManagerTests.
    # whenSingleToolCallWithReturnDirectInChatResponseThenExecute
    result = await ToolCallingManager().execute_tool_calls(
        prompt_with([MissionTool("toolA", return_direct=True)]), calls("toolA")
    )
    assert last_responses(result) == [("toolA", "toolA", "Mission accomplished!")]
    assert result.return_direct is True


@pytest.mark.parametrize(
    ("direct_a", "direct_b", "expected"), [(False, False, False), (True, True, True),
                                           (True, False, False)]
)  # fmt: skip
async def test_when_multiple_tool_calls_then_execute(
    direct_a: bool, direct_b: bool, expected: bool
) -> None:
    # ports DefaultToolCallingManagerTests.whenMultipleToolCallsInChatResponseThenExecute,
    # whenMultipleToolCallsWithReturnDirectInChatResponseThenExecute and
    # whenMultipleToolCallsWithMixedReturnDirectInChatResponseThenExecute
    tools: list[Tool] = [MissionTool("toolA", direct_a), MissionTool("toolB", direct_b)]
    result = await ToolCallingManager().execute_tool_calls(
        prompt_with(tools), calls("toolA", "toolB")
    )
    assert last_responses(result) == [
        ("toolA", "toolA", "Mission accomplished!"),
        ("toolB", "toolB", "Mission accomplished!"),
    ]
    assert result.return_direct is expected


async def test_when_tool_call_with_exception_then_return_error() -> None:
    # ports DefaultToolCallingManagerTests.whenToolCallWithExceptionThenReturnError
    result = await ToolCallingManager().execute_tool_calls(
        prompt_with([FailingTool("toolC")]), calls("toolC")
    )
    assert last_responses(result) == [("toolC", "toolC", "You failed this city!")]
    assert result.outcomes[0].status is ToolCallStatus.ERROR


class GenericMethods:
    def call(self, value: str = "") -> str:
        return "Mission accomplished!"

    def call_with_tool_context(self, context: ToolContext) -> str:
        return f"ToolContext call: {context['key']}"


async def test_when_mixed_method_tool_calls_in_chat_response_then_execute() -> None:
    # ports DefaultToolCallingManagerTests.whenMixedMethodToolCallsInChatResponseThenExecute
    methods = GenericMethods()
    tools: list[Tool] = [
        FunctionTool.from_function(methods.call, name="toolA"),
        FunctionTool.from_function(methods.call_with_tool_context, name="toolB"),
    ]
    result = await ToolCallingManager().execute_tool_calls(
        prompt_with(tools, context={"key": "value"}), calls("toolA", "toolB")
    )
    assert last_responses(result) == [
        ("toolA", "toolA", "Mission accomplished!"),
        ("toolB", "toolB", "ToolContext call: value"),
    ]


async def test_when_max_calls_per_tool_exceeded_then_throw_with_partial_result() -> None:
    # ports DefaultToolCallingManagerTests.whenMaxCallsPerToolExceededThenThrowWithPartialResult
    manager = ToolCallingManager(limits=CallLimits(overrides={"toolA": 1}, on_breach="raise"))
    history = (UserMessage(text="Hello"), prior("toolA"))
    with pytest.raises(ToolCallLimitError, match=r"limit.*'toolA'|'toolA'.*limit") as caught:
        await manager.execute_tool_calls(
            prompt_with([MissionTool("toolA")], *history), calls("toolA")
        )
    assert isinstance(caught.value.partial, ToolExecutionResult)


async def test_when_max_calls_per_tool_exceeded_and_return_error_response() -> None:
    # ports DefaultToolCallingManagerTests.
    # whenMaxCallsPerToolExceededAndReturnErrorResponseThenSynthesizeErrorResponse
    # (feedback is toolrelay's default; Spring AI raises by default)
    tool_a = MissionTool("toolA")
    manager = ToolCallingManager(limits=CallLimits(overrides={"toolA": 1}))
    history = (UserMessage(text="Hello"), prior("toolA"))
    result = await manager.execute_tool_calls(prompt_with([tool_a], *history), calls("toolA"))
    [(_, name, data)] = last_responses(result)
    assert name == "toolA"
    assert "limit" in data
    assert "Mission accomplished!" not in data
    assert tool_a.inputs == []


async def test_when_tool_excluded_from_limit_then_not_counted() -> None:
    # ports DefaultToolCallingManagerTests.whenToolExcludedFromLimitThenNotCounted
    manager = ToolCallingManager(limits=CallLimits(per_tool=1, excluded=frozenset({"toolA"})))
    history = (UserMessage(text="Hello"), prior("toolA", "toolA", "toolA"))
    result = await manager.execute_tool_calls(
        prompt_with([MissionTool("toolA")], *history), calls("toolA")
    )
    assert last_responses(result) == [("toolA", "toolA", "Mission accomplished!")]


async def test_when_max_total_tool_calls_exceeded_then_throw_regardless_of_tool_name() -> None:
    # ports DefaultToolCallingManagerTests.
    # whenMaxTotalToolCallsExceededThenThrowRegardlessOfToolName
    manager = ToolCallingManager(limits=CallLimits(total=1, on_breach="raise"))
    history = (UserMessage(text="Hello"), prior("toolB"))
    with pytest.raises(ToolCallLimitError, match=r"limit of 1 tool call\b"):
        await manager.execute_tool_calls(
            prompt_with([MissionTool("toolA")], *history), calls("toolA")
        )


@pytest.mark.parametrize(("prior_name", "limit"), [("toolA", 40), ("toolB", 150)])
async def test_when_builder_unconfigured_then_default_limits_apply(
    prior_name: str, limit: int
) -> None:
    # ports DefaultToolCallingManagerTests.whenBuilderUnconfiguredThenDefaultMaxCallsPerToolApplies
    # and whenBuilderUnconfiguredThenDefaultMaxTotalToolCallsApplies (same defaults: 40, 150)
    assert (CallLimits().per_tool, CallLimits().total) == (40, 150)
    history = (UserMessage(text="Hello"), prior(*[prior_name] * limit))
    result = await ToolCallingManager().execute_tool_calls(
        prompt_with([MissionTool("toolA")], *history), calls("toolA")
    )
    assert result.outcomes[0].status is ToolCallStatus.LIMIT


@pytest.mark.parametrize("prior_name", ["toolA", "toolB"])
async def test_when_unlimited_then_default_limits_are_disabled(prior_name: str) -> None:
    # ports DefaultToolCallingManagerTests.whenUnlimitedCallsPerToolThenDefaultLimitIsDisabled
    # and whenUnlimitedTotalToolCallsThenDefaultLimitIsDisabled
    manager = ToolCallingManager(limits=CallLimits.unlimited())
    history = (UserMessage(text="Hello"), prior(*[prior_name] * 155))
    result = await manager.execute_tool_calls(
        prompt_with([MissionTool("toolA")], *history), calls("toolA")
    )
    assert result.outcomes[0].status is ToolCallStatus.OK


@pytest.mark.parametrize("limits", [CallLimits(overrides={"toolA": 1}), CallLimits(total=1)])
async def test_when_prior_turn_has_tool_calls_then_not_counted(limits: CallLimits) -> None:
    # ports DefaultToolCallingManagerTests.
    # whenPriorTurnHasToolCallsThenNotCountedTowardCurrentTurnPerToolLimit and
    # whenPriorTurnHasManyToolCallsThenNotCountedTowardCurrentTurnTotalLimit
    history = (
        UserMessage(text="Earlier turn"),
        prior(*["toolA"] * 10),
        UserMessage(text="New turn"),
    )
    result = await ToolCallingManager(limits=limits).execute_tool_calls(
        prompt_with([MissionTool("toolA")], *history), calls("toolA")
    )
    assert result.outcomes[0].status is ToolCallStatus.OK


async def test_when_current_turn_exceeds_limit_then_throws_regardless_of_prior_turns() -> None:
    # ports DefaultToolCallingManagerTests.
    # whenCurrentTurnExceedsLimitThenThrowsRegardlessOfPriorTurns
    manager = ToolCallingManager(limits=CallLimits(overrides={"toolA": 1}, on_breach="raise"))
    history = (
        UserMessage(text="Earlier turn"),
        prior("toolB"),
        UserMessage(text="New turn"),
        prior("toolA"),
    )
    with pytest.raises(ToolCallLimitError, match="'toolA'"):
        await manager.execute_tool_calls(
            prompt_with([MissionTool("toolA")], *history), calls("toolA")
        )


# --- DefaultToolCallingManagerTest -----------------------------------------------------------


@pytest.mark.parametrize("arguments", ["", "   "])
async def test_should_handle_null_and_empty_arguments(arguments: str) -> None:
    # ports DefaultToolCallingManagerTest.shouldHandleNullArgumentsInStreamMode and
    # shouldHandleEmptyArgumentsInStreamMode: blank arguments reach the tool as "{}"
    test_tool = MissionTool("testTool")
    await ToolCallingManager().execute_tool_calls(
        prompt_with([test_tool]), calls("testTool", arguments=arguments)
    )
    assert test_tool.inputs == ["{}"]


async def test_should_handle_multiple_tool_calls_in_single_response() -> None:
    # ports DefaultToolCallingManagerTest.shouldHandleMultipleToolCallsInSingleResponse
    one, two = MissionTool("tool1"), MissionTool("tool2")
    result = await ToolCallingManager().execute_tool_calls(
        prompt_with([one, two]), calls("tool1", "tool2")
    )
    assert [o.status for o in result.outcomes] == [ToolCallStatus.OK, ToolCallStatus.OK]


async def test_should_handle_tool_call_with_complex_json_arguments() -> None:
    # ports DefaultToolCallingManagerTest.shouldHandleToolCallWithComplexJsonArguments
    complex_tool = MissionTool("complexTool")
    arguments = '{"nested": {"level1": {"level2": "value"}}, "array": [1, 2, 3]}'
    await ToolCallingManager().execute_tool_calls(
        prompt_with([complex_tool]), calls("complexTool", arguments=arguments)
    )
    assert json.loads(complex_tool.inputs[0]) == json.loads(arguments)


async def test_should_handle_tool_call_with_malformed_json() -> None:
    # ports DefaultToolCallingManagerTest.shouldHandleToolCallWithMalformedJson: broken JSON is
    # answered before the tool runs (Spring AI hands it to the tool; a documented difference)
    test_tool = MissionTool("testTool")
    result = await ToolCallingManager().execute_tool_calls(
        prompt_with([test_tool]), calls("testTool", arguments='{"invalid": json}')
    )
    assert result.outcomes[0].status is ToolCallStatus.INVALID_ARGUMENTS
    assert "Arguments are not valid JSON" in result.responses[0].data
    assert test_tool.inputs == []


async def test_should_handle_tool_call_returning_null() -> None:
    # ports DefaultToolCallingManagerTest.shouldHandleToolCallReturningNull
    def null_returning_tool() -> None:
        return None

    result = await ToolCallingManager().execute_tool_calls(
        prompt_with(as_tools(null_returning_tool)), calls("null_returning_tool")
    )
    assert result.responses[0].data == "Done"


async def test_should_handle_multiple_generations_with_tool_calls() -> None:
    # ports DefaultToolCallingManagerTest.shouldHandleMultipleGenerationsWithToolCalls: the
    # first generation with tool calls is the one answered
    multi = MissionTool("multiGenTool")
    first = AssistantMessage(tool_calls=(ToolCall(id="1", name="multiGenTool", arguments="{}"),))
    second = AssistantMessage(tool_calls=(ToolCall(id="2", name="multiGenTool", arguments="{}"),))
    response = ChatResponse(generations=(Generation(message=first), Generation(message=second)))
    result = await ToolCallingManager().execute_tool_calls(prompt_with([multi]), response)
    assert [r.id for r in result.responses] == ["1"]


# --- FunctionToolCallbackTest ----------------------------------------------------------------


class Recorded:
    def __init__(self) -> None:
        self.value: object = None
        self.context: object = None


def test_consumer_tool_call() -> None:
    # ports FunctionToolCallbackTest.testConsumerToolCall and testEmptyStringInput
    seen = Recorded()

    @tool(return_direct=True)
    def consumer(value: str) -> None:
        seen.value = value

    made = FunctionTool.from_function(consumer)
    assert made.metadata.return_direct is True
    assert made.call_sync('{"value": "test string param"}') == "Done"
    assert seen.value == "test string param"
    made.call_sync('{"value": ""}')
    assert seen.value == ""


def test_bi_function_tool_call() -> None:
    # ports FunctionToolCallbackTest.testBiFunctionToolCall
    seen = Recorded()

    def bi_function(value: str, context: ToolContext) -> str:
        seen.value, seen.context = value, context
        return f"return value = {value}"

    result = FunctionTool.from_function(bi_function).call_sync(
        '{"value": "test string param"}', {"foo": "bar"}
    )
    assert result == "return value = test string param"
    assert seen.value == "test string param"
    assert seen.context == {"foo": "bar"}


def test_function_and_supplier_tool_calls() -> None:
    # ports FunctionToolCallbackTest.testFunctionToolCall and testSupplierToolCall
    def function(value: str) -> str:
        return f"return value = {value}"

    def supplier() -> str:
        return "return value = "

    assert FunctionTool.from_function(function).call_sync('{"value": "x"}') == "return value = x"
    assert FunctionTool.from_function(supplier).call_sync("") == "return value = "


async def test_throw_runtime_exception() -> None:
    # ports FunctionToolCallbackTest.testThrowRuntimeException: the tool's own exception
    # propagates from call() unchanged, and the manager answers it as an error
    def throws(value: str) -> None:
        raise RuntimeError("test exception")

    made = FunctionTool.from_function(throws)
    with pytest.raises(RuntimeError, match="test exception"):
        await made.call('{"value": "x"}')
    strict = ToolCallingManager(
        exception_processor=DefaultToolExceptionProcessor(always_raise=True)
    )
    with pytest.raises(ToolExecutionError, match="test exception") as caught:
        await strict.execute_tool_calls(
            prompt_with([made]), calls("throws", arguments='{"value": "x"}')
        )
    assert caught.value.tool == "throws"
    assert isinstance(caught.value.__cause__, RuntimeError)


# --- MethodToolCallbackGenericTypesTest ------------------------------------------------------


class GenericClass:
    def process_string_list(self, strings: list[str]) -> str:
        return f"{len(strings)} strings processed: {strings}"

    def process_string_int_map(self, map: dict[str, int]) -> str:
        return f"{len(map)} entries processed: {map}"

    def process_list_of_maps(self, list_of_maps: list[dict[str, int]]) -> str:
        return f"{len(list_of_maps)} maps processed: {list_of_maps}"

    def process_context(self, context: ToolContext) -> str:
        return f"{len(context)} entries processed {dict(context)}"

    def process_object(self, value: object) -> str:
        return f"Object processed: {value}"


def test_generic_types() -> None:
    # ports MethodToolCallbackGenericTypesTest.testGenericListType, testGenericMapType,
    # testNestedGenericType, testToolContextType and testObjectType
    generic = GenericClass()

    def run(method: Any, arguments: str, context: Mapping[str, Any] | None = None) -> str:
        return FunctionTool.from_function(method).call_sync(arguments, context)

    assert run(generic.process_string_list, '{"strings": ["one", "two", "three"]}') == (
        "3 strings processed: ['one', 'two', 'three']"
    )
    assert run(generic.process_string_int_map, '{"map": {"one": 1, "two": 2, "three": 3}}') == (
        "3 entries processed: {'one': 1, 'two': 2, 'three': 3}"
    )
    assert run(
        generic.process_list_of_maps, '{"list_of_maps": [{"a": 1, "b": 2}, {"c": 3, "d": 4}]}'
    ) == ("2 maps processed: [{'a': 1, 'b': 2}, {'c': 3, 'd': 4}]")
    assert run(generic.process_context, "{}", {"foo": "bar"}) == (
        "1 entries processed {'foo': 'bar'}"
    )
    assert run(generic.process_object, '{"value": {"name": "spring-ai", "version": 2}}') == (
        "Object processed: {'name': 'spring-ai', 'version': 2}"
    )


# --- MethodToolCallbackProviderTests ---------------------------------------------------------


class ValidToolObject:
    @tool
    def valid_tool(self) -> str:
        """A valid tool."""
        return "Valid tool result"


class DuplicateToolNameObject:
    @tool
    def valid_tool(self) -> str:
        """A duplicate."""
        return "Duplicate tool result"


def test_when_tool_object_has_tool_annotated_method_then_succeed() -> None:
    # ports MethodToolCallbackProviderTests.whenToolObjectHasToolAnnotatedMethodThenSucceed
    # and whenToolObjectHasObjectTypeMethodThenSuccess
    found = tools_from(ValidToolObject())
    assert [t.name for t in found] == ["valid_tool"]
    assert found[0].call_sync("") == "Valid tool result"


def test_when_tool_object_has_no_tool_annotated_method_then_throw() -> None:
    # ports MethodToolCallbackProviderTests.whenToolObjectHasNoToolAnnotatedMethodThenThrow
    class NoToolAnnotatedMethodObject:
        def not_a_tool(self) -> str:
            return "Not a tool"

    with pytest.raises(ToolDefinitionError, match="no methods decorated with @tool were found"):
        tools_from(NoToolAnnotatedMethodObject())


def test_when_multiple_tool_objects_with_same_tool_name_then_throw() -> None:
    # ports MethodToolCallbackProviderTests.whenMultipleToolObjectsWithSameToolNameThenThrow
    with pytest.raises(DuplicateToolError, match="defined twice") as caught:
        ToolCatalog(as_tools(ValidToolObject(), DuplicateToolNameObject()))
    assert caught.value.name == "valid_tool"
    assert "ValidToolObject" in caught.value.first_source
    assert "DuplicateToolNameObject" in caught.value.second_source


def enhance_tool(**options: Any) -> Any:
    """A decorator of one's own built on @tool (Spring AI's meta-annotation)."""
    return tool(read_only=True, **options)


def test_when_tool_object_has_enhance_tool_annotated_method_then_succeed() -> None:
    # ports MethodToolCallbackProviderTests.whenToolObjectHasEnhanceToolAnnotatedMethodThenSucceed
    class ToolUseEnhanceToolObject:
        @enhance_tool(description="enhance tool")
        def enhance_tool(self) -> str:
            return "enhance tool result"

    [made] = tools_from(ToolUseEnhanceToolObject())
    assert (made.name, made.definition.description) == ("enhance_tool", "enhance tool")
    assert made.metadata.read_only is True


def test_build_tools_with_overridden_method_returns_only_the_override() -> None:
    # ports MethodToolCallbackProviderTests.buildToolsWithBridgeMethodReturnOnlyUserDeclaredMethods
    class Base:
        @tool
        def test(self, value: str) -> str:
            """Base."""
            return "base"

    class Derived(Base):
        @tool
        def test(self, value: str) -> str:
            """Derived."""
            return value

    [made] = tools_from(Derived())
    assert made.call_sync('{"value": "input"}') == "input"


# --- MethodToolCallbackExceptionHandlingTest -------------------------------------------------


def test_invalid_input_is_reported() -> None:
    # ports MethodToolCallbackExceptionHandlingTest.testGenericListType
    class TestTools:
        @tool(description="Process a list of strings")
        def string_list(self, strings: list[str]) -> str:
            return f"{len(strings)} strings processed: {strings}"

    [made] = tools_from(TestTools())
    assert made.call_sync('{"strings": ["one", "two", "three"]}') == (
        "3 strings processed: ['one', 'two', 'three']"
    )
    with pytest.raises(ToolArgumentError, match="strings: Input should be a valid list"):
        made.call_sync('{"strings": 678}')
    with pytest.raises(InvalidJsonError, match="Arguments are not valid JSON"):
        made.call_sync("nill")


# --- ToolUtilsTests ---------------------------------------------------------------------------


def test_tool_names_and_descriptions() -> None:
    # ports ToolUtilsTests.getToolNameFromMethodWithoutAnnotation,
    # getToolNameFromMethodWithAnnotationButNoName, getToolNameFromMethodWithValidName,
    # getToolDescriptionFromMethodWithoutAnnotation,
    # getToolDescriptionFromMethodWithAnnotationButNoDescription,
    # getToolDescriptionFromMethodWithDescription and getToolNameFromMethodWithUnicodeCharacters
    def simple_method() -> None: ...

    assert FunctionTool.from_function(simple_method).name == "simple_method"
    assert FunctionTool.from_function(tool(simple_method)).name == "simple_method"
    assert FunctionTool.from_function(simple_method).definition.description == "simple method"
    assert validate_tool_name("valid_tool-name.v1") == "valid_tool-name.v1"

    @tool(description="This is a tool description")
    def method_with_description() -> None: ...

    assert FunctionTool.from_function(method_with_description).definition.description == (
        "This is a tool description"
    )
    assert validate_tool_name("获取天气") == "获取天气"


@pytest.mark.parametrize("name", ["invalid tool name", "tool@name!", "tool()"])
def test_names_providers_reject_are_refused(name: str) -> None:
    # ports ToolUtilsTests.getToolNameFromMethodWithNameContainingSpaces,
    # getToolNameFromMethodWithNameContainingSpecialChars and
    # getToolNameFromMethodWithNameContainingParentheses: refused, not warned about (a
    # documented difference)
    with pytest.raises(InvalidToolNameError, match="are not allowed"):

        @tool(name=name)
        def method() -> None: ...


def test_tool_name_from_method_with_empty_name() -> None:
    # ports ToolUtilsTests.getToolNameFromMethodWithEmptyName: an explicit empty name is a
    # mistake in @tool (a documented difference); from_function treats it as "no name"
    with pytest.raises(InvalidToolNameError):

        @tool(name="")
        def method_with_empty_name() -> None: ...

    def method() -> None: ...

    assert FunctionTool.from_function(method, name="").name == "method"


# --- DefaultToolExecutionExceptionProcessorTests ---------------------------------------------


def test_process_returns_message_and_fallbacks() -> None:
    # ports DefaultToolExecutionExceptionProcessorTests.processReturnsMessage,
    # processReturnsFallbackMessageWhenNull and processReturnsFallbackMessageWhenBlank
    processor = DefaultToolExceptionProcessor()
    assert processor.process("toolName", ValueError("Inner exception")) == "Inner exception"
    assert processor.process("toolName", LookupError()) == (
        "Exception occurred in tool: toolName (LookupError)"
    )
    assert processor.process("toolName", RuntimeError(" ")) == (
        "Exception occurred in tool: toolName (RuntimeError)"
    )


def test_process_always_throws() -> None:
    # ports DefaultToolExecutionExceptionProcessorTests.processAlwaysThrows and
    # processThrowsCheckedException
    processor = DefaultToolExceptionProcessor(always_raise=True)
    error = ValueError("Inner exception")
    with pytest.raises(ToolExecutionError, match="Inner exception") as caught:
        processor.process("toolName", error)
    assert caught.value.tool == "toolName"
    assert caught.value.__cause__ is error


def test_process_rethrows_selected_types_and_subclasses() -> None:
    # ports DefaultToolExecutionExceptionProcessorTests.processRethrows,
    # processRethrowsExceptionSubclasses and processRethrowsOnlySelectExceptions
    error = LookupError("Inner exception")
    for rethrow in (LookupError, Exception):
        with pytest.raises(LookupError) as caught:
            DefaultToolExceptionProcessor(rethrow=[rethrow]).process("toolName", error)
        assert caught.value is error
    processor = DefaultToolExceptionProcessor(rethrow=[LookupError])
    assert processor.process("toolName", RuntimeError("This exception was not rethrown")) == (
        "This exception was not rethrown"
    )


def test_process_throws_error() -> None:
    # ports DefaultToolExecutionExceptionProcessorTests.processThrowsError: MemoryError, the
    # one Exception that says the process is in trouble, is never turned into text
    error = MemoryError("Inner error")
    with pytest.raises(MemoryError) as caught:
        DefaultToolExceptionProcessor().process("toolName", error)
    assert caught.value is error
