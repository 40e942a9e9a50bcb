"""Small catalogs and a one-call lint for the rule tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolrelay.lint import Finding, LintConfig, LintReport, LintTarget, Thresholds, lint
from toolrelay.tools import ToolDefinition, ToolMetadata

GOOD_DESCRIPTION = (
    "Returns the current weather for a city: temperature, wind and conditions. Use when the "
    "user asks about weather right now; it does not give forecasts."
)


def target(
    name: str,
    description: str = GOOD_DESCRIPTION,
    *,
    params: dict[str, Any] | None = None,
    required: Sequence[str] = (),
    metadata: ToolMetadata | None = None,
    source: str | None = None,
) -> LintTarget:
    """A lint target with a described ``city`` parameter unless ``params`` says otherwise."""
    properties = (
        params if params is not None else {"city": {"type": "string", "description": "City."}}
    )
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return LintTarget(
        definition=ToolDefinition(name=name, description=description, input_schema=schema),
        metadata=metadata,
        source=source,
    )


def run(
    targets: Sequence[LintTarget],
    *,
    config: LintConfig | None = None,
    **thresholds: Any,
) -> LintReport:
    """Lint with BM25 and, if given, some thresholds changed."""
    if thresholds:
        config = LintConfig(thresholds=Thresholds(**thresholds))
    return lint(targets, config=config, index="bm25", cache=False)


def findings(targets: Sequence[LintTarget], rule: str, **thresholds: Any) -> list[Finding]:
    """The findings of one rule."""
    return [f for f in run(targets, **thresholds).findings if f.rule == rule]


def flagged(targets: Sequence[LintTarget], rule: str, **thresholds: Any) -> list[str | None]:
    """The tools one rule reported, in report order."""
    return [f.tool for f in findings(targets, rule, **thresholds)]
