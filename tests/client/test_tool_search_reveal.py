"""A turn's start: the reveal of the request's best hits, and the small-catalog rule.

Before the first model call the permitted view is searched with the request's own text and
its best hits are shown, so a task whose tools are found up front makes no ``tool_search``
call. The conversation's first reveal pins them: they join the tool list on every channel,
which stays the same for the rest of the conversation. A later turn's reveal is shown through
the turn's channel (rewrite: the tool list; native: a tool change after the user's message;
proxy: a ``tool_search`` call and its answer after it). A catalog too small for search to pay
is sent whole.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from typing import Any

import pytest
from benchmarks.weather_catalog import ALL_TOOLS as WEATHER_TOOLS
from examples.refund_desk import build_catalog as refund_desk

from toolrelay.client import (
    TOOL_CALLING_ADVISOR_ORDER,
    ChatClient,
    MessageChatMemoryAdvisor,
    ToolSearchAdvisor,
)
from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import ApprovalInterceptor, Approve
from toolrelay.memory import InMemoryChatMemoryRepository, MessageWindowChatMemory
from toolrelay.messages import (
    AssistantMessage,
    ToolChangeMessage,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.models import ToolChannel
from toolrelay.models._billing import CLAUDE_TOOL_ADDITION, GPT_5, PricedModel
from toolrelay.prompt import Prompt
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.testing import ScriptedModel, tool_call_response
from toolrelay.tools import ToolContext, ToolDefinition, as_tools, tool, tools_from
from toolrelay.tools._tokens import count_tokens
from toolrelay.toolsearch import CALL_TOOL_NAME, TOOL_SEARCH_NAME, SearchOptions
from toolrelay.toolsearch._reveal import (
    DEFAULT_SEND_ALL_BELOW,
    REVEAL_CALL_ID,
    catalog_tokens_below,
    revealed_pair,
)

RETRY = "refund.retry"
TASK = "Retry the failed refund payment RF-1"
OPENING = "Hello, can you help me?"  # the reveal finds nothing for it: it pins no tool


class Desk:
    """Enough tools (over ``DEFAULT_SEND_ALL_BELOW`` tokens) that the default searches."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    @tool(name=RETRY)
    def retry(self, refund_id: str) -> str:
        """Retry a failed refund payment that the bank declined.

        Args:
            refund_id: The refund, e.g. RF-1.
        """
        self.ran.append(f"retry {refund_id}")
        return f"{refund_id} retried"

    @tool(name="weather.now")
    def weather(self, city: str) -> str:
        """Current weather forecast of a city, with temperature and wind.

        Args:
            city: The city, e.g. Oslo.
        """
        self.ran.append(f"weather {city}")
        return "sunny"

    @tool(name="calendar.create")
    def create_event(self, title: str, date: str, attendees: list[str]) -> str:
        """Create a calendar event and invite the attendees by email.

        Args:
            title: What the meeting is about.
            date: The day, as YYYY-MM-DD.
            attendees: Email addresses of the people invited.
        """
        return "created"

    @tool(name="flights.search")
    def flights(self, origin: str, destination: str, date: str) -> str:
        """Search flights between two airports on a day, cheapest first.

        Args:
            origin: The departure airport code.
            destination: The arrival airport code.
            date: The day of departure, as YYYY-MM-DD.
        """
        return "none"

    @tool(name="hotel.book")
    def hotel(self, city: str, check_in: str, check_out: str, guests: int = 1) -> str:
        """Book a hotel room in a city for the nights between check-in and check-out.

        Args:
            city: The city.
            check_in: The first night, as YYYY-MM-DD.
            check_out: The day of departure, as YYYY-MM-DD.
            guests: How many people stay.
        """
        return "booked"


def client_for(model: ScriptedModel, desk: Desk, **options: Any) -> ChatClient:
    return ChatClient(model, advisors=[ToolSearchAdvisor(desk, index=BM25ToolIndex(), **options)])


def channel_model(channel: ToolChannel, script: list[Any]) -> ScriptedModel:
    declared: tuple[ToolChannel, ...] = (
        (channel, "rewrite") if channel != "rewrite" else ("rewrite",)
    )
    return ScriptedModel(script, tool_channels=declared)


def test_the_desk_is_searched_under_the_default() -> None:
    definitions = [t.definition for t in tools_from(Desk())]
    assert catalog_tokens_below(definitions, DEFAULT_SEND_ALL_BELOW, {}) is None


# --- the reveal on each channel -----------------------------------------------------------------


async def test_rewrite_shows_the_revealed_tool_in_the_first_tool_list() -> None:
    desk = Desk()
    model = channel_model("rewrite", [tool_call_response((RETRY, {"refund_id": "RF-1"})), "done"])
    response = await client_for(model, desk).prompt(TASK).conversation("c").acall()
    assert model.tool_names_shown(0)[:2] == [TOOL_SEARCH_NAME, RETRY]
    assert desk.ran == ["retry RF-1"]
    report = response.tool_search
    assert report is not None
    assert report.revealed is not None
    assert report.searches == ()  # no tool_search call: the task's tool was revealed
    assert report.revealed.query == TASK
    assert report.revealed.names[0] == RETRY
    assert report.revealed.response.hits[0].name == RETRY
    assert report.revealed.response.hits[0].score > 0
    assert RETRY in report.pinned
    assert RETRY not in report.discovered  # pinned, not a discovery retention could retire


# Each channel lists its fixed tools in its own order; the pinned ones follow the request's.
FIRST_LIST: dict[ToolChannel, list[str]] = {
    "rewrite": [TOOL_SEARCH_NAME, RETRY],
    "native": [TOOL_SEARCH_NAME, RETRY],
    "proxy": [RETRY, TOOL_SEARCH_NAME, CALL_TOOL_NAME],
}


@pytest.mark.parametrize("channel", ["rewrite", "native", "proxy"])
async def test_the_first_reveal_pins_its_hits_to_the_tool_list_on_every_channel(
    channel: ToolChannel,
) -> None:
    # Nothing of a conversation is cached before its first model call: its reveal joins the
    # tool list, called by name, and the list stays the same for the rest of the conversation.
    desk = Desk()
    model = channel_model(
        channel,
        [tool_call_response((RETRY, {"refund_id": "RF-1"})), "done", "Booked.", "Bye."],
    )
    client = client_for(model, desk)
    response = await client.prompt(TASK).conversation("c").acall()
    first = model.prompts[0]
    assert model.tool_names_shown(0) == FIRST_LIST[channel]
    assert first.messages[-1] == UserMessage(text=TASK)  # no tool change, no search answer
    assert desk.ran == ["retry RF-1"]
    assert response.tool_search is not None
    assert response.tool_search.pinned == (RETRY,)
    assert response.tool_search.searches == ()
    assert model.prompts[1].messages[: len(first.messages)] == first.messages
    # Later turns keep the list, whatever their own reveal finds: the cache keeps its prefix.
    later = await client.prompt("Book a hotel room in Oslo").conversation("c").acall()
    assert model.tool_names_shown(2)[: len(FIRST_LIST[channel])] == FIRST_LIST[channel]
    assert later.tool_search is not None
    assert later.tool_search.pinned == (RETRY,)
    assert later.tool_search.revealed is not None
    assert later.tool_search.revealed.names[0] == "hotel.book"
    await client.prompt(OPENING).conversation("c").acall()
    assert model.tool_names_shown(3)[: len(FIRST_LIST[channel])] == FIRST_LIST[channel]


async def test_two_first_turns_at_once_list_the_pin_that_was_stored_first() -> None:
    model = channel_model("proxy", ["One.", "Two."])
    client = client_for(model, Desk())
    one, two = await asyncio.gather(
        client.prompt(TASK).conversation("c").acall(),
        client.prompt("Book a hotel room in Oslo").conversation("c").acall(),
    )
    assert one.tool_search is not None
    assert two.tool_search is not None
    assert one.tool_search.pinned == two.tool_search.pinned
    assert model.tool_names_shown(0) == model.tool_names_shown(1)
    # The turn whose pin came second shows its own hits through the channel: a search
    # answer after its message.
    pinned = one.tool_search.pinned
    later = two if pinned == (RETRY,) else one
    assert later.tool_search is not None
    assert later.tool_search.revealed is not None
    hit = later.tool_search.revealed.names[0]
    assert hit not in pinned
    [prompt] = [p for p in model.prompts if not isinstance(p.messages[-1], UserMessage)]
    answered = prompt.messages[-1]
    assert isinstance(answered, ToolResponseMessage)
    assert json.loads(answered.responses[0].data)[0]["name"] == hit


async def test_a_conversation_whose_first_reveal_found_nothing_pins_nothing() -> None:
    model = channel_model("rewrite", ["Hi.", tool_call_response((RETRY, {"refund_id": "R"})), "ok"])
    client = client_for(model, Desk())
    first = await client.prompt(OPENING).conversation("c").acall()
    assert first.tool_search is not None
    assert first.tool_search.pinned == ()
    later = await client.prompt(TASK).conversation("c").acall()
    assert later.tool_search is not None
    assert later.tool_search.pinned == ()
    assert RETRY in later.tool_search.discovered  # a later turn's reveal: a discovery


async def test_native_makes_a_later_turns_revealed_tool_available_after_the_users_message() -> None:
    desk = Desk()
    model = channel_model(
        "native", ["Hi.", tool_call_response((RETRY, {"refund_id": "RF-1"})), "done"]
    )
    client = client_for(model, desk)
    await client.prompt(OPENING).conversation("c").acall()
    response = await client.prompt(TASK).conversation("c").acall()
    first = model.prompts[1]
    assert model.tool_names_shown(1) == [TOOL_SEARCH_NAME]  # the tool list never changes
    user, change = first.messages[-2:]
    assert user == UserMessage(text=TASK)
    assert isinstance(change, ToolChangeMessage)
    assert change.added[0]["name"] == RETRY
    assert desk.ran == ["retry RF-1"]  # called by name, as the change made it available
    assert response.tool_search is not None
    assert response.tool_search.channel == "native"
    assert response.tool_search.searches == ()
    # The second call keeps the change where the first had it: the prefix stays cached.
    assert model.prompts[2].messages[: len(first.messages)] == first.messages


async def test_proxy_answers_a_later_turns_reveal_with_definitions_after_the_message() -> None:
    desk = Desk()
    call = (CALL_TOOL_NAME, {"name": RETRY, "arguments": {"refund_id": "RF-1"}})
    model = channel_model("proxy", ["Hi.", tool_call_response(call), "done"])
    client = client_for(model, desk)
    await client.prompt(OPENING).conversation("c").acall()
    response = await client.prompt(TASK).conversation("c").acall()
    first = model.prompts[1]
    assert model.tool_names_shown(1) == [TOOL_SEARCH_NAME, CALL_TOOL_NAME]
    user, asked, answered = first.messages[-3:]
    assert user == UserMessage(text=TASK)
    assert isinstance(asked, AssistantMessage)
    [search_call] = asked.tool_calls
    assert search_call.name == TOOL_SEARCH_NAME
    assert json.loads(search_call.arguments) == {"queries": [TASK]}
    assert isinstance(answered, ToolResponseMessage)
    [answer] = answered.responses
    assert answer.id == search_call.id
    hits = json.loads(answer.data)
    assert hits[0]["name"] == RETRY
    assert hits[0]["input_schema"]["required"] == ["refund_id"]
    assert desk.ran == ["retry RF-1"]  # call_tool runs the revealed tool
    assert response.tool_search is not None
    assert response.tool_search.revealed is not None
    assert response.tool_search.revealed.names[0] == RETRY
    assert response.tool_search.searches == ()
    assert model.prompts[2].messages[: len(first.messages)] == first.messages


async def test_a_later_search_does_not_repeat_a_revealed_definition_in_the_proxy_channel() -> None:
    model = channel_model(
        "proxy",
        [tool_call_response((TOOL_SEARCH_NAME, {"queries": ["retry failed refund"]})), "done"],
    )
    response = await client_for(model, Desk()).prompt(TASK).conversation("c").acall()
    report = response.tool_search
    assert report is not None
    [search] = report.searches
    assert search.names[0] == RETRY  # found, and named only: the history has it
    answer = model.prompts[1].messages[-1]
    assert isinstance(answer, ToolResponseMessage)
    assert json.loads(answer.responses[0].data)[0] == {"name": RETRY}


class ApprovalDesk(Desk):
    @tool(name="refund.issue", requires_approval=True)
    def issue(self, refund_id: str, amount: int) -> str:
        """Issue a refund payment of an amount to the customer.

        Args:
            refund_id: The refund, e.g. RF-1.
            amount: The amount in cents.
        """
        self.ran.append(f"issue {refund_id}")
        return "issued"


async def test_a_turn_resumed_after_approval_reveals_nothing_again() -> None:
    desk = ApprovalDesk()
    issue = (CALL_TOOL_NAME, {"name": "refund.issue", "arguments": {"refund_id": "R", "amount": 5}})
    model = channel_model("proxy", [tool_call_response(issue), "Issued."])
    client = ChatClient(
        model,
        advisors=[ToolSearchAdvisor(desk, index=BM25ToolIndex())],
        approval=ApprovalInterceptor(),
    )
    stopped = await client.prompt("Issue a refund payment").conversation("c").acall()
    assert stopped.tool_search is not None
    assert stopped.tool_search.revealed is not None
    assert "refund.issue" in stopped.tool_search.revealed.names
    (pending,) = stopped.pending_approvals
    resumed = await (
        client.prompt().resume(stopped.approval, {pending.call_id: Approve()}).conversation("c")
    ).acall()
    assert desk.ran == ["issue R"]
    assert resumed.content() == "Issued."
    assert resumed.tool_search is not None
    assert resumed.tool_search.revealed is None
    [after] = model.prompts[1:]
    reveals = [m for m in after.messages if isinstance(m, AssistantMessage) and m.tool_calls]
    assert [m.tool_calls[0].name for m in reveals].count(TOOL_SEARCH_NAME) <= 1


# --- a miss, permissions, turning it off ----------------------------------------------------------


async def test_a_reveal_that_misses_leaves_tool_search_working() -> None:
    desk = Desk()
    model = channel_model(
        "rewrite",
        [
            tool_call_response((TOOL_SEARCH_NAME, {"queries": ["retry refund payment"]})),
            tool_call_response((RETRY, {"refund_id": "RF-1"})),
            "done",
        ],
    )
    client = client_for(model, desk)
    response = await client.prompt("Hello, can you help me?").conversation("c").acall()
    report = response.tool_search
    assert report is not None
    assert report.revealed is not None
    assert report.revealed.names == ()
    assert model.tool_names_shown(0) == [TOOL_SEARCH_NAME]
    assert [s.names[0] for s in report.searches] == [RETRY]
    assert desk.ran == ["retry RF-1"]


def no_refunds(context: ToolContext, definition: ToolDefinition) -> bool:
    return not definition.name.startswith("refund.")


@pytest.mark.parametrize("channel", ["rewrite", "native", "proxy"])
async def test_the_reveal_searches_only_the_permitted_view(channel: ToolChannel) -> None:
    desk = Desk()
    model = channel_model(channel, [tool_call_response((RETRY, {"refund_id": "RF-1"})), "done"])
    client = client_for(model, desk, options=SearchOptions(tool_filter=no_refunds))
    response = await client.prompt(TASK).conversation("c").acall()
    report = response.tool_search
    assert report is not None
    assert report.revealed is not None
    assert RETRY not in report.revealed.names
    assert all(h.name != RETRY for h in report.revealed.response.hits)
    first = model.prompts[0]
    assert RETRY not in model.tool_names_shown(0)
    assert RETRY not in json.dumps([repr(m) for m in first.messages if m != UserMessage(text=TASK)])
    assert desk.ran == []  # the forbidden tool never runs
    assert RETRY not in report.discovered


async def test_reveal_0_turns_it_off() -> None:
    model = channel_model("rewrite", ["done"])
    response = await client_for(model, Desk(), reveal=0).prompt(TASK).conversation("c").acall()
    assert model.tool_names_shown(0) == [TOOL_SEARCH_NAME]
    assert response.tool_search is not None
    assert response.tool_search.revealed is None
    assert response.tool_search.discovered == ()


async def test_a_later_turns_revealed_tools_are_discoveries_the_next_turn_shows() -> None:
    model = channel_model(
        "rewrite", ["Hi.", tool_call_response((RETRY, {"refund_id": "RF-1"})), "done", "again"]
    )
    client = client_for(model, Desk())
    await client.prompt(OPENING).conversation("c").acall()
    await client.prompt(TASK).conversation("c").acall()
    await client.prompt("thanks").conversation("c").acall()
    assert RETRY in model.tool_names_shown(-1)  # kept: the model called it (retention "used")


async def test_the_reveal_takes_its_own_hit_count_and_cut() -> None:
    model = channel_model("rewrite", ["done"])
    client = client_for(model, Desk(), reveal=5, reveal_min_relative_score=None)
    response = (
        await client.prompt("refund weather calendar flights hotel").conversation("c").acall()
    )
    assert response.tool_search is not None
    assert response.tool_search.revealed is not None
    assert len(response.tool_search.revealed.names) == 5


async def test_the_reveals_other_hits_stay_shown_after_the_model_calls_one() -> None:
    # A later turn's reveal searched the whole request, not one need: calling one of its
    # hits passes none of the others over (a lone search's would be), so the task's later
    # step finds its tool still shown.
    task = "Retry the failed refund payment RF-1, then the weather forecast in Oslo"
    model = channel_model(
        "rewrite",
        [
            "Hi.",
            tool_call_response((RETRY, {"refund_id": "RF-1"})),
            tool_call_response(("weather.now", {"city": "Oslo"})),
            "done",
        ],
    )
    desk = Desk()
    client = client_for(model, desk, reveal_min_relative_score=None)
    await client.prompt(OPENING).conversation("c").acall()
    response = await client.prompt(task).conversation("c").acall()
    assert response.tool_search is not None
    assert response.tool_search.revealed is not None
    assert set(response.tool_search.revealed.names) == {RETRY, "weather.now"}
    assert set(response.tool_search.discovered) == {RETRY, "weather.now"}
    assert model.tool_names_shown(2) == model.tool_names_shown(1)
    assert desk.ran == ["retry RF-1", "weather Oslo"]
    assert response.tool_search.searches == ()


# --- the fill to the cache minimum ---------------------------------------------------------------

CACHE_RULES: dict[ToolChannel, PricedModel] = {
    # Chat Completions renders the proxy and rewrite channels; a model taking tool changes
    # (Anthropic's layout, its tool-use prompt and history breakpoint) the native one.
    "proxy": GPT_5,
    "rewrite": GPT_5,
    "native": CLAUDE_TOOL_ADDITION,
}


# BM25 finds three of the desk's tools for it; the measured rule reveals the first alone.
FILL_TASK = "Retry the failed refund payment RF-1 and check the weather in Oslo"


def prompt_size(priced: PricedModel, prompt: Prompt) -> int:
    """The tokens of ``prompt`` as ``priced``'s cache counts them."""
    huge = 10**6
    return huge - dataclasses.replace(priced, cache_minimum=huge).cache_shortfall(prompt)


async def first_prompt_and_reveal(
    channel: ToolChannel, rule: PricedModel | None, **options: Any
) -> tuple[Prompt, tuple[str, ...]]:
    declared = channel_model(channel, []).channels
    model = ScriptedModel(
        ["done"],
        tool_channels=declared,
        cache_shortfall=None if rule is None else rule.cache_shortfall,
    )
    client = client_for(model, Desk(), **options)
    response = await client.prompt(FILL_TASK).conversation("c").acall()
    assert response.tool_search is not None
    assert response.tool_search.revealed is not None
    return model.prompts[0], response.tool_search.revealed.names


@pytest.mark.parametrize("channel", ["proxy", "native", "rewrite"])
async def test_the_reveal_fills_the_first_request_to_the_models_cache_minimum(
    channel: ToolChannel,
) -> None:
    priced = CACHE_RULES[channel]
    plain, measured = await first_prompt_and_reveal(channel, None)
    # A provider whose minimum is one token more than the first request holds.
    rule = dataclasses.replace(priced, cache_minimum=prompt_size(priced, plain) + 1)
    assert rule.cache_shortfall(plain) == 1
    first, filled = await first_prompt_and_reveal(channel, rule)
    assert measured == (RETRY,)
    assert rule.cache_shortfall(first) == 0  # every later request reads it from the cache
    assert filled == (RETRY, "weather.now")  # the next best, and no more than it needs


@pytest.mark.parametrize("channel", ["proxy", "native", "rewrite"])
async def test_a_minimum_the_ten_best_hits_cannot_reach_is_not_filled(
    channel: ToolChannel,
) -> None:
    rule = dataclasses.replace(CACHE_RULES[channel], cache_minimum=100_000)
    _, measured = await first_prompt_and_reveal(channel, None)
    first, revealed = await first_prompt_and_reveal(channel, rule)
    assert revealed == measured  # filling would only cost: the prompt stays uncached
    assert rule.cache_shortfall(first) > 0


async def test_a_minimum_the_revealed_hits_cannot_move_stops_after_one_try() -> None:
    # A cache kept up to the system text only (an Anthropic request marked there alone): the
    # proxy channel's hits land in the history, past it, so no number of them reaches it.
    asked: list[Prompt] = []

    def system_and_tools_only(prompt: Prompt) -> int:
        asked.append(prompt)
        return 50  # short by as much whatever the history holds

    model = ScriptedModel(
        ["done"], tool_channels=("proxy", "rewrite"), cache_shortfall=system_and_tools_only
    )
    response = await client_for(model, Desk()).prompt(FILL_TASK).conversation("c").acall()
    assert response.tool_search is not None
    assert response.tool_search.revealed is not None
    assert response.tool_search.revealed.names == (RETRY,)  # the measured hits, unfilled
    # The request as revealed, and one filled try: the next best hit moved nothing.
    assert len(asked) == 2


async def test_fill_cache_minimum_false_reveals_the_measured_hits_only() -> None:
    plain, measured = await first_prompt_and_reveal("proxy", None)
    rule = dataclasses.replace(GPT_5, cache_minimum=prompt_size(GPT_5, plain) + 1)
    first, revealed = await first_prompt_and_reveal("proxy", rule, fill_cache_minimum=False)
    assert revealed == measured
    assert rule.cache_shortfall(first) == 1


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"reveal": -1}, "reveal must be between 0"),
        ({"reveal": "2"}, "reveal must be an integer"),
        ({"reveal": True}, "reveal must be an integer"),
        ({"reveal_min_relative_score": 1.5}, "reveal_min_relative_score must be a number"),
        ({"send_all_below": -5}, "send_all_below must be a number of tokens"),
        ({"send_all_below": 1.5}, "send_all_below must be a number of tokens"),
        ({"fill_cache_minimum": "yes"}, "fill_cache_minimum must be True or False"),
        ({"fill_cache_minimum": 1}, "fill_cache_minimum must be True or False"),
    ],
)
def test_bad_turn_options_are_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        ToolSearchAdvisor(Desk(), index=BM25ToolIndex(), **options)


# --- the small-catalog rule -----------------------------------------------------------------------


@tool(name="clock.now")
def now() -> str:
    """The time."""
    return "noon"


@tool(name="clock.zone")
def zone(city: str) -> str:
    """The time zone of a city."""
    return "UTC"


async def test_a_small_catalog_is_sent_whole_reported_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = channel_model("proxy", [tool_call_response(("clock.now", {})), "noon"])
    client = ChatClient(model, advisors=[ToolSearchAdvisor([now, zone], index=BM25ToolIndex())])
    with caplog.at_level(logging.INFO, logger="toolrelay.client"):
        response = await client.prompt("What time is it?").conversation("c").acall()
    assert model.tool_names_shown(0) == ["clock.now", "clock.zone"]  # no tool_search
    assert response.content() == "noon"
    report = response.tool_search
    assert report is not None
    assert report.sent_all_tools is not None
    definitions = [t.definition for t in as_tools([now, zone])]
    total = catalog_tokens_below(definitions, DEFAULT_SEND_ALL_BELOW, {})
    assert total is not None
    assert f"total {total} tokens" in report.sent_all_tools
    assert f"send_all_below={DEFAULT_SEND_ALL_BELOW}" in report.sent_all_tools
    assert report.revealed is None
    assert report.searches == ()
    [record] = [r for r in caplog.records if r.name == "toolrelay.client"]
    assert record.levelno == logging.INFO
    assert report.sent_all_tools in record.getMessage()


async def test_send_all_below_none_always_searches() -> None:
    model = channel_model("rewrite", ["hi"])
    advisor = ToolSearchAdvisor([now, zone], index=BM25ToolIndex(), send_all_below=None, reveal=0)
    response = await ChatClient(model, advisors=[advisor]).prompt("hi").conversation("c").acall()
    assert model.tool_names_shown(0) == [TOOL_SEARCH_NAME]
    assert response.tool_search is not None
    assert response.tool_search.sent_all_tools is None


async def test_the_rule_counts_only_the_permitted_tools() -> None:
    model = channel_model("rewrite", ["hi"])
    only_weather = SearchOptions(tool_filter=lambda c, d: d.name == "weather.now")
    client = client_for(model, Desk(), options=only_weather)
    response = await client.prompt("hi").conversation("c").acall()
    assert model.tool_names_shown(0) == ["weather.now"]  # the one tool this caller may use
    assert response.tool_search is not None
    assert response.tool_search.sent_all_tools is not None


def test_the_benchmark_scenarios_stay_searched_under_the_default() -> None:
    weather = [t.definition for t in as_tools(list(WEATHER_TOOLS))]
    refunds = [t.definition for t in refund_desk()]
    assert (len(weather), len(refunds)) == (28, 78)
    assert catalog_tokens_below(weather, DEFAULT_SEND_ALL_BELOW, {}) is None
    assert catalog_tokens_below(refunds, DEFAULT_SEND_ALL_BELOW, {}) is None


async def test_memory_inside_the_loop_keeps_each_turns_reveal_under_its_own_call_id() -> None:
    memory = MessageChatMemoryAdvisor(
        MessageWindowChatMemory(InMemoryChatMemoryRepository()),
        order=TOOL_CALLING_ADVISOR_ORDER + 1,
    )
    model = channel_model("proxy", ["Hi.", "First.", "Second."])
    client = ChatClient(model, advisors=[memory, ToolSearchAdvisor(Desk(), index=BM25ToolIndex())])
    await client.prompt(OPENING).conversation("c").acall()  # pins nothing
    await client.prompt(TASK).conversation("c").acall()
    await client.prompt("Book a hotel room in Oslo").conversation("c").acall()
    ids = [
        call.id
        for message in model.prompts[2].messages
        if isinstance(message, AssistantMessage)
        for call in message.tool_calls
    ]
    assert len(ids) == len(set(ids)) == 2
    assert all(i.startswith("tool_search_reveal_") for i in ids)


def test_the_proxy_reveals_call_ids_are_unique_and_count_the_same_tokens() -> None:
    # Identical runs must count the same tokens: the random id may not change its length.
    ids = [revealed_pair("weather", "[]")[0].tool_calls[0].id for _ in range(200)]
    assert len(set(ids)) == len(ids)
    assert len({count_tokens(i) for i in ids}) == 1
    assert all(i.startswith(REVEAL_CALL_ID) for i in ids)
