"""The fault suite's figures: every campaign of ``tests/faults/``, run once, counted.

Each module ``tests/faults/test_*.py`` with a ``campaign(seed)`` coroutine is a campaign: it
generates its cases from the seed, runs them against the library and returns a ``Ledger``
(``tests/faults/ledger.py``) of the cases it tried and the promises that broke, by kind. The
suite's own tests fail on any broken promise; this script runs the same campaigns and
publishes what they tried and found: ``benchmarks/results/reliability.json`` and ``.md``,
and the figures section of ``docs/reliability.md``.

Run it where ``.ci/services.sh`` runs (some campaigns need Redis and PostgreSQL):
``.venv/bin/python benchmarks/reliability.py [--seed N] [--only NAME ...]``. ``--seed``
explores other cases (the published figures use the suite's fixed seed); ``--only`` runs some
campaigns and writes nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
FAULTS = ROOT / "tests" / "faults"
PAGE = ROOT / "docs" / "reliability.md"

sys.path.insert(0, str(HERE))
from docs_section import Section, write_sections  # noqa: E402

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # tests.faults, as the suite imports it


def campaign_modules() -> list[str]:
    """The campaign modules of tests/faults/, by name (``test_malformed_calls``...)."""
    names = []
    for path in sorted(FAULTS.glob("test_*.py")):
        if "async def campaign(" in path.read_text(encoding="utf-8"):
            names.append(path.stem)
    return names


async def run_campaign(module_name: str, seed: int | None) -> dict[str, Any]:
    """Run one module's campaign; its ledger as JSON, with the seconds it took."""
    module = importlib.import_module(f"tests.faults.{module_name}")
    started = time.perf_counter()
    ledger = await (module.campaign() if seed is None else module.campaign(seed=seed))
    seconds = time.perf_counter() - started
    return {"module": module_name, **ledger.to_json(), "seconds": round(seconds, 1)}


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def table(data: dict[str, Any]) -> str:
    """One row per campaign: what it tried, and each kind of broken promise it counted."""
    kinds = list(data["failure_kinds"])
    header = "| campaign | tried | " + " | ".join(k.replace("_", " ") for k in kinds) + " |"
    lines = [header, "|---|---:|" + "---:|" * len(kinds)]
    for run in data["campaigns"]:
        counts = " | ".join(_count(run["failures"][k]) for k in kinds)
        lines.append(f"| {run['campaign']} | {run['tried']:,} {run['unit']} | {counts} |")
    return "\n".join(lines)


def observed(data: dict[str, Any]) -> str:
    """The documented properties the campaigns measured (not failures), as a list."""
    lines = []
    for run in data["campaigns"]:
        for what, value in run["observed"].items():
            lines.append(f"- {run['campaign']}: {what}: {_count(value)}")
    return "\n".join(lines)


_LOST = "conversations whose messages were lost"
_RERUN = "operations run again"


def persistence_table(data: dict[str, Any]) -> str:
    """The Redis campaign's losses: a row per persistence mode, a column per fault, each cell
    conversations whose messages were lost / keyed operations run again."""
    runs = [r for r in data["campaigns"] if r["module"] == "test_redis_faults"]
    if not runs:
        return ""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for key, value in runs[0]["observed"].items():
        what, _, rest = key.partition(", ")
        mode, _, fault = rest.rpartition(", ")
        if what in (_LOST, _RERUN) and mode:
            found.setdefault((mode, fault), {})[what] = value
    modes = list(dict.fromkeys(mode for mode, _ in found))
    faults = list(dict.fromkeys(fault for _, fault in found))
    lines = ["| persistence | " + " | ".join(faults) + " |", "|---|" + "---:|" * len(faults)]
    for mode in modes:
        cells = [
            f"{found[mode, f].get(_LOST, '-')} / {found[mode, f].get(_RERUN, '-')}" for f in faults
        ]
        lines.append(f"| {mode} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# Campaigns whose measurements the page shows in a table of their own, or leaves to the
# results file (counts per index).
_NOT_LISTED = {"test_redis_faults", "test_tenants"}


def docs_text(data: dict[str, Any]) -> str:
    total = sum(run["failures"][k] for run in data["campaigns"] for k in data["failure_kinds"])
    tried = ", ".join(f"{run['tried']:,} {run['unit']}" for run in data["campaigns"])
    machine = data["machine"]
    text = (
        "## The figures\n\n"
        f"The fault suite's campaigns, run with seed {data['seed']} on {machine['cpus']} "
        f"cores (Python {machine['python']}): {tried} tried, "
        f"{total:,} promises broken.\n\n"
        f"{table(data)}\n\n"
        "What the failure kinds count:\n\n"
        + "\n".join(f"- *{k.replace('_', ' ')}*: {why}" for k, why in data["failure_kinds"].items())
    )
    listed = {**data, "campaigns": [r for r in data["campaigns"] if r["module"] not in _NOT_LISTED]}
    if observed(listed):
        text += "\n\nMeasured on the way: documented properties, not failures.\n\n" + observed(
            listed
        )
    if persistence_table(data):
        text += (
            "\n\nWhat Redis keeps when it fails mid-run, per persistence mode: conversations "
            "whose messages were lost / keyed operations run again. Where "
            "[scaling.md](scaling.md#persistence-what-a-restart-keeps) says a mode keeps "
            "writes, a loss counts as a failure in the table above.\n\n" + persistence_table(data)
        )
    return (
        text + "\n\nRegenerate with `.venv/bin/python benchmarks/reliability.py` (Redis and "
        "PostgreSQL running: `.ci/services.sh`); details in `benchmarks/results/reliability.md`."
    )


def docs_sections(data: dict[str, Any] | None = None) -> list[Section]:
    """The figures section of docs/reliability.md (default: from the committed results)."""
    if data is None:
        data = json.loads((RESULTS / "reliability.json").read_text(encoding="utf-8"))
    return [Section(name="reliability", page=PAGE, text=docs_text(data))]


def results_markdown(data: dict[str, Any]) -> str:
    seconds = "\n".join(f"- {r['campaign']}: {r['seconds']} s" for r in data["campaigns"])
    return (
        f"# Fault suite (seed {data['seed']})\n\n{table(data)}\n\n"
        f"{observed(data) or 'Nothing else measured.'}\n\nSeconds per campaign:\n\n{seconds}\n"
    )


async def collect(names: list[str], seed: int | None) -> list[dict[str, Any]]:
    runs = []
    for name in names:
        print(f"[reliability] {name} ...", file=sys.stderr, flush=True)
        run = await run_campaign(name, seed)
        print(
            f"[reliability] {name}: {run['tried']:,} {run['unit']}, {run['failures']}, "
            f"{run['seconds']} s",
            file=sys.stderr,
            flush=True,
        )
        runs.append(run)
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=None, help="Another seed than the suite's.")
    parser.add_argument("--only", nargs="*", help="Campaign modules to run; nothing is written.")
    args = parser.parse_args()
    from tests.faults.ledger import FAILURES, SEED

    names = args.only or campaign_modules()
    unknown = sorted(set(names) - set(campaign_modules()))
    if unknown:
        parser.error(f"no such campaign: {', '.join(unknown)}; one of {campaign_modules()}")
    data = {
        "seed": SEED if args.seed is None else args.seed,
        "machine": {
            "python": platform.python_version(),
            "platform": f"{platform.system()} {platform.machine()}",
            "cpus": os.cpu_count(),
        },
        "failure_kinds": FAILURES,
        "campaigns": asyncio.run(collect(names, args.seed)),
    }
    print(table(data))
    if args.only or args.seed is not None:
        return
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "reliability.json").write_text(
        json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    (RESULTS / "reliability.md").write_text(results_markdown(data), encoding="utf-8")
    write_sections(docs_sections(data))


if __name__ == "__main__":
    main()
