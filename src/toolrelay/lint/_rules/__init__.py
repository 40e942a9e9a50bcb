"""Every lint rule, one module per concept, in the order findings are reported.

Each module defines its :class:`~toolrelay.lint.Rule` s (``RULES``) and one
``check(ctx)`` that yields their findings. :data:`RULES` maps every rule id to its rule;
:data:`CHECKS` pairs each module's rules with its check, so a run can skip a module whose
rules are all disabled (and with it, for the retrieval rules, building an index).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from toolrelay.lint._context import Check
from toolrelay.lint._findings import Rule
from toolrelay.lint._rules import (
    confusable,
    cost,
    description_content,
    descriptions,
    generic_names,
    names,
    near_duplicates,
    parameters,
    retrievability,
    side_effects,
)

__all__ = ["CHECKS", "RULES"]

_MODULES = (
    names,
    generic_names,
    near_duplicates,
    descriptions,
    description_content,
    parameters,
    side_effects,
    confusable,
    retrievability,
    cost,
)

CHECKS: tuple[tuple[tuple[Rule, ...], Check], ...] = tuple((m.RULES, m.check) for m in _MODULES)
"""Each rule module's rules and its check, in report order."""

RULES: Mapping[str, Rule] = MappingProxyType(
    {rule.id: rule for module in _MODULES for rule in module.RULES}
)
"""Every rule by id, in report order."""
