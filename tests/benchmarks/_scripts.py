"""Loading the benchmark scripts (files, not an installed package) as modules for tests."""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
RETRIEVAL = BENCHMARKS / "retrieval"

if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))

import docs_section  # noqa: E402  (a script of benchmarks/, found through the path above)

load_script = docs_section.load_script
"""Import the script at ``path`` as the module ``name`` (see ``benchmarks/docs_section.py``)."""
