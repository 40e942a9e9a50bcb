"""What every rule may read about the catalog, each part computed once and only when asked.

Rules are functions of a :class:`LintContext`. The expensive parts (token counts, the
catalog's self-search) are computed on first use, so a run with the retrieval rules
disabled never builds an index.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import cached_property

from toolrelay.lint._config import LintConfig, Thresholds
from toolrelay.lint._findings import Finding
from toolrelay.lint._indexes import LintIndex
from toolrelay.lint._self_search import SelfSearch, search_self
from toolrelay.lint._targets import LintTarget
from toolrelay.search._base import IndexProgress
from toolrelay.search._documents import dotted_categories
from toolrelay.tools._tokens import TokenSummary, summarize_tokens

__all__ = ["Check", "LintContext"]

Check = Callable[["LintContext"], Iterator[Finding]]
"""A rule module's entry point: every finding of its rules for a catalog."""


class LintContext:
    """The catalog under lint, the settings, and shared analyses.

    Args:
        targets: The tools, in catalog order (duplicate names included).
        config: The settings.
        make_index: Makes the index for the self-search, when a rule first needs it.
        progress: Told how far indexing the catalog for the self-search is.
    """

    def __init__(
        self,
        targets: Sequence[LintTarget],
        config: LintConfig,
        make_index: Callable[[], LintIndex],
        *,
        progress: IndexProgress | None = None,
    ) -> None:
        self.targets = tuple(targets)
        self.config = config
        self._make_index = make_index
        self._progress = progress

    @property
    def thresholds(self) -> Thresholds:
        """The numbers the rules judge by."""
        return self.config.thresholds

    @cached_property
    def unique(self) -> tuple[LintTarget, ...]:
        """The first tool of each name, in catalog order (what an index can hold)."""
        first: dict[str, LintTarget] = {}
        for target in self.targets:
            first.setdefault(target.name, target)
        return tuple(first.values())

    @cached_property
    def tokens(self) -> TokenSummary:
        """The token size of every target, in catalog order."""
        return summarize_tokens([t.definition for t in self.targets])

    @cached_property
    def self_search(self) -> SelfSearch:
        """The catalog searched for each of its own (uniquely named) tools."""
        made = self._make_index()
        return search_self(
            [t.definition for t in self.unique],
            made.index,
            margin=self.thresholds.confusable_margin,
            prime=made.prime,
            progress=self._progress,
        )

    @property
    def self_search_if_done(self) -> SelfSearch | None:
        """The self-search if a rule asked for it, else ``None`` (nothing is computed)."""
        done = self.__dict__.get("self_search")
        return done if isinstance(done, SelfSearch) else None

    @cached_property
    def several_sources(self) -> bool:
        """Whether the tools come from several services (settings, sources, dotted names)."""
        if self.config.several_sources is not None:
            return self.config.several_sources
        sources = {t.source for t in self.targets if t.source}
        domains = {dotted_categories(t.name)[0] for t in self.targets if "." in t.name}
        return len(sources) > 1 or len(domains) > 1
