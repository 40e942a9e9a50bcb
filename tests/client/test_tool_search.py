"""The tool search advisor: rounds, discovery order, persistence, catalog changes, reports."""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Sequence
from typing import Any

import pytest

from tests.search_only import SEARCH_ONLY
from toolrelay.client import ChatClient, LoopStop, ToolCallingAdvisor, ToolSearchAdvisor
from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import CallLimits, ToolCallingManager
from toolrelay.messages import SystemMessage, ToolResponseMessage
from toolrelay.prompt import Prompt
from toolrelay.search._base import SearchRequest, SearchResponse, ToolIndex
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.testing import ScriptedModel, text_response, tool_call_response
from toolrelay.tools import FunctionTool, ToolCatalog, ToolDefinition, tool, tools_from
from toolrelay.toolsearch import (
    ENGLISH,
    TOOL_SEARCH_NAME,
    InMemorySessionStore,
    SearchOptions,
    StoredTools,
    ToolSearchReport,
)
from toolrelay.toolsearch._sessions import DEFAULT_MAX_SESSIONS

REFUND, INVOICE, EMAIL, FORECAST = (
    "billing.refund_payment",
    "billing.get_invoice",
    "mail.send_email",
    "weather.forecast",
)


class Desk:
    """A small catalog whose tools record that they ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    @tool(name=REFUND)
    def refund_payment(self, payment_id: str) -> str:
        """Refund a customer's card payment in full.

        Args:
            payment_id: The payment to refund.
        """
        self.ran.append(REFUND)
        return f"refunded {payment_id}"

    @tool(name=INVOICE, read_only=True)
    def get_invoice(self, number: str) -> dict[str, str]:
        """Read-only lookup of one invoice by its number.

        Args:
            number: The invoice number.
        """
        self.ran.append(INVOICE)
        return {"number": number, "total": "12.00"}

    @tool(name=EMAIL)
    def send_email(self, to: str, subject: str) -> str:
        """Send an email message to a customer.

        Args:
            to: The customer's address.
            subject: The subject line.
        """
        self.ran.append(EMAIL)
        return "sent"

    @tool(name=FORECAST, read_only=True)
    def forecast(self, city: str) -> str:
        """Read-only weather forecast for a city.

        Args:
            city: The city.
        """
        self.ran.append(FORECAST)
        return "sunny"


@tool
def ping(host: str) -> str:
    """Ping a network host.

    Args:
        host: The host name.
    """
    return f"{host} is up"


def search(query: str, **arguments: Any) -> Any:
    return tool_call_response((TOOL_SEARCH_NAME, {"queries": [query], **arguments}))


def found(prompt: Prompt) -> list[str]:
    """The names the searches of the previous round returned, in order."""
    last = prompt.messages[-1]
    assert isinstance(last, ToolResponseMessage)
    return [
        item["name"]
        for response in last.responses
        if response.name == TOOL_SEARCH_NAME
        for item in json.loads(response.data)
    ]


def call_found(**arguments: Any) -> Any:
    """A script step calling the first tool the previous search found."""

    def step(prompt: Prompt) -> Any:
        return tool_call_response((found(prompt)[0], arguments))

    return step


def bm25_advisor(catalog: Any, **options: Any) -> ToolSearchAdvisor:
    """An advisor over a BM25 index: deterministic rankings, no embedding model."""
    options.setdefault("index", BM25ToolIndex())
    return ToolSearchAdvisor(catalog, **{"channel": "rewrite", **SEARCH_ONLY, **options})


def shown(model: ScriptedModel) -> list[list[str]]:
    return [model.tool_names_shown(i) for i in range(model.call_count)]


def client_for(
    model: ScriptedModel, advisor: ToolCallingAdvisor, *tools: object, **guards: Any
) -> ChatClient:
    """A client over ``advisor``; ``guards`` (``authorize=``...) build its manager."""
    return ChatClient(model, advisors=[advisor], tools=list(tools), **guards)


@pytest.fixture
def desk() -> Desk:
    return Desk()


@pytest.fixture
def advisor(desk: Desk) -> ToolSearchAdvisor:
    return bm25_advisor(tools_from(desk))


# --- rounds --------------------------------------------------------------------------------


async def test_first_call_shows_only_tool_search_and_always_on_tools(desk: Desk) -> None:
    advisor = bm25_advisor(tools_from(desk), always_on=[FORECAST])
    model = ScriptedModel(["hello"])
    await client_for(model, advisor).prompt("hi").conversation("c1").acall()
    assert shown(model) == [[TOOL_SEARCH_NAME, FORECAST]]


async def test_found_tools_are_shown_from_the_next_call_in_discovery_order(
    desk: Desk, advisor: ToolSearchAdvisor
) -> None:
    model = ScriptedModel(
        [
            search("refund a card payment", max_results=1),
            search("send email to customer", max_results=1),
            call_found(to="a@b.c", subject="Refund"),
            "done",
        ]
    )
    response = await client_for(model, advisor).prompt("go").conversation("c1").acall()
    assert response.content() == "done"
    assert shown(model) == [
        [TOOL_SEARCH_NAME],
        [TOOL_SEARCH_NAME, REFUND],
        [TOOL_SEARCH_NAME, REFUND, EMAIL],
        [TOOL_SEARCH_NAME, REFUND, EMAIL],
    ]
    assert desk.ran == [EMAIL]  # called by its provider-safe name, as the search returned it


async def test_searches_of_one_round_are_stored_in_the_order_of_the_calls(
    advisor: ToolSearchAdvisor,
) -> None:
    model = ScriptedModel(
        [
            tool_call_response(
                (TOOL_SEARCH_NAME, {"queries": ["send email"], "max_results": 1}),
                (TOOL_SEARCH_NAME, {"queries": ["refund payment"], "max_results": 1}),
                (TOOL_SEARCH_NAME, {"queries": ["invoice"], "max_results": 1}),
            ),
            "done",
        ]
    )
    await client_for(model, advisor).prompt("go").conversation("c1").acall()
    assert shown(model)[1] == [TOOL_SEARCH_NAME, EMAIL, REFUND, INVOICE]
    assert (await advisor.search.session_store.get("c1")).names == (EMAIL, REFUND, INVOICE)


async def test_exposure_only_ever_appends(desk: Desk) -> None:
    advisor = bm25_advisor(tools_from(desk), options=SearchOptions(min_relative_score=None))
    model = ScriptedModel(
        [
            search("weather forecast", max_results=1),
            search("refund payment invoice email weather", max_results=10),
            search("invoice", max_results=3),
            "done",
        ]
    )
    await client_for(model, advisor).prompt("go").conversation("c1").acall()
    rounds = shown(model)
    assert rounds[1] == [TOOL_SEARCH_NAME, FORECAST]
    for before, after in itertools.pairwise(rounds):
        assert after[: len(before)] == before
    assert sorted(rounds[-1]) == sorted([TOOL_SEARCH_NAME, FORECAST, REFUND, INVOICE, EMAIL])


async def test_hits_far_below_the_best_are_left_out_by_default(desk: Desk) -> None:
    query = "refund a card payment or invoice"  # BM25: the invoice scores under half
    for options, expected in (
        (SearchOptions(), [REFUND]),
        (SearchOptions(min_relative_score=0.3), [REFUND, INVOICE]),
        (SearchOptions(min_relative_score=None), [REFUND, INVOICE]),
    ):
        advisor = bm25_advisor(tools_from(desk), options=options)
        model = ScriptedModel([search(query), "done"])
        response = await client_for(model, advisor).prompt("go").conversation("c1").acall()
        assert found(model.prompts[1]) == [n.replace(".", "__") for n in expected]
        assert shown(model)[1] == [TOOL_SEARCH_NAME, *expected]
        report = response.tool_search
        assert report is not None
        assert report.searches[0].response.hits[0].name == REFUND


async def test_answers_leave_out_tools_already_shown_unless_best(desk: Desk) -> None:
    advisor = bm25_advisor(tools_from(desk), options=SearchOptions(min_relative_score=None))
    model = ScriptedModel(
        [
            search("weather forecast", max_results=1),
            search("refund payment invoice email weather", max_results=10),
            search("weather forecast"),
            "done",
        ]
    )
    response = await client_for(model, advisor).prompt("go").conversation("c1").acall()
    # The forecast is shown from the second call on: the next answer lists only the new
    # tools, the last one the forecast again, as the best match.
    assert found(model.prompts[2]) == [
        "billing__refund_payment",
        "billing__get_invoice",
        "mail__send_email",
    ]
    assert found(model.prompts[3]) == ["weather__forecast"]
    report = response.tool_search
    assert report is not None
    assert report.searches[1].names == (REFUND, FORECAST, INVOICE, EMAIL)  # the whole ranking
    assert shown(model)[3] == [TOOL_SEARCH_NAME, FORECAST, REFUND, INVOICE, EMAIL]


async def test_retention_last_search_keeps_just_the_latest_results(desk: Desk) -> None:
    advisor = bm25_advisor(tools_from(desk), retention="last_search")
    model = ScriptedModel(
        [
            search("refund payment", max_results=1),
            search("weather forecast", max_results=1),
            search("nothing matches zebra", max_results=1),
            "done",
        ]
    )
    await client_for(model, advisor).prompt("go").conversation("c1").acall()
    assert shown(model) == [
        [TOOL_SEARCH_NAME],
        [TOOL_SEARCH_NAME, REFUND],
        [TOOL_SEARCH_NAME, FORECAST],
        [TOOL_SEARCH_NAME],
    ]
    assert (await advisor.search.session_store.get("c1")).names == ()


async def test_retention_last_search_keeps_every_search_of_the_last_round(desk: Desk) -> None:
    advisor = bm25_advisor(tools_from(desk), retention="last_search")
    parallel = tool_call_response(
        (TOOL_SEARCH_NAME, {"queries": ["refund payment"], "max_results": 1}),
        (TOOL_SEARCH_NAME, {"queries": ["weather forecast"], "max_results": 1}),
    )
    model = ScriptedModel([search("send email", max_results=1), parallel, "done"])
    await client_for(model, advisor).prompt("go").conversation("c1").acall()
    assert shown(model)[1] == [TOOL_SEARCH_NAME, EMAIL]
    assert shown(model)[2] == [TOOL_SEARCH_NAME, REFUND, FORECAST]
    assert (await advisor.search.session_store.get("c1")).names == (REFUND, FORECAST)


async def test_a_search_retires_the_found_tools_the_model_passed_over(desk: Desk) -> None:
    advisor = bm25_advisor(tools_from(desk), options=SearchOptions(min_relative_score=None))
    model = ScriptedModel(
        [
            search("refund payment", max_results=1),
            search("invoice lookup", max_results=1),
            tool_call_response((REFUND.replace(".", "__"), {"payment_id": "p1"})),
            search("weather forecast", max_results=1),
            "done",
        ]
    )
    response = await client_for(model, advisor).prompt("go").conversation("c1").acall()
    assert shown(model)[2] == [TOOL_SEARCH_NAME, REFUND, INVOICE]
    assert shown(model)[3] == [TOOL_SEARCH_NAME, REFUND, INVOICE]  # no search since the call
    # The invoice was shown through a round of calls that did not use it: the next search
    # retires it; the refund, called, stays.
    assert shown(model)[4] == [TOOL_SEARCH_NAME, REFUND, FORECAST]
    assert (await advisor.search.session_store.get("c1")).names == (REFUND, FORECAST)
    assert (await advisor.search.session_store.get("c1")).used == {REFUND}
    report = response.tool_search
    assert report is not None
    assert report.discovered == (REFUND, FORECAST)


async def test_calling_one_hit_of_a_lone_search_retires_its_other_hits(desk: Desk) -> None:
    advisor = bm25_advisor(tools_from(desk), options=SearchOptions(min_relative_score=None))
    model = ScriptedModel(
        [
            search("refund payment invoice", max_results=2),
            call_found(payment_id="p1"),
            tool_call_response((REFUND.replace(".", "__"), {"payment_id": "p2"})),
            "done",
        ]
    )
    await client_for(model, advisor).prompt("go").conversation("c1").acall()
    assert shown(model)[1] == [TOOL_SEARCH_NAME, REFUND, INVOICE]
    # The search's one need is met by the refund: the invoice leaves at once, no search needed.
    assert shown(model)[2] == [TOOL_SEARCH_NAME, REFUND]
    assert shown(model)[3] == [TOOL_SEARCH_NAME, REFUND]
    assert (await advisor.search.session_store.get("c1")).names == (REFUND,)
    assert desk.ran == [REFUND, REFUND]


async def test_several_searches_at_once_retire_nothing_through_the_turn(
    desk: Desk,
) -> None:
    advisor = bm25_advisor(tools_from(desk), options=SearchOptions(min_relative_score=None))
    both = tool_call_response(
        (TOOL_SEARCH_NAME, {"queries": ["refund payment invoice"], "max_results": 2}),
        (TOOL_SEARCH_NAME, {"queries": ["send email"], "max_results": 1}),
    )
    model = ScriptedModel(
        [
            both,
            tool_call_response((REFUND.replace(".", "__"), {"payment_id": "p1"})),
            tool_call_response((INVOICE.replace(".", "__"), {"number": "n1"})),
            search("weather forecast", max_results=1),
            "done",
        ]
    )
    await client_for(model, advisor).prompt("go").conversation("c1").acall()
    # Several needs searched at once are a plan of the task's steps: the invoice, passed
    # over by the refund's round, is still there for the next one, which calls it, and the
    # email, never called, stays through the turn, past the next search.
    assert shown(model)[2] == [TOOL_SEARCH_NAME, REFUND, INVOICE, EMAIL]
    assert shown(model)[3] == [TOOL_SEARCH_NAME, REFUND, INVOICE, EMAIL]
    assert shown(model)[4] == [TOOL_SEARCH_NAME, REFUND, INVOICE, EMAIL, FORECAST]
    assert desk.ran == [REFUND, INVOICE]


async def test_a_plan_searched_at_once_keeps_its_hits_through_the_turn(desk: Desk) -> None:
    advisor = bm25_advisor(tools_from(desk), options=SearchOptions(min_relative_score=None))
    plan = tool_call_response(
        (
            TOOL_SEARCH_NAME,
            {"queries": ["refund payment", "weather forecast"], "max_results": 1},
        )
    )
    model = ScriptedModel(
        [
            plan,
            tool_call_response((REFUND.replace(".", "__"), {"payment_id": "p1"})),
            search("send email", max_results=1),
            tool_call_response((FORECAST.replace(".", "__"), {"city": "Oslo"})),
            "done",
        ]
    )
    await client_for(model, advisor).prompt("go").conversation("c1").acall()
    # The task's steps searched in one call, one query each: the forecast's step comes after
    # a search made in between (which retires what a round of calls passed over) and finds
    # its tool still shown.
    assert shown(model)[3] == [TOOL_SEARCH_NAME, REFUND, FORECAST, EMAIL]
    assert desk.ran == [REFUND, FORECAST]


async def test_searches_before_any_call_retire_nothing(desk: Desk) -> None:
    advisor = bm25_advisor(tools_from(desk), options=SearchOptions(min_relative_score=None))
    model = ScriptedModel(
        [
            search("refund payment", max_results=1),
            search("weather forecast", max_results=1),
            search("send email", max_results=1),
            "done",
        ]
    )
    await client_for(model, advisor).prompt("go").conversation("c1").acall()
    assert shown(model)[3] == [TOOL_SEARCH_NAME, REFUND, FORECAST, EMAIL]


async def test_a_new_turn_keeps_earlier_discoveries_until_it_has_called_tools(
    desk: Desk,
) -> None:
    advisor = bm25_advisor(tools_from(desk), options=SearchOptions(min_relative_score=None))
    first = ScriptedModel([search("weather forecast", max_results=1), "done"])
    await client_for(first, advisor).prompt("go").conversation("c1").acall()
    second = ScriptedModel(
        [
            search("refund payment", max_results=1),
            call_found(payment_id="p1"),
            search("send email", max_results=1),
            "done",
        ]
    )
    await client_for(second, advisor).prompt("again").conversation("c1").acall()
    # The forecast survives the turn's first search (no call round had passed it over), and
    # the search after the refund's call retires it.
    assert shown(second)[1] == [TOOL_SEARCH_NAME, FORECAST, REFUND]
    assert shown(second)[3] == [TOOL_SEARCH_NAME, REFUND, EMAIL]
    third = ScriptedModel([search("weather forecast", max_results=1), "done"])
    await client_for(third, advisor).prompt("more").conversation("c1").acall()
    assert shown(third)[1] == [TOOL_SEARCH_NAME, REFUND, EMAIL, FORECAST]


async def test_retention_all_keeps_every_tool_found(desk: Desk) -> None:
    advisor = bm25_advisor(
        tools_from(desk), options=SearchOptions(min_relative_score=None), retention="all"
    )
    model = ScriptedModel(
        [
            search("refund payment invoice", max_results=2),
            call_found(payment_id="p1"),
            search("weather forecast", max_results=1),
            "done",
        ]
    )
    await client_for(model, advisor).prompt("go").conversation("c1").acall()
    assert shown(model)[3] == [TOOL_SEARCH_NAME, REFUND, INVOICE, FORECAST]
    assert (await advisor.search.session_store.get("c1")).used == set()


def test_an_unknown_retention_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="retention must be 'used', 'all' or"):
        ToolSearchAdvisor([ping], index=BM25ToolIndex(), retention="some")  # type: ignore[arg-type]


async def test_request_tools_are_always_shown_and_never_searched(
    advisor: ToolSearchAdvisor,
) -> None:
    model = ScriptedModel([search("ping network host"), "done"])
    await client_for(model, advisor, ping).prompt("go").conversation("c1").acall()
    assert shown(model)[0] == [TOOL_SEARCH_NAME, "ping"]
    assert "ping" not in found(model.prompts[1])


async def test_a_request_tool_named_tool_search_is_an_error(advisor: ToolSearchAdvisor) -> None:
    impostor = FunctionTool.from_function(ping, name=TOOL_SEARCH_NAME)
    client = client_for(ScriptedModel(["x"]), advisor, impostor)
    with pytest.raises(ConfigurationError, match="tool_search"):
        await client.prompt("go").conversation("c1").acall()


async def test_the_system_suffix_is_added_to_every_call_and_configurable(desk: Desk) -> None:
    model = ScriptedModel([search("refund"), "done", "again"])
    client = (
        ChatClient.builder(model)
        .default_system("You run a shop.")
        .default_advisors(bm25_advisor(tools_from(desk)))
        .build()
    )
    await client.prompt("go").conversation("c1").acall()
    for prompt in model.prompts:
        assert prompt.messages[0] == SystemMessage(
            text=f"You run a shop.\n\n{ENGLISH.system_suffix}"
        )
    quiet = bm25_advisor(
        tools_from(desk),
        options=SearchOptions(language=dataclasses.replace(ENGLISH, system_suffix=None)),
    )
    await client_for(model, quiet).prompt("go").conversation("c1").acall()
    assert not any(isinstance(m, SystemMessage) for m in model.prompts[-1].messages)
    custom = bm25_advisor(
        tools_from(desk),
        options=SearchOptions(language=dataclasses.replace(ENGLISH, system_suffix="Search first.")),
    )
    model = ScriptedModel(["ok"])
    await client_for(model, custom).prompt("go").conversation("c1").acall()
    assert model.prompts[0].messages[0] == SystemMessage(text="Search first.")


# --- persistence across turns --------------------------------------------------------------


async def test_discovered_tools_persist_across_turns_of_one_conversation(
    advisor: ToolSearchAdvisor,
) -> None:
    model = ScriptedModel(
        [search("refund payment", max_results=1), "first", "second", "other conversation"]
    )
    client = client_for(model, advisor)
    await client.prompt("go").conversation("c1").acall()
    second = await client.prompt("again").conversation("c1").acall()
    await client.prompt("hi").conversation("c2").acall()
    assert shown(model)[2] == [TOOL_SEARCH_NAME, REFUND]
    assert shown(model)[3] == [TOOL_SEARCH_NAME]
    report = second.tool_search
    assert report is not None
    assert report.discovered == (REFUND,)
    assert report.reindexed is False


async def test_the_store_is_shared_by_advisors_and_clients(desk: Desk) -> None:
    store = InMemorySessionStore()
    model = ScriptedModel([search("refund payment", max_results=1), "first", "second"])
    first = bm25_advisor(tools_from(desk), session_store=store)
    await client_for(model, first).prompt("go").conversation("c1").acall()
    second = bm25_advisor(tools_from(desk), session_store=store)
    await client_for(model, second).prompt("go").conversation("c1").acall()
    assert shown(model)[2] == [TOOL_SEARCH_NAME, REFUND]


async def test_the_default_store_keeps_its_documented_number_of_conversations(desk: Desk) -> None:
    advisor = bm25_advisor(tools_from(desk))  # the default InMemorySessionStore
    extra = 100
    conversations = [f"c{n}" for n in range(DEFAULT_MAX_SESSIONS + extra)]
    for conversation in conversations:
        model = ScriptedModel(
            [search("refund payment", max_results=1), call_found(payment_id="p1"), "done"]
        )
        await client_for(model, advisor).prompt("go").conversation(conversation).acall()
    stored = [await advisor.search.session_store.get(c) for c in conversations]
    # Each conversation stored its discovery and the tool it called, as one entry.
    assert stored[:extra] == [StoredTools()] * extra
    assert stored[extra:] == [StoredTools(names=(REFUND,), used=frozenset({REFUND}))] * (
        DEFAULT_MAX_SESSIONS
    )


# --- the catalog ---------------------------------------------------------------------------


async def test_a_catalog_change_reindexes_and_drops_vanished_tools(
    desk: Desk, advisor: ToolSearchAdvisor
) -> None:
    model = ScriptedModel(
        [
            tool_call_response(
                (TOOL_SEARCH_NAME, {"queries": ["refund payment"], "max_results": 1}),
                (TOOL_SEARCH_NAME, {"queries": ["send email"], "max_results": 1}),
            ),
            "first",
            "same tools, new catalog object",
            search("refund payment"),
            "after the change",
        ]
    )
    client = client_for(model, advisor)
    first = await client.prompt("go").conversation("c1").acall()
    advisor.catalog = ToolCatalog(tools_from(desk))  # new objects, same definitions
    same = await client.prompt("go").conversation("c1").acall()
    advisor.catalog = ToolCatalog([t for t in tools_from(desk) if t.definition.name != REFUND])
    changed = await client.prompt("go").conversation("c1").acall()

    reports = [r.tool_search for r in (first, same, changed)]
    assert [r.reindexed for r in reports if r] == [True, False, True]
    assert reports[0]
    assert reports[2]
    assert reports[0].catalog_fingerprint != reports[2].catalog_fingerprint
    assert shown(model)[3] == [TOOL_SEARCH_NAME, EMAIL]
    assert REFUND.replace(".", "__") not in found(model.prompts[4])
    assert (await advisor.search.session_store.get("c1")).names == (EMAIL,)


async def test_one_index_serves_every_conversation(desk: Desk) -> None:
    class CountingIndex(BM25ToolIndex):
        def __init__(self) -> None:
            super().__init__()
            self.built: list[bool] = []

        def index(self, definitions: Sequence[ToolDefinition], **options: Any) -> bool:
            rebuilt = super().index(definitions, **options)
            self.built.append(rebuilt)
            return rebuilt

    index = CountingIndex()
    advisor = bm25_advisor(tools_from(desk), index=index)
    model = ScriptedModel(["a", "b", "c"])
    client = client_for(model, advisor)
    for conversation in ("c1", "c2", "c3"):
        await client.prompt("go").conversation(conversation).acall()
    assert index.built == [True]  # the catalog did not change: indexed once, never again


async def test_the_catalog_may_be_given_as_tools_functions_or_objects(desk: Desk) -> None:
    advisor = ToolSearchAdvisor([desk, ping], channel="rewrite")
    assert set(advisor.catalog.names()) == {REFUND, INVOICE, EMAIL, FORECAST, "ping"}
    assert isinstance(advisor.search.index, ToolIndex)  # the search package's default index


async def test_catalog_problems_are_configuration_errors(desk: Desk) -> None:
    named_like_search = FunctionTool.from_function(ping, name=TOOL_SEARCH_NAME)
    for advisor in (
        bm25_advisor([*tools_from(desk), named_like_search]),
        bm25_advisor(tools_from(desk), always_on=["billing.no_such_tool"]),
    ):
        with pytest.raises(ConfigurationError):
            await client_for(ScriptedModel(["x"]), advisor).prompt("go").conversation("c").acall()
    with pytest.raises(ConfigurationError, match="max_results"):
        bm25_advisor(tools_from(desk), options=SearchOptions(max_results=0))
    with pytest.raises(ConfigurationError, match="min_relative_score"):
        bm25_advisor(tools_from(desk), options=SearchOptions(min_relative_score=1.5))
    with pytest.raises(ConfigurationError, match="SearchOptions"):
        bm25_advisor(tools_from(desk), options={"max_results": 3})


# --- the conversation key ------------------------------------------------------------------


async def test_a_missing_conversation_key_names_the_parameter(
    advisor: ToolSearchAdvisor,
) -> None:
    with pytest.raises(ConfigurationError, match="'conversation_id'"):
        await client_for(ScriptedModel(["x"]), advisor).prompt("go").acall()
    by_tenant = bm25_advisor(tools_from(Desk()), conversation_key="tenant")
    with pytest.raises(ConfigurationError, match="'tenant'"):
        await client_for(ScriptedModel(["x"]), by_tenant).prompt("go").conversation("c").acall()


async def test_the_key_can_come_from_the_tool_context(desk: Desk) -> None:
    def by_tenant(request: Any) -> object:
        return request.prompt.options.tool_context.get("tenant_id")

    advisor = bm25_advisor(tools_from(desk), conversation_key=by_tenant)
    model = ScriptedModel([search("refund payment", max_results=1), "one", "two"])
    client = client_for(model, advisor)
    await client.prompt("go").tool_context({"tenant_id": "acme"}).acall()
    await client.prompt("go").tool_context({"tenant_id": "acme"}).acall()
    assert shown(model)[2] == [TOOL_SEARCH_NAME, REFUND]
    # Kept, like every conversation key, within the tenant (the default scope).
    assert (await advisor.search.session_store.get("tenant:acme:acme")).names == (REFUND,)
    with pytest.raises(ConfigurationError, match="conversation_key function"):
        await client.prompt("go").acall()


# --- the client and the loop ---------------------------------------------------------------


def test_the_client_runs_it_as_its_only_tool_calling_advisor(
    advisor: ToolSearchAdvisor,
) -> None:
    client = client_for(ScriptedModel(["x"]), advisor)
    loops = [a for a in client._advisors([]) if isinstance(a, ToolCallingAdvisor)]
    assert loops == [advisor]
    with pytest.raises(ConfigurationError, match="exactly one tool-calling advisor"):
        client.prompt("go").conversation("c").advisors(ToolCallingAdvisor()).call()


async def test_the_report_records_searches_hits_and_exposure_per_call(desk: Desk) -> None:
    advisor = bm25_advisor(tools_from(desk), options=SearchOptions(min_relative_score=None))
    model = ScriptedModel(
        [
            search("refund a card payment or invoice", max_results=2, category="billing"),
            call_found(payment_id="p1"),
            "done",
        ]
    )
    response = await client_for(model, advisor).prompt("go").conversation("c1").acall()
    report = response.tool_search
    assert isinstance(report, ToolSearchReport)
    assert report is response.chat_client_response.tool_search
    assert report.conversation_key == "c1"
    assert report.catalog_fingerprint == advisor.search.index.fingerprint
    assert [r.model_call for r in report.rounds] == [1, 2, 3]
    assert [r.exposed for r in report.rounds] == [
        (TOOL_SEARCH_NAME,),
        (TOOL_SEARCH_NAME, REFUND, INVOICE),
        (TOOL_SEARCH_NAME, REFUND),  # the refund was chosen: the invoice is passed over
    ]
    [record] = report.searches
    assert (record.query, record.max_results, record.category) == (
        "refund a card payment or invoice",
        2,
        "billing",
    )
    assert record.names == (REFUND, INVOICE)
    scores = [hit.score for hit in record.response.hits]
    assert scores == sorted(scores, reverse=True)
    assert scores[0] > 0
    assert record.response.time_ms >= 0.0
    assert report.discovered == (REFUND,)


async def test_streaming_runs_the_same_loop(advisor: ToolSearchAdvisor) -> None:
    model = ScriptedModel(
        [search("refund payment", max_results=1), call_found(payment_id="p"), "ok"]
    )
    client = client_for(model, advisor)
    response = await client.prompt("go").conversation("c1").stream().collect()
    assert response.content() == "ok"
    report = response.tool_search
    assert report is not None
    assert report.discovered == (REFUND,)
    assert shown(model)[1] == [TOOL_SEARCH_NAME, REFUND]


async def test_a_round_stopped_by_a_limit_still_stores_what_it_found(desk: Desk) -> None:
    manager = ToolCallingManager(limits=CallLimits(total=1, on_breach="raise"))
    advisor = bm25_advisor(tools_from(desk), tool_calling_manager=manager)
    model = ScriptedModel(
        [
            tool_call_response(
                (TOOL_SEARCH_NAME, {"queries": ["refund payment"], "max_results": 1}),
                (TOOL_SEARCH_NAME, {"queries": ["send email"], "max_results": 1}),
            )
        ]
    )
    response = await client_for(model, advisor).prompt("go").conversation("c1").acall()
    assert response.tool_loop is not None
    assert response.tool_loop.stop is LoopStop.TOOL_CALL_LIMIT
    assert (await advisor.search.session_store.get("c1")).names == (REFUND,)


async def test_the_search_index_receives_the_permitted_view(desk: Desk) -> None:
    class SpyIndex(BM25ToolIndex):
        def __init__(self) -> None:
            super().__init__()
            self.requests: list[SearchRequest] = []

        def search(self, request: SearchRequest) -> SearchResponse:
            self.requests.append(request)
            return super().search(request)

    index = SpyIndex()
    advisor = bm25_advisor(
        tools_from(desk),
        index=index,
        options=SearchOptions(max_results=4, min_score=0.5, min_relative_score=0.25),
    )
    model = ScriptedModel([search("refund"), text_response("done")])
    await client_for(model, advisor).prompt("go").conversation("c1").acall()
    [request] = index.requests
    assert (request.max_results, request.min_score, request.min_relative_score) == (4, 0.5, 0.25)
    assert request.allowed == frozenset({REFUND, INVOICE, EMAIL, FORECAST})
