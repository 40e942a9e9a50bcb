"""Rewrite every generated part of the docs from what the code and the results say now.

    python -m tests.docs.regenerate [PYTEST OPTIONS]

1. Every section a benchmark writes (between ``<!-- NAME:start -->`` markers, on any page) is
   rendered again from the committed results JSON (``benchmarks/docs_section.py``); the
   benchmarks themselves do not run.
2. The docs test runs in writing mode (``DOCS_REGENERATE=1``): every ```output block and every
   ```console block whose output differs from what the code prints now is rewritten, keeping
   the page's elisions and showing durations as ``…``. Blocks skipped here (a missing extra
   or server) keep what they show, and the summary lists them.

Review the diff (``git diff docs README.md``) before committing it. Run it in the repository
root with every extra installed and the test servers' variables set, as CI does.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def main(argv: list[str]) -> int:
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    importlib.import_module("docs_section").main()
    os.environ["DOCS_REGENERATE"] = "1"
    return int(pytest.main(["tests/docs/test_code_blocks.py", "-p", "no:cacheprovider", *argv]))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
