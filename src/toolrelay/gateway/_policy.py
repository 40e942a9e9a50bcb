"""Side-effect policy for the gateway's tools: approval, idempotency and flags, per tool.

An upstream MCP server's annotations are its own claims, and they cannot say what identifies
a call. The gateway's file sets both, per tool name or ``fnmatch`` pattern:

.. code-block:: toml

    [tools."refund.retry_failed_order"]   # quote names with dots
    requires_approval = true              # ask the approval handler before every call
    idempotent = true                     # a repeated call gets the recorded result,
    idempotency_key = ["refund_id"]       # identified by these arguments (tenant and user too)

    [tools."payment.*"]
    destructive = true

Keys (all optional; what a table leaves out keeps the tool's own value):

- ``read_only``, ``destructive``, ``requires_approval``, ``timeout``: replace the tool's
  metadata (for an MCP tool: what its ``readOnlyHint``, ``destructiveHint`` and approval
  ``_meta`` key say, see :class:`~toolrelay.mcp.McpTool`);
- ``idempotency_key``: argument names (one, or a list), exactly as
  :attr:`ToolMetadata.idempotency_key <toolrelay.tools.ToolMetadata.idempotency_key>` takes
  them: the key is the tool's name plus a digest of those arguments and the tenant. Each name
  must be an argument of every tool the table matches. In Python also a function
  ``(arguments, context) -> str``. Implies ``idempotent``;
- ``idempotent``: ``true`` answers a repeated call with the recorded result, keyed by
  ``idempotency_key``, else by the tool's own key, else by all of its arguments; ``false``
  never does, even for a tool that declares a key. Unset, a tool keeps its own key, and a tool
  its server marks ``idempotentHint`` (and not read-only) is keyed by all its arguments.

Several tables may match one tool: patterns first, in the order given, then the table named
exactly after the tool; each replaces what it sets.

What no table sets follows MCP's reading of a tool: one that is not read-only is destructive
unless it states it destroys nothing (``destructiveHint: false``), so an unannotated tool is
destructive until a table says ``destructive = false``. The result is what the gateway acts
on (approval, idempotency) and what it tells clients (each ``tool_search`` hit's
annotations, and those of ``call_tool``): the two never differ.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Annotated, Any, Self

from pydantic import Field, PlainValidator, field_validator, model_validator

from toolrelay._settings import Settings
from toolrelay.exceptions import ConfigurationError
from toolrelay.mcp._annotations import (
    ANNOTATIONS,
    IDEMPOTENT,
    annotations_from_metadata,
    stated_annotations,
)
from toolrelay.tools._base import (
    IdempotencyKey,
    Tool,
    ToolBase,
    ToolContext,
    ToolDefinition,
    ToolMetadata,
    ValidatedArguments,
    ValidatingTool,
)
from toolrelay.tools._workers import SyncRunner

__all__ = [
    "PolicyTable",
    "PolicyTool",
    "ToolPolicy",
    "ValidatingPolicyTool",
    "apply_policies",
    "matching_policies",
]

_PATTERN_CHARACTERS = frozenset("*?[")


def _names_or_function(key: object) -> IdempotencyKey | None:
    """A function as it is; one argument name or a list of them as a tuple."""
    if key is None or callable(key):
        return key  # a function's signature is not checked
    names = (key,) if isinstance(key, str) else key
    if isinstance(names, list | tuple) and names and all(isinstance(n, str) and n for n in names):
        return tuple(names)
    raise ValueError("must be an argument name or a non-empty list of argument names")


class PolicyTable(Settings):
    """A ``[tools."NAME"]`` table: a :class:`ToolPolicy` without its name (the table's)."""

    read_only: bool | None = None
    destructive: bool | None = None
    requires_approval: bool | None = None
    idempotent: bool | None = None
    idempotency_key: Annotated[IdempotencyKey | None, PlainValidator(_names_or_function)] = None
    timeout: float | None = Field(None, gt=0)

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.read_only and self.destructive:
            raise ValueError("a tool cannot be read_only and destructive")
        if self.idempotency_key is not None and self.idempotent is False:
            raise ValueError("idempotent = false contradicts idempotency_key")
        return self


class ToolPolicy(PolicyTable):
    """What the gateway assumes about the tools one name or pattern matches (see module docs).

    Attributes:
        tools: A canonical tool name (``refund.retry_failed_order``) or an ``fnmatch``
            pattern (``payment.*``).
        read_only: Replaces the tool's ``read_only``; ``None`` keeps it.
        destructive: Replaces its ``destructive``.
        requires_approval: Replaces its ``requires_approval``.
        idempotent: Whether repeated calls get the recorded result (see the module docs).
        idempotency_key: Argument names (kept as a tuple), or a function of the arguments
            and the context, identifying a call.
        timeout: Seconds a call may run before it is cancelled.

    Raises:
        ConfigurationError: An empty name, contradictory flags (``read_only`` and
            ``destructive``; ``idempotent=False`` with a key), an empty or non-string
            argument name, a timeout that is not positive, or a value of the wrong type.
    """

    tools: str

    @field_validator("tools")
    @classmethod
    def _named(cls, tools: str) -> str:
        if not tools.strip():
            raise ValueError("must be a tool name or pattern")
        return tools

    @property
    def is_pattern(self) -> bool:
        """Whether :attr:`tools` is a pattern rather than one tool's name."""
        return not _PATTERN_CHARACTERS.isdisjoint(self.tools)

    def matches(self, name: str) -> bool:
        """Whether the policy applies to the tool with canonical name ``name``."""
        return name == self.tools or (self.is_pattern and fnmatch.fnmatchcase(name, self.tools))


def matching_policies(name: str, policies: Sequence[ToolPolicy]) -> list[ToolPolicy]:
    """The policies for the tool ``name``, in the order they apply (exact name last)."""
    found = [p for p in policies if p.matches(name)]
    return [p for p in found if p.is_pattern] + [p for p in found if not p.is_pattern]


def apply_policies(tool: Tool, policies: Sequence[ToolPolicy]) -> Tool:
    """``tool`` as the gateway runs it: itself when nothing changes, else a :class:`PolicyTool`.

    The policies replace what they set. A tool that is not read-only counts as destructive
    unless it says it destroys nothing (an MCP server's ``destructiveHint: false``) or a
    policy says ``destructive = false``: that is what MCP assumes of a tool that may change
    state, and what the gateway tells its clients (as MCP annotations), so
    ``[approval] destructive = true`` asks about every such tool.

    Raises:
        ConfigurationError: A policy's ``idempotency_key`` names an argument the tool does
            not have (every call would share one key, so different calls would be answered
            with one recorded result).
    """
    metadata = tool.metadata
    fields: dict[str, Any] = {}
    for policy in matching_policies(tool.definition.name, policies):
        for option in ("read_only", "destructive", "requires_approval", "timeout"):
            value = getattr(policy, option)
            if value is not None:
                fields[option] = value
        # One flag set by a later table undoes the other set by an earlier one.
        if policy.read_only:
            fields.pop("destructive", None)
        if policy.destructive:
            fields["read_only"] = False
        if policy.idempotency_key is not None:
            fields["idempotency_key"] = policy.idempotency_key
            fields["idempotent"] = True
        elif policy.idempotent is False:
            fields["idempotent"] = False
            fields.pop("idempotency_key", None)  # an earlier pattern's key no longer applies
        elif policy.idempotent:
            fields["idempotent"] = True
    stated = dict(stated_annotations(metadata))
    # A tool that declares itself read-only and destructive may destroy; a table decides.
    read_only = fields.get("read_only", metadata.read_only and not metadata.destructive)
    destructive = not read_only and fields.get(
        "destructive", metadata.destructive or stated.get("destructiveHint") is not False
    )
    stated["readOnlyHint"] = read_only
    if read_only:
        stated.pop("destructiveHint", None)
    else:
        stated["destructiveHint"] = destructive
    hinted = metadata.extra.get(IDEMPOTENT) is True and not read_only
    key = _effective_key(tool, fields, hinted=hinted)
    effective = replace(
        metadata,
        read_only=read_only,
        destructive=destructive,
        requires_approval=fields.get("requires_approval", metadata.requires_approval),
        timeout=fields.get("timeout", metadata.timeout),
        idempotency_key=key,
        extra={**metadata.extra, IDEMPOTENT: key is not None, ANNOTATIONS: stated},
    )
    if _same_treatment(effective, metadata):
        return tool
    if isinstance(tool, ValidatingTool):
        return ValidatingPolicyTool(tool, effective)
    return PolicyTool(tool, effective)


def _same_treatment(effective: ToolMetadata, own: ToolMetadata) -> bool:
    """Whether the gateway treats the tool, and describes it, as its own metadata does."""
    behaviour = ("read_only", "destructive", "requires_approval", "timeout", "idempotency_key")
    return all(getattr(effective, f) == getattr(own, f) for f in behaviour) and (
        # A tool that says nothing and one said to destroy nothing run alike, but are
        # described differently.
        annotations_from_metadata(effective).destructive_hint
        == annotations_from_metadata(own).destructive_hint
    )


def _effective_key(tool: Tool, fields: Mapping[str, Any], *, hinted: bool) -> IdempotencyKey | None:
    own = tool.metadata.idempotency_key
    idempotent = fields.get("idempotent")
    if idempotent is False:
        return None
    key: IdempotencyKey | None = fields.get("idempotency_key")
    if key is not None:
        if not callable(key):
            _check_arguments(tool, (key,) if isinstance(key, str) else key)
        return key
    if own is not None:
        return own
    if idempotent or hinted:
        # All arguments identify the call: the names the schema declares, so the key is
        # derived exactly as for a tool that lists them itself.
        return tuple(sorted(_argument_names(tool.definition)))
    return None


def _check_arguments(tool: Tool, names: Sequence[str]) -> None:
    known = _argument_names(tool.definition)
    missing = [n for n in names if n not in known]
    if missing:
        raise ConfigurationError(
            f"the idempotency_key of tool {tool.definition.name!r} names {missing}, which it "
            f"does not take; its arguments: {sorted(known)}"
        )


def _argument_names(definition: ToolDefinition) -> set[str]:
    properties = definition.input_schema.get("properties")
    return set(properties) if isinstance(properties, Mapping) else set()


class PolicyTool(ToolBase):
    """A tool with the metadata its gateway policies give it; calls go to the tool itself.

    Its definition is the tool's own.

    Args:
        tool: The tool.
        metadata: What the gateway assumes about it: the tool's with the policies applied.

    Attributes:
        tool: The tool.
    """

    def __init__(self, tool: Tool, metadata: ToolMetadata) -> None:
        super().__init__(tool.definition, metadata)
        self.tool = tool

    async def call(self, arguments_json: str, context: ToolContext | None = None) -> str:
        """Run the tool itself."""
        return await self.tool.call(arguments_json, context)

    def __repr__(self) -> str:
        return f"PolicyTool({self.tool!r})"


class ValidatingPolicyTool(PolicyTool):
    """A :class:`PolicyTool` over a tool that validates its arguments itself.

    The gateway then validates a call once, with the tool's own validation, and the tool runs
    with the validated input, never parsing the arguments again.
    """

    tool: ValidatingTool

    def __init__(self, tool: ValidatingTool, metadata: ToolMetadata) -> None:
        super().__init__(tool, metadata)

    def validate_arguments(self, arguments: Mapping[str, Any]) -> ValidatedArguments:
        """The tool's own validation."""
        return self.tool.validate_arguments(arguments)

    async def call_validated(
        self,
        arguments: ValidatedArguments,
        context: ToolContext | None = None,
        *,
        workers: SyncRunner | None = None,
    ) -> str:
        """Run the tool itself with arguments :meth:`validate_arguments` returned."""
        return await self.tool.call_validated(arguments, context, workers=workers)
