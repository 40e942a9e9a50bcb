"""Task-level evaluation: does a model get the job done, in each way of showing it the tools?

A :class:`TaskSuite` holds tasks (a request, the tool context, and checks that decide
success) and the environments they run in (tools bound to a fresh back end for every run).
:func:`evaluate` runs every task some number of times in each :class:`Mode` (every tool on
every request, or tool search over an index) through the real
:class:`~toolrelay.client.ChatClient`, and reports per mode the success rate with its 95%
interval, tokens, model requests, wall time, tool-call errors and retrieval misses, and each
mode against the first, paired by task::

    report = await evaluate(
        suite,
        OpenAIChatModel("gpt-4.1-mini"),
        modes=[Mode.all_tools(), Mode.search()],
        repeats=3,
        results="results.jsonl",  # appended as runs finish; a rerun resumes
    )
    print(report.comparisons[0].sentence())
    # search:hybrid vs all-tools: −71% tokens, +80% requests, success 0.92 vs 0.93,
    # difference not significant, p=0.71 (exact sign-flip test over 40 tasks)

Checks: :class:`ExpectedCalls` (tools and argument predicates, in order or not, forbidden
tools), :class:`StateCheck` (the back end after the run), :class:`AnswerCheck` /
:func:`answer_contains`, and :class:`BfclCalls` (BFCL's AST checker; :func:`bfcl_suite` builds
the BFCL-derived suite). The statistics are in :func:`wilson_interval`,
:func:`paired_sign_test` and :func:`paired_bootstrap_interval`.
"""

from toolrelay.evaluation._bfcl import BfclCall, BfclCalls, bfcl_problem, bfcl_suite
from toolrelay.evaluation._checks import (
    AnswerCheck,
    CallRecord,
    CallStatus,
    Check,
    CheckResult,
    ExpectedCall,
    ExpectedCalls,
    NamesTools,
    RunTrace,
    StateCheck,
    answer_contains,
)
from toolrelay.evaluation._evaluate import evaluate
from toolrelay.evaluation._report import (
    SIGNIFICANCE,
    Comparison,
    EvaluationReport,
    ModeSummary,
    TaskOutcome,
)
from toolrelay.evaluation._results import ResultsFile
from toolrelay.evaluation._runner import (
    ALL_TOOLS,
    DEFAULT_MAX_REQUESTS,
    Mode,
    RunKey,
    RunResult,
    TaskRunner,
    Unrecorded,
)
from toolrelay.evaluation._stats import (
    PairedTest,
    paired_bootstrap_interval,
    paired_sign_test,
    percentile,
    wilson_interval,
)
from toolrelay.evaluation._suite import (
    CannedTool,
    EnvironmentFactory,
    Task,
    TaskEnvironment,
    TaskSuite,
)

__all__ = [
    "ALL_TOOLS",
    "DEFAULT_MAX_REQUESTS",
    "SIGNIFICANCE",
    "AnswerCheck",
    "BfclCall",
    "BfclCalls",
    "CallRecord",
    "CallStatus",
    "CannedTool",
    "Check",
    "CheckResult",
    "Comparison",
    "EnvironmentFactory",
    "EvaluationReport",
    "ExpectedCall",
    "ExpectedCalls",
    "Mode",
    "ModeSummary",
    "NamesTools",
    "PairedTest",
    "ResultsFile",
    "RunKey",
    "RunResult",
    "RunTrace",
    "StateCheck",
    "Task",
    "TaskEnvironment",
    "TaskOutcome",
    "TaskRunner",
    "TaskSuite",
    "Unrecorded",
    "answer_contains",
    "bfcl_problem",
    "bfcl_suite",
    "evaluate",
    "paired_bootstrap_interval",
    "paired_sign_test",
    "percentile",
    "wilson_interval",
]
