"""Spring AI's tool search tests, in toolrelay's API.

Ported: ToolSearchToolCallingAdvisorCallTests, ToolSearchToolCallingAdvisorStreamTests and
RegexToolIndexTests. Spring AI indexes the request's tools per session and finds earlier
discoveries by reading tool_search answers back from the history; toolrelay indexes the
advisor's catalog once per catalog version (whatever the session) and keeps each
conversation's discoveries in a session store. The cases are ported to that design: "indexed
once per session" becomes "indexed once per catalog", "evict a session" becomes "delete its
discoveries". docs/tools.md lists the differences.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest

from tests.search_only import SEARCH_ONLY
from toolrelay.client import TOOL_CALLING_ADVISOR_ORDER, ChatClient, ToolSearchAdvisor
from toolrelay.messages import (
    AssistantMessage,
    SystemMessage,
    ToolResponse,
    ToolResponseMessage,
)
from toolrelay.search import BM25ToolIndex, RegexToolIndex, SearchRequest, SearchResponse
from toolrelay.testing import ScriptedModel, tool_call_response
from toolrelay.tools import ToolCatalog, ToolDefinition, as_tools, tool
from toolrelay.toolsearch import ENGLISH, TOOL_SEARCH_NAME, InMemorySessionStore, SearchOptions


class CountingIndex(BM25ToolIndex):
    """A BM25 index that records what it was asked to index and to search."""

    def __init__(self) -> None:
        super().__init__()
        self.indexed: list[list[str]] = []
        self.requests: list[SearchRequest] = []

    def index(self, definitions: Sequence[ToolDefinition], **options: Any) -> bool:
        definitions = list(definitions)
        rebuilt = super().index(definitions, **options)
        if rebuilt:
            self.indexed.append([d.name for d in definitions])
        return rebuilt

    def search(self, request: SearchRequest) -> SearchResponse:
        self.requests.append(request)
        return super().search(request)


@tool(name="weatherTool")
def weather_tool(city: str) -> str:
    """Gets the current weather for a city."""
    return f"sunny in {city}"


@tool(name="calculatorTool")
def calculator_tool(expression: str) -> str:
    """Does math: evaluates an arithmetic expression."""
    return "42"


@tool(name="clothingTool")
def clothing_tool(temperature: int) -> str:
    """Suggests clothing to wear for a temperature."""
    return "a coat"


def search(query: str, **arguments: Any) -> Any:
    return tool_call_response((TOOL_SEARCH_NAME, {"queries": [query], **arguments}))


def rewriting(catalog: Any, **options: Any) -> ToolSearchAdvisor:
    """Spring AI's advisor adds found tools to the request's tool list: the rewrite channel."""
    # Spring AI's advisor searches only when the model asks.
    return ToolSearchAdvisor(catalog, **{"channel": "rewrite", **SEARCH_ONLY, **options})


def client_for(model: ScriptedModel, advisor: ToolSearchAdvisor) -> ChatClient:
    return ChatClient.builder(model).default_advisors(advisor).build()


async def turn(
    advisor: ToolSearchAdvisor,
    script: list[Any],
    conversation: str = "conv-1",
    *,
    stream: bool = False,
) -> tuple[ScriptedModel, Any]:
    model = ScriptedModel(script)
    request = client_for(model, advisor).prompt("test").conversation(conversation)
    response = await (request.stream().collect() if stream else request.acall())
    return model, response


def test_default_values() -> None:
    # ports testBuilderMethodChaining and testDefaultValues (whenToolIndexIsNullThenThrow:
    # toolrelay picks default_index() when none is given)
    advisor = rewriting([weather_tool], index=CountingIndex())
    assert advisor.order == TOOL_CALLING_ADVISOR_ORDER
    assert advisor.name == "tool_search"
    custom = rewriting(
        [weather_tool],
        index=CountingIndex(),
        order=TOOL_CALLING_ADVISOR_ORDER + 200,
        options=SearchOptions(
            max_results=10,
            language=dataclasses.replace(ENGLISH, system_suffix="\n\nCustom suffix"),
        ),
        retention="last_search",
        session_store=InMemorySessionStore(max_entries=50),
    )
    assert (custom.order, custom.search.options.max_results, custom.search.retention) == (
        TOOL_CALLING_ADVISOR_ORDER + 200,
        10,
        "last_search",
    )
    assert custom.search.options.language.system_suffix == "\n\nCustom suffix"  # type: ignore[union-attr]


@pytest.mark.parametrize("stream", [False, True])
async def test_initialize_loop_indexes_tools(stream: bool) -> None:
    # ports testInitializeLoopIndexesTools and streamInitializeLoopIndexesTools
    index = CountingIndex()
    advisor = rewriting([weather_tool, calculator_tool], index=index)
    await turn(advisor, ["done"], stream=stream)
    assert index.indexed == [["weatherTool", "calculatorTool"]]


@pytest.mark.parametrize("stream", [False, True])
async def test_initialize_loop_augments_system_message(stream: bool) -> None:
    # ports testInitializeLoopAugmentsSystemMessage and streamInitializeLoopAugmentsSystemMessage
    suffix = "\n\nCUSTOM SUFFIX FOR TESTING"
    texts = dataclasses.replace(ENGLISH, system_suffix=suffix)
    advisor = rewriting(
        [weather_tool], index=CountingIndex(), options=SearchOptions(language=texts)
    )
    model = ScriptedModel(["done"])
    request = (
        client_for(model, advisor)
        .prompt("test")
        .system("Original system message")
        .conversation("test-session-id")
    )
    await (request.stream().collect() if stream else request.acall())
    first = model.prompts[0].messages[0]
    assert isinstance(first, SystemMessage)
    assert "Original system message" in first.text
    assert first.text.endswith(suffix.strip())


@pytest.mark.parametrize("stream", [False, True])
async def test_first_and_second_request_index_once(stream: bool) -> None:
    # ports testFirstRequest_indexesToolsOnce, streamFirstRequest_indexesOnce,
    # testSecondRequest_sameTools_skipsReindexing and testFinalizeLoop_doesNotClearIndex
    index = CountingIndex()
    advisor = rewriting([weather_tool], index=index)
    _, first = await turn(advisor, ["done"], stream=stream)
    _, second = await turn(advisor, ["done"], stream=stream)
    _, other = await turn(advisor, ["done"], conversation="conv-2", stream=stream)
    assert len(index.indexed) == 1
    reports = [r.tool_search for r in (first, second, other)]
    assert [r.reindexed for r in reports if r is not None] == [True, False, False]


async def test_second_request_different_tools_reindexes() -> None:
    # ports testSecondRequest_differentTools_reindexes
    index = CountingIndex()
    catalog = ToolCatalog(as_tools(weather_tool))
    advisor = rewriting(catalog, index=index)
    await turn(advisor, ["done"])
    catalog.add(as_tools(calculator_tool)[0])
    _, response = await turn(advisor, ["done"])
    assert index.indexed == [["weatherTool"], ["weatherTool", "calculatorTool"]]
    report = response.tool_search
    assert report is not None
    assert report.reindexed is True


async def test_lru_eviction_evicts_lru_session_when_capacity_exceeded() -> None:
    # ports testLruEviction_evictsLruSessionWhenCapacityExceeded: the session store keeps the
    # most recently used conversations
    store = InMemorySessionStore(max_entries=1)
    advisor = rewriting([weather_tool, calculator_tool], index=CountingIndex(),
                                session_store=store)  # fmt: skip
    _, a = await turn(advisor, [search("weather"), "done"], conversation="session-A")
    _, b = await turn(advisor, [search("math arithmetic"), "done"], conversation="session-B")
    report_a, report_b = a.tool_search, b.tool_search
    assert report_a is not None
    assert report_b is not None
    assert (await store.get(report_a.conversation_key)).names == ()
    assert (await store.get(report_b.conversation_key)).names == ("calculatorTool",)


async def test_evict_session_forgets_its_discoveries() -> None:
    # ports testEvictSession_forcesReindexOnNextRequest
    store = InMemorySessionStore()
    advisor = rewriting([weather_tool], index=CountingIndex(), session_store=store)
    _, response = await turn(advisor, [search("weather"), "done"])
    report = response.tool_search
    assert report is not None
    assert report.discovered == ("weatherTool",)
    await store.delete(report.conversation_key)
    model, _ = await turn(advisor, ["done"])
    assert model.tool_names_shown(0) == [TOOL_SEARCH_NAME]


@pytest.mark.parametrize("stream", [False, True])
async def test_before_call_does_not_read_tools_from_the_history(stream: bool) -> None:
    # ports testBeforeCallExtractsToolReferences and streamBeforeIterationExtractsToolReferences:
    # a tool_search answer already in the history shows nothing by itself (only what the
    # conversation's searches found is shown), so a history sent by a client cannot unlock
    # tools (a documented difference)
    advisor = rewriting([weather_tool], index=CountingIndex())
    earlier = ToolResponseMessage(
        responses=(ToolResponse(id="id1", name=TOOL_SEARCH_NAME, data='[{"name": "weatherTool"}]'),)
    )
    model = ScriptedModel(["done"])
    request = (
        client_for(model, advisor)
        .prompt("test")
        .messages(AssistantMessage(text="Using tool search"), earlier)
        .system("System message")
        .conversation("test-session-id")
    )
    await (request.stream().collect() if stream else request.acall())
    assert model.tool_names_shown(0) == [TOOL_SEARCH_NAME]


@pytest.mark.parametrize("stream", [False, True])
async def test_conversation_id_from_context(stream: bool) -> None:
    # ports testConversationIdFromContext and streamUsesConversationIdFromContext
    advisor = rewriting([weather_tool], index=CountingIndex())
    _, first = await turn(
        advisor, [search("weather"), "done"], "test-conversation-123", stream=stream
    )
    model, _ = await turn(advisor, ["done"], "test-conversation-123", stream=stream)
    assert model.tool_names_shown(0) == [TOOL_SEARCH_NAME, "weatherTool"]
    other, _ = await turn(advisor, ["done"], "another-conversation", stream=stream)
    assert other.tool_names_shown(0) == [TOOL_SEARCH_NAME]
    report = first.tool_search
    assert report is not None
    assert "test-conversation-123" in report.conversation_key


async def test_tool_search_tool_is_registered() -> None:
    # ports testToolSearchToolCallbackIsRegistered
    advisor = rewriting([weather_tool], index=CountingIndex())
    model, _ = await turn(advisor, ["done"])
    assert TOOL_SEARCH_NAME in model.tool_names_shown(0)


async def test_cached_tool_callbacks_are_used() -> None:
    # ports testCachedToolCallbacksAreUsed
    advisor = rewriting([weather_tool, calculator_tool], index=CountingIndex())
    model, _ = await turn(
        advisor,
        [
            search("weather"),
            tool_call_response(("weatherTool", {"city": "Paris"})),
            "It is sunny.",
        ],
    )
    assert model.tool_names_shown(0) == [TOOL_SEARCH_NAME]
    assert model.tool_names_shown(1) == [TOOL_SEARCH_NAME, "weatherTool"]
    answer = model.prompts[2].messages[-1]
    assert isinstance(answer, ToolResponseMessage)
    assert answer.responses[0].data == "sunny in Paris"


async def test_tool_search_tool_uses_llm_max_results_over_advisor_default() -> None:
    # ports toolSearchToolUsesLlmMaxResultsOverAdvisorDefault and
    # toolSearchToolFallsBackToAdvisorMaxResultsWhenLlmOmits
    index = CountingIndex()
    advisor = rewriting([weather_tool], index=index, options=SearchOptions(max_results=3))
    await turn(advisor, [search("weather", max_results=7), search("weather"), "done"])
    assert [r.max_results for r in index.requests] == [7, 3]


async def test_non_accumulation_keeps_all_parallel_tool_search_responses_in_same_turn() -> None:
    # ports testNonAccumulation_keepsAllParallelToolSearchResponsesInSameTurn
    advisor = rewriting(
        [weather_tool, calculator_tool, clothing_tool],
        index=CountingIndex(),
        retention="last_search",
    )
    parallel = tool_call_response(
        (TOOL_SEARCH_NAME, {"queries": ["current weather"], "max_results": 1}),
        (TOOL_SEARCH_NAME, {"queries": ["arithmetic math"], "max_results": 1}),
        (TOOL_SEARCH_NAME, {"queries": ["clothing to wear"], "max_results": 1}),
    )
    model, _ = await turn(advisor, [parallel, "done"])
    assert sorted(model.tool_names_shown(1)) == sorted(
        [TOOL_SEARCH_NAME, "weatherTool", "calculatorTool", "clothingTool"]
    )


async def test_non_accumulation_keeps_only_last_turn_across_turns() -> None:
    # ports testNonAccumulation_keepsOnlyLastTurnAcrossTurns
    advisor = rewriting(
        [weather_tool, clothing_tool], index=CountingIndex(), retention="last_search"
    )
    await turn(advisor, [search("weather", max_results=1), "done"])
    await turn(advisor, [search("clothing to wear", max_results=1), "done"])
    model, _ = await turn(advisor, ["done"])
    assert model.tool_names_shown(0) == [TOOL_SEARCH_NAME, "clothingTool"]


async def test_accumulation_keeps_references_across_turns() -> None:
    # ports testAccumulation_keepsReferencesAcrossTurns
    advisor = rewriting([weather_tool, clothing_tool], index=CountingIndex())
    await turn(advisor, [search("weather", max_results=1), "done"])
    await turn(advisor, [search("clothing to wear", max_results=1), "done"])
    model, _ = await turn(advisor, ["done"])
    assert model.tool_names_shown(0) == [TOOL_SEARCH_NAME, "weatherTool", "clothingTool"]


# --- RegexToolIndexTests ---------------------------------------------------------------------


def regex_index(*tools: tuple[str, str]) -> RegexToolIndex:
    index = RegexToolIndex()
    index.index([ToolDefinition(name=name, description=text) for name, text in tools])
    return index


def found(index: RegexToolIndex, query: str, **options: Any) -> list[str]:
    return index.search(SearchRequest(query=query, **options)).names


def test_search_type_is_regex() -> None:
    # ports RegexToolIndexTests.searchTypeIsRegex
    assert RegexToolIndex().search_type == "regex"


def test_matches_by_tool_name_and_by_description() -> None:
    # ports RegexToolIndexTests.matchesByToolName and matchesByDescription
    index = regex_index(
        ("weatherTool", "Returns current weather conditions"),
        ("calculatorTool", "Performs arithmetic calculations"),
        ("toolA", "Fetches stock price data"),
        ("toolB", "Converts temperature units"),
    )
    assert found(index, "weather") == ["weatherTool"]
    assert found(index, "stock price") == ["toolA"]


def test_index_tools_batch_adds_all_tools_and_clear_removes_them() -> None:
    # ports RegexToolIndexTests.indexToolsBatchAddsAllTools, clearIndexRemovesAllTools and
    # noResultsForEmptySession
    index = regex_index(
        ("tool1", "First tool description"),
        ("tool2", "Second tool description"),
        ("tool3", "Third tool description"),
    )
    assert len(index) == 3
    index.index([])
    assert len(index) == 0
    assert found(index, "tool") == []
    assert found(RegexToolIndex(), "weather") == []


def test_permitted_subset_prevents_leakage() -> None:
    # ports RegexToolIndexTests.sessionIsolationPreventsLeakage: one index holds the catalog,
    # and a request searches only the tools it may see
    index = regex_index(("weatherTool", "Weather data"), ("calculatorTool", "Math operations"))
    assert found(index, "weather", allowed=frozenset({"calculatorTool"})) == []
    assert found(index, "weather") == ["weatherTool"]


def test_name_match_scores_higher_than_description_match() -> None:
    # ports RegexToolIndexTests.nameMatchScoresHigherThanDescriptionMatch
    index = regex_index(
        ("genericTool", "Provides weather forecasts"), ("weatherTool", "General purpose tool")
    )
    assert found(index, "weather") == ["weatherTool", "genericTool"]


def test_max_results_limits_output() -> None:
    # ports RegexToolIndexTests.maxResultsLimitsOutput
    index = regex_index(*((f"dataTool{i}", f"Retrieves data from source {i}") for i in range(10)))
    assert len(found(index, "data", max_results=3)) == 3


def test_keywords_of_a_query_match_case_insensitively() -> None:
    # ports RegexToolIndexTests.convertQueryToRegexPattern and
    # convertQueryToRegexPatternInTrLocale: the words of a query are matched in any case
    # (Python's casing does not depend on a locale); an empty query matches nothing
    # (Spring AI's ".*" matches everything; a documented difference)
    index = regex_index(
        ("inventory.get", "List the inventory of a warehouse"),
        ("user.profile", "The user's profile data"),
    )
    assert found(index, "GET INVENTORY") == ["inventory.get"]
    assert found(index, "get user data")[0] == "user.profile"
    assert found(index, "") == []


def test_an_invalid_pattern_is_read_as_keywords() -> None:
    # ports RegexToolIndexTests.isValidPatternAcceptsValidRegex
    index = regex_index(("validator", "Checks that a value is invalid or valid"))
    assert found(index, "[invalid") == ["validator"]
    assert found(index, "(?i)(weather|tools)") == []
