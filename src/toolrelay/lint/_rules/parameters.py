"""``parameter-undocumented``: parameters the model must fill in without a description.

A parameter's description tells the model what to put there (format, units, examples) and
is searchable text too. Top-level parameters and the fields of object parameters (down to
``params.filters.status``) are checked; a ``$ref`` to a described definition counts as
described. Enumerated values and ``*_id`` names do not replace a description: ``user_id``
does not say whether it is a number, an e-mail or ``U-123``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from toolrelay.lint._context import LintContext
from toolrelay.lint._findings import Finding, Rule, Severity, listed

__all__ = ["RULES", "UNDOCUMENTED", "check", "undocumented_parameters"]

UNDOCUMENTED = Rule(
    id="parameter-undocumented",
    severity=Severity.WARNING,
    summary="Parameters without a description",
)
RULES = (UNDOCUMENTED,)

_MAX_DEPTH = 3
_SHOWN = 6


def undocumented_parameters(schema: Mapping[str, Any]) -> tuple[list[str], int]:
    """The dotted paths of undescribed parameters, and how many parameters there are."""
    definitions = {**_mapping(schema.get("definitions")), **_mapping(schema.get("$defs"))}
    missing: list[str] = []
    total = 0

    def visit(node: Mapping[str, Any], prefix: str, depth: int) -> None:
        nonlocal total
        if depth > _MAX_DEPTH:
            return
        for name, spec in _mapping(node.get("properties")).items():
            total += 1
            path = f"{prefix}{name}"
            if not isinstance(spec, Mapping):
                missing.append(path)
                continue
            target = _resolve(spec, definitions)
            if not _described(spec) and not _described(target):
                missing.append(path)
            child = target.get("items") if target.get("type") == "array" else target
            if isinstance(child, Mapping):
                visit(_resolve(child, definitions), f"{path}.", depth + 1)

    visit(schema, "", 1)
    return missing, total


def check(ctx: LintContext) -> Iterator[Finding]:
    """One finding per tool with undescribed parameters, naming them."""
    for target in ctx.unique:
        missing, total = undocumented_parameters(target.definition.input_schema)
        if not missing:
            continue
        yield UNDOCUMENTED.finding(
            target.name,
            f"{len(missing)} of {total} parameters have no description: {listed(missing, _SHOWN)}",
            "describe each: what it is, its format or unit, and an example value "
            "(for @tool functions, an Args: section in the docstring)",
        )


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _described(spec: Mapping[str, Any]) -> bool:
    description = spec.get("description")
    return isinstance(description, str) and bool(description.strip())


def _resolve(spec: Mapping[str, Any], definitions: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = spec.get("$ref")
    if isinstance(ref, str) and "/" in ref:
        found = definitions.get(ref.rsplit("/", 1)[1])
        if isinstance(found, Mapping):
            return found
    for key in ("anyOf", "oneOf", "allOf"):
        options = spec.get(key)
        if isinstance(options, list):
            for option in options:
                if isinstance(option, Mapping) and option.get("type") != "null":
                    return _resolve(option, definitions)
    return spec
