"""What installing toolrelay costs: time, space on disk and packages, in fresh environments.

For each target, on this machine:

1. a new virtual environment (``python -m venv``, in a temporary folder), whose size and
   packages (pip, and setuptools before Python 3.12) are the baseline;
2. ``pip install --no-cache-dir -e "CHECKOUT[EXTRAS]"``, as README's set-up command installs
   from a checkout, with pip's cache off so that every package is downloaded and unpacked as on
   a new machine (pip's index and find-links settings are this machine's);

and measured:

- **install time**: the wall-clock seconds of that ``pip install`` (resolving, downloading,
  building toolrelay's editable wheel, unpacking), once; network and load make it vary by a
  few seconds from run to run;
- **size**: the space the whole environment takes on disk (allocated blocks, each file once),
  in MB (10^6 bytes), the baseline included, which is given too;
- **dependencies**: the distributions installed besides toolrelay and the baseline's.

Targets: ``core`` (no extra: tools, the loop, guards, BM25 search), ``dev`` (the extras of
README's first set-up command: the command line, tests and lint) and ``embeddings``.

Run: ``python benchmarks/install.py [--only TARGET ...]``. Writes
``benchmarks/results/install.json`` and ``.md`` and the install section of README.md
(:func:`docs_sections`); ``--only`` measures those targets and keeps the others' figures from
the committed results.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
README = ROOT / "README.md"

sys.path.insert(0, str(HERE))
from docs_section import Section, write_sections  # noqa: E402

TARGETS = {"core": "", "dev": "dev", "embeddings": "embeddings"}
"""Each target's extras, as ``pip install -e ".[EXTRAS]"`` takes them ("" for none)."""

LABELS = {
    "core": "core, no extra",
    "dev": "README's first command",
    "embeddings": "embeddings",
}

# The distributions an environment's interpreter sees, by canonical name (PEP 503).
_LISTED = (
    "import json, re, importlib.metadata as m; print(json.dumps(sorted("
    "{re.sub(r'[-_.]+', '-', d.metadata['Name']).lower() for d in m.distributions()})))"
)


def readme_extras(readme: Path = README) -> str:
    """The extras README's first set-up command installs (``pip install -e ".[dev]"``)."""
    found = re.search(r"pip install -e ['\"]\.\[([^\]]*)\]['\"]", readme.read_text("utf-8"))
    if found is None:
        raise ValueError(f'{readme.name} has no `pip install -e ".[EXTRAS]"` command')
    return found[1]


def disk_megabytes(folder: Path) -> float:
    """The space ``folder`` takes on disk, in MB: allocated blocks, each file counted once."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for directory, _, files in os.walk(folder):
        for name in [".", *files]:
            stat = os.lstat(os.path.join(directory, name))
            if (stat.st_dev, stat.st_ino) not in seen:
                seen.add((stat.st_dev, stat.st_ino))
                total += stat.st_blocks * 512
    return round(total / 1e6, 1)


def installed(python: Path) -> list[str]:
    """The names of the distributions ``python`` sees, canonical and sorted."""
    listed = subprocess.run(
        [str(python), "-c", _LISTED], capture_output=True, text=True, check=True
    ).stdout
    names: list[str] = json.loads(listed)
    return names


def dependencies(after: Iterable[str], baseline: Iterable[str]) -> list[str]:
    """What an install added: ``after`` less the baseline's packages and toolrelay itself."""
    return sorted(set(after) - set(baseline) - {"toolrelay"})


def measure(target: str, checkout: Path = ROOT) -> dict[str, Any]:
    """Install ``target`` into a new environment and measure it (see the module's docstring)."""
    extras = TARGETS[target]
    spec = f"{checkout}[{extras}]" if extras else str(checkout)
    with tempfile.TemporaryDirectory(prefix=f"toolrelay-install-{target}-") as folder:
        venv = Path(folder) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        python = venv / "bin" / "python"
        baseline, baseline_mb = installed(python), disk_megabytes(venv)
        started = time.monotonic()
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--no-cache-dir", "-e", spec],
            check=True,
            env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        )
        seconds = time.monotonic() - started
        added = dependencies(installed(python), baseline)
        return {
            "extras": extras,
            "command": f"pip install -e '.[{extras}]'" if extras else "pip install -e .",
            "install_seconds": round(seconds, 1),
            "size_mb": disk_megabytes(venv),
            "baseline_mb": baseline_mb,
            "dependency_count": len(added),
            "dependencies": added,
        }


def merged(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    """``new``'s targets over ``old``'s: a partial run keeps the other targets' figures."""
    targets = {**(old or {}).get("targets", {}), **new["targets"]}
    return {"targets": {name: targets[name] for name in TARGETS if name in targets}}


def table(data: dict[str, Any]) -> str:
    lines = [
        "| install | command | dependencies | on disk | time |",
        "|---|---|---:|---:|---:|",
    ]
    for name, row in data["targets"].items():
        lines.append(
            f"| {LABELS[name]} | `{row['command']}` | {row['dependency_count']} | "
            f"{row['size_mb']:,.0f} MB | {row['install_seconds']:.0f} s |"
        )
    return "\n".join(lines)


def docs_sections(data: dict[str, Any] | None = None) -> list[Section]:
    """The install section of README.md (default: from the committed results)."""
    if data is None:
        data = json.loads((RESULTS / "install.json").read_text(encoding="utf-8"))
    rows = list(data["targets"].values())
    baseline = min(row["baseline_mb"] for row in rows)
    cpus = max(row["meta"]["cpus"] for row in rows)
    text = (
        f"What each install costs, in a fresh virtual environment on a {cpus}-core machine "
        "with every package downloaded (pip's cache off): the packages it adds, the "
        f"environment's size on disk (an empty one takes {baseline:.0f} MB) and the time "
        "`pip install` took, once (the network makes it vary) (`python benchmarks/install.py`; "
        "the packages are listed in `benchmarks/results/install.md`):\n\n"
        f"{table(data)}"
    )
    return [Section(name="install", page=README, text=text)]


def results_markdown(data: dict[str, Any]) -> str:
    parts = ["# What installing costs", "", table(data), ""]
    for name, row in data["targets"].items():
        meta = row["meta"]
        parts += [
            f"## {LABELS[name]}: `{row['command']}`",
            "",
            f"Python {meta['python']}, pip {meta['pip']}, on {meta['platform']} "
            f"({meta['cpus']} CPUs), measured {meta['date']}; an empty environment "
            f"takes {row['baseline_mb']:.1f} MB.",
            "",
            ", ".join(f"`{name}`" for name in row["dependencies"]) or "None.",
            "",
        ]
    return "\n".join(parts)


def write(data: dict[str, Any], results: Path = RESULTS) -> None:
    """``install.json`` and ``install.md`` in ``results``."""
    results.mkdir(parents=True, exist_ok=True)
    (results / "install.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    (results / "install.md").write_text(results_markdown(data), encoding="utf-8")


def _meta() -> dict[str, Any]:
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "--version"], capture_output=True, text=True, check=True
    ).stdout.split()[1]
    return {
        "python": platform.python_version(),
        "pip": pip,
        "platform": f"{platform.system()} {platform.machine()}",
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only",
        nargs="+",
        choices=list(TARGETS),
        default=list(TARGETS),
        help="measure these targets; the others keep their committed figures",
    )
    args = parser.parse_args()
    if TARGETS["dev"] != readme_extras():
        parser.error(f"README's first command installs .[{readme_extras()}]: update TARGETS")
    new: dict[str, Any] = {"targets": {}}
    for target in args.only:
        print(f"measuring {target}...", file=sys.stderr, flush=True)
        new["targets"][target] = {**measure(target), "meta": _meta()}
    path = RESULTS / "install.json"
    old = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    data = merged(old, new)
    write(data)
    write_sections(docs_sections(data))
    print(table(data))


if __name__ == "__main__":
    main()
