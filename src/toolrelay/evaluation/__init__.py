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

Checks: :class:`ExpectedCalls` of :class:`ExpectedCall` s (tools and argument predicates, in
order or not, forbidden tools), :class:`StateCheck` (the back end after the run), and
:class:`AnswerCheck` / :func:`answer_contains` (the final answer); a check of your own is any
callable taking the run's trace and returning its verdict (see
:mod:`~toolrelay.evaluation._checks`). The BFCL-derived suite, its calls scored as BFCL's AST
checker scores them, is built by :mod:`~toolrelay.evaluation._bfcl`.
"""

from toolrelay.evaluation._checks import (
    AnswerCheck,
    ExpectedCall,
    ExpectedCalls,
    StateCheck,
    answer_contains,
)
from toolrelay.evaluation._evaluate import evaluate
from toolrelay.evaluation._report import EvaluationReport
from toolrelay.evaluation._runner import Mode
from toolrelay.evaluation._suite import Task, TaskEnvironment, TaskSuite

__all__ = [
    "AnswerCheck",
    "EvaluationReport",
    "ExpectedCall",
    "ExpectedCalls",
    "Mode",
    "StateCheck",
    "Task",
    "TaskEnvironment",
    "TaskSuite",
    "answer_contains",
    "evaluate",
]
