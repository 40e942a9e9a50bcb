"""The SmolLM2 table is what the committed runs give: its JSON is recomputed from them here.

``benchmarks/eval_smollm2.py`` appends every run to ``benchmarks/results/eval_smollm2/`` and
writes the JSON that docs/evaluation.md's section is rendered from (checked by
test_docs_section.py). A JSON left from other runs than the ones committed would quote
figures nobody can trace; this recomputes each suite's report from the run files.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolrelay.evaluation import EvaluationReport
from toolrelay.evaluation._results import ResultsFile

from ._scripts import BENCHMARKS, load_script

benchmark = load_script(BENCHMARKS / "eval_smollm2.py", "eval_smollm2")
DATA: dict[str, Any] = json.loads((benchmark.RESULTS / "eval_smollm2.json").read_text("utf-8"))
SUITES = {s.name: s for s in benchmark.suites(benchmark.BFCL_TASKS, quick=False)}


@pytest.mark.parametrize("written", DATA["suites"], ids=lambda s: s["suite"])
def test_the_json_is_the_report_of_the_committed_runs(written: dict[str, Any]) -> None:
    suite = SUITES[written["suite"]]
    store = ResultsFile(
        benchmark.RESULTS / "eval_smollm2" / f"{suite.name}.jsonl",
        suite=suite.name,
        model=DATA["model"]["name"],
    )
    results = list(store.results.values())
    assert len(results) == len(suite.tasks) * len(written["modes"]), "runs are missing"
    report = EvaluationReport.of(
        suite, results, modes=written["modes"], repeats=1, model=DATA["model"]["name"]
    )
    recomputed = json.loads(json.dumps(report.to_json(), ensure_ascii=False))
    for key, value in recomputed.items():
        assert written[key] == value, f"{suite.name}: {key} is not what the runs give"
    behaviour = {
        mode: benchmark._behaviour([r for r in results if r.mode == mode])
        for mode in written["modes"]
    }
    assert written["behaviour"] == behaviour
