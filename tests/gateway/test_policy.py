"""Per-tool side-effect policies: what metadata a tool has once the gateway's tables apply."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import idempotency_key
from toolrelay.gateway import ToolGateway, ToolPolicy
from toolrelay.gateway._policy import PolicyTool, ValidatingPolicyTool, apply_policies
from toolrelay.mcp._annotations import ANNOTATIONS, IDEMPOTENT, annotations_from_metadata
from toolrelay.tools import (
    FunctionTool,
    Tool,
    ToolCatalog,
    ToolContext,
    ToolDefinition,
    ToolMetadata,
)
from toolrelay.tools._base import call_sync


def make_tool(name: str, metadata: ToolMetadata | None = None) -> Tool:
    def retry(refund_id: str, channel: str = "cardpay") -> str:
        """Retry a refund.

        Args:
            refund_id: The refund.
            channel: The payment channel.
        """
        return f"retried {refund_id} on {channel}"

    return FunctionTool.from_function(retry, name=name, metadata=metadata or ToolMetadata())


ACME = ToolContext(tenant_id="acme")


def key_of(tool: Tool, **arguments: Any) -> str | None:
    return idempotency_key(tool, arguments, ACME)


def test_a_tool_no_policy_matches_is_left_alone() -> None:
    tool = make_tool("refund.retry", ToolMetadata(destructive=True))
    assert apply_policies(tool, [ToolPolicy(tools="ticket.*", destructive=False)]) is tool
    reading = make_tool("refund.get", ToolMetadata(read_only=True))
    assert apply_policies(reading, [ToolPolicy(tools="ticket.*", destructive=True)]) is reading


def test_a_tool_that_does_not_say_it_destroys_nothing_is_destructive() -> None:
    # MCP's reading of a tool that may change state, and the gateway's: approval with
    # [approval] destructive = true asks about it, and clients are told it is destructive.
    unsaid = apply_policies(make_tool("refund.retry"), [])
    assert (unsaid.metadata.read_only, unsaid.metadata.destructive) == (False, True)
    assert annotations_from_metadata(unsaid.metadata).destructive_hint is True
    # A server's destructiveHint: false, or the file's destructive = false, says otherwise.
    additive = make_tool(
        "ticket.comment", ToolMetadata(extra={ANNOTATIONS: {"destructiveHint": False}})
    )
    assert apply_policies(additive, []) is additive
    assert annotations_from_metadata(additive.metadata).destructive_hint is False
    relaxed = apply_policies(
        make_tool("ticket.close"), [ToolPolicy(tools="ticket.*", destructive=False)]
    )
    assert relaxed.metadata.destructive is False
    assert annotations_from_metadata(relaxed.metadata).destructive_hint is False
    # ...and the file wins over the server in both directions.
    stricter = apply_policies(additive, [ToolPolicy(tools="ticket.*", destructive=True)])
    assert annotations_from_metadata(stricter.metadata).destructive_hint is True


def test_a_key_makes_the_tool_idempotent_and_calls_still_reach_it() -> None:
    tool = make_tool("refund.retry", ToolMetadata(destructive=True))
    policy = ToolPolicy(tools="refund.retry", idempotency_key=["refund_id"], requires_approval=True)
    wrapped = apply_policies(tool, [policy])
    assert isinstance(wrapped, PolicyTool)
    assert wrapped.definition is tool.definition
    metadata = wrapped.metadata
    assert (metadata.destructive, metadata.requires_approval) == (True, True)
    assert (metadata.idempotency_key, metadata.extra[IDEMPOTENT]) == (("refund_id",), True)
    # Keyed by refund_id (and the tenant) only: the channel does not change the key.
    assert key_of(wrapped, refund_id="RF-1") == key_of(wrapped, refund_id="RF-1", channel="x")
    assert key_of(wrapped, refund_id="RF-1") != key_of(wrapped, refund_id="RF-2")
    assert call_sync(wrapped, '{"refund_id": "RF-1"}') == "retried RF-1 on cardpay"


def test_idempotent_without_a_key_keys_by_every_argument() -> None:
    wrapped = apply_policies(make_tool("refund.retry"), [ToolPolicy(tools="*", idempotent=True)])
    assert wrapped.metadata.idempotency_key == ("channel", "refund_id")
    assert key_of(wrapped, refund_id="RF-1") != key_of(wrapped, refund_id="RF-1", channel="x")


def test_server_hints_are_defaults_the_file_overrides() -> None:
    hinted = make_tool("ticket.close", ToolMetadata(extra={IDEMPOTENT: True}))
    assert apply_policies(hinted, []).metadata.idempotency_key == ("channel", "refund_id")
    opted_out = apply_policies(hinted, [ToolPolicy(tools="ticket.close", idempotent=False)])
    assert opted_out.metadata.idempotency_key is None
    # A read-only tool's hint never records results: reads must see changes.
    reading = make_tool("ticket.get", ToolMetadata(read_only=True, extra={IDEMPOTENT: True}))
    assert apply_policies(reading, []) is reading
    destructive = make_tool("refund.cancel", ToolMetadata(destructive=True))
    relaxed = apply_policies(destructive, [ToolPolicy(tools="refund.*", destructive=False)])
    assert relaxed.metadata.destructive is False


def test_idempotent_false_also_drops_the_tools_own_key() -> None:
    own = make_tool("refund.retry", ToolMetadata(destructive=True, idempotency_key=["refund_id"]))
    assert apply_policies(own, []) is own
    off = apply_policies(own, [ToolPolicy(tools="refund.retry", idempotent=False)])
    assert off.metadata.idempotency_key is None


def test_patterns_apply_first_and_the_exact_name_last() -> None:
    tool = make_tool("refund.retry")
    policies = [
        ToolPolicy(tools="refund.retry", requires_approval=False, timeout=5),
        ToolPolicy(tools="refund.*", requires_approval=True, destructive=True, timeout=30),
    ]
    metadata = apply_policies(tool, policies).metadata
    assert (metadata.requires_approval, metadata.destructive, metadata.timeout) == (
        False,
        True,
        5,
    )
    # A later idempotent = false cancels an earlier pattern's key.
    cancelled = apply_policies(
        tool,
        [
            ToolPolicy(tools="refund.*", idempotency_key="refund_id"),
            ToolPolicy(tools="refund.retry", idempotent=False),
        ],
    )
    assert cancelled.metadata.idempotency_key is None


def test_read_only_from_the_file_clears_destructive() -> None:
    tool = make_tool("refund.retry", ToolMetadata(destructive=True))
    metadata = apply_policies(tool, [ToolPolicy(tools="refund.retry", read_only=True)]).metadata
    assert (metadata.read_only, metadata.destructive) == (True, False)


def test_a_function_key_is_used_as_given() -> None:
    def by_refund(arguments: Mapping[str, Any], context: ToolContext) -> str:
        return f"retry:{arguments['refund_id']}"

    wrapped = apply_policies(
        make_tool("refund.retry"), [ToolPolicy(tools="refund.retry", idempotency_key=by_refund)]
    )
    assert key_of(wrapped, refund_id="RF-9") == "retry:RF-9"


def test_a_key_naming_a_missing_argument_is_refused() -> None:
    policy = ToolPolicy(tools="refund.*", idempotency_key=["refundid"])
    with pytest.raises(ConfigurationError, match=r"names \['refundid'\].*'refund_id'"):
        apply_policies(make_tool("refund.retry"), [policy])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"tools": " "}, "ToolPolicy.tools: must be a tool name or pattern"),
        ({"tools": "x", "read_only": True, "destructive": True}, "read_only and destructive"),
        ({"tools": "x", "idempotency_key": []}, "non-empty list"),
        ({"tools": "x", "idempotency_key": ["a", 3]}, "argument names"),
        ({"tools": "x", "idempotency_key": "a", "idempotent": False}, "contradicts"),
        ({"tools": "x", "timeout": 0}, r"ToolPolicy.timeout: must be > 0 \(got 0\)"),
        ({"tools": "x", "timeout": "5"}, "ToolPolicy.timeout: must be a number"),
        ({"tools": "x", "retries": 3}, "ToolPolicy.retries: unknown key"),
    ],
)
def test_invalid_policies(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        ToolPolicy(**options)


def test_a_later_table_undoes_the_other_flag_of_an_earlier_one() -> None:
    reading = make_tool("refund.get", ToolMetadata(read_only=True))
    destructive = [ToolPolicy(tools="refund.*", destructive=True)]
    metadata = apply_policies(reading, destructive).metadata
    assert (metadata.read_only, metadata.destructive) == (False, True)
    exempted = [*destructive, ToolPolicy(tools="refund.get", read_only=True)]
    metadata = apply_policies(reading, exempted).metadata
    assert (metadata.read_only, metadata.destructive) == (True, False)


def test_a_tool_declared_read_only_and_destructive_is_destructive() -> None:
    both = make_tool("refund.retry", ToolMetadata(read_only=True, destructive=True))
    metadata = apply_policies(both, []).metadata
    assert (metadata.read_only, metadata.destructive) == (False, True)


async def test_a_gateway_call_of_a_policy_tool_validates_its_arguments_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    validated: list[dict[str, Any]] = []
    reparsed: list[str] = []
    monkeypatch.setattr(
        "toolrelay.tools._function.decode_arguments",
        lambda tool, text: reparsed.append(text) or {},
    )
    tool = make_tool("refund.retry", ToolMetadata(destructive=True))
    assert isinstance(tool, FunctionTool)
    own = tool.validate_arguments

    def counting(arguments: Mapping[str, Any]) -> Any:
        validated.append(dict(arguments))
        return own(arguments)

    tool.validate_arguments = counting  # type: ignore[method-assign]
    policy = ToolPolicy(tools="refund.retry", idempotency_key=["refund_id"])
    wrapped = apply_policies(tool, [policy])
    assert isinstance(wrapped, ValidatingPolicyTool)
    gateway = ToolGateway(ToolCatalog([tool]), policies=[policy])
    result = await gateway.call("refund.retry", {"refund_id": "RF-1"}, context=ACME)
    assert (result.status, result.text) == ("ok", "retried RF-1 on cardpay")
    assert validated == [{"refund_id": "RF-1"}]
    assert reparsed == []  # the tool never read the JSON text again
    # A tool that does not validate itself keeps the plain wrapper and its JSON text.
    assert type(apply_policies(_TextTool(), [policy])) is PolicyTool


class _TextTool:
    definition = ToolDefinition(
        name="refund.retry",
        description="Retry a refund.",
        input_schema={"type": "object", "properties": {"refund_id": {"type": "string"}}},
    )
    metadata = ToolMetadata(destructive=True)

    async def call(self, arguments_json: str, context: ToolContext | None = None) -> str:
        return arguments_json
