"""What a description tells the model: what the tool does, when to use it, what it does not.

- ``description-missing-what`` (*warning*): no verb at all ("TheClique (Data): Concert
  info"): neither the model nor a search can tell what the tool does.
- ``description-missing-when`` (*info*): nothing says when to use it ("use when...", "if",
  "for", "用于", "当…时").
- ``description-missing-not`` (*info*): nothing draws a limit ("does not", "only",
  "instead", "不", "仅"). Naming what a tool does not do, and which sibling does, is what
  keeps a model from confusing similar tools.

Descriptions that are missing, too short or only repeat the name are left to the rules
that say so (see ``descriptions.py``); their fix covers these.
"""

from __future__ import annotations

from collections.abc import Iterator

from toolrelay.lint._context import LintContext
from toolrelay.lint._findings import Finding, Rule, Severity
from toolrelay.lint._rules.descriptions import repeats_name
from toolrelay.lint._wording import says_what, says_what_not, says_when, word_count

__all__ = ["MISSING_NOT", "MISSING_WHAT", "MISSING_WHEN", "RULES", "check"]

MISSING_WHAT = Rule(
    id="description-missing-what",
    severity=Severity.WARNING,
    summary="The description does not say what the tool does (no verb)",
)
MISSING_WHEN = Rule(
    id="description-missing-when",
    severity=Severity.INFO,
    summary="The description does not say when to use the tool",
)
MISSING_NOT = Rule(
    id="description-missing-not",
    severity=Severity.INFO,
    summary="The description does not say what the tool does not do",
)
RULES = (MISSING_WHAT, MISSING_WHEN, MISSING_NOT)


def check(ctx: LintContext) -> Iterator[Finding]:
    """Findings of the content rules for every tool with a description of some length."""
    minimum = ctx.thresholds.min_description_words
    for target in ctx.unique:
        description = target.definition.description.strip()
        if word_count(description) < minimum or repeats_name(target):
            continue
        name = target.name
        if not says_what(description):
            yield MISSING_WHAT.finding(
                name,
                "no verb says what the tool does",
                "open with the action and its object, e.g. 'Returns the concerts of an "
                "artist...' or 'Creates a support ticket...'",
            )
        if not says_when(description):
            yield MISSING_WHEN.finding(
                name,
                "nothing says when to use it",
                "add a sentence such as 'Use when the user asks to ...'",
            )
        if not says_what_not(description):
            yield MISSING_NOT.finding(
                name,
                "nothing says what it does not do",
                "add a limit such as 'Does not change anything; to retry a refund use "
                "refund.retry instead.'",
            )
