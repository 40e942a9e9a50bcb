"""The bound on what the model reads of a tool's text: cut with a note, kept whole aside."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import (
    DEFAULT_MAX_RESULT_CHARS,
    AuditInterceptor,
    AuditRecord,
    ToolCallingManager,
    ToolCallOutcome,
    ToolCallStatus,
)
from toolrelay.execution import _feedback as feedback
from toolrelay.messages import ToolCall, UserMessage
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import tool_call_response
from toolrelay.tools import FunctionTool, ToolContext, ToolMetadata, tool

FIVE_MB = 5 * 1024 * 1024
PAGE = "0123456789" * (FIVE_MB // 10)  # 5 MB of text, as a tool dumping a whole table returns


@tool(read_only=True)
def dump_table(rows: int = FIVE_MB) -> str:
    """Every row of the orders table."""
    return PAGE[:rows]


@tool(read_only=True, max_result_chars=100)
def small_view() -> str:
    """A tool whose results the model reads only 100 characters of."""
    return PAGE[:5_000]


@tool(read_only=True, max_result_chars=50_000)
def wide_view() -> str:
    """A tool allowed more than the manager's bound."""
    return PAGE[:40_000]


@tool
def loud_failure() -> str:
    """Fails with an error quoting a whole page."""
    raise RuntimeError("upstream said: " + PAGE[:100_000])


async def run(
    name: str, manager: ToolCallingManager | None = None, **arguments: Any
) -> ToolCallOutcome:
    tools = [
        FunctionTool.from_function(f) for f in (dump_table, small_view, wide_view, loud_failure)
    ]
    call = ToolCall(id="c1", name=name, arguments=json.dumps(arguments))
    return await (manager or ToolCallingManager()).run_call(call, tools)


async def test_a_five_megabyte_result_is_cut_to_the_default_bound_with_a_note() -> None:
    outcome = await run("dump_table")
    assert DEFAULT_MAX_RESULT_CHARS == 20_000
    assert outcome.status is ToolCallStatus.OK
    assert not outcome.response.is_error
    note = feedback.result_cut(20_000, FIVE_MB)
    assert outcome.response.data == PAGE[:20_000] + note
    assert note == (
        "\n[Result cut: these are the first 20,000 of 5,242,880 characters. For what was left "
        "out, call the tool again asking for less: a narrower query, one page, or fewer fields.]"
    )
    assert outcome.truncated
    assert outcome.full_result == PAGE
    assert outcome.result_text == PAGE


async def test_the_history_the_model_reads_holds_the_cut_text() -> None:
    prompt = Prompt(
        messages=(UserMessage(text="all orders"),),
        options=ChatOptions(tools=(FunctionTool.from_function(dump_table),)),
    )
    response = tool_call_response(ToolCall(id="c1", name="dump_table", arguments="{}"))
    result = await ToolCallingManager().execute_tool_calls(prompt, response)
    (sent,) = result.responses
    assert len(sent.data) == 20_000 + len(feedback.result_cut(20_000, FIVE_MB))
    assert result.outcomes[0].full_result == PAGE


async def test_a_result_within_the_bound_is_whole_and_not_flagged() -> None:
    outcome = await run("dump_table", rows=20_000)
    assert outcome.response.data == PAGE[:20_000]
    assert not outcome.truncated
    assert outcome.full_result is None
    assert outcome.result_text == PAGE[:20_000]


async def test_a_tools_own_bound_wins_over_the_managers_either_way() -> None:
    manager = ToolCallingManager(max_result_chars=1_000)
    small = await run("small_view", manager)
    assert small.response.data == PAGE[:100] + feedback.result_cut(100, 5_000)
    wide = await run("wide_view", manager)
    assert wide.response.data == PAGE[:40_000]
    assert not wide.truncated
    other = await run("dump_table", manager)
    assert other.response.data.startswith(
        PAGE[:1_000] + "\n[Result cut: these are the first 1,000 "
    )


async def test_none_means_no_bound() -> None:
    outcome = await run("dump_table", ToolCallingManager(max_result_chars=None))
    assert outcome.response.data == PAGE
    assert not outcome.truncated
    # A tool's own bound still applies under an unbounded manager.
    small = await run("small_view", ToolCallingManager(max_result_chars=None))
    assert small.truncated


async def test_a_long_error_text_is_cut_too_with_its_own_note() -> None:
    outcome = await run("loud_failure", ToolCallingManager(max_result_chars=50))
    assert outcome.status is ToolCallStatus.ERROR
    whole = "upstream said: " + PAGE[:100_000]
    assert outcome.response.data == whole[:50] + feedback.error_cut(50, len(whole))
    assert outcome.response.data.endswith(
        "\n[Error text cut: these are the first 50 of 100,015 characters.]"
    )
    assert outcome.full_result == whole


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("ab\U0001f600cd", "ab\U0001f600"),  # one code point: never split
        ("ab\ud83d\ude00cd", "ab"),  # a pair of surrogate code points: both or neither
        ("abc\ud83dxy", "abc"),  # a lone surrogate is cut like any character
    ],
)
async def test_the_cut_never_splits_a_surrogate_pair(text: str, kept: str) -> None:
    @tool
    def emoji() -> str:
        """Returns text with an emoji."""
        return text

    manager = ToolCallingManager(max_result_chars=3)
    call = ToolCall(id="c1", name="emoji", arguments="")
    outcome = await manager.run_call(call, [FunctionTool.from_function(emoji)])
    assert outcome.response.data == kept + feedback.result_cut(len(kept), len(text))
    assert outcome.full_result == text


@pytest.mark.parametrize("value", [0, -5, 1.5, True, "20000"])
def test_bounds_are_whole_numbers_of_characters_with_the_fix_named(value: Any) -> None:
    with pytest.raises(ConfigurationError, match=r"None means no bound"):
        ToolCallingManager(max_result_chars=value)
    with pytest.raises(ConfigurationError, match=r"None uses the manager's bound"):
        ToolMetadata(max_result_chars=value)
    with pytest.raises(ConfigurationError, match=r"max_result_chars must be a whole number"):

        @tool(max_result_chars=value)
        def anything() -> str:
            """Anything."""
            return ""


def test_the_decorator_puts_the_bound_on_the_metadata() -> None:
    assert FunctionTool.from_function(small_view).metadata.max_result_chars == 100
    assert FunctionTool.from_function(dump_table).metadata.max_result_chars is None


class ListSink:
    def __init__(self) -> None:
        self.records: list[AuditRecord] = []

    async def write(self, record: AuditRecord) -> None:
        self.records.append(record)


async def test_the_audit_record_has_the_whole_length_and_the_whole_text_only_when_asked() -> None:
    brief, full = ListSink(), ListSink()
    for sink in (AuditInterceptor(brief), AuditInterceptor(full, include_results=True)):
        manager = ToolCallingManager(audit=sink)
        await run("dump_table", manager)
        await run("dump_table", manager, rows=10)
    (cut, whole) = brief.records
    assert (cut.result_chars, cut.truncated, cut.result) == (FIVE_MB, True, None)
    assert (whole.result_chars, whole.truncated, whole.result) == (10, False, None)
    assert [r.result for r in full.records] == [PAGE, PAGE[:10]]
    data = full.records[0].to_dict()
    assert (data["result_chars"], data["truncated"], len(data["result"])) == (
        FIVE_MB,
        True,
        FIVE_MB,
    )


async def test_a_replay_of_a_cut_result_is_cut_and_flagged_like_the_first_answer() -> None:
    @tool(idempotency_key=["rows"])
    def export(rows: int) -> str:
        """Export rows."""
        return PAGE[:rows]

    manager = ToolCallingManager(max_result_chars=10)
    tools = [FunctionTool.from_function(export)]
    clerk = ToolContext(user_id="clerk")
    call = ToolCall(id="a", name="export", arguments='{"rows": 50}')
    first = await manager.run_call(call, tools, clerk)
    again = await manager.run_call(
        ToolCall(id="b", name="export", arguments='{"rows": 50}'), tools, clerk
    )
    # The operation's record: its note never advises asking again with other arguments.
    assert first.response.data == PAGE[:10] + feedback.keyed_result_cut(10, 50)
    assert first.truncated
    assert first.full_result == PAGE[:50]
    assert again.replayed
    assert again.truncated
    assert again.recorded_result == PAGE[:50]  # the whole result was recorded, not the cut
    whole = feedback.replayed(again.recorded_at) + PAGE[:50]
    assert again.full_result == whole
    assert again.response.data == whole[:10] + feedback.keyed_result_cut(10, len(whole))
