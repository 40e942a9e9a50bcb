"""One call for a whole evaluation: run what is missing, keep it, report on everything."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from toolrelay.evaluation._report import EvaluationReport
from toolrelay.evaluation._results import ResultsFile
from toolrelay.evaluation._runner import DEFAULT_MAX_REQUESTS, Mode, RunResult, TaskRunner
from toolrelay.evaluation._suite import TaskSuite
from toolrelay.models import ChatModel
from toolrelay.prompt import ChatOptions

__all__ = ["evaluate"]


async def evaluate(
    suite: TaskSuite,
    model: ChatModel,
    *,
    modes: Sequence[Mode],
    repeats: int = 1,
    results: str | Path | None = None,
    model_label: str | None = None,
    max_requests: int = DEFAULT_MAX_REQUESTS,
    concurrency: int = 1,
    options: ChatOptions | None = None,
    on_result: Callable[[RunResult], None] | None = None,
) -> EvaluationReport:
    """Run every task of ``suite`` ``repeats`` times in each mode and report.

    With ``results``, each run is appended to that JSONL file as it finishes and the runs the
    file already holds are not made again, so an interrupted evaluation resumes; the report
    covers every run of the file that belongs to this evaluation. Runs the provider could not
    serve are left out (the report's ``missing`` counts them) and made by the next call.

    Args:
        suite: The tasks.
        model: The model.
        modes: The modes; the first is the baseline the others are compared with.
        repeats: Runs per task and mode.
        results: The results file, or ``None`` to keep results in memory only.
        model_label: The model's name in the results (default: its own name).
        max_requests: Model requests per run before the run fails.
        concurrency: Runs at once.
        options: Chat options of every request.
        on_result: Told about each new result.

    Raises:
        ConfigurationError: A bad setting, or a results file of another suite or model.
        AuthenticationError: The provider refused the credentials.
    """
    runner = TaskRunner(
        suite,
        model,
        modes=modes,
        repeats=repeats,
        model_label=model_label,
        max_requests=max_requests,
        concurrency=concurrency,
        options=options,
    )
    store = (
        ResultsFile(results, suite=suite.name, model=runner.model_label)
        if results is not None
        else None
    )
    done: list[RunResult] = list(store.results.values()) if store is not None else []
    keys = store.missing(runner.keys) if store is not None else runner.keys

    def keep(result: RunResult) -> None:
        if store is not None:
            store.append(result)
        if on_result is not None:
            on_result(result)

    new, _ = await runner.run(keys, keep)
    return EvaluationReport.of(
        suite,
        [*done, *new],
        modes=[m.name for m in runner.modes],
        repeats=repeats,
        model=runner.model_label,
    )
