"""What checking input schemas costs: loading catalogs, building function tools, one schema.

Every ``ToolDefinition`` checks its input schema against the meta-schema of its JSON Schema
draft with ``jsonschema_rs`` (``toolrelay.tools._meta_schema``). Measured here, in CPU time of
the process (``time.process_time``), medians of repeats (alternating where two sides are
compared, so machine load hits both alike):

- each benchmark catalog: loading it with ``toolrelay``'s catalog loader with the check
  switched off (what ``toolrelay tools``, ``lint`` and ``search`` do, less the check), and
  checking every schema it holds (what the check adds to the load);
- ``FunctionTool.from_function`` of a small ``@tool`` function, which a client does for each
  request that passes a function rather than a tool, with and without the check;
- one schema: a typical catalog schema, the same with a rarer keyword (``$id``), and an
  invalid one whose problems are worded.

Run: ``python benchmarks/schema_checks.py [--quick]``. Writes
``benchmarks/results/schema_checks.json`` and ``.md``, and the cost section of ``docs/tools.md``
(:func:`docs_sections`); ``--quick``: a few repeats, printed only.
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
from toolrelay.tools._meta_schema import check_input_schema, input_schema_problems

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
DATA = HERE / "data"
PAGE = HERE.parent / "docs" / "tools.md"

sys.path.insert(0, str(HERE))
from docs_section import Section, spelled, write_sections  # noqa: E402

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
        folder = str(DATA / name)
        schemas = [d.input_schema for d in load_catalog(folder).definitions()]

        def check(schemas: list[Any] = schemas) -> None:
            for schema in schemas:
                check_input_schema("t", schema)

        with unchecked():
            load_catalog(folder)  # warm-up
            load = statistics.median(
                cpu_seconds(lambda f=folder: load_catalog(f), 1) for _ in range(repeats)
            )
        check()
        cost = statistics.median(cpu_seconds(check, 1) for _ in range(repeats))
        rows.append(
            {
                "catalog": name,
                "tools": len(schemas),
                "load_ms_unchecked": round(load * 1e3, 1),
                "check_ms": round(cost * 1e3, 1),
                "check_share": round(cost / load, 3),
                "check_us_per_tool": round(cost * 1e6 / len(schemas), 2),
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
    rare = {**typical, "$id": "https://example.com/tools/get_user_info"}
    invalid = {
        "type": "object",
        "properties": {"city": {"type": "objekt"}, "days": {"type": "integer", "minimum": "1"}},
        "required": "city",
    }
    cases = {"typical_us": typical, "rare_keyword_us": rare, "invalid_us": invalid}
    assert input_schema_problems(typical) == input_schema_problems(rare) == ()
    assert len(input_schema_problems(invalid)) == 3
    samples: dict[str, list[float]] = {key: [] for key in cases}
    for _ in range(repeats):
        for key, schema in cases.items():
            samples[key].append(cpu_seconds(lambda s=schema: input_schema_problems(s), times))
    return {key: round(statistics.median(v) * 1e6, 2) for key, v in samples.items()}


def markdown(result: dict[str, Any]) -> str:
    meta = result["meta"]
    lines = [
        "# What checking input schemas costs",
        "",
        f"Python {meta['python']} on {meta['platform']} ({meta['cpus']} CPUs, load average "
        f"{meta['load_average']} at start); medians of {meta['repeats']} repeats, "
        "CPU time of the process (`benchmarks/schema_checks.py` lists the setup).",
        "",
        "## Loading a catalog (`toolrelay tools`, `lint`, `search`)",
        "",
        "| catalog | tools | load, unchecked (ms) | check (ms) | share | µs per tool |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in result["catalogs"]:
        lines.append(
            f"| {r['catalog']} | {r['tools']:,} | {r['load_ms_unchecked']:.1f} | "
            f"{r['check_ms']:.1f} | {r['check_share']:.0%} | {r['check_us_per_tool']:.2f} |"
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
        f"| a typical catalog schema, checked | {s['typical_us']:.1f} |",
        f"| the same with a rarer keyword (`$id`) | {s['rare_keyword_us']:.1f} |",
        f"| an invalid schema (three problems, worded) | {s['invalid_us']:.1f} |",
    ]
    return "\n".join(lines) + "\n"


def docs_sections(data: dict[str, Any] | None = None) -> list[Section]:
    """The cost section of docs/tools.md (default: from the committed results)."""
    if data is None:
        data = json.loads((RESULTS / "schema_checks.json").read_text(encoding="utf-8"))
    rows = data["catalogs"]
    per_tool = [r["check_us_per_tool"] for r in rows]
    text = (
        f"The check costs {min(per_tool):.1f} to {max(per_tool):.1f} µs per schema on the "
        f"{spelled(len(rows))} benchmark catalogs (up to {max(r['tools'] for r in rows):,} "
        "tools), so catalogs of thousands of tools and definitions built on every request stay "
        "fast (`benchmarks/schema_checks.py`; figures in `benchmarks/results/schema_checks.md`)."
    )
    return [Section(name="schema-checks", page=PAGE, text=text)]


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
        write_sections(docs_sections(result))
    sys.stdout.write(table)


if __name__ == "__main__":
    main()
