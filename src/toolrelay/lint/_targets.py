"""What the linter reads about a tool: its definition, its metadata, and where it came from.

:func:`as_targets` accepts tools, bare definitions and :class:`LintTarget` s alike. Tools from
JSON catalogs have no :class:`~toolrelay.tools.ToolMetadata`; their side effects may be
declared the MCP way, and :func:`metadata_from_annotations` reads them from the tool's JSON
object:

- ``annotations.readOnlyHint`` → ``read_only``;
- ``annotations.destructiveHint`` → ``destructive`` (only when not read-only);
- ``_meta["toolrelay/requires_approval"]`` → ``requires_approval``.

The annotations as given are kept in ``extra["annotations"]``: a tool whose server states
``destructiveHint: false`` has said that it changes data without destroying any, which
counts as declaring its side effects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from toolrelay.tools._base import Tool, ToolDefinition, ToolMetadata

__all__ = [
    "ANNOTATIONS",
    "REQUIRES_APPROVAL_META",
    "LintTarget",
    "as_targets",
    "metadata_from_annotations",
]

ANNOTATIONS = "annotations"
"""``ToolMetadata.extra`` key holding the MCP annotations a JSON tool declared."""

REQUIRES_APPROVAL_META = "toolrelay/requires_approval"
"""Key of a tool's ``_meta`` object that marks it as needing approval per call."""


@dataclass(frozen=True, kw_only=True)
class LintTarget:
    """One tool as the linter sees it.

    Attributes:
        definition: What the model is shown.
        metadata: How the runtime treats it; ``None`` when unknown (a JSON definition with
            no annotations), which the side-effect rules read as "nothing declared".
        origin: Where it was defined (``file:line``, ``module.function``), for messages.
        source: The service, server or module it comes from, when known. Tools of several
            sources make a catalog where generic names become ambiguous.
    """

    definition: ToolDefinition
    metadata: ToolMetadata | None = None
    origin: str | None = None
    source: str | None = None

    @property
    def name(self) -> str:
        """The tool's canonical name."""
        return self.definition.name


def as_targets(tools: Iterable[Tool | ToolDefinition | LintTarget]) -> list[LintTarget]:
    """Wrap tools and definitions as :class:`LintTarget` s, in order (targets pass through)."""
    targets: list[LintTarget] = []
    for item in tools:
        if isinstance(item, LintTarget):
            targets.append(item)
        elif isinstance(item, ToolDefinition):
            targets.append(LintTarget(definition=item))
        else:
            targets.append(LintTarget(definition=item.definition, metadata=item.metadata))
    return targets


def metadata_from_annotations(row: Mapping[str, Any]) -> ToolMetadata | None:
    """The metadata a JSON tool definition declares, or ``None`` when it declares none.

    ``row`` is the tool's JSON object; OpenAI's ``{"type": "function", "function": {...}}``
    wrapper is looked into as well.
    """
    function = row.get("function")
    if isinstance(function, Mapping):
        row = {**function, **{k: v for k, v in row.items() if k != "function"}}
    hints = row.get(ANNOTATIONS)
    meta = row.get("_meta")
    hints = hints if isinstance(hints, Mapping) else {}
    meta = meta if isinstance(meta, Mapping) else {}
    approval = meta.get(REQUIRES_APPROVAL_META) is True
    if not hints and not approval:
        return None
    read_only = hints.get("readOnlyHint") is True
    return ToolMetadata(
        read_only=read_only,
        destructive=not read_only and hints.get("destructiveHint") is True,
        requires_approval=approval,
        extra={ANNOTATIONS: dict(hints)} if hints else {},
    )
