"""What checking input schemas costs: loading catalogs, building function tools, one schema.

Every ``ToolDefinition`` checks its input schema against the JSON Schema 2020-12 meta-schema
(``toolrelay.tools._meta_schema``). Measured here, in CPU time of the process
(``time.process_time``), medians of alternating repeats so machine load hits both sides alike:

- loading each benchmark catalog with ``toolrelay``'s catalog loader (what ``toolrelay tools``,
  ``lint`` and ``search`` do), with the check and with it switched off;
- ``FunctionTool.from_function`` of a small ``@tool`` function, which a client does for each
  request that passes a function rather than a tool, with and without the check;
- one schema through each path: the first pass alone (a typical catalog schema), the
  validator on a schema the first pass leaves to it, and that schema again (a cached
  verdict).

Run: ``python benchmarks/schema_checks.py [--quick]``. Writes
``benchmarks/results/schema_checks.json`` and ``.md`` (``--quick``: a few repeats, printed only).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from toolrelay.cli._catalogs import load_catalog
from toolrelay.tools import FunctionTool, tool
from toolrelay.tools import _base as base
from toolrelay.tools import _meta_schema as meta_schema

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
DATA = HERE / "data"
DATASETS = ("bfcl", "stabletoolbench", "acebench_zh", "hammerbench_zh", "restbench")


@tool
def get_value(key: str) -> str:
    """Look up the value stored under a key.

    Args:
        key: The key, e.g. "k1".
    """
    return key


@contextmanager
def unchecked() -> Iterator[None]:
    """Definitions built inside skip the schema check."""
    real = base.check_input_schema
    base.check_input_schema = lambda tool, schema: None
    try:
        yield
    finally:
        base.check_input_schema = real


def cpu_seconds(run: Callable[[], Any], times: int) -> float:
    started = time.process_time()
    for _ in range(times):
        run()
    return (time.process_time() - started) / times


def paired(run: Callable[[], Any], times: int, repeats: int) -> tuple[float, float]:
    """Median CPU seconds per run (checked, unchecked), the two alternating."""
    run()  # warm-up: imports, caches
    checked, plain = [], []
    for _ in range(repeats):
        checked.append(cpu_seconds(run, times))
        with unchecked():
            plain.append(cpu_seconds(run, times))
    return statistics.median(checked), statistics.median(plain)


def catalogs(repeats: int) -> list[dict[str, Any]]:
    rows = []
    for name in DATASETS:
        folder = DATA / name
        tools = len(load_catalog(str(folder)).entries)
        checked, plain = paired(lambda folder=folder: load_catalog(str(folder)), 1, repeats)
        rows.append(
            {
                "catalog": name,
                "tools": tools,
                "load_ms_unchecked": round(plain * 1e3, 1),
                "load_ms_checked": round(checked * 1e3, 1),
                "check_ms": round((checked - plain) * 1e3, 1),
                "check_share": round((checked - plain) / plain, 3),
                "check_us_per_tool": round((checked - plain) * 1e6 / tools, 2),
            }
        )
    return rows


def function_tool(repeats: int, times: int) -> dict[str, Any]:
    checked, plain = paired(lambda: FunctionTool.from_function(get_value), times, repeats)
    return {
        "build_us_unchecked": round(plain * 1e6, 2),
        "build_us_checked": round(checked * 1e6, 2),
        "check_us": round((checked - plain) * 1e6, 2),
    }


def one_schema(repeats: int, times: int) -> dict[str, Any]:
    lines = (DATA / "bfcl" / "tools.jsonl").read_text(encoding="utf-8").splitlines()
    typical = json.loads(lines[0])["parameters"]
    # "$id" is a keyword the first pass leaves to the validator.
    rare = {**typical, "$id": "https://example.com/tools/get_user_info"}
    assert meta_schema._is_schema(typical)
    assert not meta_schema._is_schema(rare)

    def cold() -> None:
        meta_schema._problems_of_text.cache_clear()
        meta_schema.input_schema_problems(rare)

    meta_schema.input_schema_problems(rare)
    first_pass = [cpu_seconds(lambda: meta_schema.input_schema_problems(typical), times)]
    validator = [cpu_seconds(cold, max(times // 100, 5))]
    cached = [cpu_seconds(lambda: meta_schema.input_schema_problems(rare), times)]
    for _ in range(repeats - 1):
        first_pass.append(cpu_seconds(lambda: meta_schema.input_schema_problems(typical), times))
        validator.append(cpu_seconds(cold, max(times // 100, 5)))
        cached.append(cpu_seconds(lambda: meta_schema.input_schema_problems(rare), times))
    return {
        "first_pass_us": round(statistics.median(first_pass) * 1e6, 2),
        "validator_us": round(statistics.median(validator) * 1e6, 1),
        "cached_verdict_us": round(statistics.median(cached) * 1e6, 2),
    }


def markdown(result: dict[str, Any]) -> str:
    meta = result["meta"]
    lines = [
        "# What checking input schemas costs",
        "",
        f"Python {meta['python']} on {meta['platform']} ({meta['cpus']} CPUs, load average "
        f"{meta['load_average']} at start); medians of {meta['repeats']} alternating repeats, "
        "CPU time of the process (`benchmarks/schema_checks.py` lists the setup).",
        "",
        "## Loading a catalog (`toolrelay tools`, `lint`, `search`)",
        "",
        "| catalog | tools | load, unchecked (ms) | load, checked (ms) | check (ms) | share "
        "| µs per tool |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["catalogs"]:
        lines.append(
            f"| {r['catalog']} | {r['tools']:,} | {r['load_ms_unchecked']:.1f} | "
            f"{r['load_ms_checked']:.1f} | {r['check_ms']:.1f} | {r['check_share']:.0%} | "
            f"{r['check_us_per_tool']:.2f} |"
        )
    f, s = result["function_tool"], result["one_schema"]
    lines += [
        "",
        "## One definition",
        "",
        "| what | µs |",
        "|---|---:|",
        f"| `FunctionTool.from_function` of a one-argument `@tool`, unchecked | "
        f"{f['build_us_unchecked']:.1f} |",
        f"| the same, checked | {f['build_us_checked']:.1f} |",
        f"| a typical catalog schema, first pass (no validator) | {s['first_pass_us']:.1f} |",
        f"| a schema the first pass leaves to the validator (`$id`), first time | "
        f"{s['validator_us']:,.0f} |",
        f"| that schema again (a cached verdict) | {s['cached_verdict_us']:.1f} |",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few repeats, for a smoke run")
    args = parser.parse_args()
    repeats = 3 if args.quick else 15
    times = 200 if args.quick else 2000
    load = round(os.getloadavg()[0], 2)
    result = {
        "meta": {
            "python": platform.python_version(),
            "platform": f"{platform.system()} {platform.machine()}",
            "cpus": os.cpu_count(),
            "load_average": load,
            "repeats": repeats,
            "quick": args.quick,
        },
        "catalogs": catalogs(repeats),
        "function_tool": function_tool(repeats, times),
        "one_schema": one_schema(repeats, times),
    }
    table = markdown(result)
    if not args.quick:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "schema_checks.json").write_text(
            json.dumps(result, indent=2) + "\n", encoding="utf-8"
        )
        (RESULTS / "schema_checks.md").write_text(table, encoding="utf-8")
    sys.stdout.write(table)


if __name__ == "__main__":
    main()
