"""The usage log in the tool search loop: what is recorded, per scope, and used next time."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from tests.client.test_tool_search import (
    EMAIL,
    FORECAST,
    REFUND,
    Desk,
    bm25_advisor,
    call_found,
    client_for,
    found,
    search,
)
from toolrelay.exceptions import ConfigurationError
from toolrelay.prompt import Prompt
from toolrelay.search import BM25ToolIndex, InMemoryUsageLog, UsageEntry
from toolrelay.testing import ScriptedModel, tool_call_response
from toolrelay.tools import Tool, ToolContext, tool, tools_from
from toolrelay.toolsearch import TOOL_SEARCH_NAME, SearchOptions

# The words of these queries are in no description: only history can find the refund tool.
USERS_WORDS = "give the money back for the broken kettle"


def tuples(entries: tuple[UsageEntry, ...]) -> list[tuple[str, str, str]]:
    return [(e.scope, e.query, e.tool) for e in entries]


async def run(
    advisor: Any,
    script: list[Any],
    *,
    tenant: str | None = "acme",
    cid: str = "c1",
    **guards: Any,
) -> Any:
    model = ScriptedModel(script)
    spec = client_for(model, advisor, **guards).prompt("go").conversation(cid)
    if tenant is not None:
        spec = spec.tool_context({"tenant_id": tenant})
    return model, await spec.acall()


async def test_a_tool_found_by_a_search_and_called_successfully_is_recorded() -> None:
    log = InMemoryUsageLog()
    advisor = bm25_advisor(tools_from(Desk()), options=SearchOptions(usage_log=log))
    _, response = await run(
        advisor,
        [search("refund card payment", max_results=1), call_found(payment_id="p1"), "done"],
    )
    assert tuples(await log.entries()) == [("tenant:acme", "refund card payment", REFUND)]
    assert response.tool_search is not None
    assert tuples(response.tool_search.learned) == tuples(await log.entries())


async def test_failing_denied_and_unsearched_calls_are_not_recorded() -> None:
    @tool(name="billing.refund_payment")
    def broken_refund(payment_id: str) -> str:
        """Refund a customer's card payment in full."""
        raise RuntimeError("the payment service is down")

    def authorize(context: ToolContext, tool: Tool, arguments: Mapping[str, Any]) -> bool:
        return tool.definition.name != EMAIL

    log = InMemoryUsageLog()
    desk = Desk()
    tools = [broken_refund, *(t for t in tools_from(desk) if t.definition.name != REFUND)]
    advisor = bm25_advisor(tools, options=SearchOptions(usage_log=log), always_on=[FORECAST])
    _, response = await run(
        advisor,
        authorize=authorize,
        script=[
            tool_call_response(
                (TOOL_SEARCH_NAME, {"queries": ["refund card payment"], "max_results": 1}),
                (TOOL_SEARCH_NAME, {"queries": ["send email"], "max_results": 1}),
            ),
            tool_call_response(
                ("billing__refund_payment", {"payment_id": "p1"}),  # raises
                ("mail__send_email", {"to": "a@b.c", "subject": "x"}),  # denied
                ("weather__forecast", {"city": "Oslo"}),  # shown from the start, never searched
            ),
            "done",
        ],
    )
    assert desk.ran == [FORECAST]
    assert await log.entries() == ()
    assert response.tool_search is not None
    assert response.tool_search.learned == ()


async def test_a_tool_called_twice_in_a_turn_is_recorded_once_and_counted_across_turns() -> None:
    log = InMemoryUsageLog()
    advisor = bm25_advisor(tools_from(Desk()), options=SearchOptions(usage_log=log))

    def twice(prompt: Prompt) -> Any:
        name = found(prompt)[0]
        return tool_call_response((name, {"payment_id": "p1"}), (name, {"payment_id": "p2"}))

    script = [search("refund card payment", max_results=1), twice, "done"]
    await run(advisor, list(script), cid="c1")
    assert [e.count for e in await log.entries()] == [1]
    await run(advisor, list(script), cid="c2")
    assert [e.count for e in await log.entries()] == [2]


async def test_the_next_search_ranks_with_the_tenants_history() -> None:
    log = InMemoryUsageLog()
    advisor = bm25_advisor(tools_from(Desk()), options=SearchOptions(usage_log=log))
    await log.record([UsageEntry(query=USERS_WORDS, tool=REFUND, scope="tenant:acme")])
    model, response = await run(advisor, [search(USERS_WORDS), "done"])
    assert found(model.prompts[1]) == ["billing__refund_payment"]
    assert response.tool_search is not None
    assert response.tool_search.history_entries == 1
    assert response.tool_search.searches[0].response.hits[0].name == REFUND


async def test_one_tenants_history_never_shapes_another_tenants_results() -> None:
    log = InMemoryUsageLog()
    await log.record([UsageEntry(query=USERS_WORDS, tool=REFUND, scope="tenant:acme")])
    advisor = bm25_advisor(tools_from(Desk()), options=SearchOptions(usage_log=log))
    model, response = await run(advisor, [search(USERS_WORDS), "done"], tenant="globex")
    assert found(model.prompts[1]) == []
    assert response.tool_search is not None
    assert response.tool_search.history_entries == 0
    model, _ = await run(advisor, [search(USERS_WORDS), "done"], tenant=None)
    assert found(model.prompts[1]) == []


async def test_shared_usage_is_one_history_for_every_tenant() -> None:
    log = InMemoryUsageLog()
    advisor = bm25_advisor(
        tools_from(Desk()), options=SearchOptions(usage_log=log, shared_usage=True)
    )
    await run(
        advisor,
        [search("refund card payment", max_results=1), call_found(payment_id="p1"), "done"],
        tenant="acme",
    )
    assert tuples(await log.entries()) == [("", "refund card payment", REFUND)]
    await log.record([UsageEntry(query=USERS_WORDS, tool=REFUND)])
    model, _ = await run(advisor, [search(USERS_WORDS), "done"], tenant="globex")
    assert found(model.prompts[1]) == ["billing__refund_payment"]


async def test_history_of_a_tool_the_turn_may_not_see_finds_nothing() -> None:
    log = InMemoryUsageLog()
    await log.record([UsageEntry(query=USERS_WORDS, tool=REFUND, scope="tenant:acme")])
    advisor = bm25_advisor(
        tools_from(Desk()),
        options=SearchOptions(
            usage_log=log, tool_filter=lambda context, definition: definition.name != REFUND
        ),
    )
    model, _ = await run(advisor, [search(USERS_WORDS), "done"])
    assert found(model.prompts[1]) == []


def test_shared_usage_without_a_log_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="needs a usage_log"):
        SearchOptions(shared_usage=True)


def test_the_advisor_reads_its_usage_options() -> None:
    log = InMemoryUsageLog()
    advisor = bm25_advisor(tools_from(Desk()), options=SearchOptions(usage_log=log))
    assert advisor.search.options.usage_log is log
    assert advisor.search.options.shared_usage is False
    assert EMAIL in {t.definition.name for t in advisor.catalog}


class KeywordsOnly:
    """A ToolIndex of the user's own that knows nothing of history."""

    search_type = "own"
    fingerprint = None

    def index(self, definitions: object) -> bool:
        return False

    def search(self, request: object) -> object:
        raise AssertionError("never searched")

    def clear(self) -> None:
        pass


def test_a_usage_log_with_an_index_that_ignores_history_is_refused_at_build_time() -> None:
    with pytest.raises(ConfigurationError, match="KeywordsOnly does not"):
        bm25_advisor(
            tools_from(Desk()),
            index=KeywordsOnly(),
            options=SearchOptions(usage_log=InMemoryUsageLog()),
        )
    bm25_advisor(tools_from(Desk()), index=KeywordsOnly())  # without a log it is fine


def test_a_usage_log_with_a_history_weight_of_zero_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="BM25ToolIndex does not"):
        bm25_advisor(
            tools_from(Desk()),
            index=BM25ToolIndex(history_weight=0.0),
            options=SearchOptions(usage_log=InMemoryUsageLog()),
        )
