"""The refund desk's payments MCP server (examples/refund_desk_mcp) as a stdio script."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository, for examples/

from examples.refund_desk_mcp.payments_server import build_server

from toolrelay.mcp import run_stdio

if __name__ == "__main__":
    anyio.run(run_stdio, build_server())
