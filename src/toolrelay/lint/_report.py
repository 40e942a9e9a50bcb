"""The result of linting a catalog: findings, costs, retrievability, and a JSON form.

:class:`LintReport` is what :func:`toolrelay.lint.lint` returns and what ``toolrelay lint
--json`` prints (:meth:`LintReport.to_dict`). Findings come sorted: by severity (errors
first), then catalog findings, then by the tool's place in the catalog and the rule's.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from toolrelay._plural import plural
from toolrelay.lint._findings import Finding, Severity
from toolrelay.lint._self_search import SelfSearch
from toolrelay.tools._tokens import ENCODING_NAME, TokenSummary

__all__ = ["CostSummary", "LintReport", "RetrievalSummary", "ToolRetrieval"]

_LARGEST = 10


@dataclass(frozen=True, kw_only=True)
class CostSummary:
    """Token sizes of the catalog's definitions (cl100k_base).

    Attributes:
        sizes: Each tool's size, in catalog order, as (name, tokens).
        total: What sending every tool with one request costs.
        mean: The mean size of a tool.
        largest: The largest tools, largest first, as (name, tokens).
    """

    sizes: tuple[tuple[str, int], ...]
    total: int
    mean: float
    largest: tuple[tuple[str, int], ...]

    @classmethod
    def of(cls, names: tuple[str, ...], tokens: TokenSummary) -> CostSummary:
        """The summary of ``tokens`` measured for the tools ``names``."""
        sizes = tuple(zip(names, tokens.sizes, strict=True))
        largest = sorted(sizes, key=lambda item: -item[1])[:_LARGEST]
        return cls(sizes=sizes, total=tokens.total, mean=tokens.mean, largest=tuple(largest))


@dataclass(frozen=True, kw_only=True)
class ToolRetrieval:
    """How one tool fares when the catalog is searched for it.

    Attributes:
        name: The tool.
        description_rank: Its rank for its own description (``None``: not found).
        name_rank: Its rank for the words of its name (``None``: not found).
    """

    name: str
    description_rank: int | None
    name_rank: int | None


@dataclass(frozen=True, kw_only=True)
class RetrievalSummary:
    """The catalog searched for each of its own tools.

    Attributes:
        search_type: The index that ranked (``"bm25"``, ``"hybrid"``).
        top_k: A tool ranked below this for its own description is hard to find.
        tools: Every tool's ranks, in catalog order.
        clusters: Confusable clusters, largest first.
        seconds: Time spent indexing and searching.
    """

    search_type: str
    top_k: int
    tools: tuple[ToolRetrieval, ...]
    clusters: tuple[tuple[str, ...], ...]
    seconds: float

    @classmethod
    def of(cls, found: SelfSearch, *, top_k: int) -> RetrievalSummary:
        """The summary of a self-search."""
        tools = tuple(
            ToolRetrieval(name=name, description_rank=d, name_rank=n)
            for name, d, n in zip(
                found.names, found.description_ranks, found.name_ranks, strict=True
            )
        )
        clusters = tuple(tuple(found.names[i] for i in c) for c in found.clusters())
        return cls(
            search_type=found.search_type,
            top_k=top_k,
            tools=tools,
            clusters=clusters,
            seconds=found.seconds,
        )

    def found_within(self, k: int, *, by: str = "description") -> float:
        """The share of tools in the top ``k`` for their own description.

        With ``by="name"``: for the words of their name.
        """
        if not self.tools:
            return 0.0
        ranks = [t.description_rank if by == "description" else t.name_rank for t in self.tools]
        return sum(1 for r in ranks if r is not None and r <= k) / len(ranks)

    def least_retrievable(self, count: int = 10) -> list[ToolRetrieval]:
        """The tools with the worst rank for their description or name, worst first."""

        def badness(tool: ToolRetrieval) -> tuple[float, float]:
            worst = float("inf")
            d = worst if tool.description_rank is None else tool.description_rank
            n = worst if tool.name_rank is None else tool.name_rank
            return (-max(d, n), -d)

        return sorted(self.tools, key=badness)[:count]


@dataclass(frozen=True, kw_only=True)
class LintReport:
    """What linting a catalog found.

    Attributes:
        catalog: The catalog's label (a path or module), if given.
        tools: How many tools were linted (duplicates included).
        findings: Every finding not disabled, sorted (see the module documentation).
        cost: Token sizes.
        retrieval: Ranks and clusters, when a retrieval rule ran.
        seconds: Time the whole run took.
    """

    catalog: str | None
    tools: int
    findings: tuple[Finding, ...]
    cost: CostSummary
    retrieval: RetrievalSummary | None
    seconds: float

    def count(self, severity: Severity) -> int:
        """How many findings have this severity."""
        return sum(1 for f in self.findings if f.severity is severity)

    def counts_by_rule(self) -> dict[str, int]:
        """Findings per rule id, most frequent first."""
        return dict(Counter(f.rule for f in self.findings).most_common())

    def failed(self, fail_on: Severity | None) -> bool:
        """Whether any finding is ``fail_on`` or worse (``None`` never fails)."""
        if fail_on is None:
            return False
        return any(f.severity.at_least(fail_on) for f in self.findings)

    def summary(self) -> str:
        """One line: tools, findings per severity, tokens and time."""
        parts = [
            plural(self.count(s), s.value, "info" if s is Severity.INFO else None) for s in Severity
        ]
        where = f"{self.catalog}: " if self.catalog else ""
        return (
            f"{where}{plural(self.tools, 'tool')}, {', '.join(parts)}; "
            f"{self.cost.total:,} tokens to send all tools with each request; "
            f"linted in {self.seconds:.2f} s"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form of the whole report."""
        retrieval = self.retrieval
        return {
            "catalog": self.catalog,
            "tools": self.tools,
            "seconds": round(self.seconds, 3),
            "summary": {s.value: self.count(s) for s in Severity},
            "rules": self.counts_by_rule(),
            "findings": [
                asdict(f) | {"severity": f.severity.value, "related": list(f.related)}
                for f in self.findings
            ],
            "cost": {
                "encoding": ENCODING_NAME.removesuffix("_offline"),
                "total": self.cost.total,
                "per_request_all_tools": self.cost.total,
                "mean": round(self.cost.mean, 1),
                "largest": [{"name": n, "tokens": t} for n, t in self.cost.largest],
                "tools": dict(self.cost.sizes),
            },
            "retrieval": None if retrieval is None else _retrieval_json(retrieval),
        }


def _retrieval_json(retrieval: RetrievalSummary) -> dict[str, Any]:
    return {
        "index": retrieval.search_type,
        "seconds": round(retrieval.seconds, 3),
        "top_k": retrieval.top_k,
        "found_within_top_k": {
            "description": round(retrieval.found_within(retrieval.top_k), 4),
            "name": round(retrieval.found_within(retrieval.top_k, by="name"), 4),
        },
        "clusters": [list(c) for c in retrieval.clusters],
        "least_retrievable": [asdict(t) for t in retrieval.least_retrievable()],
        "tools": {
            t.name: {"description_rank": t.description_rank, "name_rank": t.name_rank}
            for t in retrieval.tools
        },
    }
