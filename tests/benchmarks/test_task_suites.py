"""The shipped task suites: the refund triage scored by its back end, and the BFCL suite."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.evaluation._agents import plan_model
from toolrelay.evaluation import Mode, TaskSuite
from toolrelay.evaluation._runner import TaskRunner
from toolrelay.search import BM25ToolIndex
from toolrelay.tools import ToolContext, as_tools

from ._scripts import BENCHMARKS, load_script

triage = load_script(BENCHMARKS / "tasks" / "refund_triage.py", "suite_refund_triage")
bfcl = load_script(BENCHMARKS / "tasks" / "bfcl.py", "suite_bfcl")
SUITE: TaskSuite = triage.build_suite()
CTX = ToolContext(tenant_id="acme", user_id="U-ZHANG")

TRIAGE = [
    ("refund.find_failed_orders", {}),
    ("refund.retry_failed_order", {"refund_id": "RF-2001"}),
    ("refund.retry_failed_order", {"refund_id": "RF-2005"}),
    ("refund.retry_failed_order", {"refund_id": "RF-2006"}),
    (
        "ticket.create_incident",
        {"title": "RF-2002 failing", "description": "account closed", "refund_ids": ["RF-2002"]},
    ),
    (
        "ticket.create_incident",
        {"title": "RF-2004 failing", "description": "no balance", "refund_ids": ["RF-2004"]},
    ),
    ("notify.send_owner_message", {"message": "3 refunds retried, 2 incidents opened"}),
]


class Desk:
    """A fresh environment of a task, with its tools callable by name."""

    def __init__(self, task_id: str) -> None:
        task = SUITE.task(task_id)
        self.check = task.checks[0]
        self.environment = SUITE.environments[task.environment]()
        self.backend = self.environment.state
        self.tools = {t.definition.name: t for t in as_tools(self.environment.tools)}

    async def call(self, name: str, **arguments: Any) -> Any:
        return json.loads(await self.tools[name].call(json.dumps(arguments), CTX))

    async def plan(self, plan: list[tuple[str, dict[str, Any]]], *, tolerant: bool = False) -> None:
        for name, arguments in plan:
            try:
                await self.call(name, **arguments)
            except triage.RefundDeskError:
                if not tolerant:  # a model would read the error and go on
                    raise

    def verdict(self) -> str | None:
        return self.check.function(self.backend)


async def test_the_whole_triage_done_right_passes() -> None:
    for task_id in ("en/triage", "zh/triage", "hard/distractors", "hard/permission"):
        desk = Desk(task_id)
        assert desk.verdict() == (
            "RF-2001 is failed, not retried; RF-2005 is failed, not retried; RF-2006 is failed, "
            "not retried; no open incident names RF-2002; no open incident names RF-2004; "
            "the refunds owner was not notified"
        )
        await desk.plan(TRIAGE)
        assert desk.verdict() is None, task_id


def _skip(step: str) -> list[tuple[str, dict[str, Any]]]:
    return [s for s in TRIAGE if step not in json.dumps(s)]


@pytest.mark.parametrize(
    ("plan", "extra", "problem"),
    [
        (_skip("RF-2005"), None, "RF-2005 is failed, not retried"),
        (_skip("RF-2004"), None, "no open incident names RF-2004"),
        (_skip("notify"), None, "the refunds owner was not notified"),
        (TRIAGE, ("refund.retry_failed_order", {"refund_id": "RF-2008"}), "RF-2008 changed"),
        (
            _skip("RF-2002"),
            ("refund.force_success", {"refund_id": "RF-2002", "justification": "gone"}),
            "RF-2002 changed (it is succeeded)",
        ),
        (
            TRIAGE,
            ("notify.send_email", {"to": "ava.brooks@mail.example", "subject": "s", "body": "b"}),
            "a message went to ava.brooks@mail.example",
        ),
        (TRIAGE, ("ticket.add_comment", {"ticket_id": "TCK-402", "body": "b"}), "TCK-402 changed"),
        (
            TRIAGE,
            ("ticket.create_task", {"title": "t", "description": "d", "team": "refund-ops"}),
            "(task) was opened for no refund",
        ),
        (TRIAGE, ("refund.rebuild_task", {"refund_id": "RF-2013"}), "refund tasks changed"),
        (TRIAGE, ("order.add_note", {"order_id": "O-5001", "note": "n"}), "orders changed"),
        (TRIAGE, ("user.grant_role", {"user_id": "U-ZHANG", "role": "refund_admin"}), "users"),
    ],
)
async def test_a_wrong_state_fails_the_triage_saying_what_is_wrong(
    plan: list[tuple[str, dict[str, Any]]], extra: tuple[str, dict[str, Any]] | None, problem: str
) -> None:
    desk = Desk("en/triage")
    await desk.plan([*plan, *([extra] if extra else [])])
    verdict = desk.verdict()
    assert verdict is not None
    assert problem in verdict


@pytest.mark.parametrize(
    ("tool", "arguments", "problem"),
    [
        ("refund.retry_failed_orders", {}, "RF-2001 is processing, not retried"),
        ("ticket.create_incident_report", {"title": "t", "summary": "s"}, "(task) was opened"),
        ("notify.send_owners_digest", {"message": "m"}, "a message went to U-OKAFOR"),
    ],
)
async def test_the_near_named_distractors_leave_the_state_wrong(
    tool: str, arguments: dict[str, Any], problem: str
) -> None:
    desk = Desk("hard/distractors")
    await desk.call(tool, **arguments)
    await desk.plan(TRIAGE, tolerant=True)
    assert problem in (desk.verdict() or "")


async def test_the_single_steps_change_only_what_they_ask_for() -> None:
    for task_id, plan in (
        ("en/retry", TRIAGE[1:2]),
        ("en/incident", TRIAGE[4:5]),
        ("en/notify", TRIAGE[6:]),
        ("en/find-failed", TRIAGE[:1]),
    ):
        desk = Desk(task_id)
        await desk.plan(plan)
        assert desk.verdict() is None, task_id
        await desk.plan(TRIAGE[2:3])  # one retry too many
        assert "RF-2005 changed" in (desk.verdict() or ""), task_id


def test_the_permission_check_denies_what_the_role_does_not_allow() -> None:
    desk = Desk("hard/permission")
    allowed = desk.environment.authorize
    assert allowed is not None
    bulk, retry = desk.tools["refund.bulk_retry_failed"], desk.tools["refund.retry_failed_order"]
    assert "does not have the refund_admin role" in str(allowed(CTX, bulk, {}))
    assert allowed(ToolContext(tenant_id="acme", user_id="U-LIN"), bulk, {}) is True
    assert allowed(CTX, retry, {}) is True


def test_the_chinese_tasks_run_on_the_chinese_catalog() -> None:
    task = SUITE.task("zh/triage")
    tools = as_tools(SUITE.environments[task.environment]().tools)
    finder = next(t for t in tools if t.definition.name == "refund.find_failed_orders")
    assert finder.definition.description.startswith("只读查询")
    assert task.prompt.startswith("找出昨天退款失败的订单")
    assert len(SUITE.tasks) == 12
    assert {t.id.split("/")[0] for t in SUITE.tasks} == {"en", "zh", "hard"}


async def test_through_the_client_the_hard_variants_catch_what_they_are_for() -> None:
    runner = TaskRunner(
        SUITE.select(prefixes=["hard/"]),
        plan_model([("refund.bulk_retry_failed", {}), *TRIAGE]),
        modes=[Mode.all_tools(), Mode.search(BM25ToolIndex)],
    )
    results, _ = await runner.run()
    outcome = {(r.task, r.mode): r for r in results}
    for mode in ("all-tools", "search:bm25"):
        # Denied, the model retried one by one: the permission task is done...
        permission = outcome[("hard/permission", mode)]
        assert permission.success, permission.checks
        assert permission.calls[0].status.value == "denied"
        # ...and in the distractor catalog that tool does not even exist.
        assert outcome[("hard/distractors", mode)].calls[0].status.value in (
            "unknown_name",
            "not_shown",
        )
    distracted = plan_model([("refund.retry_failed_orders", {}), *TRIAGE])
    runner = TaskRunner(
        SUITE.select(prefixes=["hard/distractors"]), distracted, modes=[Mode.all_tools()]
    )
    [result], _ = await runner.run()
    assert not result.success
    assert "not retried" in result.checks[0].detail


def test_the_bfcl_suites_are_built_from_the_dev_ground_truth() -> None:
    small: TaskSuite = bfcl.small()
    tools = small.environments["bfcl"]().tools
    assert (small.name, len(small.tasks), len(tools)) == ("bfcl_small", 80, 120)
    full: TaskSuite = bfcl.build_suite()
    assert [t.id for t in full.tasks[:80]] == [t.id for t in small.tasks]
    queries = {
        json.loads(line)["id"]
        for line in (BENCHMARKS / "data" / "bfcl" / "calls.dev.jsonl").read_text().splitlines()
    }
    assert {t.id for t in full.tasks} <= queries


async def test_a_task_that_notifies_nobody_fails_when_the_owner_is_messaged() -> None:
    desk = Desk("en/retry")
    await desk.plan([TRIAGE[1], TRIAGE[6]])
    assert desk.verdict() == "the refunds owner was messaged"
