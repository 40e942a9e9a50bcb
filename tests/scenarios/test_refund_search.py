"""The refund triage over the 78-tool refund desk, with progressive tool disclosure.

The model is shown only ``tool_search``. It searches for each tool it needs with the words a
model would use, calls the tool the search returned (the script reads the search answer,
never a hard-coded name, so a retrieval miss fails the test), and acts on the results:
find yesterday's failed refunds, retry the recoverable ones, open incidents for the rest and
notify the owner. No other tool definition may ever reach the model.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from toolrelay.client import ChatClient, ToolSearchAdvisor
from toolrelay.execution import ApprovalInterceptor
from toolrelay.messages import ToolResponseMessage
from toolrelay.prompt import Prompt
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.testing import ScriptedModel, tool_call_response
from toolrelay.toolsearch import TOOL_SEARCH_NAME

# examples/ is a directory of scripts, not an installed package: import it from the repo root.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from examples.refund_desk import (
    REQUIRED_TOOLS,
    TASK,
    RefundDeskBackend,
    build_catalog,
)

FIND, RETRY, OPEN_INCIDENT, NOTIFY_OWNER = REQUIRED_TOOLS
QUERIES = {
    FIND: "find yesterday's failed refunds",
    RETRY: "retry failed refund",
    OPEN_INCIDENT: "open an incident ticket",
    NOTIFY_OWNER: "notify the owner",
}
RECOVERABLE = {"RF-2001", "RF-2005", "RF-2006"}
UNRECOVERABLE = {"RF-2002", "RF-2004"}
CONTEXT = {"tenant_id": "acme", "user_id": "U-ZHANG"}


def tool_results(prompt: Prompt) -> list[Any]:
    """The decoded results of the previous tool round, in call order."""
    last = prompt.messages[-1]
    assert isinstance(last, ToolResponseMessage)
    assert not any(r.is_error for r in last.responses), last.responses
    return [json.loads(r.data) for r in last.responses]


class Triage:
    """The model's side of the triage: each step reads what the previous round returned."""

    def __init__(self) -> None:
        self.failed: list[dict[str, Any]] = []
        self.still_failing: list[dict[str, Any]] = []
        self.tickets: list[str] = []

    @staticmethod
    def search(tool_name: str) -> Any:
        return tool_call_response(
            (TOOL_SEARCH_NAME, {"queries": [QUERIES[tool_name]], "max_results": 1})
        )

    @staticmethod
    def found(prompt: Prompt) -> str:
        [answer] = tool_results(prompt)
        assert len(answer) == 1
        name: str = answer[0]["name"]
        return name

    def find_failed(self, prompt: Prompt) -> Any:
        return tool_call_response((self.found(prompt), {}))

    def search_retry(self, prompt: Prompt) -> Any:
        [self.failed] = tool_results(prompt)
        return self.search(RETRY)

    def retry_recoverable(self, prompt: Prompt) -> Any:
        retry = self.found(prompt)
        return tool_call_response(
            *((retry, {"refund_id": f["refund_id"]}) for f in self.failed if f["retryable"])
        )

    def search_incident(self, prompt: Prompt) -> Any:
        retried = {o["refund_id"]: o for o in tool_results(prompt)}
        self.still_failing = [
            f
            for f in self.failed
            if f["refund_id"] not in retried or not retried[f["refund_id"]]["succeeded"]
        ]
        return self.search(OPEN_INCIDENT)

    def open_incidents(self, prompt: Prompt) -> Any:
        create = self.found(prompt)
        return tool_call_response(
            *(
                (
                    create,
                    {
                        "title": f"Refund {f['refund_id']} failing: {f['failure_reason']}",
                        "description": f"A retry cannot fix {f['failure_reason']}.",
                        "refund_ids": [f["refund_id"]],
                        "severity": "sev2",
                    },
                )
                for f in self.still_failing
            )
        )

    def search_notify(self, prompt: Prompt) -> Any:
        self.tickets = [t["ticket_id"] for t in tool_results(prompt)]
        return self.search(NOTIFY_OWNER)

    def notify(self, prompt: Prompt) -> Any:
        retried = len(self.failed) - len(self.still_failing)
        message = f"Retried {retried} failed refunds; {len(self.tickets)} incidents opened."
        return tool_call_response(
            (self.found(prompt), {"message": message, "ticket_ids": self.tickets})
        )

    def answer(self, prompt: Prompt) -> str:
        [sent] = tool_results(prompt)
        return f"Done: {sent['message_id']} sent to the owner."

    def script(self) -> list[Any]:
        return [
            self.search(FIND),
            self.find_failed,
            self.search_retry,
            self.retry_recoverable,
            self.search_incident,
            self.open_incidents,
            self.search_notify,
            self.notify,
            self.answer,
        ]


@pytest.fixture
def backend() -> RefundDeskBackend:
    return RefundDeskBackend.seeded()


async def test_the_triage_finds_its_four_tools_and_sees_no_other(
    backend: RefundDeskBackend,
) -> None:
    catalog = build_catalog(backend)
    # The triage's script searches before each step (the all-tools run's calls): no reveal.
    advisor = ToolSearchAdvisor(catalog, index=BM25ToolIndex(), channel="rewrite", reveal=0)
    triage = Triage()
    model = ScriptedModel(triage.script())
    # The desk has tools that need approval (the triage calls none): a person decides later.
    client = (
        ChatClient.builder(model)
        .default_advisors(advisor)
        .guards(approval=ApprovalInterceptor())
        .build()
    )

    response = await client.prompt(TASK).conversation("triage-1").tool_context(CONTEXT).acall()

    answer = response.content()
    assert answer is not None
    assert answer.startswith("Done: MSG-")
    # Step by step: each search found exactly the next tool of the task.
    report = response.tool_search
    assert report is not None
    assert [s.query for s in report.searches] == list(QUERIES.values())
    assert [s.names for s in report.searches] == [(name,) for name in REQUIRED_TOOLS]
    assert report.discovered == REQUIRED_TOOLS
    # Every model call saw tool_search plus the tools found so far, and nothing else.
    expected = [
        [TOOL_SEARCH_NAME, *REQUIRED_TOOLS[:found]] for found in (0, 1, 1, 2, 2, 3, 3, 4, 4)
    ]
    assert [model.tool_names_shown(i) for i in range(model.call_count)] == expected
    assert len(catalog) == 78
    # The work was done: recoverable refunds retried, incidents for the rest, owner told.
    assert {f["refund_id"] for f in triage.failed} == RECOVERABLE | UNRECOVERABLE
    for refund_id in RECOVERABLE:
        assert backend.refunds[refund_id].status == "succeeded"
    assert {f["refund_id"] for f in triage.still_failing} == UNRECOVERABLE
    opened = [backend.tickets[t] for t in triage.tickets]
    assert sorted(r for t in opened for r in t.refund_ids) == sorted(UNRECOVERABLE)
    assert all(t.kind == "incident" and t.reporter == "U-ZHANG" for t in opened)
    [message] = [m for m in backend.messages if set(triage.tickets) <= set(m.related_ids)]
    assert message.recipient == "U-LIN"  # the owner of the refunds domain


async def test_a_later_turn_of_the_triage_starts_with_the_tools_it_found(
    backend: RefundDeskBackend,
) -> None:
    advisor = ToolSearchAdvisor(
        build_catalog(backend), index=BM25ToolIndex(), channel="rewrite", reveal=0
    )
    triage = Triage()
    model = ScriptedModel([*triage.script(), tool_call_response((FIND, {})), "Nothing left."])
    # The desk has tools that need approval (the triage calls none): a person decides later.
    client = (
        ChatClient.builder(model)
        .default_advisors(advisor)
        .guards(approval=ApprovalInterceptor())
        .build()
    )
    await client.prompt(TASK).conversation("triage-2").tool_context(CONTEXT).acall()
    follow_up = (
        await client.prompt("Anything still failing?")
        .conversation("triage-2")
        .tool_context(CONTEXT)
        .acall()
    )
    assert model.tool_names_shown(9) == [TOOL_SEARCH_NAME, *REQUIRED_TOOLS]
    assert follow_up.content() == "Nothing left."
