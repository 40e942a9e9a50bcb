"""Success checks over a run's trace: expected calls, state, answers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolrelay.evaluation import (
    AnswerCheck,
    ExpectedCall,
    ExpectedCalls,
    StateCheck,
    Task,
    answer_contains,
)
from toolrelay.evaluation._checks import CallRecord, CallStatus, CheckResult, RunTrace


def call(name: str, status: CallStatus = CallStatus.OK, **arguments: Any) -> CallRecord:
    return CallRecord(name=name, arguments=json.dumps(arguments), status=status, model_call=1)


def trace(*calls: CallRecord, answer: str | None = "ok", state: object = None) -> RunTrace:
    return RunTrace(
        task_id="t", state=state, answer=answer, calls=calls, shown=frozenset(), definitions={}
    )


RETRY_1 = ExpectedCall(name="retry", arguments={"refund_id": "RF-1"})
RETRY_ANY = ExpectedCall(name="retry")


def test_each_expected_call_needs_a_call_of_its_own() -> None:
    # A first-come assignment would give RF-1 to the unconstrained call and then fail.
    check = ExpectedCalls(calls=(RETRY_ANY, RETRY_1))
    assert check(trace(call("retry", refund_id="RF-1"), call("retry", refund_id="RF-2"))).passed
    result = check(trace(call("retry", refund_id="RF-1")))
    assert result == CheckResult(
        check="calls", passed=False, detail="too few calls to match every expected call"
    )


def test_values_and_predicates_decide_an_argument() -> None:
    check = ExpectedCalls(
        calls=(ExpectedCall(name="notify", arguments={"to": "U-LIN", "text": lambda t: "3" in t}),)
    )
    assert check(trace(call("notify", to="U-LIN", text="3 retried"))).passed
    wrong = check(trace(call("notify", to="U-KIM", text="3 retried")))
    assert wrong.detail == 'notify: to="U-KIM"'
    missing = check(trace(call("notify", text="3 retried")))
    assert missing.detail == "notify: to not given"


def test_only_calls_that_ran_count() -> None:
    check = ExpectedCalls(calls=(RETRY_1,))
    refused = call("retry", CallStatus.INVALID_ARGUMENTS, refund_id="RF-1")
    assert check(trace(refused)).detail == "retry was not called"
    assert check(trace(refused, call("retry", refund_id="RF-1"))).passed


def test_order_is_checked_only_when_asked() -> None:
    find, retry = ExpectedCall(name="find"), ExpectedCall(name="retry")
    backwards = trace(call("retry"), call("find"))
    assert ExpectedCalls(calls=(find, retry)).__call__(backwards).passed
    ordered = ExpectedCalls(calls=(find, retry), ordered=True)(backwards)
    assert ordered.detail == "the expected calls were not made in the order given"
    assert ExpectedCalls(calls=(find, retry), ordered=True)(
        trace(call("retry"), call("find"), call("retry"))
    ).passed


def test_only_refuses_other_calls_and_forbidden_refuses_attempts() -> None:
    made = trace(call("find"), call("retry", refund_id="RF-1"))
    assert ExpectedCalls(calls=(RETRY_1,))(made).passed
    assert ExpectedCalls(calls=(RETRY_1,), only=True)(made).detail == "also called find"
    denied = trace(call("force", CallStatus.DENIED), call("retry", refund_id="RF-1"))
    result = ExpectedCalls(calls=(RETRY_1,), forbidden=("force",))(denied)
    assert result.detail == "called forbidden force"


def test_arguments_that_are_no_object_fail_the_call() -> None:
    text = CallRecord(name="retry", arguments="[1]", status=CallStatus.OK, model_call=1)
    assert text.values() is None
    assert ExpectedCalls(calls=(RETRY_1,))(trace(text)).detail == (
        "retry: arguments are not a JSON object"
    )
    doubled = CallRecord(
        name="retry",
        arguments=json.dumps('{"refund_id": "RF-1"}'),
        status=CallStatus.OK,
        model_call=1,
    )
    assert ExpectedCalls(calls=(RETRY_1,))(trace(doubled)).passed  # unwrapped as the tool saw it


@pytest.mark.parametrize(
    ("verdict", "passed", "detail"),
    [
        (None, True, ""),
        (True, True, ""),
        (False, False, "failed"),
        ("RF-1 is failed", False, "RF-1 is failed"),
        ("", True, ""),
    ],
)
def test_state_functions_say_what_is_wrong(verdict: Any, passed: bool, detail: str) -> None:
    result = StateCheck(function=lambda state: verdict, name="desk")(trace(state={}))
    assert result == CheckResult(check="desk", passed=passed, detail=detail)


def test_a_state_function_gets_the_back_end() -> None:
    seen: list[object] = []
    backend = object()
    StateCheck(function=seen.append)(trace(state=backend))
    assert seen == [backend]
    with pytest.raises(TypeError, match="return True, None, False or a text"):
        StateCheck(function=lambda state: 3)(trace())


def test_answers_are_checked_and_a_missing_answer_fails() -> None:
    check = answer_contains("RF-2001", "rf-2002")
    assert check(trace(answer="Failed: rf-2001 and RF-2002.")).passed
    assert check(trace(answer="Only RF-2001.")).detail == "the answer does not mention 'rf-2002'"
    assert check(trace(answer=None)).detail == "no answer"
    assert AnswerCheck(predicate=lambda text: text.isupper())(trace(answer="   ")).detail == (
        "no answer"
    )


def test_a_task_needs_the_tools_its_call_checks_name() -> None:
    checks = (ExpectedCalls(calls=(RETRY_1, RETRY_ANY, ExpectedCall(name="notify"))),)
    assert Task(id="t", prompt="p", checks=checks).needed == ("retry", "notify")
    assert Task(id="t", prompt="p", checks=checks, needed_tools=("find",)).needed == ("find",)
    assert Task(id="t", prompt="p", checks=(answer_contains("x"),)).needed == ()


def test_a_call_record_survives_json() -> None:
    record = CallRecord(
        name="retry", arguments="{}", status=CallStatus.DENIED, model_call=3, error="no"
    )
    assert CallRecord.from_json(record.to_json()) == record
