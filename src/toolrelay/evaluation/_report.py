"""What an evaluation found: per mode, per task, and each mode against the baseline.

Per mode (:class:`ModeSummary`): the success rate with its 95% Wilson interval over the runs
(the suite's tasks taken as given; repeats are independent draws of a sampling model), mean
tokens and model requests per run, wall time p50/p95, the tool-call errors and the
retrieval misses.

Each mode against the first (:class:`Comparison`) is paired by task, because tasks differ far
more than runs of one task do: a task contributes the difference of its successes under the
two modes over the repeats both have. The p-value is the exact sign-flip test over those
per-task differences, which with one run per task and mode is McNemar's exact test on the
tasks where the modes disagree; treating repeats of a task as independent pairs would count
one task's difficulty several times. The interval of the difference in success rate is a
paired bootstrap over tasks (10,000 resamples, seed 0).

Tokens are what the model reported when every run had its usage, else the counted figures
(cl100k_base over the OpenAI wire format); :attr:`EvaluationReport.token_source` says which.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from toolrelay.evaluation._checks import CallStatus
from toolrelay.evaluation._runner import RunResult
from toolrelay.evaluation._stats import (
    PairedTest,
    paired_bootstrap_interval,
    paired_sign_test,
    percentile,
    wilson_interval,
)
from toolrelay.evaluation._suite import TaskSuite

__all__ = ["SIGNIFICANCE", "Comparison", "EvaluationReport", "ModeSummary", "TaskOutcome"]

SIGNIFICANCE = 0.05
"""A difference with a p-value below this is called significant."""

TokenSource = Literal["reported", "counted"]


def _tokens(result: RunResult, source: TokenSource) -> tuple[int, int]:
    if source == "reported":
        return result.prompt_tokens, result.completion_tokens
    return result.counted_prompt_tokens, result.counted_completion_tokens


def _mean(counts: Sequence[int | None]) -> float | None:
    """The mean of the reported counts, ``None`` when no run reported one."""
    reported = [c for c in counts if c is not None]
    return sum(reported) / len(reported) if reported else None


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


@dataclass(frozen=True, kw_only=True)
class ModeSummary:
    """One mode over every run of the evaluation.

    Attributes:
        mode: The mode's name.
        runs: Runs recorded.
        successes: Runs that succeeded.
        interval: 95% Wilson interval of the success rate.
        prompt_tokens: Mean per run.
        completion_tokens: Mean per run.
        requests: Mean model requests per run.
        cache_read_tokens: Mean prompt tokens per run the provider served from its prompt
            cache, over the runs whose answers reported it (``None``: none did).
        cache_write_tokens: Mean prompt tokens per run written to the provider's prompt
            cache (Anthropic), the same way.
        latency_p50: Median wall seconds of a run.
        latency_p95: 95th percentile wall seconds.
        invalid_arguments: Calls whose arguments did not fit (all runs).
        unknown_names: Calls of names no catalog tool has.
        not_shown: Calls of catalog tools before a search showed them (tool search only).
        failed_calls: Calls whose tool raised or timed out.
        denied: Calls a guard refused.
        retrieval_misses: Runs in which a needed tool was never shown to the model.
        errors: Runs ended by a model error or the request limit.
    """

    mode: str
    runs: int
    successes: int
    interval: tuple[float, float]
    prompt_tokens: float
    completion_tokens: float
    requests: float
    latency_p50: float
    latency_p95: float
    invalid_arguments: int
    unknown_names: int
    not_shown: int
    failed_calls: int
    denied: int
    retrieval_misses: int
    errors: int
    cache_read_tokens: float | None = None
    cache_write_tokens: float | None = None

    @property
    def success_rate(self) -> float:
        """Successes over runs (0 without runs)."""
        return self.successes / self.runs if self.runs else 0.0

    @property
    def tokens(self) -> float:
        """Mean prompt plus completion tokens per run."""
        return self.prompt_tokens + self.completion_tokens

    @classmethod
    def of(cls, mode: str, results: Sequence[RunResult], source: TokenSource) -> ModeSummary:
        """The summary of ``results`` (all of ``mode``)."""
        runs = len(results)
        tokens = [_tokens(r, source) for r in results]
        seconds = [r.seconds for r in results]

        def total(status: CallStatus) -> int:
            return sum(r.count(status) for r in results)

        return cls(
            mode=mode,
            runs=runs,
            successes=sum(r.success for r in results),
            interval=wilson_interval(sum(r.success for r in results), runs),
            prompt_tokens=sum(t[0] for t in tokens) / runs if runs else 0.0,
            completion_tokens=sum(t[1] for t in tokens) / runs if runs else 0.0,
            requests=sum(r.requests for r in results) / runs if runs else 0.0,
            latency_p50=percentile(seconds, 50) if seconds else 0.0,
            latency_p95=percentile(seconds, 95) if seconds else 0.0,
            invalid_arguments=total(CallStatus.INVALID_ARGUMENTS),
            unknown_names=total(CallStatus.UNKNOWN_NAME),
            not_shown=total(CallStatus.NOT_SHOWN),
            failed_calls=total(CallStatus.FAILED),
            denied=total(CallStatus.DENIED),
            retrieval_misses=sum(bool(r.never_shown) for r in results),
            errors=sum(r.stop in ("model_error", "request_limit") for r in results),
            cache_read_tokens=_mean([r.cache_read_tokens for r in results]),
            cache_write_tokens=_mean([r.cache_write_tokens for r in results]),
        )

    def to_json(self) -> dict[str, Any]:
        """The summary as JSON data."""
        return {
            "mode": self.mode,
            "runs": self.runs,
            "successes": self.successes,
            "success_rate": round(self.success_rate, 4),
            "interval": [round(self.interval[0], 4), round(self.interval[1], 4)],
            "tokens_per_run": {
                "prompt": round(self.prompt_tokens, 1),
                "completion": round(self.completion_tokens, 1),
                "total": round(self.tokens, 1),
                # Only where the provider reported its prompt cache (a local model does not).
                **{
                    key: _rounded(value)
                    for key, value in (
                        ("cache_read", self.cache_read_tokens),
                        ("cache_write", self.cache_write_tokens),
                    )
                    if value is not None
                },
            },
            "requests_per_run": round(self.requests, 2),
            "seconds": {"p50": round(self.latency_p50, 3), "p95": round(self.latency_p95, 3)},
            "tool_call_errors": {
                "invalid_arguments": self.invalid_arguments,
                "unknown_names": self.unknown_names,
                "not_shown": self.not_shown,
                "failed": self.failed_calls,
                "denied": self.denied,
            },
            "retrieval_misses": self.retrieval_misses,
            "errors": self.errors,
        }


@dataclass(frozen=True, kw_only=True)
class Comparison:
    """A mode against the baseline mode, paired by task.

    Attributes:
        mode: The mode.
        baseline: The baseline mode (the first of the evaluation).
        tasks: Tasks compared (those with runs in both modes).
        runs: Runs compared per mode (the repeats both modes have, over those tasks).
        success: The mode's success rate over the compared runs.
        baseline_success: The baseline's success rate over the same runs.
        interval: 95% paired bootstrap interval of the mean per-task difference in success
            rate (the mode's minus the baseline's).
        test: The exact sign-flip test over tasks (McNemar's exact test with one run each).
        tokens_change: Relative change of the tokens (e.g. -0.71), or ``None`` when the
            baseline used none.
        requests_change: Relative change of the model requests, or ``None``.
    """

    mode: str
    baseline: str
    tasks: int
    runs: int
    success: float
    baseline_success: float
    interval: tuple[float, float]
    test: PairedTest
    tokens_change: float | None
    requests_change: float | None

    @property
    def difference(self) -> float:
        """The mode's success rate minus the baseline's."""
        return self.success - self.baseline_success

    @property
    def significant(self) -> bool:
        """Whether the p-value is below :data:`SIGNIFICANCE`."""
        return self.test.p_value < SIGNIFICANCE

    @property
    def test_name(self) -> str:
        """The test, in words."""
        if self.runs == self.tasks:
            return "McNemar's exact test"
        return "exact sign-flip test"

    def sentence(self) -> str:
        """The comparison in words.

        ``search:bm25 vs all-tools: −71% tokens, +80% requests, success 0.92 vs 0.93,
        difference not significant, p=0.71 (McNemar's exact test over 40 tasks)``.
        """
        changes = [
            f"{_signed_percent(value)} {what}"
            for value, what in ((self.tokens_change, "tokens"), (self.requests_change, "requests"))
            if value is not None
        ]
        verdict = "significant" if self.significant else "not significant"
        return (
            f"{self.mode} vs {self.baseline}: {', '.join([*changes, ''])}success "
            f"{self.success:.2f} vs {self.baseline_success:.2f}, difference {verdict}, "
            f"{_p(self.test.p_value)} ({self.test_name} over {self.tasks:,} "
            f"task{'s' if self.tasks != 1 else ''})"
        )

    def to_json(self) -> dict[str, Any]:
        """The comparison as JSON data."""
        return {
            "mode": self.mode,
            "baseline": self.baseline,
            "tasks": self.tasks,
            "runs": self.runs,
            "success": round(self.success, 4),
            "baseline_success": round(self.baseline_success, 4),
            "difference": round(self.difference, 4),
            "interval": [round(self.interval[0], 4), round(self.interval[1], 4)],
            "test": self.test_name,
            "p_value": self.test.p_value,
            "significant": self.significant,
            "tasks_better": self.test.b_better,
            "tasks_worse": self.test.a_better,
            "tokens_change": None if self.tokens_change is None else round(self.tokens_change, 4),
            "requests_change": None
            if self.requests_change is None
            else round(self.requests_change, 4),
            "sentence": self.sentence(),
        }


def _signed_percent(value: float) -> str:
    text = f"{value * 100:+.0f}%"
    return "±0%" if text in ("+0%", "-0%") else text.replace("-", "−")


def _p(p_value: float) -> str:
    if p_value < 0.001:
        return "p<0.001"
    if p_value < 0.01:
        return f"p={p_value:.3f}"
    return f"p={p_value:.2f}"


@dataclass(frozen=True, kw_only=True)
class TaskOutcome:
    """One task in every mode.

    Attributes:
        task: The task's id.
        tags: Its tags.
        results: By mode: (successes, runs).
        failures: By mode: why its latest failed run failed (an error, or the first check
            that failed with its detail).
    """

    task: str
    tags: tuple[str, ...]
    results: Mapping[str, tuple[int, int]]
    failures: Mapping[str, str]

    def to_json(self) -> dict[str, Any]:
        """The outcome as JSON data."""
        return {
            "task": self.task,
            "tags": list(self.tags),
            "results": {m: {"successes": s, "runs": n} for m, (s, n) in self.results.items()},
            "failures": dict(self.failures),
        }


def _why(result: RunResult) -> str:
    if result.error is not None:
        return f"{result.stop}: {result.error}"
    failed = next((c for c in result.checks if not c.passed), None)
    if failed is not None:
        return f"{failed.check}: {failed.detail}"
    return result.stop


@dataclass(frozen=True, kw_only=True)
class EvaluationReport:
    """The report of an evaluation.

    Attributes:
        suite: The suite's name.
        description: The suite's description.
        model: The model's name.
        modes: The modes, baseline first.
        repeats: Runs planned per task and mode.
        tasks: Tasks in the evaluation.
        token_source: ``"reported"`` (by the model) or ``"counted"`` (cl100k_base).
        summaries: Per mode.
        comparisons: Each mode after the first against the first.
        outcomes: Per task, in suite order.
        missing: Planned runs without a result (not run yet, or the provider failed).
    """

    suite: str
    description: str
    model: str
    modes: tuple[str, ...]
    repeats: int
    tasks: int
    token_source: TokenSource
    summaries: tuple[ModeSummary, ...]
    comparisons: tuple[Comparison, ...]
    outcomes: tuple[TaskOutcome, ...]
    missing: int

    @classmethod
    def of(
        cls,
        suite: TaskSuite,
        results: Iterable[RunResult],
        *,
        modes: Sequence[str],
        repeats: int,
        model: str,
    ) -> EvaluationReport:
        """The report on ``results`` of the suite's tasks in ``modes``.

        Results of other tasks or modes, or of repeats from ``repeats`` on, are left out.
        """
        task_ids = [t.id for t in suite.tasks]
        wanted = set(task_ids)
        by_key = {
            (r.task, r.mode, r.repeat): r
            for r in results
            if r.task in wanted and r.mode in modes and r.repeat < repeats
        }
        kept = list(by_key.values())
        source: TokenSource = (
            "reported" if kept and all(r.usage_reported for r in kept) else "counted"
        )
        summaries = tuple(
            ModeSummary.of(m, [r for r in kept if r.mode == m], source) for m in modes
        )
        comparisons = tuple(
            comparison
            for mode in modes[1:]
            if (comparison := _compare(mode, modes[0], task_ids, by_key, repeats, source))
            is not None
        )
        outcomes = []
        for task in suite.tasks:
            runs = {m: [r for r in kept if r.task == task.id and r.mode == m] for m in modes}
            failures = {
                m: _why(max((r for r in found if not r.success), key=lambda r: r.repeat))
                for m, found in runs.items()
                if any(not r.success for r in found)
            }
            outcomes.append(
                TaskOutcome(
                    task=task.id,
                    tags=task.tags,
                    results={
                        m: (sum(r.success for r in found), len(found)) for m, found in runs.items()
                    },
                    failures=failures,
                )
            )
        return cls(
            suite=suite.name,
            description=suite.description,
            model=model,
            modes=tuple(modes),
            repeats=repeats,
            tasks=len(task_ids),
            token_source=source,
            summaries=summaries,
            comparisons=comparisons,
            outcomes=tuple(outcomes),
            missing=len(task_ids) * len(modes) * repeats - len(kept),
        )

    def to_json(self) -> dict[str, Any]:
        """The report as JSON data."""
        return {
            "suite": self.suite,
            "description": self.description,
            "model": self.model,
            "modes": list(self.modes),
            "repeats": self.repeats,
            "tasks": self.tasks,
            "token_source": self.token_source,
            "missing_runs": self.missing,
            "summaries": [s.to_json() for s in self.summaries],
            "comparisons": [c.to_json() for c in self.comparisons],
            "outcomes": [o.to_json() for o in self.outcomes],
        }


def _compare(
    mode: str,
    baseline: str,
    task_ids: Sequence[str],
    by_key: Mapping[tuple[str, str, int], RunResult],
    repeats: int,
    source: TokenSource,
) -> Comparison | None:
    counts: list[int] = []
    rates: list[float] = []
    pairs: list[tuple[RunResult, RunResult]] = []
    for task in task_ids:
        both = [
            (by_key[(task, mode, r)], by_key[(task, baseline, r)])
            for r in range(repeats)
            if (task, mode, r) in by_key and (task, baseline, r) in by_key
        ]
        if not both:
            continue
        difference = sum(a.success for a, _ in both) - sum(b.success for _, b in both)
        counts.append(difference)
        rates.append(difference / len(both))
        pairs.extend(both)
    if not pairs:
        return None

    def change(value: Any) -> float | None:
        mine = sum(value(a) for a, _ in pairs)
        theirs = sum(value(b) for _, b in pairs)
        return mine / theirs - 1 if theirs else None

    return Comparison(
        mode=mode,
        baseline=baseline,
        tasks=len(counts),
        runs=len(pairs),
        success=sum(a.success for a, _ in pairs) / len(pairs),
        baseline_success=sum(b.success for _, b in pairs) / len(pairs),
        interval=paired_bootstrap_interval(rates),
        test=paired_sign_test(counts),
        tokens_change=change(lambda r: sum(_tokens(r, source))),
        requests_change=change(lambda r: r.requests),
    )
