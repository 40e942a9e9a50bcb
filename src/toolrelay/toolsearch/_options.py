"""How tool search searches and answers: one value, validated once, taken by every front end.

:class:`SearchOptions` is taken alike by :class:`~toolrelay.ToolSearchAdvisor`, the MCP
gateway (:class:`~toolrelay.gateway.ToolGateway`) and the bridges
(:class:`~toolrelay.bridges.BridgeSearch`)::

    options = SearchOptions(max_results=3, tool_filter=visible_to_role)
    ToolSearchAdvisor(catalog, options=options)
    ToolGateway(catalogs, options=options)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Final, get_args

from toolrelay.exceptions import ConfigurationError
from toolrelay.search._base import MAX_RESULTS_LIMIT
from toolrelay.search._usage import UsageLog
from toolrelay.toolsearch._access import ToolFilter
from toolrelay.toolsearch._texts import SearchLanguage, SearchTexts

__all__ = ["DEFAULT_MAX_RESULTS", "DEFAULT_MIN_RELATIVE_SCORE", "SearchOptions"]

DEFAULT_MAX_RESULTS: Final = 2
"""Hits an answer shows when the model does not ask for a number (``max_results``)."""

DEFAULT_MIN_RELATIVE_SCORE: Final = 0.9
"""Hits scoring below this fraction of the best hit's score are left out of an answer.

With :data:`DEFAULT_MAX_RESULTS`, the rule ``benchmarks/reveal.py`` decided for answers
(docs/benchmarks.md, "What a search answer shows"; ``benchmarks/results/reveal.json``,
``answer_decision``): every hit shown travels in every later request, and a needed tool
left out costs another search round; the rule that costs least as billed on
``claude-sonnet-4-5`` and ``gpt-5`` over the dev queries of five retrieval benchmarks (a
kept-out part of them checking it). The model asks for more with ``max_results``.
"""


@dataclass(frozen=True, kw_only=True)
class SearchOptions:
    """How tool search searches and answers, wherever it runs (see the module docs).

    Attributes:
        max_results: Hits per search when the model does not say (1-10; 2 by default, the
            measured rule: :data:`~toolrelay.toolsearch._options.DEFAULT_MIN_RELATIVE_SCORE`).
        min_score: Drop hits scoring below this, on the index's own scale.
        min_relative_score: Drop hits scoring below this fraction of the best hit's score
            (0-1; ``None`` keeps them; 0.9 by default, the measured rule).
        tool_filter: Which tools a caller may see and find at all
            (``(context, definition) -> bool``): a forbidden tool is never returned by a
            search, never shown and never run, and a call of it is answered exactly like a
            call of a name that exists nowhere.
        language: The language of what the model reads besides the catalog: ``"auto"``
            (the catalog's, decided again when it changes), ``"en"``, ``"zh"``, or
            :class:`~toolrelay.toolsearch.SearchTexts` of your own (``dataclasses.replace(
            ENGLISH, system_suffix=None)``: no system suffix).
        usage_log: Where past searches that led to successful calls are kept
            (:class:`~toolrelay.search.UsageLog`); searches rank with them. ``None``: no
            history is kept or used.
        shared_usage: One history for every tenant instead of one per tenant (the tool
            context's ``tenant_id``); only for tenants that may learn from each other.

    Raises:
        ConfigurationError: A value is out of range, ``language`` is unknown, or
            ``shared_usage`` is set without a ``usage_log``.
    """

    max_results: int = DEFAULT_MAX_RESULTS
    min_score: float | None = None
    min_relative_score: float | None = DEFAULT_MIN_RELATIVE_SCORE
    tool_filter: ToolFilter | None = None
    language: SearchLanguage | SearchTexts = "auto"
    usage_log: UsageLog | None = None
    shared_usage: bool = False

    def __post_init__(self) -> None:
        count = self.max_results
        if isinstance(count, bool) or not isinstance(count, int):
            raise ConfigurationError(f"max_results must be an integer, not {count!r}")
        if not 1 <= count <= MAX_RESULTS_LIMIT:
            raise ConfigurationError(
                f"max_results must be between 1 and {MAX_RESULTS_LIMIT}, not {count}"
            )
        for option in ("min_score", "min_relative_score"):
            value = getattr(self, option)
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if value is not None and not number:
                raise ConfigurationError(f"{option} must be a number or None, not {value!r}")
        ratio = self.min_relative_score
        if ratio is not None and not 0.0 <= ratio <= 1.0:
            raise ConfigurationError(
                f"min_relative_score must be between 0 and 1 (a fraction of the best hit's "
                f"score), not {ratio}"
            )
        if self.tool_filter is not None and not callable(self.tool_filter):
            raise ConfigurationError(
                f"tool_filter must be a function (context, definition) -> bool, not "
                f"{self.tool_filter!r}"
            )
        language = self.language
        if not isinstance(language, SearchTexts) and language not in get_args(SearchLanguage):
            raise ConfigurationError(
                f"unknown tool search language {language!r}; use 'auto', 'en', 'zh' or "
                "SearchTexts of your own"
            )
        if self.shared_usage and self.usage_log is None:
            raise ConfigurationError("shared_usage=True needs a usage_log to share")

    def replace(self, **changes: Any) -> SearchOptions:
        """A copy with ``changes`` (validated again)."""
        return dataclasses.replace(self, **changes)
