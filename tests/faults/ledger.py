"""What a fault campaign counts: cases tried, and every broken promise with its reproduction.

A campaign runs many generated cases from one seed and writes a :class:`Ledger`: how many
cases it tried (``tried``, with the unit it counts in) and, per kind of failure
(:data:`FAILURES`), how many cases broke a promise. Each failure keeps the seed, the case's
number and a reproduction, the smallest Python that shows it, so a red run can be replayed
(``TOOLRELAY_FAULT_SEED=<seed> pytest <test>``) or pasted into a test. ``check()`` fails the
test with all of that when any count that must be zero is not.

Some campaigns also measure what is not a failure but a documented property (messages a
volatile Redis forgets on a restart, operations run again because of it): those go in
``observed``, and the report publishes them beside the failure counts.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

SEED = int(os.environ.get("TOOLRELAY_FAULT_SEED", "1612"))
"""The seed of every campaign: ``TOOLRELAY_FAULT_SEED`` or the fixed default, so CI runs the
same cases every time and any other seed explores more."""

FAILURES: dict[str, str] = {
    "crashes": "an exception reached the caller that the documented contract does not raise",
    "hangs": "a call, round, turn or search that did not end within its bound, or that held "
    "the event loop past it",
    "lost": "a call without exactly one answer, an answer lost with its round, or an "
    "acknowledged message or record gone after a restart that keeps them",
    "leaks": "a tool shown, found or run outside the request's permitted and offered tools, a "
    "search answer that depends on forbidden tools, or another conversation's history seen",
    "unapproved": "a guarded tool that ran without its approval, or with arguments nobody approved",
    "double_runs": "an operation with an idempotency key that ran more than once",
    "cross_user_replays": "a call answered with another user's, tenant's or session's "
    "recorded result",
    "stale_answers": "a key reused with other arguments answered with the earlier result, or run",
    "refused_repeats": "a repeat of an operation (the same values spelt otherwise, the arguments "
    "an approver made) refused instead of answered with its recorded result",
    "callerless_runs": "a tool keyed per caller that ran, or answered with a record, for a call "
    "naming no caller (no user, tenant or session)",
    "bad_runs": "a tool that ran with arguments its declaration does not accept",
    "unclear": "a failure answered with the wrong status or error, or no clear error",
    "cut_answers": "a search answer over the result bound that is not valid JSON of whole "
    "definitions and names, or longer than the bound; or a tool it only named counted as found",
}
"""Every kind of failure a campaign counts, and what counts as one; all must stay zero."""

SHOWN_PER_KIND = 3  # reproductions printed per kind of failure


@dataclass(frozen=True, kw_only=True)
class Failure:
    """One broken promise: its kind, the case that broke it and how to see it again."""

    kind: str
    case: int
    what: str
    reproduction: str


@dataclass
class Ledger:
    """The counts of one campaign (see the module docs).

    Args:
        campaign: Its name, as the report shows it.
        unit: What ``tried`` counts (``"calls"``, ``"turns"``, ``"searches"``...).
        seed: The seed its cases were generated from.
    """

    campaign: str
    unit: str
    seed: int = SEED
    tried: int = 0
    failures: list[Failure] = field(default_factory=list)
    observed: dict[str, Any] = field(default_factory=dict)

    def fail(self, kind: str, case: int, what: str, reproduction: str = "") -> None:
        """Record one failure of ``kind`` (a key of :data:`FAILURES`)."""
        if kind not in FAILURES:
            raise ValueError(f"unknown failure kind {kind!r}; one of {sorted(FAILURES)}")
        self.failures.append(Failure(kind=kind, case=case, what=what, reproduction=reproduction))

    def counts(self) -> dict[str, int]:
        """Failures per kind, every kind present (zero when none)."""
        found = Counter(failure.kind for failure in self.failures)
        return {kind: found[kind] for kind in FAILURES}

    def merge(self, other: Ledger) -> None:
        """Add ``other``'s cases and failures to this ledger (the same campaign, split)."""
        self.tried += other.tried
        self.failures += other.failures
        for key, value in other.observed.items():
            self.observed[key] = self.observed.get(key, 0) + value

    def summary(self) -> str:
        counts = ", ".join(f"{kind} {n}" for kind, n in self.counts().items() if n)
        return (
            f"{self.campaign}: {self.tried:,} {self.unit} tried (seed {self.seed}); "
            f"{counts or 'no failures'}"
        )

    def check(self, *, at_least: int = 1) -> None:
        """Fail unless every failure count is zero and ``at_least`` cases were tried.

        The message names the seed, every count, and for each kind the first cases with
        their reproductions.
        """
        assert self.tried >= at_least, f"{self.campaign}: {self.tried} {self.unit} < {at_least}"
        if not self.failures:
            return
        lines = [self.summary(), f"replay: TOOLRELAY_FAULT_SEED={self.seed} pytest <this test>"]
        for kind in FAILURES:
            of_kind = [f for f in self.failures if f.kind == kind]
            for failure in of_kind[:SHOWN_PER_KIND]:
                lines.append(f"- {kind}, case {failure.case}: {failure.what}")
                lines += [f"    {line}" for line in failure.reproduction.splitlines()]
            if len(of_kind) > SHOWN_PER_KIND:
                lines.append(f"- ... and {len(of_kind) - SHOWN_PER_KIND} more {kind}")
        raise AssertionError("\n".join(lines))

    def to_json(self) -> dict[str, Any]:
        """The ledger as the report stores it: counts, no reproductions."""
        return {
            "campaign": self.campaign,
            "unit": self.unit,
            "seed": self.seed,
            "tried": self.tried,
            "failures": self.counts(),
            "observed": dict(self.observed),
        }


def shorten(text: str, limit: int = 160) -> str:
    """``repr`` of a text, its middle left out past ``limit`` characters (huge names...)."""
    shown = repr(text)
    if len(shown) <= limit:
        return shown
    half = limit // 2
    return f"{shown[:half]}...<{len(text):,} characters>...{shown[-half:]}"
