"""The refund desk's notification tools as a Python module for a gateway's [[modules]]."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository, for examples/

from examples.refund_desk import RefundDeskBackend
from examples.refund_desk.notify import NotifyService

from toolrelay.tools import ToolCatalog, tools_from


def build_catalog() -> ToolCatalog:
    return ToolCatalog(tools_from(NotifyService(RefundDeskBackend.seeded())))
