"""Choosing the channel (``auto``, enforced names) and the native channel's loop.

On the native channel the tool list never changes; a search answers with names, and a
:class:`~toolrelay.messages.ToolChangeMessage` after the round's tool responses makes the
found tools available (and retires the ones retention drops); found tools are called by name.
"""

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
from toolrelay.memory import InMemoryChatMemoryRepository, MessageWindowChatMemory
from toolrelay.messages import Message, ToolChangeMessage, ToolResponseMessage
from toolrelay.models import ToolChannel
from toolrelay.prompt import Prompt
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.testing import ScriptedModel, tool_call_response
from toolrelay.testing._models import ScriptStep
from toolrelay.tools import tool
from toolrelay.toolsearch import CALL_TOOL_NAME, TOOL_SEARCH_NAME

NATIVE: tuple[ToolChannel, ...] = ("native", "proxy", "rewrite")
RETRY, STATUS, WEATHER = "refund.retry", "refund.status", "weather.now"


class Desk:
    def __init__(self) -> None:
        self.ran: list[str] = []

    @tool(name=RETRY)
    def retry(self, refund_id: str) -> str:
        """Retry a failed refund payment.

        Args:
            refund_id: The refund.
        """
        self.ran.append(f"retry {refund_id}")
        return f"{refund_id} retried"

    @tool(name=STATUS)
    def status(self, refund_id: str) -> str:
        """Show the payment status of a refund.

        Args:
            refund_id: The refund.
        """
        self.ran.append(f"status {refund_id}")
        return f"{refund_id}: failed"

    @tool(name=WEATHER)
    def weather(self, city: str) -> str:
        """Current weather forecast of a city.

        Args:
            city: The city.
        """
        self.ran.append(f"weather {city}")
        return "sunny"


def search(query: str, max_results: int = 1) -> tuple[str, dict[str, Any]]:
    return (TOOL_SEARCH_NAME, {"queries": [query], "max_results": max_results})


def changes(prompt: Prompt) -> list[ToolChangeMessage]:
    return [m for m in prompt.messages if isinstance(m, ToolChangeMessage)]


def client_for(model: ScriptedModel, desk: Desk, **options: Any) -> ChatClient:
    advisor = ToolSearchAdvisor(desk, index=BM25ToolIndex(), **{**SEARCH_ONLY, **options})
    return ChatClient(model, advisors=[advisor])


def native(script: list[ScriptStep]) -> ScriptedModel:
    return ScriptedModel(script, tool_channels=NATIVE)


# --- choosing the channel ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("declared", "expected"),
    [
        (NATIVE, "native"),
        (("proxy", "rewrite"), "proxy"),
        (("rewrite", "proxy"), "proxy"),  # auto takes rewrite only when nothing else is declared
        (("rewrite",), "rewrite"),
    ],
)
async def test_auto_takes_the_best_channel_the_model_declares(
    declared: tuple[ToolChannel, ...], expected: str
) -> None:
    model = ScriptedModel(["hi"], tool_channels=declared)
    response = await client_for(model, Desk()).prompt("hi").conversation("c1").acall()
    assert response.tool_search is not None
    assert response.tool_search.channel == expected


async def test_a_channel_the_model_does_not_declare_is_refused_naming_the_fix() -> None:
    model = ScriptedModel(["hi"], name="plain")
    client = client_for(model, Desk(), channel="native")
    with pytest.raises(ConfigurationError) as raised:
        await client.prompt("hi").conversation("c1").acall()
    message = str(raised.value)
    assert "channel='native'" in message
    assert "'plain' renders only 'proxy', 'rewrite'" in message
    assert "channel='auto'" in message
    assert model.call_count == 0  # refused before the model is paid for a call


async def test_a_declared_channel_given_by_name_is_taken() -> None:
    model = native(["hi"])
    client = client_for(model, Desk(), channel="proxy")
    response = await client.prompt("hi").conversation("c").acall()
    assert response.tool_search is not None
    assert response.tool_search.channel == "proxy"
    assert model.tool_names_shown(0) == [TOOL_SEARCH_NAME, CALL_TOOL_NAME]


async def test_a_traced_model_declares_the_channels_of_the_model_it_wraps() -> None:
    from toolrelay.otel import TracedChatModel

    model = native(["hi"])
    advisor = ToolSearchAdvisor(Desk(), index=BM25ToolIndex())
    client = ChatClient(TracedChatModel(model), advisors=[advisor])
    response = await client.prompt("hi").conversation("c1").acall()
    assert response.tool_search is not None
    assert response.tool_search.channel == "native"


# --- the native channel ------------------------------------------------------------------------


async def test_found_tools_become_available_in_the_history_and_are_called_by_name() -> None:
    desk = Desk()
    model = native(
        [
            tool_call_response(search("retry a failed refund")),
            tool_call_response((RETRY, {"refund_id": "RF-1"})),
            "Retried.",
        ]
    )
    response = await client_for(model, desk).prompt("Retry RF-1").conversation("c1").acall()

    assert response.content() == "Retried."
    assert desk.ran == ["retry RF-1"]
    # The search answers with the name only: the definition travels in the tool change.
    answer = next(m for m in model.prompts[1].messages if isinstance(m, ToolResponseMessage))
    assert json.loads(answer.responses[0].data) == [{"name": "refund__retry"}]
    (change,) = changes(model.prompts[1])
    assert change.added_names == (RETRY,)
    assert change.added[0]["description"] == "Retry a failed refund payment."
    assert change.added[0]["input_schema"]["required"] == ["refund_id"]
    assert change.removed == ()
    # It follows the round's tool responses, and stays there for every later call.
    second = list(model.prompts[1].messages)
    assert second[second.index(change) - 1] is answer
    third = list(model.prompts[2].messages)
    assert changes(model.prompts[2]) == [change]
    assert isinstance(third[third.index(change) - 1], ToolResponseMessage)
    report = response.tool_search
    assert report is not None
    assert report.channel == "native"
    assert [r.exposed for r in report.rounds] == [
        (TOOL_SEARCH_NAME,),
        (TOOL_SEARCH_NAME, RETRY),
        (TOOL_SEARCH_NAME, RETRY),
    ]


async def test_the_request_tools_list_never_changes_on_native_and_proxy() -> None:
    for channel in ("native", "proxy"):
        model = native(
            [
                tool_call_response(search("retry a failed refund")),
                tool_call_response(search("weather forecast")),
                tool_call_response(search("refund payment status")),
                "done",
            ]
        )
        client = client_for(model, Desk(), channel=channel)
        await client.prompt("go").conversation("c1").acall()
        lists = [model.tool_names_shown(i) for i in range(model.call_count)]
        assert model.call_count == 4
        assert all(shown == lists[0] for shown in lists), (channel, lists)


async def test_an_undiscovered_tool_is_refused_and_never_runs() -> None:
    desk = Desk()
    model = native([tool_call_response((WEATHER, {"city": "Oslo"})), "gave up"])
    await client_for(model, desk).prompt("weather?").conversation("c1").acall()
    assert desk.ran == []
    (answer,) = [m for m in model.prompts[1].messages if isinstance(m, ToolResponseMessage)]
    assert "not available" in answer.responses[0].data


async def test_a_retired_tool_is_removed_in_the_history_and_refused() -> None:
    desk = Desk()
    model = native(
        [
            # Two hits; calling the status tool retires the other hit, passed over.
            tool_call_response(search("refund", max_results=2)),
            tool_call_response((STATUS, {"refund_id": "RF-1"})),
            tool_call_response((RETRY, {"refund_id": "RF-1"})),
            "done",
        ]
    )
    await client_for(model, desk).prompt("go").conversation("c1").acall()

    found, retired = changes(model.prompts[2])
    assert set(found.added_names) == {RETRY, STATUS}
    assert retired == ToolChangeMessage(removed=(RETRY,))
    assert changes(model.prompts[3]) == [found, retired]  # nothing new: no change added
    assert desk.ran == ["status RF-1"]  # the retired tool never ran
    refused = [m for m in model.prompts[3].messages if isinstance(m, ToolResponseMessage)][-1]
    assert "not available" in refused.responses[0].data


async def test_a_later_turn_makes_the_stored_tools_available_again_after_its_message() -> None:
    desk = Desk()
    model = native(
        [
            tool_call_response(search("retry a failed refund")),
            "Found it.",
            tool_call_response((RETRY, {"refund_id": "RF-2"})),
            "Retried.",
        ]
    )
    memory = MessageChatMemoryAdvisor(MessageWindowChatMemory(InMemoryChatMemoryRepository()))
    advisor = ToolSearchAdvisor(desk, index=BM25ToolIndex(), **SEARCH_ONLY)
    client = ChatClient(model, advisors=[memory, advisor])
    await client.prompt("find the retry tool").conversation("c1").acall()
    await client.prompt("now retry RF-2").conversation("c1").acall()

    # Memory outside the loop replays only the user's messages and the answers; the turn
    # makes the tools found earlier available after its own message, with no new search.
    turn_two = list(model.prompts[2].messages)
    (change,) = changes(model.prompts[2])
    assert change.added_names == (RETRY,)
    assert turn_two[-1] is change
    assert desk.ran == ["retry RF-2"]


async def test_memory_inside_the_loop_stores_the_tool_changes_and_replays_them() -> None:
    desk = Desk()
    model = native(
        [
            tool_call_response(search("retry a failed refund")),
            tool_call_response((RETRY, {"refund_id": "RF-1"})),
            "Retried.",
            tool_call_response((RETRY, {"refund_id": "RF-2"})),
            "Retried again.",
        ]
    )
    repository = InMemoryChatMemoryRepository()
    memory = MessageChatMemoryAdvisor(
        MessageWindowChatMemory(repository), order=TOOL_CALLING_ADVISOR_ORDER + 100
    )
    client = ChatClient(
        model, advisors=[memory, ToolSearchAdvisor(desk, index=BM25ToolIndex(), **SEARCH_ONLY)]
    )
    await client.prompt("Retry RF-1").conversation("c1").acall()
    stored: list[Message] = await repository.find_by_conversation_id("c1")
    kept = [m for m in stored if isinstance(m, ToolChangeMessage)]
    assert [c.added_names for c in kept] == [(RETRY,)]

    await client.prompt("and RF-2").conversation("c1").acall()
    # The replayed history holds the change where it was made; the found tool runs.
    replayed = changes(model.prompts[3])
    assert replayed[0] == kept[0]
    assert desk.ran == ["retry RF-1", "retry RF-2"]
