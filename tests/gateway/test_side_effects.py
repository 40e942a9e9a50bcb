"""Approval, idempotency and audit of gateway calls, configured by file or in Python."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from toolrelay.exceptions import ConfigurationError, LoadError
from toolrelay.execution import (
    Approve,
    Defer,
    InMemoryIdempotencyStore,
    JsonLinesAuditSink,
    ToolCallingManager,
    ToolInvocation,
)
from toolrelay.execution import _feedback as feedback
from toolrelay.gateway import GatewayConfig, ToolGateway, ToolPolicy, open_gateway
from toolrelay.gateway._config import parse_gateway_config
from toolrelay.gateway._gateway import PENDING_APPROVAL_TEXT
from toolrelay.gateway._side_effects import gateway_guards
from toolrelay.mcp import LiveToolCatalog
from toolrelay.tools import Tool, ToolCatalog, ToolContext, as_tools, tool

ran: list[tuple[str, str]] = []


@tool(name="refund.retry", destructive=True)
def retry(refund_id: str) -> str:
    """Send a failed refund to its payment channel again.

    Args:
        refund_id: The refund.
    """
    ran.append(("retry", refund_id))
    return f"retried {refund_id} (run {len(ran)})"


@tool(name="refund.force", requires_approval=True)
def force(refund_id: str) -> str:
    """Mark a refund as succeeded without moving money.

    Args:
        refund_id: The refund.
    """
    ran.append(("force", refund_id))
    return f"forced {refund_id}"


def loader(spec: str) -> Sequence[Tool]:
    return as_tools(retry, force)


def config_of(tmp_path: Path, text: str) -> GatewayConfig:
    return parse_gateway_config(
        tomllib.loads('[[modules]]\nmodule = "refunds"\n' + text), base_dir=tmp_path
    )


@pytest.fixture(autouse=True)
def _forget_runs() -> None:
    ran.clear()


async def wait(request: ToolInvocation, /) -> Defer:
    """Leaves every call that needs approval to a person, who decides later."""
    return Defer()


CLERK = ToolContext(user_id="clerk")
"""The caller of keyed calls: their results are kept per caller."""


RETRY_ONCE = """
[tools."refund.retry"]
idempotency_key = "refund_id"
"""


async def test_without_a_handler_a_module_tool_needing_approval_refuses_the_gateway(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigurationError, match=r"'refund.force' requires approval"):
        async with open_gateway(config_of(tmp_path, ""), module_loader=loader):
            pass
    with pytest.raises(ConfigurationError, match=r"'refund.force' requires approval"):
        ToolGateway(ToolCatalog(as_tools(retry, force)))
    assert ran == []


async def test_without_a_handler_a_tool_needing_approval_that_appears_later_never_runs() -> None:
    live = LiveToolCatalog(as_tools(retry))
    gateway = ToolGateway(live)  # nothing requires approval yet
    live.replace_all([(t, "upstream") for t in as_tools(retry, force)])
    refused = await gateway.call("refund.force", {"refund_id": "RF-1"})
    assert (refused.is_error, refused.status) == (True, "denied")
    assert refused.text == feedback.approval_not_configured("refund.force")
    assert ran == []


async def test_a_handler_that_defers_leaves_the_call_waiting_and_not_run(
    tmp_path: Path,
) -> None:
    config = config_of(tmp_path, "")
    async with open_gateway(config, module_loader=loader, approval=wait) as gateway:
        pending = await gateway.call("refund.force", {"refund_id": "RF-1"})
        destructive = await gateway.call("refund.retry", {"refund_id": "RF-1"})
    assert (pending.is_error, pending.status, pending.approval) == (
        True,
        "pending_approval",
        "pending",
    )
    assert pending.text == PENDING_APPROVAL_TEXT.format(name="refund.force")
    # Destructive tools are asked about only with [approval] destructive = true.
    assert (destructive.status, ran) == ("ok", [("retry", "RF-1")])


async def test_a_handler_approves_and_may_edit(tmp_path: Path) -> None:
    asked: list[str] = []

    async def decide(request: ToolInvocation, /) -> Approve:
        asked.append(request.tool.definition.name)
        return Approve(arguments={"refund_id": "RF-2"})

    config = config_of(tmp_path, "[approval]\ndestructive = true\n")
    async with open_gateway(config, module_loader=loader, approval=decide) as gateway:
        result = await gateway.call("refund.retry", {"refund_id": "RF-1"})
    assert (result.status, result.approval, result.text) == ("ok", "edited", "retried RF-2 (run 1)")
    assert asked == ["refund.retry"]


async def test_a_plain_function_in_code_is_refused_naming_the_fix(tmp_path: Path) -> None:
    def decide(request: ToolInvocation) -> Approve:
        return Approve()

    config = config_of(tmp_path, "[approval]\ndestructive = true\n")
    async with open_gateway(config, module_loader=loader, approval=decide) as gateway:
        with pytest.raises(ConfigurationError, match="define it with async def"):
            await gateway.call("refund.retry", {"refund_id": "RF-1"})
    assert ran == []


async def test_a_plain_function_named_in_the_file_approves_and_may_edit(tmp_path: Path) -> None:
    (tmp_path / "approvals.py").write_text(
        "from toolrelay.execution import Approve\n\n"
        "def decide(request, /):\n"
        "    return Approve(arguments={'refund_id': 'RF-2'})\n",
        encoding="utf-8",
    )
    text = '[approval]\nhandler = "approvals.py:decide"\ndestructive = true\n'
    async with open_gateway(config_of(tmp_path, text), module_loader=loader) as gateway:
        result = await gateway.call("refund.retry", {"refund_id": "RF-1"})
    assert (result.status, result.approval, result.text) == ("ok", "edited", "retried RF-2 (run 1)")


async def test_the_handler_named_in_the_file_is_loaded_from_its_folder(tmp_path: Path) -> None:
    (tmp_path / "approvals.py").write_text(
        "from toolrelay.execution import Deny\n\n"
        "async def decide(request, /):\n"
        "    return Deny(f'no {request.arguments[\"refund_id\"]}')\n",
        encoding="utf-8",
    )
    config = config_of(tmp_path, '[approval]\nhandler = "approvals.py:decide"\n')
    assert config.approval.handler == f"{tmp_path / 'approvals.py'}:decide"
    async with open_gateway(config, module_loader=loader) as gateway:
        result = await gateway.call("refund.force", {"refund_id": "RF-3"})
    assert (result.status, result.text, ran) == ("denied", "no RF-3", [])


@pytest.mark.parametrize(
    ("handler", "error", "message"),
    [
        ("approvals.py:missing", LoadError, "has no attribute 'missing'"),
        ("approvals.py:NOT_A_FUNCTION", ConfigurationError, "is not a function"),
        ("nowhere.py:decide", LoadError, "no such file"),
    ],
)
async def test_a_handler_that_cannot_be_used(
    tmp_path: Path, handler: str, error: type[Exception], message: str
) -> None:
    (tmp_path / "approvals.py").write_text("NOT_A_FUNCTION = 3\n", encoding="utf-8")
    config = config_of(tmp_path, f'[approval]\nhandler = "{handler}"\n')
    with pytest.raises(error, match=message):
        async with open_gateway(config, module_loader=loader):
            pass


async def test_results_recorded_in_a_sqlite_file_outlive_the_gateway(tmp_path: Path) -> None:
    config = config_of(tmp_path, RETRY_ONCE + '[idempotency]\npath = "state/idempotency.sqlite3"\n')
    answers = []
    for _ in range(2):  # two gateways one after the other, e.g. a restart
        async with open_gateway(config, module_loader=loader, approval=wait) as gateway:
            answers.append(await gateway.call("refund.retry", {"refund_id": "RF-4"}, context=CLERK))
    assert (tmp_path / "state" / "idempotency.sqlite3").is_file()
    assert [(a.text.split("\n")[-1], a.replayed) for a in answers] == [
        ("retried RF-4 (run 1)", False),
        ("retried RF-4 (run 1)", True),
    ]
    assert answers[1].text.startswith("[not run again: this exact call already ran at ")
    assert ran == [("retry", "RF-4")]


async def test_the_audit_file_records_every_call(tmp_path: Path) -> None:
    config = config_of(tmp_path, RETRY_ONCE + '[audit]\npath = "audit/tools.jsonl"\n')
    async with open_gateway(config, module_loader=loader, approval=wait) as gateway:
        for _ in range(2):
            await gateway.call("refund.retry", {"refund_id": "RF-5"}, context=CLERK)
        await gateway.call("refund.force", {"refund_id": "RF-5"})
    lines = (tmp_path / "audit" / "tools.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert [(r["tool"], r["status"], r["replayed"]) for r in records] == [
        ("refund.retry", "ok", False),
        ("refund.retry", "ok", True),
        ("refund.force", "pending_approval", False),
    ]
    assert records[0]["idempotency_key"] == records[1]["idempotency_key"] is not None


async def test_policies_are_checked_against_the_tools_when_the_gateway_opens(
    tmp_path: Path,
) -> None:
    typo = config_of(tmp_path, '[tools."refund.retyr"]\nrequires_approval = true\n')
    with pytest.raises(ConfigurationError, match=r"no source offers: \['refund.retyr'\]"):
        async with open_gateway(typo, module_loader=loader, approval=wait):
            pass
    wrong_argument = config_of(tmp_path, '[tools."refund.*"]\nidempotency_key = "order_id"\n')
    with pytest.raises(ConfigurationError, match="names \\['order_id'\\]"):
        async with open_gateway(wrong_argument, module_loader=loader, approval=wait):
            pass
    unmatched_pattern = config_of(tmp_path, '[tools."ticket.*"]\ndestructive = true\n')
    async with open_gateway(unmatched_pattern, module_loader=loader, approval=wait) as gateway:
        assert (await gateway.call("refund.retry", {"refund_id": "RF-6"})).status == "ok"


async def test_a_gateway_without_a_manager_of_its_own_applies_its_policies() -> None:
    policies = [ToolPolicy(tools="refund.retry", idempotency_key="refund_id")]
    gateway = ToolGateway(ToolCatalog(as_tools(retry)), policies=policies)
    answers = [
        await gateway.call("refund.retry", {"refund_id": "RF-8"}, context=CLERK) for _ in range(2)
    ]
    assert [a.replayed for a in answers] == [False, True]
    # Without a policy saying otherwise, the tool's own requires_approval holds: the gateway
    # needs approval configured, and then asks before each call.
    with pytest.raises(ConfigurationError, match=r"'refund.force' requires approval"):
        ToolGateway(ToolCatalog(as_tools(force)))
    waiting = ToolGateway(
        ToolCatalog(as_tools(force)),
        tool_calling_manager=ToolCallingManager(**gateway_guards(approval=wait)),
    )
    assert (await waiting.call("refund.force", {"refund_id": "RF-9"})).approval == "pending"
    assert ran == [("retry", "RF-8")]


async def test_a_policy_lifting_approval_needs_no_approval_configured() -> None:
    policies = [ToolPolicy(tools="refund.force", requires_approval=False)]
    gateway = ToolGateway(ToolCatalog(as_tools(force)), policies=policies)
    assert (await gateway.call("refund.force", {"refund_id": "RF-8"})).status == "ok"
    assert ran == [("force", "RF-8")]


async def test_a_policy_that_no_longer_fits_refuses_the_call() -> None:
    catalog = LiveToolCatalog(as_tools(retry))
    policy = ToolPolicy(tools="refund.retry", idempotency_key="refund_id")
    gateway = ToolGateway(catalog, policies=[policy])
    await gateway.check_policies()

    @tool(name="refund.retry")
    def renamed_argument(refund: str) -> str:
        """Send a failed refund to its payment channel again."""
        return refund

    catalog.replace_all([(as_tools(renamed_argument)[0], "upstream")])
    result = await gateway.call("refund.retry", {"refund": "RF-7"})
    assert (result.is_error, result.status, result.tool) == (True, "error", "refund.retry")
    assert "policy for it is invalid" in result.text


@pytest.mark.parametrize(
    "options",
    [
        {"approval": wait},
        {"idempotency": InMemoryIdempotencyStore()},
        {"audit": JsonLinesAuditSink("audit.jsonl")},
    ],
)
async def test_a_manager_of_ones_own_excludes_the_side_effect_options(
    tmp_path: Path, options: dict[str, Any]
) -> None:
    manager = ToolCallingManager()
    with pytest.raises(ConfigurationError, match="not both"):
        async with open_gateway(
            config_of(tmp_path, ""), module_loader=loader, tool_calling_manager=manager, **options
        ):
            pass
    with pytest.raises(ConfigurationError, match="not both"):
        async with open_gateway(
            config_of(tmp_path, "[approval]\ndestructive = true\n"),
            module_loader=loader,
            tool_calling_manager=manager,
        ):
            pass
