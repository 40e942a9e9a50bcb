"""Runs through the real client: both modes, fresh back ends, what each kind of failure records."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest
from examples.refund_desk import RefundDeskBackend, build_catalog

from toolrelay.evaluation import (
    EvaluationReport,
    ExpectedCall,
    ExpectedCalls,
    Mode,
    StateCheck,
    Task,
    TaskEnvironment,
    TaskSuite,
)
from toolrelay.evaluation._checks import CallStatus
from toolrelay.evaluation._runner import RunKey, TaskRunner
from toolrelay.exceptions import (
    AuthenticationError,
    ConfigurationError,
    ModelAPIError,
    ModelConnectionError,
    ModelResponseError,
)
from toolrelay.execution import Deny, ToolInvocation
from toolrelay.messages import AssistantMessage, ToolChangeMessage
from toolrelay.prompt import Prompt
from toolrelay.search import BM25ToolIndex
from toolrelay.testing import FunctionModel, text_response, tool_call_response
from toolrelay.tools import Tool, ToolContext

from ._agents import endless_model, plan_model, silent_model

CONTEXT = {"tenant_id": "acme", "user_id": "U-ZHANG"}
RETRY = ("refund.retry_failed_order", {"refund_id": "RF-2001"})
MODES = [Mode.all_tools(), Mode.search(BM25ToolIndex)]


def no_forcing(context: ToolContext, tool: Tool, arguments: Mapping[str, Any]) -> bool | str:
    if tool.definition.name == "refund.force_success":
        return "permission denied: only refund admins may force refunds"
    return True


def desk() -> TaskEnvironment:
    backend = RefundDeskBackend.seeded()
    return TaskEnvironment(
        tools=build_catalog(backend),
        state=backend,
        authorize=no_forcing,
    )


def retried(backend: RefundDeskBackend) -> str | None:
    status = backend.refund("RF-2001").status
    return None if status == "succeeded" else f"RF-2001 is {status}"


SUITE = TaskSuite(
    name="desk",
    environments={"desk": desk},
    system="You run the refund desk.",
    tasks=(
        Task(
            id="retry",
            prompt="Retry refund RF-2001.",
            environment="desk",
            tool_context=CONTEXT,
            checks=(
                StateCheck(function=retried),
                ExpectedCalls(
                    calls=(ExpectedCall(name=RETRY[0], arguments=RETRY[1]),),
                    forbidden=("refund.force_success",),
                ),
            ),
        ),
    ),
)


async def run(model: Any, *, modes: list[Mode] = MODES, repeats: int = 1, **options: Any) -> Any:
    runner = TaskRunner(SUITE, model, modes=modes, repeats=repeats, **options)
    results, unrecorded = await runner.run()
    assert not unrecorded
    return {(r.mode, r.repeat): r for r in results}


async def test_a_right_plan_succeeds_in_both_modes_the_reveal_sparing_the_search() -> None:
    results = await run(plan_model([RETRY]))
    every, search = results[("all-tools", 0)], results[("search:bm25", 0)]
    assert every.success
    assert search.success
    assert every.stop == search.stop == "answer"
    # The turn's reveal (the prompt's best hits) showed the retry tool: no search round.
    assert (every.requests, search.requests) == (2, 2)
    assert (every.searches, search.searches) == (0, 0)
    assert [c.name for c in search.calls] == ["refund.retry_failed_order"]
    assert search.calls[0].status is CallStatus.OK
    assert search.calls[0].model_call == 1
    assert search.counted_prompt_tokens < every.counted_prompt_tokens / 5
    assert not every.usage_reported
    assert every.prompt_tokens == 0
    assert every.needed == ("refund.retry_failed_order",)
    assert not search.never_shown


async def test_every_run_starts_from_a_fresh_back_end() -> None:
    # A second retry on the same back end would fail: RF-2001 is no longer failed.
    results = await run(plan_model([RETRY]), modes=[Mode.all_tools()], repeats=3)
    assert [results[("all-tools", r)].success for r in range(3)] == [True, True, True]
    assert all(results[("all-tools", r)].calls[0].ran for r in range(3))


async def test_reported_usage_is_summed_when_the_model_reports_it() -> None:
    results = await run(plan_model([RETRY], usage=(1000, 20)), modes=[Mode.all_tools()])
    result = results[("all-tools", 0)]
    assert result.usage_reported
    assert (result.prompt_tokens, result.completion_tokens) == (2000, 40)
    assert result.counted_prompt_tokens > 10_000  # counted anyway: 78 tools twice


async def test_the_wrong_tool_fails_the_state_and_the_expected_calls() -> None:
    results = await run(plan_model([("refund.get_detail", {"refund_id": "RF-2001"})]))
    for result in results.values():
        assert not result.success
        state, calls = result.checks
        assert (state.passed, state.detail) == (False, "RF-2001 is failed")
        assert (calls.passed, calls.detail) == (False, "refund.retry_failed_order was not called")


async def test_bad_arguments_are_counted_and_fail_the_task() -> None:
    results = await run(plan_model([("refund.retry_failed_order", {"refund": "RF-2001"})]))
    for result in results.values():
        assert not result.success
        assert result.count(CallStatus.INVALID_ARGUMENTS) == 1
        assert "refund_id" in (result.calls[0].error or "")


async def test_a_model_that_never_calls_fails() -> None:
    results = await run(silent_model())
    for result in results.values():
        assert not result.success
        assert result.calls == ()
        assert result.requests == 1
        assert result.answer == "I cannot help with that."
    assert results[("all-tools", 0)].never_shown == ()  # every tool is shown
    assert results[("search:bm25", 0)].never_shown == ()  # the reveal showed the retry tool


async def test_calling_the_forbidden_tool_fails_even_when_it_was_denied() -> None:
    plan = [("refund.force_success", {"refund_id": "RF-2001", "justification": "x"}), RETRY]
    results = await run(plan_model(plan))
    for result in results.values():
        assert [c.status for c in result.calls] == [CallStatus.DENIED, CallStatus.OK]
        state, calls = result.checks
        assert state.passed  # the retry did the job...
        assert not calls.passed
        assert calls.detail == "called forbidden refund.force_success"
        assert not result.success  # ...but the forbidden call was attempted


CANCEL = ("order.cancel", {"order_id": "O-5014", "reason": "customer asked"})


async def test_a_call_needing_approval_waits_for_a_person_and_ends_the_run() -> None:
    results = await run(plan_model([CANCEL, RETRY]))
    for result in results.values():
        assert (result.stop, result.success) == ("approval_required", False)
        assert [(c.name, c.status) for c in result.calls] == [("order.cancel", CallStatus.OTHER)]
        assert result.checks[0].detail == "RF-2001 is failed"  # the run stopped before the retry


async def test_an_environment_can_say_who_approves() -> None:
    asked: list[str] = []

    async def refuse(invocation: ToolInvocation) -> Deny:
        asked.append(invocation.tool_name)
        return Deny("cancelling orders is not part of this task")

    def refusing_desk() -> TaskEnvironment:
        return dataclasses.replace(desk(), approval=refuse)

    suite = dataclasses.replace(SUITE, environments={"desk": refusing_desk})
    results, _ = await TaskRunner(suite, plan_model([CANCEL, RETRY]), modes=MODES).run()
    for result in results:
        assert [c.status for c in result.calls] == [CallStatus.DENIED, CallStatus.OK]
        assert "not part of this task" in (result.calls[0].error or "")
        assert result.stop == "answer"
        assert result.checks[0].passed  # the model carried on and retried
    assert asked == ["order.cancel", "order.cancel"]  # once per mode


async def test_unknown_names_and_tools_not_shown_are_told_apart() -> None:
    results = await run(plan_model([("refund.retry_everything", {}), RETRY]))
    for result in results.values():
        assert result.calls[0].status is CallStatus.UNKNOWN_NAME
        assert result.success  # corrected after the feedback

    # The reveal shows the prompt's best hits (not refund.get_detail); the model never searches.
    detail = ("refund.get_detail", {"refund_id": "RF-2001"})
    results = await run(plan_model([detail], searches=False), modes=[Mode.search(BM25ToolIndex)])
    result = results[("search:bm25", 0)]
    assert result.calls[0].status is CallStatus.NOT_SHOWN
    assert result.calls[0].name == "refund.get_detail"


async def test_a_model_that_never_stops_hits_the_request_limit() -> None:
    results = await run(endless_model("refund.list_tasks", {}), max_requests=4)
    for result in results.values():
        assert (result.stop, result.success, result.requests) == ("request_limit", False, 4)
        assert "max_model_calls=4" in (result.error or "")


def failing(error: Exception) -> FunctionModel:
    def reply(prompt: Prompt) -> Any:
        raise error

    return FunctionModel(reply)


async def test_model_errors_are_failures_and_provider_outages_are_not_recorded() -> None:
    results = await run(failing(ModelResponseError("no generation")), modes=[Mode.all_tools()])
    result = results[("all-tools", 0)]
    assert (result.stop, result.success) == ("model_error", False)
    assert result.error == "ModelResponseError: no generation"
    assert result.requests == 1
    assert result.counted_prompt_tokens > 0

    for outage in (ModelConnectionError("openai", "down"), ModelAPIError("openai", 503, "busy")):
        runner = TaskRunner(SUITE, failing(outage), modes=MODES)
        results_, unrecorded = await runner.run()
        assert results_ == []
        assert [u.key for u in unrecorded] == [
            RunKey(task="retry", mode="all-tools", repeat=0),
            RunKey(task="retry", mode="search:bm25", repeat=0),
        ]
    with pytest.raises(AuthenticationError):
        await TaskRunner(
            SUITE, failing(AuthenticationError("openai", 401, "no")), modes=MODES
        ).run()


async def test_concurrent_runs_give_the_same_results() -> None:
    one = await run(plan_model([RETRY]), repeats=3)
    many = await run(plan_model([RETRY]), repeats=3, concurrency=4)
    assert {k: (r.success, r.requests, r.counted_prompt_tokens) for k, r in one.items()} == {
        k: (r.success, r.requests, r.counted_prompt_tokens) for k, r in many.items()
    }


def test_runs_go_repeat_by_repeat_alternating_the_modes() -> None:
    runner = TaskRunner(SUITE, silent_model(), modes=MODES, repeats=2)
    assert [(k.mode, k.repeat) for k in runner.keys] == [
        ("all-tools", 0),
        ("search:bm25", 0),
        ("all-tools", 1),
        ("search:bm25", 1),
    ]


def test_bad_settings_name_the_fix() -> None:
    with pytest.raises(ConfigurationError, match="at least one mode"):
        TaskRunner(SUITE, silent_model(), modes=[])
    with pytest.raises(ConfigurationError, match="different names"):
        TaskRunner(SUITE, silent_model(), modes=[Mode.all_tools(), Mode.all_tools()])
    with pytest.raises(ConfigurationError, match="repeats must be at least 1"):
        TaskRunner(SUITE, silent_model(), modes=MODES, repeats=0)


async def test_the_report_compares_the_modes_paired_by_task() -> None:
    runner = TaskRunner(SUITE, plan_model([RETRY]), modes=MODES, repeats=2)
    results, _ = await runner.run()
    report = EvaluationReport.of(
        SUITE, results, modes=[m.name for m in MODES], repeats=2, model="p"
    )
    every, search = report.summaries
    assert (every.successes, every.runs, search.successes) == (2, 2, 2)
    comparison = report.comparisons[0]
    assert comparison.tokens_change is not None
    assert comparison.tokens_change < -0.5
    assert comparison.requests_change == pytest.approx(0.0)  # the reveal spared the search
    assert comparison.test.p_value == 1.0
    assert not comparison.significant
    assert comparison.sentence().startswith("search:bm25 vs all-tools: −")
    assert comparison.sentence().endswith(
        "±0% requests, success 1.00 vs 1.00, difference not significant, p=1.00 "
        "(exact sign-flip test over 1 task)"
    )
    assert report.token_source == "counted"
    assert report.missing == 0


async def test_runs_of_unknown_tasks_or_modes_are_refused() -> None:
    runner = TaskRunner(SUITE, silent_model(), modes=MODES)
    with pytest.raises(ConfigurationError, match="has no task 'nope'"):
        await runner.run([RunKey(task="nope", mode="all-tools", repeat=0)])
    with pytest.raises(ConfigurationError, match="no mode 'search:hybrid'"):
        await runner.run([RunKey(task="retry", mode="search:hybrid", repeat=0)])


@pytest.mark.parametrize("channel", ["native", "proxy", "rewrite"])
async def test_what_a_run_was_shown_and_called_holds_on_every_channel(channel: str) -> None:
    model = plan_model([RETRY])
    model.channels = ("native", "proxy", "rewrite")
    mode = Mode.search(BM25ToolIndex, channel=channel)  # type: ignore[arg-type]
    assert mode.name == f"search:bm25/{channel}"
    result = (await run(model, modes=[mode]))[(mode.name, 0)]
    assert result.success
    assert result.never_shown == ()
    assert [(c.name, c.status) for c in result.calls] == [
        ("refund.retry_failed_order", CallStatus.OK)
    ]
    # A run is a conversation's first turn: its reveal pinned the tool to the tool list on
    # every channel, and the model called it by name there (no tool change, no call_tool).
    changes = [m for p in model.prompts for m in p.messages if isinstance(m, ToolChangeMessage)]
    assert changes == []
    listed = {t.definition.name for t in model.prompts[0].options.tools}
    assert "refund.retry_failed_order" in listed
    assert ("call_tool" in listed) == (channel == "proxy")
    assert len(model.prompts) == 2  # the call, then the answer: no search


async def test_a_call_tool_call_of_a_tool_never_found_is_recorded_by_that_tool() -> None:
    def reply(prompt: Prompt) -> Any:
        called = (
            c.name for m in prompt.messages if isinstance(m, AssistantMessage) for c in m.tool_calls
        )
        if "call_tool" in called:
            return text_response("Could not.")
        call = {"name": RETRY[0], "arguments": RETRY[1]}
        return tool_call_response(("call_tool", call))

    # Worded so the turn's reveal misses the retry tool: it is never found.
    (task,) = SUITE.tasks
    suite = dataclasses.replace(
        SUITE, tasks=(dataclasses.replace(task, prompt="Do the thing from this morning."),)
    )
    runner = TaskRunner(suite, FunctionModel(reply), modes=[Mode.search(BM25ToolIndex)])
    results = {(r.mode, r.repeat): r for r in (await runner.run())[0]}
    assert results[("search:bm25", 0)].never_shown == ("refund.retry_failed_order",)
    (call,) = results[("search:bm25", 0)].calls
    assert (call.name, call.status) == ("refund.retry_failed_order", CallStatus.NOT_SHOWN)


async def test_a_channel_the_model_does_not_render_is_refused_before_any_run() -> None:
    native = Mode.search(BM25ToolIndex, channel="native")
    with pytest.raises(ConfigurationError, match="renders only 'proxy', 'rewrite'"):
        TaskRunner(SUITE, plan_model([RETRY]), modes=[native])
