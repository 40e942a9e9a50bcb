"""``name-generic``: a name made only of generic words, in a catalog of several services.

``search``, ``get_data`` or ``create`` says what kind of thing a tool does but not to what.
In a catalog that pools several services (detected from dotted domain prefixes and the
targets' sources, or set with ``several-sources``) such a name is ambiguous both to the
model and to keyword search; a domain prefix (``ticket.search``, ``github_search``) fixes
it. Single-service catalogs are not checked.
"""

from __future__ import annotations

from collections.abc import Iterator

from toolrelay.lint._context import LintContext
from toolrelay.lint._findings import Finding, Rule, Severity
from toolrelay.tools._names import split_name_words

__all__ = ["GENERIC", "GENERIC_WORDS", "RULES", "check"]

GENERIC = Rule(
    id="name-generic",
    severity=Severity.WARNING,
    summary="Generic name (search, query, create, get...) without a domain prefix",
)
RULES = (GENERIC,)

GENERIC_WORDS: frozenset[str] = frozenset(
    """
    search query create send get list find fetch update delete remove run execute call lookup
    read write post put set add do process handle invoke request submit save load check
    data info information item items result results record records object objects entity
    entities resource resources thing things tool api action operation details detail all
    by new one
    """.split()  # noqa: SIM905 - a word list reads best as text
)
"""Words that say what kind of thing a tool does, but not to what."""


def check(ctx: LintContext) -> Iterator[Finding]:
    """Generic names, when the catalog spans several sources."""
    if not ctx.several_sources:
        return
    for target in ctx.targets:
        words = split_name_words(target.name)
        if words and all(w in GENERIC_WORDS or w.isdigit() for w in words):
            example = f"<service>.{target.name}"
            yield GENERIC.finding(
                target.name,
                "the name says what kind of action, not what it acts on, in a catalog of "
                "several services",
                f"prefix it with its domain, e.g. {example!r}",
            )
