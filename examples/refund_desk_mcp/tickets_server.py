"""The refund desk's ticket platform as an MCP server: incident and task tickets, over stdio.

Run from the repository's root: ``python -m examples.refund_desk_mcp.tickets_server``.
"""

from __future__ import annotations

from typing import Any

import anyio
from examples.refund_desk import RefundDeskBackend
from examples.refund_desk.tickets import TicketService
from mcp.server import Server

from toolrelay.mcp import run_stdio, tools_server
from toolrelay.tools import ToolCatalog, tools_from

NAME = "refund-desk-tickets"


def build_server(backend: RefundDeskBackend | None = None) -> Server[Any]:
    """The server, over ``backend`` (a freshly seeded one when omitted)."""
    backend = backend if backend is not None else RefundDeskBackend.seeded()
    return tools_server(ToolCatalog(tools_from(TicketService(backend))), name=NAME)


if __name__ == "__main__":
    anyio.run(run_stdio, build_server())
