from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pydantic
import pytest

from toolrelay.client import (
    ChatClient,
    ChatClientRequest,
    ChatClientResponse,
    ToolCallingAdvisor,
    ToolLoopState,
    ToolSearchAdvisor,
)
from toolrelay.client._tool_calling import MANAGER_KEY
from toolrelay.exceptions import ConfigurationError, DuplicateToolError, ModelResponseError
from toolrelay.execution import (
    ApprovalInterceptor,
    Approve,
    LoggingAuditSink,
    ToolCallingManager,
    ToolInvocation,
)
from toolrelay.messages import AssistantMessage, SystemMessage, ToolCall, UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.testing import RecordingAdvisor, ScriptedModel, text_response, tool_call_response
from toolrelay.tools import FunctionTool, ToolCatalog, ToolContext, tool


@tool
def greet(name: str, context: ToolContext) -> str:
    """Greet someone on behalf of the current user.

    Args:
        name: Who to greet.
    """
    return f"{context.user_id} greets {name}"


class Shop:
    @tool(name="shop.price")
    def price(self, sku: str) -> float:
        """The price of a product.

        Args:
            sku: The product's SKU.
        """
        return 9.5

    @tool(name="shop.stock")
    def stock(self, sku: str) -> int:
        """Units in stock.

        Args:
            sku: The product's SKU.
        """
        return 3


class City(pydantic.BaseModel):
    name: str
    population: int


def params(request: ChatClientRequest) -> dict[str, Any]:
    """A request's advisor parameters, without the entry that carries the client's manager."""
    return {k: v for k, v in request.context.items() if k != MANAGER_KEY}


async def approve(invocation: ToolInvocation) -> Approve:
    return Approve()


# --- building prompts ------------------------------------------------------------------------


def test_defaults_and_request_settings_build_the_prompt() -> None:
    model = ScriptedModel(["hello"])
    client = (
        ChatClient.builder(model)
        .default_system("Be brief.")
        .default_options(ChatOptions(model="m-1", temperature=0.2))
        .build()
    )
    response = (
        client.prompt()
        .messages(UserMessage(text="earlier"), AssistantMessage(text="noted"))
        .user("hi")
        .options(ChatOptions(temperature=0.7, max_tokens=10))
        .call()
    )
    assert response.content() == "hello"
    prompt = model.prompts[0]
    assert prompt.messages == (
        SystemMessage(text="Be brief."),
        UserMessage(text="earlier"),
        AssistantMessage(text="noted"),
        UserMessage(text="hi"),
    )
    assert (prompt.options.model, prompt.options.temperature, prompt.options.max_tokens) == (
        "m-1",
        0.7,
        10,
    )


def test_the_request_system_text_replaces_the_default() -> None:
    model = ScriptedModel(["ok"])
    client = ChatClient.builder(model).default_system("default").build()
    client.prompt("hi").system("special").call()
    assert model.prompts[0].messages[0] == SystemMessage(text="special")


def test_a_request_without_messages_is_an_error() -> None:
    client = ChatClient.create(ScriptedModel([]))
    with pytest.raises(ConfigurationError, match="no messages"):
        client.prompt().call()


def test_tools_of_every_kind_are_accepted() -> None:
    model = ScriptedModel(["ok"])
    catalog = ToolCatalog([FunctionTool.from_function(greet)])
    client = ChatClient.builder(model).default_tools(catalog).build()
    client.prompt("hi").tools(Shop()).tool_context({"user_id": "u-1"}).call()
    assert model.tool_names_shown(0) == ["greet", "shop.price", "shop.stock"]


def test_duplicate_tools_are_an_error() -> None:
    client = ChatClient.builder(ScriptedModel(["ok"])).default_tools(greet).build()
    with pytest.raises(DuplicateToolError, match="greet"):
        client.prompt("hi").tools(greet).call()


def test_tool_context_and_advisor_params_are_merged_and_reach_their_targets() -> None:
    model = ScriptedModel([tool_call_response(("greet", {"name": "Ada"})), "done"])
    recorder = RecordingAdvisor("rec", 0)
    client = (
        ChatClient.builder(model)
        .default_tools(greet)
        .default_tool_context({"user_id": "u-default", "tenant_id": "t-1"})
        .default_advisor_params(locale="en", conversation_id="c0")
        .default_advisors(recorder)
        .build()
    )
    response = (
        client.prompt("greet Ada")
        .tool_context({"user_id": "u-42"})
        .conversation("c1")
        .advisor_params(trace="x")
        .call()
    )
    assert response.tool_loop is not None
    assert response.tool_loop.rounds[0].responses[0].data == "u-42 greets Ada"
    assert params(recorder.requests[0]) == {"locale": "en", "conversation_id": "c1", "trace": "x"}
    # The loop advisor reads the client's manager from the request.
    assert recorder.requests[0].context[MANAGER_KEY] is client.tool_calling_manager
    assert model.prompts[0].options.tool_context == {"user_id": "u-42", "tenant_id": "t-1"}


def test_mutate_starts_from_the_client_settings() -> None:
    model = ScriptedModel(["a", "b"])
    base = ChatClient.builder(model).default_system("one").build()
    other = base.mutate().default_system("two").build()
    base.prompt("x").call()
    other.prompt("x").call()
    assert [p.messages[0] for p in model.prompts] == [
        SystemMessage(text="one"),
        SystemMessage(text="two"),
    ]


# --- exactly one tool-calling advisor -----------------------------------------------------------


def test_two_tool_calling_advisors_are_a_configuration_error() -> None:
    client = (
        ChatClient.builder(ScriptedModel(["ok"])).default_advisors(ToolCallingAdvisor()).build()
    )
    with pytest.raises(ConfigurationError, match="exactly one tool-calling advisor"):
        client.prompt("hi").advisors(ToolCallingAdvisor(name="second")).call()


class Loop(ToolCallingAdvisor):
    def __init__(self) -> None:
        super().__init__(name="custom-loop")
        self.turns = 0

    async def init_loop(
        self, request: ChatClientRequest, state: ToolLoopState
    ) -> ChatClientRequest:
        self.turns += 1
        return request


def test_a_given_tool_calling_advisor_or_subclass_replaces_the_default() -> None:
    model = ScriptedModel([tool_call_response(("greet", {"name": "Bo"})), "done"])
    loop = Loop()
    client = ChatClient.builder(model).default_tools(greet).default_advisors(loop).build()
    response = client.prompt("hi").tool_context({"user_id": "u"}).call()
    assert response.content() == "done"
    assert loop.turns == 1


def test_without_tool_calling_tool_calls_come_back_unexecuted() -> None:
    model = ScriptedModel([tool_call_response(("greet", {"name": "Bo"}))])
    client = ChatClient.builder(model).default_tools(greet).tool_calling(False).build()
    response = client.prompt("hi").call()
    assert response.chat_response().generations[0].message.tool_calls == (
        ToolCall(id="call_1", name="greet", arguments='{"name": "Bo"}'),
    )
    assert response.tool_loop is None
    assert model.tool_names_shown(0) == ["greet"]


# --- no setting is silently dropped ------------------------------------------------------------


@tool(name="refund.issue", destructive=True)
def issue_refund(order_id: str) -> str:
    """Refund an order in full."""
    REFUNDS.append(order_id)
    return f"refunded {order_id}"


REFUNDS: list[str] = []


def approving_manager() -> ToolCallingManager:
    return ToolCallingManager(approval=ApprovalInterceptor(destructive=True))


def test_a_builder_manager_next_to_a_loop_advisor_with_its_own_is_refused_at_build() -> None:
    # Each turn stops at the call, waiting for approval.
    model = ScriptedModel([tool_call_response(("refund__issue", {"order_id": "A"})) for _ in "ab"])
    owned = ToolSearchAdvisor(
        [issue_refund],
        index=BM25ToolIndex(),
        always_on=["refund.issue"],
        tool_calling_manager=ToolCallingManager(),
    )
    with pytest.raises(
        ConfigurationError, match=r"give the advisor no manager \(ToolSearchAdvisor\(\.\.\.\) uses"
    ):
        ChatClient.builder(model).default_advisors(owned).tool_calling_manager(
            approving_manager()
        ).build()
    with pytest.raises(ConfigurationError, match=r"approval= configure the client's tool rounds"):
        ChatClient.builder(model).default_advisors(owned).guards(
            approval=ApprovalInterceptor(destructive=True)
        ).build()
    # A search advisor without a manager uses the client's: its approval holds the call back.
    REFUNDS.clear()
    search = ToolSearchAdvisor([issue_refund], index=BM25ToolIndex(), always_on=["refund.issue"])
    client = (
        ChatClient.builder(model)
        .default_advisors(search)
        .tool_calling_manager(approving_manager())
        .build()
    )
    response = client.prompt("refund A").conversation("c0").call()
    assert [p.tool_name for p in response.pending_approvals] == ["refund.issue"]
    assert REFUNDS == []
    # Given to the advisor itself, the manager's approval holds the destructive call back too.
    search = ToolSearchAdvisor(
        [issue_refund],
        index=BM25ToolIndex(),
        always_on=["refund.issue"],
        tool_calling_manager=approving_manager(),
    )
    client = ChatClient.builder(model).default_advisors(search).build()
    response = client.prompt("refund A").conversation("c1").call()
    assert [p.tool_name for p in response.pending_approvals] == ["refund.issue"]
    assert REFUNDS == []


@pytest.mark.parametrize(
    ("configure", "conflict"),
    [
        (
            lambda b: b.default_advisors(
                ToolCallingAdvisor(tool_calling_manager=ToolCallingManager())
            ).tool_calling_manager(approving_manager()),
            "runs the loop with a manager of its own",
        ),
        (
            lambda b: b.default_advisors(
                ToolCallingAdvisor(tool_calling_manager=ToolCallingManager())
            ).guards(approval=approve),
            "runs the loop with a manager of its own",
        ),
        (
            lambda b: b.default_advisors(ToolCallingAdvisor()).tool_calling(False),
            "switches the tool loop off",
        ),
        (
            lambda b: b.tool_calling_manager(approving_manager()).tool_calling(False),
            "switches the loop off",
        ),
        (lambda b: b.guards(approval=approve).tool_calling(False), "switches the loop off"),
        (
            lambda b: b.tool_calling_manager(approving_manager()).guards(approval=approve),
            r"approval= build the client's manager, but tool_calling_manager= gives one",
        ),
        (lambda b: b.default_advisors(ToolCallingAdvisor(), ToolCallingAdvisor()), "exactly one"),
    ],
)
def test_conflicting_defaults_are_refused_at_build(configure: Any, conflict: str) -> None:
    with pytest.raises(ConfigurationError, match=conflict):
        configure(ChatClient.builder(ScriptedModel([]))).build()


@pytest.mark.parametrize(
    ("configure", "conflict"),
    [
        (
            lambda b: b.tool_calling_manager(approving_manager()),
            "runs the loop with a manager of its own",
        ),
        (lambda b: b.guards(approval=approve), "runs the loop with a manager of its own"),
        (lambda b: b.tool_calling(False), "switches the tool loop off"),
    ],
)
def test_a_request_loop_advisor_that_would_drop_a_default_is_refused(
    configure: Any, conflict: str
) -> None:
    client = configure(ChatClient.builder(ScriptedModel(["x"]))).build()
    loop = ToolCallingAdvisor(tool_calling_manager=ToolCallingManager())
    with pytest.raises(ConfigurationError, match=conflict):
        client.prompt("hi").advisors(loop).call()


def test_a_request_loop_advisor_without_a_manager_runs_with_the_clients() -> None:
    REFUNDS.clear()
    model = ScriptedModel([tool_call_response(("refund__issue", {"order_id": "A"}))])
    client = ChatClient.builder(model).tool_calling_manager(approving_manager()).build()
    response = client.prompt("refund A").tools(issue_refund).advisors(ToolCallingAdvisor()).call()
    assert [p.tool_name for p in response.pending_approvals] == ["refund.issue"]
    assert REFUNDS == []


def test_tool_names_without_a_loop_to_resolve_them_are_refused() -> None:
    client = ChatClient.builder(ScriptedModel(["x"])).tool_calling(False).build()
    with pytest.raises(ConfigurationError, match="tool_names"):
        client.prompt("hi").options(ChatOptions(tool_names=("greet",))).call()


@pytest.mark.parametrize(
    "add",
    [
        lambda spec: spec.system("Be brief."),
        lambda spec: spec.response_format(City),
        lambda spec: spec.messages(UserMessage(text="and also")),
    ],
)
def test_a_resumed_request_refuses_what_it_would_ignore(add: Any) -> None:
    model = ScriptedModel([tool_call_response(("refund__issue", {"order_id": "A"}))])
    client = (
        ChatClient.builder(model)
        .default_tools(issue_refund)
        .tool_calling_manager(approving_manager())
        .build()
    )
    state = client.prompt("refund A").call().approval
    with pytest.raises(ConfigurationError, match="would be ignored"):
        add(client.prompt().resume(state)).call()


# --- sync and async ------------------------------------------------------------------------------


def test_call_works_without_an_event_loop() -> None:
    client = ChatClient.create(ScriptedModel(["sync answer"]))
    assert client.prompt("hi").call().content() == "sync answer"


async def test_call_works_inside_a_running_event_loop_and_acall_is_the_async_form() -> None:
    client = ChatClient.create(ScriptedModel(["from sync", "from async"]))
    assert client.prompt("hi").call().content() == "from sync"
    assert (await client.prompt("hi").acall()).content() == "from async"


async def test_concurrent_requests_share_one_client() -> None:
    client = ChatClient.create(ScriptedModel(["one", "two", "three"]))
    answers = await asyncio.gather(*(client.prompt(str(i)).acall() for i in range(3)))
    assert sorted(a.content() or "" for a in answers) == ["one", "three", "two"]


# --- streaming -----------------------------------------------------------------------------------


async def test_stream_content_chat_responses_and_collect() -> None:
    model = ScriptedModel([text_response("a streamed reply", usage=(5, 3))] * 3, chunk_size=3)
    client = ChatClient.create(model)
    pieces = [p async for p in client.prompt("hi").stream().content()]
    assert "".join(pieces) == "a streamed reply"
    assert pieces[0] == "a s"
    chunks = [c async for c in client.prompt("hi").stream().chat_responses()]
    assert chunks[-1].usage.total_tokens == 8
    collected = await client.prompt("hi").stream().collect()
    assert collected.content() == "a streamed reply"
    assert collected.chat_response().generations[0].finish_reason == "stop"


async def test_a_stream_runs_only_when_iterated() -> None:
    model = ScriptedModel(["x"])
    stream = ChatClient.create(model).prompt("hi").stream()
    assert model.call_count == 0
    [c async for c in stream.chat_client_responses()]
    assert model.call_count == 1


# --- structured output ---------------------------------------------------------------------------


def test_entity_validates_the_answer() -> None:
    model = ScriptedModel(['{"name": "Lyon", "population": 522000}'])
    city = ChatClient.create(model).prompt("Lyon?").response_format(City).call().entity(City)
    assert city == City(name="Lyon", population=522000)
    asked = model.prompts[0].messages[-1]
    assert isinstance(asked, UserMessage)
    assert asked.text.startswith("Lyon?\n\n")
    assert '"population"' in asked.text  # the JSON Schema is in the instructions


@dataclass
class Point:
    x: int
    y: int


def test_entity_accepts_a_code_fence_and_other_types() -> None:
    model = ScriptedModel(['```json\n[{"x": 1, "y": 2}]\n```'])
    points = ChatClient.create(model).prompt("points").call().entity(list[Point])
    assert points == [Point(x=1, y=2)]


@pytest.mark.parametrize(
    ("answer", "problems"),
    [
        ('{"name": "Lyon", "population": "many"}', ["population: Input should be a valid integer"]),
        ('{"population": 1}', ["name: Field required"]),
        ("Lyon has 522000 people", ["Invalid JSON"]),
    ],
)
def test_an_invalid_entity_is_a_model_response_error_listing_problems(
    answer: str, problems: list[str]
) -> None:
    response = ChatClient.create(ScriptedModel([answer])).prompt("Lyon?").call()
    with pytest.raises(ModelResponseError, match="not a valid City") as caught:
        response.entity(City)
    for problem in problems:
        assert problem in str(caught.value)
    assert isinstance(caught.value.__cause__, pydantic.ValidationError)


def test_no_text_is_a_model_response_error() -> None:
    response = ChatClient.create(ScriptedModel([text_response("")])).prompt("x").call()
    with pytest.raises(ModelResponseError, match="no text"):
        response.entity(City)


class Upper:
    name = "upper"
    order = 0

    async def advise_call(self, request: ChatClientRequest, chain: Any) -> ChatClientResponse:
        response = await chain.next_call(request)
        text = (response.chat_response.text or "").upper()
        return response.with_chat_response(text_response(text))


def test_request_advisors_apply_to_that_request_only() -> None:
    client = ChatClient.create(ScriptedModel(["quiet", "quiet"]))
    assert client.prompt("a").advisors(Upper()).call().content() == "QUIET"
    assert client.prompt("b").call().content() == "quiet"


# --- the constructor and run ---------------------------------------------------------------------


def _without_tools(prompt: Prompt) -> Prompt:
    return Prompt(messages=prompt.messages, options=prompt.options.replace(tools=()))


def greeting_script(*more: str) -> ScriptedModel:
    return ScriptedModel(
        [tool_call_response(("greet", {"name": "Ada"}), usage=(10, 2)), "Done.", *more]
    )


def test_the_constructor_and_the_builder_make_the_same_client() -> None:
    options = ChatOptions(model="m-1", temperature=0.1)
    shop = Shop()
    built_model, made_model = greeting_script(), greeting_script("Brief.")
    built_recorder, made_recorder = RecordingAdvisor("rec", 0), RecordingAdvisor("rec", 0)
    built = (
        ChatClient.builder(built_model)
        .default_system("Be kind.")
        .default_tools(greet, shop)
        .default_advisors(built_recorder)
        .default_tool_context({"user_id": "u-1"})
        .default_options(options)
        .default_advisor_params(locale="en")
        .build()
    )
    made = ChatClient(
        made_model,
        system="Be kind.",
        tools=[greet, shop],
        advisors=[made_recorder],
        context=ToolContext(user_id="u-1"),
        options=options,
        advisor_params={"locale": "en"},
    )
    built_answer = built.prompt("greet Ada").conversation("c1").call()
    made_answer = made.prompt("greet Ada").conversation("c1").call()
    assert made_answer.content() == built_answer.content() == "Done."
    # Tools are made afresh per request, so the prompts are compared without them.
    assert [_without_tools(p) for p in made_model.prompts] == [
        _without_tools(p) for p in built_model.prompts
    ]
    assert made_model.tool_definitions == built_model.tool_definitions
    assert made_model.prompts[0].options.tool_context == {"user_id": "u-1"}
    assert params(made_recorder.requests[0]) == params(built_recorder.requests[0])
    assert made_answer.tool_loop is not None
    assert built_answer.tool_loop is not None
    assert made_answer.tool_loop.history == built_answer.tool_loop.history
    # And a constructed client mutates like a built one.
    other = made.mutate().default_system("Be brief.").build()
    assert other.run_sync("hi", conversation="c2").text == "Brief."
    assert made_model.prompts[2].messages[0] == SystemMessage(text="Be brief.")
    assert made_model.tool_names_shown(2) == ["greet", "shop.price", "shop.stock"]


def test_the_constructor_takes_one_tool_source_or_advisor_without_a_list() -> None:
    catalog = ToolCatalog([FunctionTool.from_function(greet)])
    model = ScriptedModel(["a", "b"])
    recorder = RecordingAdvisor("rec", 0)
    client = ChatClient(model, tools=catalog, advisors=recorder, context={"user_id": "u-1"})
    client.run_sync("hi")
    # A catalog stays live: a tool added after the client was made is offered too.
    catalog.add(FunctionTool.from_function(Shop().price))
    client.run_sync("hi")
    assert model.tool_names_shown(0) == ["greet"]
    assert model.tool_names_shown(1) == ["greet", "shop.price"]
    assert len(recorder.requests) == 2


def test_run_is_the_request_spec_with_keywords() -> None:
    spec_model, run_model = greeting_script(), greeting_script()
    spec_recorder, run_recorder = RecordingAdvisor("rec", 0), RecordingAdvisor("rec", 0)
    spec_client = ChatClient(spec_model, system="Default.", advisors=[spec_recorder])
    run_client = ChatClient(run_model, system="Default.", advisors=[run_recorder])
    options = ChatOptions(max_tokens=64)
    called = (
        spec_client.prompt("greet Ada")
        .conversation("c7")
        .tool_context({"user_id": "u-9"})
        .system("Special.")
        .tools(greet)
        .options(options)
        .call()
    )
    result = run_client.run_sync(
        "greet Ada",
        conversation="c7",
        context={"user_id": "u-9"},
        system="Special.",
        tools=[greet],
        options=options,
    )
    assert result.text == called.content() == "Done."
    assert [_without_tools(p) for p in run_model.prompts] == [
        _without_tools(p) for p in spec_model.prompts
    ]
    assert run_model.tool_definitions == spec_model.tool_definitions
    assert params(run_recorder.requests[0]) == params(spec_recorder.requests[0])
    assert run_recorder.requests[0].context["conversation_id"] == "c7"
    assert result.tool_loop is not None
    assert result.tool_loop.rounds[0].responses[0].data == "u-9 greets Ada"
    assert result.response.context.keys() == called.context.keys()
    assert result.messages == called.tool_loop.history[1:]  # the turn, without system text


def test_run_keeps_the_request_specs_checks() -> None:
    client = ChatClient(ScriptedModel(["x"]), tools=[greet])
    with pytest.raises(DuplicateToolError, match="greet"):
        client.run_sync("hi", tools=[greet])
    client = ChatClient(ScriptedModel(["x"]), tool_calling=False)
    with pytest.raises(ConfigurationError, match="tool_names"):
        client.run_sync("hi", options=ChatOptions(tool_names=("greet",)))


@pytest.mark.parametrize(
    ("arguments", "fix"),
    [
        (
            {
                "advisors": [ToolCallingAdvisor(tool_calling_manager=ToolCallingManager())],
                "tool_calling_manager": ToolCallingManager(),
            },
            r"give the advisor no manager \(ToolCallingAdvisor\(\.\.\.\) uses the client's\)",
        ),
        (
            {
                "advisors": [ToolCallingAdvisor(tool_calling_manager=ToolCallingManager())],
                "audit": LoggingAuditSink(),
            },
            "or give the settings to its manager",
        ),
        (
            {"tool_calling_manager": ToolCallingManager(), "authorize": lambda c, t, a: True},
            r"give them to that ToolCallingManager\(\.\.\.\) instead",
        ),
        ({"approval": approve, "tool_calling": False}, "remove one of the two"),
        (
            {"advisors": [ToolCallingAdvisor()], "tool_calling": False},
            "switches the tool loop off",
        ),
        (
            {"tool_calling_manager": ToolCallingManager(), "tool_calling": False},
            "remove one of the two",
        ),
        ({"advisors": [ToolCallingAdvisor(), ToolCallingAdvisor()]}, "keep one"),
        ({"advisors": [ToolCallingManager()]}, "give it as tool_calling_manager="),
        ({"advisors": ["logging"]}, "'logging' among the advisors is not an advisor"),
        ({"advisors": 3}, "advisors takes a list of advisors"),
        ({"context": "acme"}, "context takes a mapping or a ToolContext, not 'acme'"),
        ({"system": ["Be brief."]}, "system takes the system text"),
        ({"options": {"temperature": 0.2}}, "options takes a ChatOptions"),
        ({"tool_calling_manager": ToolCallingAdvisor()}, "tool_calling_manager takes a manager"),
        ({"tool_calling": "no"}, "tool_calling takes True or False"),
        ({"single_tenant": "yes"}, "single_tenant takes True or False"),
    ],
)
def test_a_misconfigured_client_is_refused_naming_the_fix(
    arguments: dict[str, Any], fix: str
) -> None:
    with pytest.raises(ConfigurationError, match=fix):
        ChatClient(ScriptedModel([]), **arguments)


def test_a_client_needs_a_chat_model() -> None:
    with pytest.raises(ConfigurationError, match=r"needs a chat model .* not 'gpt-4\.1-mini'"):
        ChatClient("gpt-4.1-mini")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("arguments", "fix"),
    [
        ({"task": ["hi"]}, r"run takes the task as text, not \['hi'\]"),
        ({"task": "hi", "conversation": 7}, "conversation takes the conversation id as text"),
        ({"task": "hi", "context": ["u-1"]}, "context takes a mapping"),
        ({"task": "hi", "options": "fast"}, "options takes a ChatOptions"),
    ],
)
def test_a_misconfigured_run_is_refused_before_the_model_is_called(
    arguments: dict[str, Any], fix: str
) -> None:
    model = ScriptedModel(["x"])
    with pytest.raises(ConfigurationError, match=fix):
        ChatClient(model).run_sync(**arguments)
    assert model.call_count == 0


async def test_run_sync_works_inside_a_running_event_loop_and_run_is_the_async_form() -> None:
    client = ChatClient(ScriptedModel(["from sync", "from async"]))
    assert client.run_sync("hi").text == "from sync"
    assert (await client.run("hi")).text == "from async"
