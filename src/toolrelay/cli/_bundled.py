"""Where the suites and examples the package ships are: the checkout's, or the wheel's copy.

``benchmarks/tasks`` (the suites ``toolrelay eval tasks --tasks NAME`` names), the data they
read (``benchmarks/data/bfcl``) and the refund desk (``examples/refund_desk``) live outside
``src/`` in the repository. A wheel carries them under ``toolrelay/_bundled/`` in the same
layout (``[tool.hatch.build.targets.wheel.force-include]`` in ``pyproject.toml``), so the
files find each other there as they do in a checkout; an editable install reads them from
the checkout it points to. Either way they are found from the package, never from the
working directory.
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path

__all__ = ["BUNDLED_FOLDER", "bundled_root"]

BUNDLED_FOLDER = "_bundled"
"""The folder of the package that holds the shipped files in a wheel."""


def bundled_root() -> Path | None:
    """The folder holding the shipped ``benchmarks/`` and ``examples/``, or ``None``.

    The package's ``_bundled`` folder when installed from a wheel, else the root of the
    checkout the package is imported from (``src/toolrelay`` under a ``pyproject.toml``).
    """
    package = Path(str(importlib.resources.files("toolrelay")))
    shipped = package / BUNDLED_FOLDER
    if shipped.is_dir():
        return shipped
    checkout = package.parent.parent
    if package.parent.name == "src" and (checkout / "pyproject.toml").is_file():
        return checkout
    return None
