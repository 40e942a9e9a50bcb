"""What a lint rule reports: a :class:`Finding` with a :class:`Severity`, and the rule itself.

A finding names the rule, the tool (or ``None`` for the catalog as a whole), a short reason
and a suggested fix. Severities are ordered: ``error`` (providers reject the catalog or a
model cannot use the tool), ``warning`` (a model will likely miss, confuse or misuse the
tool), ``info`` (worth knowing, cheap to improve).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Finding", "Rule", "Severity", "listed"]


class Severity(StrEnum):
    """How bad a finding is; compare with :attr:`level` (``error`` is highest)."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def level(self) -> int:
        """2 for errors, 1 for warnings, 0 for info."""
        return _LEVELS[self]

    def at_least(self, other: Severity) -> bool:
        """Whether this severity is ``other`` or worse."""
        return self.level >= other.level


_LEVELS = {Severity.ERROR: 2, Severity.WARNING: 1, Severity.INFO: 0}


@dataclass(frozen=True, kw_only=True)
class Rule:
    """One lint rule.

    Attributes:
        id: The rule's id, as used in ``disable`` lists (``"description-too-short"``).
        severity: The severity of its findings (a few rules raise or lower it per finding,
            as their documentation says).
        summary: What the rule checks, in one line.
    """

    id: str
    severity: Severity
    summary: str

    def finding(
        self,
        tool: str | None,
        message: str,
        fix: str,
        *,
        related: Sequence[str] = (),
        severity: Severity | None = None,
    ) -> Finding:
        """A finding of this rule (at its severity unless ``severity`` is given)."""
        return Finding(
            rule=self.id,
            severity=severity or self.severity,
            tool=tool,
            message=message,
            fix=fix,
            related=tuple(related),
        )


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One problem found in a catalog.

    Attributes:
        rule: The id of the rule that found it.
        severity: How bad it is.
        tool: The tool concerned, or ``None`` for the catalog as a whole.
        message: What is wrong, in one short sentence.
        fix: What to do about it.
        related: Other tools involved (the rest of a confusable cluster, the tools that
            outrank this one, the other holder of a duplicate name).
    """

    rule: str
    severity: Severity
    tool: str | None
    message: str
    fix: str
    related: tuple[str, ...] = ()


def listed(names: Sequence[str], limit: int) -> str:
    """The first ``limit`` of ``names``, comma-separated, with how many more there are."""
    more = len(names) - limit
    return ", ".join(names[:limit]) + (f" (+{more} more)" if more > 0 else "")
