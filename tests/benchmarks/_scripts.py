"""Loading the benchmark scripts (files, not an installed package) as modules for tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

RETRIEVAL = Path(__file__).resolve().parents[2] / "benchmarks" / "retrieval"


def load_script(path: Path, name: str) -> ModuleType:
    """Import the script at ``path`` as the module ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
