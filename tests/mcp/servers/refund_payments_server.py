"""The refund desk's refund and payment tools as a stdio MCP server (a seeded back end)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository, for examples/

from examples.refund_desk import PaymentService, RefundDeskBackend, RefundService

from toolrelay.mcp import run_stdio, tools_server
from toolrelay.tools import ToolCatalog, tools_from


def build_server() -> Any:
    backend = RefundDeskBackend.seeded()
    tools = [*tools_from(RefundService(backend)), *tools_from(PaymentService(backend))]
    return tools_server(ToolCatalog(tools), name="refund-desk-payments")


if __name__ == "__main__":
    anyio.run(run_stdio, build_server())
