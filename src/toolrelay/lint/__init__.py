"""Catalog governance: find the tools a model will miss, confuse or misuse.

With tool search, a tool's name and description are the retrieval corpus. :func:`lint` checks
a catalog against rules on names, descriptions, confusable tools, retrievability (the
catalog searched for each of its own tools), side effects and token cost, and returns a
:class:`LintReport` of :class:`Finding` s, each with a severity, a reason and a fix.
``toolrelay lint CATALOG`` is the command-line front end.

Example::

    from toolrelay.lint import Severity, find_config, lint

    report = lint(catalog, config=find_config())      # [tool.toolrelay.lint] in pyproject
    for finding in report.findings:
        print(finding.severity, finding.tool, finding.message, "->", finding.fix)
    if report.failed(Severity.ERROR):
        raise SystemExit(1)

The rules and their ids are listed in :data:`RULES` (see ``docs/lint.md``).
"""

from toolrelay.lint._config import LintConfig, Thresholds, find_config
from toolrelay.lint._findings import Finding, Rule, Severity
from toolrelay.lint._linter import lint
from toolrelay.lint._report import CostSummary, LintReport, RetrievalSummary, ToolRetrieval
from toolrelay.lint._rules import RULES
from toolrelay.lint._targets import LintTarget

__all__ = [
    "RULES",
    "CostSummary",
    "Finding",
    "LintConfig",
    "LintReport",
    "LintTarget",
    "RetrievalSummary",
    "Rule",
    "Severity",
    "Thresholds",
    "ToolRetrieval",
    "find_config",
    "lint",
]
