"""The tool search advisor's gates: unseen tools never run, filters hide, authorize denies."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from tests.search_only import SEARCH_ONLY
from toolrelay.client import ChatClient, ToolSearchAdvisor
from toolrelay.execution import ToolCallStatus
from toolrelay.messages import AssistantMessage, ToolCall, ToolResponse, ToolResponseMessage
from toolrelay.prompt import Prompt
from toolrelay.search._base import SearchRequest, ToolIndex
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.search._hybrid import HybridToolIndex
from toolrelay.search._regex import RegexToolIndex
from toolrelay.search._vector import VectorToolIndex
from toolrelay.testing import ScriptedModel, tool_call_response
from toolrelay.testing._embedders import HashingEmbedder
from toolrelay.tools import Tool, ToolContext, ToolDefinition, tool, tools_from
from toolrelay.toolsearch import CALL_TOOL_NAME, ENGLISH, TOOL_SEARCH_NAME, SearchOptions

LOOKUP, REFUND, WIPE = "orders.lookup", "orders.refund", "admin.delete_account"


class Shop:
    def __init__(self) -> None:
        self.ran: list[str] = []

    @tool(name=LOOKUP, read_only=True)
    def lookup(self, order_id: str) -> str:
        """Read-only lookup of an order by its id.

        Args:
            order_id: The order.
        """
        self.ran.append(LOOKUP)
        return f"order {order_id}: shipped"

    @tool(name=REFUND)
    def refund(self, order_id: str) -> str:
        """Refund an order to the customer's card.

        Args:
            order_id: The order.
        """
        self.ran.append(REFUND)
        return "refunded"

    @tool(name=WIPE)
    def delete_account(self, user_id: str) -> str:
        """Permanently delete a user account and all of its orders.

        Args:
            user_id: The account to delete.
        """
        self.ran.append(WIPE)
        return "deleted"


def admins_only(context: ToolContext, definition: ToolDefinition) -> bool:
    return not definition.name.startswith("admin.") or context.get("role") == "admin"


def hybrid_index() -> HybridToolIndex:
    return HybridToolIndex(BM25ToolIndex(), VectorToolIndex(HashingEmbedder(), cache=False))


def bm25_advisor(catalog: Any, **options: Any) -> ToolSearchAdvisor:
    """An advisor over a BM25 index: deterministic rankings, no embedding model."""
    options.setdefault("index", BM25ToolIndex())
    return ToolSearchAdvisor(catalog, **{"channel": "rewrite", **SEARCH_ONLY, **options})


def search(query: str, **arguments: Any) -> Any:
    return tool_call_response((TOOL_SEARCH_NAME, {"queries": [query], **arguments}))


def responses(prompt: Prompt) -> tuple[ToolResponse, ...]:
    last = prompt.messages[-1]
    assert isinstance(last, ToolResponseMessage)
    return last.responses


def unavailable(name: str) -> str:
    return ENGLISH.unavailable_message.format(name=repr(name), search_tool=TOOL_SEARCH_NAME)


def similar(name: str, *shown: str) -> str:
    return ENGLISH.similar_names_message.format(
        name=repr(name), search_tool=TOOL_SEARCH_NAME, similar=", ".join(shown)
    )


def client_for(model: ScriptedModel, advisor: ToolSearchAdvisor, **guards: Any) -> ChatClient:
    """A client over ``advisor``; ``guards`` (``authorize=``...) build its manager."""
    return ChatClient(model, advisors=[advisor], **guards)


@pytest.fixture
def shop() -> Shop:
    return Shop()


# --- calls of tools the model was not shown ------------------------------------------------


async def test_an_undiscovered_tool_is_not_run_whatever_name_the_model_guesses(
    shop: Shop,
) -> None:
    advisor = bm25_advisor(tools_from(shop))
    guesses = [REFUND, "orders__refund", "ordersRefund", "orders.no_such_tool"]
    model = ScriptedModel(
        [tool_call_response(*((g, {"order_id": "o1"}) for g in guesses)), "gave up"]
    )
    response = await client_for(model, advisor).prompt("go").conversation("c1").acall()
    answers = responses(model.prompts[1])
    assert [a.data for a in answers] == [unavailable(g) for g in guesses]
    assert all(a.is_error for a in answers)
    assert shop.ran == []
    loop = response.tool_loop
    assert loop is not None
    assert {o.status for o in loop.rounds[0].outcomes} == {ToolCallStatus.UNKNOWN_TOOL}
    report = response.tool_search
    assert report is not None
    assert report.rounds[0].unavailable == tuple(guesses)


@pytest.mark.parametrize("channel", ["rewrite", "proxy"])
async def test_a_call_whose_name_is_null_is_feedback_and_the_turn_goes_on(
    shop: Shop, channel: str
) -> None:
    advisor = bm25_advisor(tools_from(shop), channel=channel)
    nameless = [
        ToolCall(id="n1", name=None, arguments='{"order_id": "o1"}'),  # type: ignore[arg-type]
        ToolCall(id="n2", name=None, arguments=None),  # type: ignore[arg-type]
    ]
    model = ScriptedModel([tool_call_response(*nameless), "gave up"])
    response = await client_for(model, advisor).prompt("go").conversation("c1").acall()
    assert response.content() == "gave up"
    answers = responses(model.prompts[1])
    assert [(a.id, a.is_error) for a in answers] == [("n1", True), ("n2", True)]
    assert {a.data for a in answers} == {
        "This tool call has no tool name (its name is null, not text). Call one of the "
        "available tools with its exact name."
    }
    # The history the model reads next holds well-formed calls: a name and JSON arguments.
    calls = model.prompts[1].messages[-2]
    assert isinstance(calls, AssistantMessage)
    assert [(c.name, c.arguments) for c in calls.tool_calls] == [
        ("", '{"order_id": "o1"}'),
        ("", ""),
    ]
    assert shop.ran == []
    loop = response.tool_loop
    assert loop is not None
    assert {o.status for o in loop.rounds[0].outcomes} == {ToolCallStatus.UNKNOWN_TOOL}
    report = response.tool_search
    assert report is not None
    assert report.rounds[0].unavailable == ("", "")


async def test_call_tool_naming_null_is_feedback_naming_its_name_parameter(shop: Shop) -> None:
    advisor = bm25_advisor(tools_from(shop), channel="proxy")
    model = ScriptedModel(
        [
            tool_call_response(
                (CALL_TOOL_NAME, {"name": None, "arguments": {"order_id": "o1"}}),
                (CALL_TOOL_NAME, {"arguments": {"order_id": "o1"}}),
            ),
            "gave up",
        ]
    )
    response = await client_for(model, advisor).prompt("go").conversation("c1").acall()
    null, missing = responses(model.prompts[1])
    assert null.is_error
    assert missing.is_error
    assert null.data == (
        "Invalid arguments for tool 'call_tool':\n- name: Input should be a valid string\n"
        "Fix the arguments and call the tool again."
    )
    assert missing.data == (
        "Invalid arguments for tool 'call_tool':\n- name: Field required\n"
        "Fix the arguments and call the tool again."
    )
    assert shop.ran == []
    loop = response.tool_loop
    assert loop is not None
    assert {o.status for o in loop.rounds[0].outcomes} == {ToolCallStatus.INVALID_ARGUMENTS}


async def test_calls_of_hidden_names_build_no_argument_validator_each(
    shop: Shop, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A model flooding a turn with forbidden or unknown names costs no validator per name.
    from toolrelay.execution import _arguments as arguments

    built: list[str] = []

    class Counting(arguments.SchemaValidator):
        def __init__(self, tool_name: str, schema: Mapping[str, Any]) -> None:
            built.append(tool_name)
            super().__init__(tool_name, schema)

    monkeypatch.setattr(arguments, "SchemaValidator", Counting)
    guesses = [f"orders.guess_{n}" for n in range(20)] + [WIPE]
    model = ScriptedModel(
        [tool_call_response(*((g, {"order_id": "o1"}) for g in guesses)), "gave up"]
    )
    await client_for(model, bm25_advisor(tools_from(shop))).prompt("go").conversation("c").acall()
    assert [a.data for a in responses(model.prompts[1])] == [unavailable(g) for g in guesses]
    assert len(built) <= 1, built


async def test_the_unavailable_text_is_configurable(shop: Shop) -> None:
    texts = dataclasses.replace(ENGLISH, unavailable_message="No {name} here; use {search_tool}.")
    advisor = bm25_advisor(tools_from(shop), options=SearchOptions(language=texts))
    model = ScriptedModel([tool_call_response((REFUND, {"order_id": "o1"})), "ok"])
    await client_for(model, advisor).prompt("go").conversation("c1").acall()
    assert responses(model.prompts[1])[0].data == f"No {REFUND!r} here; use tool_search."


async def test_a_discovered_tool_runs_once_found(shop: Shop) -> None:
    advisor = bm25_advisor(tools_from(shop))
    model = ScriptedModel(
        [
            search("refund order", max_results=1),
            tool_call_response(("orders__refund", {"order_id": "o1"})),
            "done",
        ]
    )
    await client_for(model, advisor).prompt("go").conversation("c1").acall()
    assert responses(model.prompts[2])[0].data == "refunded"
    assert shop.ran == [REFUND]


async def test_a_misspelled_name_of_a_shown_tool_is_answered_with_that_tool(shop: Shop) -> None:
    advisor = bm25_advisor(tools_from(shop))
    model = ScriptedModel(
        [
            search("refund order", max_results=1),
            tool_call_response(("orders.refnd", {"order_id": "o1"})),
            tool_call_response(("orders__refund", {"order_id": "o1"})),
            "done",
        ]
    )
    response = await client_for(model, advisor).prompt("go").conversation("c1").acall()
    (answer,) = responses(model.prompts[2])
    assert answer.is_error
    assert answer.data == (
        "Tool 'orders.refnd' is not available; similar tools you can call: orders__refund. Call "
        "one of them by its exact name, or search for another tool with tool_search first."
    )
    assert responses(model.prompts[3])[0].data == "refunded"  # no second search needed
    assert shop.ran == [REFUND]
    report = response.tool_search
    assert report is not None
    assert report.rounds[1].unavailable == ("orders.refnd",)


def shop_setup(shop: Shop, setup: str) -> ToolSearchAdvisor:
    """The catalog where admin.delete_account is undiscovered, forbidden or not there at all."""
    tools = tools_from(shop)
    if setup == "forbidden":
        return bm25_advisor(tools, options=SearchOptions(tool_filter=admins_only))
    if setup == "absent":
        return bm25_advisor([t for t in tools if t.definition.name != WIPE])
    return bm25_advisor(tools)


@pytest.mark.parametrize("setup", ["undiscovered", "forbidden", "absent"])
async def test_only_shown_names_are_suggested_so_the_answer_reveals_nothing(
    shop: Shop, setup: str
) -> None:
    guesses = ["admin.delete_acount", WIPE, "orders.lookupp", "orders.refnd"]
    model = ScriptedModel(
        [
            search("lookup order by id", max_results=1),
            tool_call_response(*((g, {"user_id": "u1"}) for g in guesses)),
            "done",
        ]
    )
    client = client_for(model, shop_setup(shop, setup))
    await client.prompt("go").conversation("c1").tool_context({"role": "clerk"}).acall()
    assert model.tool_names_shown(1) == [TOOL_SEARCH_NAME, LOOKUP]
    # The same answers in every setup: a misspelling of the shown tool gets it, anything
    # else (a near miss of a hidden, forbidden or absent tool included) the search advice.
    assert [r.data for r in responses(model.prompts[2])] == [
        unavailable("admin.delete_acount"),
        unavailable(WIPE),
        similar("orders.lookupp", "orders__lookup"),
        unavailable("orders.refnd"),
    ]
    assert shop.ran == []


# --- the permission filter -----------------------------------------------------------------


async def test_a_forbidden_tool_is_never_shown_found_or_run(shop: Shop) -> None:
    advisor = bm25_advisor(
        tools_from(shop), options=SearchOptions(tool_filter=admins_only), always_on=[WIPE]
    )
    model = ScriptedModel(
        [
            tool_call_response(
                (TOOL_SEARCH_NAME, {"queries": [WIPE]}),
                (TOOL_SEARCH_NAME, {"queries": ["admin__delete_account"]}),
                (
                    TOOL_SEARCH_NAME,
                    {"queries": ["delete account or refund order"], "max_results": 10},
                ),
                (TOOL_SEARCH_NAME, {"queries": ["account"], "category": "admin"}),
            ),
            tool_call_response(
                (WIPE, {"user_id": "u1"}),
                ("admin.no_such_tool", {"user_id": "u1"}),
            ),
            "done",
        ]
    )
    client = client_for(model, advisor)
    await client.prompt("go").conversation("c1").tool_context({"role": "clerk"}).acall()

    for definitions in model.tool_definitions:
        assert all(not d.name.startswith("admin.") for d in definitions)
    search_answers = [json.loads(r.data) for r in responses(model.prompts[1])]
    assert all(r["name"] not in (WIPE, "admin__delete_account") for a in search_answers for r in a)
    assert any(search_answers)  # the searches did find other tools
    # ... and without the filter the exact name would have found it first.
    assert advisor.search.index.search(SearchRequest(query=WIPE)).names[0] == WIPE
    forbidden, unknown = responses(model.prompts[2])
    assert forbidden.data == unavailable(WIPE)
    assert unknown.data == unavailable("admin.no_such_tool")  # the same answer: nothing leaks
    assert shop.ran == []


async def test_the_filter_sees_the_request_context(shop: Shop) -> None:
    advisor = bm25_advisor(tools_from(shop), options=SearchOptions(tool_filter=admins_only))
    model = ScriptedModel(
        [
            search("delete user account", max_results=1),
            tool_call_response(("admin__delete_account", {"user_id": "u1"})),
            "done",
            tool_call_response((WIPE, {"user_id": "u2"})),
            "done",
        ]
    )
    client = client_for(model, advisor)
    await client.prompt("go").conversation("c1").tool_context({"role": "admin"}).acall()
    assert shop.ran == [WIPE]
    # The same conversation, now for a clerk: the stored discovery is not shown, nor runnable.
    await client.prompt("go").conversation("c1").tool_context({"role": "clerk"}).acall()
    assert model.tool_names_shown(3) == [TOOL_SEARCH_NAME]
    assert responses(model.prompts[4])[0].data == unavailable(WIPE)
    assert shop.ran == [WIPE]


async def test_request_tools_are_filtered_too(shop: Shop) -> None:
    @tool(name="admin.reset_password")
    def reset_password(user_id: str) -> str:
        """Reset a user's password.

        Args:
            user_id: The user.
        """
        return "reset"

    advisor = bm25_advisor(tools_from(shop), options=SearchOptions(tool_filter=admins_only))
    model = ScriptedModel(["ok"])
    client = ChatClient.builder(model).default_advisors(advisor).default_tools(reset_password)
    await client.build().prompt("go").conversation("c1").acall()
    assert model.tool_names_shown(0) == [TOOL_SEARCH_NAME]


ATTACKS = (
    "delete account",
    "refund order",
    r"card\.(?=[\s\S]*admin\.d)",  # a lookahead from a permitted tool into the next one
    r"(?s)card.*Permanently",
    r"^admin\.",
    "account orders user",
)


@pytest.mark.parametrize("make_index", [BM25ToolIndex, RegexToolIndex, hybrid_index])
def test_a_forbidden_tool_changes_no_search_answer(
    make_index: Callable[[], ToolIndex],
) -> None:
    def answers(tools: list[Tool]) -> list[str]:
        advisor = ToolSearchAdvisor(
            tools, index=make_index(), options=SearchOptions(tool_filter=admins_only), **SEARCH_ONLY
        )
        model = ScriptedModel(
            [
                tool_call_response(*((TOOL_SEARCH_NAME, {"queries": [q]}) for q in ATTACKS)),
                "done",
            ]
        )
        client = client_for(model, advisor)
        client.prompt("go").conversation("c1").tool_context({"role": "clerk"}).call()
        return [r.data for r in responses(model.prompts[1])]

    every = tools_from(Shop())
    with_admin = answers(every)
    assert with_admin == answers([t for t in every if t.definition.name != WIPE])
    assert any(json.loads(a) for a in with_admin)


# --- authorize at execution ----------------------------------------------------------------


async def test_a_denied_call_is_an_error_response_and_the_tool_does_not_run(shop: Shop) -> None:
    asked: list[tuple[str, Mapping[str, Any], Any]] = []

    def authorize(context: ToolContext, tool: Tool, arguments: Mapping[str, Any]) -> bool | str:
        asked.append((tool.definition.name, dict(arguments), context.user_id))
        return tool.metadata.read_only or "Refunds need a manager's approval."

    advisor = bm25_advisor(tools_from(shop))
    model = ScriptedModel(
        [
            tool_call_response(
                (TOOL_SEARCH_NAME, {"queries": ["refund order"], "max_results": 1}),
                (TOOL_SEARCH_NAME, {"queries": ["lookup order"], "max_results": 1}),
            ),
            tool_call_response(
                ("orders__refund", {"order_id": "o1"}), ("orders__lookup", {"order_id": "o1"})
            ),
            "done",
        ]
    )
    client = client_for(model, advisor, authorize=authorize)
    response = await client.prompt("go").conversation("c1").tool_context({"user_id": "u7"}).acall()
    denied, allowed = responses(model.prompts[2])
    assert (denied.data, denied.is_error) == ("Refunds need a manager's approval.", True)
    assert (allowed.data, allowed.is_error) == ("order o1: shipped", False)
    assert shop.ran == [LOOKUP]
    assert asked == [(REFUND, {"order_id": "o1"}, "u7"), (LOOKUP, {"order_id": "o1"}, "u7")]
    loop = response.tool_loop
    assert loop is not None
    assert loop.rounds[1].outcomes[0].status is ToolCallStatus.DENIED


async def test_an_async_authorize_returning_false_gets_the_standard_denial(shop: Shop) -> None:
    async def authorize(context: ToolContext, tool: Tool, arguments: Mapping[str, Any]) -> bool:
        return False

    advisor = bm25_advisor(tools_from(shop))
    model = ScriptedModel(
        [
            search("lookup order", max_results=1),
            tool_call_response(("orders__lookup", {"order_id": "o1"})),
            "done",
        ]
    )
    await client_for(model, advisor, authorize=authorize).prompt("go").conversation("c1").acall()
    assert json.loads(responses(model.prompts[1])[0].data)[0]["name"] == "orders__lookup"
    denied = responses(model.prompts[2])[0]
    assert denied.data == f"The call to tool {LOOKUP!r} was denied."
    assert denied.is_error
    assert shop.ran == []
