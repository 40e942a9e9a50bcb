"""The proxy channel: a fixed tool list, definitions in search answers, calls via call_tool."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.search_only import SEARCH_ONLY
from toolrelay.client import (
    TOOL_CALLING_ADVISOR_ORDER,
    ChatClient,
    MessageChatMemoryAdvisor,
    ToolSearchAdvisor,
)
from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import Approve, ToolCallingManager, ToolCallStatus, ToolInvocation
from toolrelay.memory import MessageWindowChatMemory
from toolrelay.messages import (
    AssistantMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.prompt import Prompt
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.testing import ScriptedModel, tool_call_response
from toolrelay.tools import ToolCatalog, ToolContext, ToolDefinition, tool, tools_from
from toolrelay.toolsearch import CALL_TOOL_NAME, CHINESE, ENGLISH, TOOL_SEARCH_NAME, SearchOptions

LOOKUP, REFUND, WIPE = "orders.lookup", "orders.refund", "admin.delete_account"
# The refund keeps its idempotency keys per caller: every request names one.
CLERK = {"user_id": "clerk"}


class Shop:
    def __init__(self) -> None:
        self.ran: list[tuple[str, dict[str, Any]]] = []

    @tool(name=LOOKUP, read_only=True)
    def lookup(self, order_id: str) -> str:
        """Read-only lookup of an order by its id.

        Args:
            order_id: The order.
        """
        self.ran.append((LOOKUP, {"order_id": order_id}))
        return f"order {order_id}: shipped"

    @tool(name=REFUND, requires_approval=True, idempotency_key="order_id")
    def refund(self, order_id: str, amount: int) -> str:
        """Refund an order to the customer's card.

        Args:
            order_id: The order.
            amount: Cents to refund.
        """
        self.ran.append((REFUND, {"order_id": order_id, "amount": amount}))
        return f"refunded {amount}"

    @tool(name=WIPE)
    def delete_account(self, user_id: str) -> str:
        """Permanently delete a user account and all of its orders.

        Args:
            user_id: The account to delete.
        """
        self.ran.append((WIPE, {"user_id": user_id}))
        return "deleted"


def admins_only(context: ToolContext, definition: ToolDefinition) -> bool:
    return not definition.name.startswith("admin.") or context.get("role") == "admin"


class Approvals:
    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []

    async def __call__(self, invocation: ToolInvocation, /) -> Approve:
        self.seen.append((invocation.tool.definition.name, dict(invocation.arguments)))
        return Approve()


def proxy(shop: Shop, **options: Any) -> ToolSearchAdvisor:
    options.setdefault("index", BM25ToolIndex())
    return ToolSearchAdvisor(tools_from(shop), channel="proxy", **{**SEARCH_ONLY, **options})


def search(query: str) -> Any:
    return (TOOL_SEARCH_NAME, {"queries": [query]})


def call(name: str, **arguments: Any) -> Any:
    return (CALL_TOOL_NAME, {"name": name, "arguments": arguments})


def answers(prompt: Prompt) -> tuple[ToolResponse, ...]:
    last = prompt.messages[-1]
    assert isinstance(last, ToolResponseMessage)
    return last.responses


def unavailable(name: str) -> str:
    return ENGLISH.unavailable_message.format(name=repr(name), search_tool=TOOL_SEARCH_NAME)


@pytest.fixture
def shop() -> Shop:
    return Shop()


async def test_found_tools_run_through_call_tool_and_the_tool_list_never_changes(
    shop: Shop,
) -> None:
    approvals = Approvals()
    model = ScriptedModel(
        [
            tool_call_response(search("look up an order")),
            tool_call_response(call(LOOKUP, order_id="o1")),
            "shipped",
            tool_call_response(search("refund an order to the card")),
            tool_call_response(call("orders__refund", order_id="o1", amount=500)),
            "refunded",
        ]
    )
    client = ChatClient(model, advisors=[proxy(shop)], approval=approvals, context=CLERK)
    first = await client.prompt("where is o1?").conversation("c1").acall()
    second = await client.prompt("refund it").conversation("c1").acall()

    # Every model call of both turns was shown the very same tools, byte for byte.
    shown = {
        json.dumps([d.__dict__ for d in defs], default=dict, sort_keys=True)
        for defs in model.tool_definitions
    }
    assert len(shown) == 1
    assert model.tool_names_shown(0) == [TOOL_SEARCH_NAME, CALL_TOOL_NAME]
    assert model.prompts[0].messages[0].text == ENGLISH.proxy_system_suffix  # type: ignore[union-attr]

    # The search answer carries whole definitions.
    (found,) = answers(model.prompts[1])
    hits = json.loads(found.data)
    assert hits[0]["name"] == LOOKUP
    assert hits[0]["description"].startswith("Read-only lookup")
    assert hits[0]["input_schema"]["required"] == ["order_id"]

    # call_tool ran the named tool; the answer answers the model's call_tool call id.
    (result,) = answers(model.prompts[2])
    assistant = model.prompts[2].messages[-2]
    assert isinstance(assistant, AssistantMessage)
    assert assistant.tool_calls[0].name == CALL_TOOL_NAME  # the model's own message
    assert result.id == assistant.tool_calls[0].id
    assert result.data == "order o1: shipped"
    assert not result.is_error

    # The approval handler saw the real tool and its arguments, not call_tool.
    assert approvals.seen == [(REFUND, {"order_id": "o1", "amount": 500})]
    assert shop.ran == [(LOOKUP, {"order_id": "o1"}), (REFUND, {"order_id": "o1", "amount": 500})]

    loop = second.tool_loop
    assert loop is not None
    outcome = loop.rounds[1].outcomes[0]
    assert outcome.tool_name == REFUND
    assert outcome.call.name == CALL_TOOL_NAME
    for response in (first, second):
        assert response.tool_search is not None
        assert response.tool_search.channel == "proxy"
    assert second.tool_search is not None
    assert REFUND in second.tool_search.discovered


@pytest.mark.parametrize("inside_loop", [False, True])
async def test_memory_keeps_the_proxy_conversation_across_turns(
    shop: Shop, inside_loop: bool
) -> None:
    # Outside the loop memory keeps each turn's question and answer; inside it, every round
    # as the model wrote it (call_tool calls, not the calls they ran as).
    memory = MessageWindowChatMemory()
    order = {"order": TOOL_CALLING_ADVISOR_ORDER + 100} if inside_loop else {}
    model = ScriptedModel(
        [
            tool_call_response(search("look up an order")),
            "found the lookup",
            tool_call_response(call(LOOKUP, order_id="o7")),
            "shipped",
        ]
    )
    client = ChatClient(
        model,
        advisors=[proxy(shop), MessageChatMemoryAdvisor(memory, **order)],
        approval=Approvals(),
        context=CLERK,
    )
    await client.prompt("find a lookup tool").conversation("c1").acall()
    second = await client.prompt("look up o7").conversation("c1").acall()
    # The second turn's first request replays the first turn.
    replayed = model.prompts[2].messages
    assert any(isinstance(m, UserMessage) and m.text == "find a lookup tool" for m in replayed)
    assert any(isinstance(m, AssistantMessage) and m.text == "found the lookup" for m in replayed)
    (result,) = answers(model.prompts[3])
    assert result.data == "order o7: shipped"
    assert model.tool_definitions[0] == model.tool_definitions[3]
    assert second.tool_search is not None
    assert LOOKUP in second.tool_search.discovered
    stored = await memory.get("c1")
    calls = [c.name for m in stored if isinstance(m, AssistantMessage) for c in m.tool_calls]
    assert calls == ([TOOL_SEARCH_NAME, CALL_TOOL_NAME] if inside_loop else [])


async def test_forbidden_and_never_found_names_read_like_unknown_ones(shop: Shop) -> None:
    # Forbidden (the filter hides it), never found, unknown, and the search tool itself.
    names = [WIPE, REFUND, "orders.no_such_tool", TOOL_SEARCH_NAME]
    model = ScriptedModel(
        [
            tool_call_response(search("look up an order")),
            tool_call_response(*(call(n, user_id="u1") for n in names)),
            "gave up",
        ]
    )
    advisor = proxy(shop, options=SearchOptions(tool_filter=admins_only, max_results=1))
    client = ChatClient(model, advisors=[advisor], approval=Approvals(), context=CLERK)
    response = await client.prompt("wipe u1").conversation("c1").acall()
    (found,) = answers(model.prompts[1])
    assert [hit["name"] for hit in json.loads(found.data)] == [LOOKUP]
    results = answers(model.prompts[2])
    assert [r.data for r in results] == [unavailable(n) for n in names]
    assert all(r.is_error for r in results)
    assert shop.ran == []
    assert response.tool_search is not None
    assert response.tool_search.rounds[1].unavailable == tuple(names)
    loop = response.tool_loop
    assert loop is not None
    assert {o.status for o in loop.rounds[1].outcomes} == {ToolCallStatus.UNKNOWN_TOOL}


async def test_a_repeated_call_with_the_same_key_runs_once(shop: Shop) -> None:
    model = ScriptedModel(
        [
            tool_call_response(search("refund an order to the card")),
            tool_call_response(call(REFUND, order_id="o1", amount=500)),
            tool_call_response(call(REFUND, order_id="o1", amount=500)),
            "done",
        ]
    )
    client = ChatClient(model, advisors=[proxy(shop)], approval=Approvals(), context=CLERK)
    response = await client.prompt("refund o1").conversation("c1").acall()
    assert shop.ran == [(REFUND, {"order_id": "o1", "amount": 500})]
    loop = response.tool_loop
    assert loop is not None
    again = loop.rounds[2].outcomes[0]
    assert again.replayed
    assert again.tool_name == REFUND
    assert answers(model.prompts[3])[0].data.endswith("refunded 500")


async def test_invalid_arguments_are_feedback_naming_the_real_tool(shop: Shop) -> None:
    model = ScriptedModel(
        [
            tool_call_response(search("look up an order")),
            tool_call_response(call(LOOKUP, order="o1")),
            tool_call_response((CALL_TOOL_NAME, {"arguments": {}})),
            "sorry",
        ]
    )
    client = ChatClient(model, advisors=[proxy(shop)], approval=Approvals(), context=CLERK)
    response = await client.prompt("look up o1").conversation("c1").acall()
    (invalid,) = answers(model.prompts[2])
    assert invalid.is_error
    assert LOOKUP in invalid.data
    assert "order_id" in invalid.data
    # call_tool's own arguments unusable: feedback names call_tool and what it needs.
    (missing,) = answers(model.prompts[3])
    assert missing.is_error
    assert CALL_TOOL_NAME in missing.data
    assert "name" in missing.data
    loop = response.tool_loop
    assert loop is not None
    assert loop.rounds[1].outcomes[0].status is ToolCallStatus.INVALID_ARGUMENTS
    assert loop.rounds[1].outcomes[0].tool_name == LOOKUP
    assert shop.ran == []


async def test_chinese_texts_in_the_proxy_channel(shop: Shop) -> None:
    model = ScriptedModel(["好"])
    client = ChatClient(
        model,
        advisors=[proxy(shop, options=SearchOptions(language="zh"))],
        approval=Approvals(),
        context=CLERK,
    )
    await client.prompt("你好").conversation("c1").acall()
    search_tool, call_tool = model.tool_definitions[0]
    assert search_tool.description == CHINESE.proxy_description
    assert call_tool.description == CHINESE.call_description
    assert model.prompts[0].messages[0].text == CHINESE.proxy_system_suffix  # type: ignore[union-attr]


def test_an_unknown_channel_is_refused(shop: Shop) -> None:
    with pytest.raises(ConfigurationError, match=r"'native', 'proxy' or 'rewrite', not 'bogus'"):
        ToolSearchAdvisor(tools_from(shop), index=BM25ToolIndex(), channel="bogus")  # type: ignore[arg-type]


async def test_auto_the_default_takes_the_proxy_for_a_model_declaring_no_channel(
    shop: Shop,
) -> None:
    model = ScriptedModel(["hi"])
    # Searched whatever the shop's size: only the channel is under test here.
    advisor = ToolSearchAdvisor(tools_from(shop), index=BM25ToolIndex(), send_all_below=None)
    assert advisor.search.channel == "auto"
    client = ChatClient(model, advisors=[advisor], approval=Approvals(), context=CLERK)
    response = await client.prompt("hi").conversation("c1").acall()
    assert response.tool_search is not None
    assert response.tool_search.channel == "proxy"
    assert model.tool_names_shown(0) == [TOOL_SEARCH_NAME, CALL_TOOL_NAME]


def hits_of(prompt: Prompt) -> list[dict[str, Any]]:
    (found,) = answers(prompt)
    hits: list[dict[str, Any]] = json.loads(found.data)
    return hits


async def test_a_definition_already_in_the_conversation_is_named_only(shop: Shop) -> None:
    model = ScriptedModel(
        [
            tool_call_response(
                (TOOL_SEARCH_NAME, {"queries": ["look up an order"], "max_results": 1})
            ),
            tool_call_response(
                (TOOL_SEARCH_NAME, {"queries": ["look up an order by its id"], "max_results": 1})
            ),
            tool_call_response(search("refund an order")),
            "done",
            tool_call_response(
                (TOOL_SEARCH_NAME, {"queries": ["look up an order"], "max_results": 1})
            ),
            "done",
        ]
    )
    client = ChatClient(model, advisors=[proxy(shop)], approval=Approvals(), context=CLERK)
    await client.prompt("where is o1?").conversation("c1").acall()
    first, again, refund = hits_of(model.prompts[1]), hits_of(model.prompts[2]), model.prompts[3]
    assert first[0]["name"] == LOOKUP
    assert "input_schema" in first[0]
    # The same best hit again: its definition is above, so it is named only.
    assert again == [{"name": LOOKUP}]
    # A new best hit comes whole; a defined one that is not the best is left out.
    assert [h["name"] for h in first] == [LOOKUP]
    refund_hits = hits_of(refund)
    assert refund_hits[0]["name"] == REFUND
    assert "input_schema" in refund_hits[0]
    assert LOOKUP not in [h["name"] for h in refund_hits]

    # A new conversation's history holds no definition: it gets it again.
    await client.prompt("where is o1?").conversation("c2").acall()
    assert hits_of(model.prompts[5]) == first


@pytest.mark.parametrize("inside_loop", [False, True])
async def test_an_earlier_turns_definition_the_loop_cannot_see_is_given_again(
    shop: Shop, inside_loop: bool
) -> None:
    # Memory outside the loop keeps questions and answers only: the second turn's history
    # holds no definition. Inside the loop memory adds the earlier rounds after the loop
    # prepared the request, which the loop cannot vouch for: the definition comes again.
    memory = MessageWindowChatMemory()
    order = {"order": TOOL_CALLING_ADVISOR_ORDER + 100} if inside_loop else {}
    model = ScriptedModel(
        [
            tool_call_response(search("look up an order")),
            "found it",
            tool_call_response(search("look up an order")),
            "found it again",
        ]
    )
    client = ChatClient(
        model,
        advisors=[proxy(shop), MessageChatMemoryAdvisor(memory, **order)],
        approval=Approvals(),
        context=CLERK,
    )
    await client.prompt("find a lookup tool").conversation("c1").acall()
    await client.prompt("find it again").conversation("c1").acall()
    first, second = hits_of(model.prompts[1]), hits_of(model.prompts[3])
    assert second == first


class NewShop(Shop):
    @tool(name=LOOKUP, read_only=True)
    def lookup(self, order_id: str) -> str:
        """Read-only lookup of an order by its id, with its shipping state.

        Args:
            order_id: The order.
        """
        return f"order {order_id}: shipped"


async def test_history_the_caller_sends_counts_unless_the_definition_changed(
    shop: Shop,
) -> None:
    advisor = proxy(shop)
    model = ScriptedModel(
        [
            tool_call_response(search("look up an order")),
            "found it",
            tool_call_response(search("look up an order")),
            "found it again",
            tool_call_response(search("look up an order")),
            "changed",
        ]
    )
    client = ChatClient(model, advisors=[advisor], approval=Approvals(), context=CLERK)
    await client.prompt("find a lookup tool").conversation("c1").acall()
    history = [*model.prompts[1].messages, AssistantMessage(text="found it")]
    # The caller replays the first turn: its definitions are in the history the model reads.
    await client.prompt().messages(*history, UserMessage(text="again")).conversation("c1").acall()
    assert hits_of(model.prompts[3])[0] == {"name": LOOKUP}
    # The catalog changed the tool: the definition above is stale, so it comes again.
    advisor.catalog = ToolCatalog(tools_from(NewShop()))
    await client.prompt().messages(*history, UserMessage(text="again")).conversation("c1").acall()
    (changed,) = [h for h in hits_of(model.prompts[5]) if h["name"] == LOOKUP]
    assert changed["description"].endswith("with its shipping state.")


def nested(levels: int) -> dict[str, Any]:
    """An object nesting ``levels`` objects (built without recursion)."""
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


DEEP = nested(5_000)
DEEP_TEXT = '{"a":' * 4_999 + "{}" + "}" * 4_999  # its JSON text (json.dumps recurses too deep)


@pytest.mark.parametrize(
    ("arguments", "ran"),
    [
        pytest.param(json.dumps({"order_id": "o1"}), True, id="json text of the object"),
        pytest.param({"order_id": "o1"}, True, id="object"),
        pytest.param(DEEP, False, id="object 5000 levels deep"),
        pytest.param(DEEP_TEXT, False, id="json text 5000 levels deep"),
    ],
)
@pytest.mark.parametrize("as_mapping", [False, True], ids=["call as text", "call as mapping"])
async def test_call_tool_reads_any_shape_of_arguments_and_never_raises(
    shop: Shop, arguments: Any, ran: bool, as_mapping: bool
) -> None:
    # The whole call as the JSON text a provider sends, or as a mapping an adapter made.
    written = DEEP_TEXT if arguments is DEEP else json.dumps(arguments)
    sent = (
        {"name": LOOKUP, "arguments": arguments}
        if as_mapping
        else (f'{{"name": "{LOOKUP}", "arguments": {written}}}')
    )
    model = ScriptedModel(
        [
            tool_call_response(search("look up an order")),
            tool_call_response(ToolCall(id="c1", name=CALL_TOOL_NAME, arguments=sent)),  # type: ignore[arg-type]
            "done",
        ]
    )
    client = ChatClient(model, advisors=[proxy(shop)], approval=Approvals(), context=CLERK)
    response = await client.prompt("look up o1").conversation("c1").acall()
    assert response.content() == "done"
    (result,) = answers(model.prompts[2])
    loop = response.tool_loop
    assert loop is not None
    (outcome,) = loop.rounds[1].outcomes
    assert outcome.call.name == CALL_TOOL_NAME
    assert isinstance(outcome.call.arguments, str)  # the history keeps text, always
    if ran:
        assert (result.data, result.is_error) == ("order o1: shipped", False)
        assert (outcome.status, outcome.tool_name) == (ToolCallStatus.OK, LOOKUP)
        assert shop.ran == [(LOOKUP, {"order_id": "o1"})]
    else:
        assert result.is_error
        assert "Arguments are nested too deeply" in result.data
        assert outcome.status is ToolCallStatus.INVALID_ARGUMENTS
        assert shop.ran == []


class Bulky:
    """Tools whose definitions are long: a few fill a search answer."""

    @tool(name="orders.export_csv", read_only=True)
    def export_csv(self, order_id: str) -> str:
        """Export an order as CSV, with every line, tax and shipping detail listed in full, one
        row per line item, for accounting systems that import order exports.

        Args:
            order_id: The order to export.
        """
        return "csv"

    @tool(name="orders.export_json", read_only=True)
    def export_json(self, order_id: str) -> str:
        """Export an order as JSON, with every line, tax and shipping detail listed in full,
        one object per line item, for systems that import order exports.

        Args:
            order_id: The order to export.
        """
        return "json"

    @tool(name="orders.export_pdf", read_only=True)
    def export_pdf(self, order_id: str) -> str:
        """Export an order as a PDF document, with every line, tax and shipping detail listed
        in full, for customers who ask for a printable copy of an order export.

        Args:
            order_id: The order to export.
        """
        return "pdf"


async def test_a_search_answer_past_the_bound_gives_whole_definitions_and_names_the_rest() -> None:
    bound = 700
    advisor = ToolSearchAdvisor(
        tools_from(Bulky()),
        index=BM25ToolIndex(),
        channel="proxy",
        options=SearchOptions(max_results=5, min_relative_score=None),
        tool_calling_manager=ToolCallingManager(max_result_chars=bound),
    )
    model = ScriptedModel([tool_call_response(search("export an order")), "done"])
    response = await ChatClient(model, advisors=[advisor]).prompt("x").conversation("c1").acall()
    (found,) = answers(model.prompts[1])
    assert not found.is_error
    assert len(found.data) <= bound
    hits = json.loads(found.data)  # valid JSON: nothing is cut inside a definition
    whole = [h for h in hits if "input_schema" in h]
    named = [h for h in hits if "input_schema" not in h]
    assert len(hits) == 3
    assert 1 <= len(whole) < 3
    assert hits[: len(whole)] == whole  # the best hits come whole, first
    for hit in whole:
        assert hit["description"].startswith("Export an order")
    assert named == [{"name": h["name"], "note": ENGLISH.left_out} for h in named]
    # The answer is not cut or flagged by the manager: it fits by whole hits.
    loop = response.tool_loop
    assert loop is not None
    (outcome,) = loop.rounds[0].outcomes
    assert not outcome.truncated
    # Only what the model read whole is found: the named-only tools are not discoveries.
    report = response.tool_search
    assert report is not None
    assert report.searches[0].names == tuple(h["name"] for h in whole)
    assert report.discovered == tuple(h["name"] for h in whole)


async def test_a_tool_whose_definition_alone_is_past_the_bound_is_still_reachable() -> None:
    advisor = ToolSearchAdvisor(
        tools_from(Bulky()),
        index=BM25ToolIndex(),
        channel="proxy",
        options=SearchOptions(min_relative_score=None, max_results=1),
        tool_calling_manager=ToolCallingManager(max_result_chars=100),
    )
    call = ToolCall(
        id="c2",
        name="call_tool",
        arguments=json.dumps({"name": "orders.export_pdf", "arguments": {"order_id": "o1"}}),
    )
    model = ScriptedModel(
        [tool_call_response(search("export an order as a PDF")), tool_call_response(call), "done"]
    )
    await ChatClient(model, advisors=[advisor]).prompt("x").conversation("c1").acall()
    (found,) = answers(model.prompts[1])
    (hit,) = json.loads(found.data)  # the best hit is whole, though alone it is over the bound
    assert hit["name"] == "orders.export_pdf"
    assert "input_schema" in hit
    (ran,) = answers(model.prompts[2])
    assert ran.data == "pdf"  # found, so call_tool runs it
