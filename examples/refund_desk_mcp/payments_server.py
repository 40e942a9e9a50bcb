"""The refund desk's payment system as an MCP server: refund and payment tools, over stdio.

Run from the repository's root: ``python -m examples.refund_desk_mcp.payments_server``.
"""

from __future__ import annotations

from typing import Any

import anyio
from examples.refund_desk import PaymentService, RefundDeskBackend, RefundService
from mcp.server import Server

from toolrelay.execution import Approve, ToolCallingManager, ToolInvocation
from toolrelay.mcp import run_stdio, tools_server
from toolrelay.tools import ToolCatalog, tools_from

NAME = "refund-desk-payments"


async def approved_by_the_gateway(call: ToolInvocation, /) -> Approve:
    """This server's one client, the desk's gateway, asks a person before each guarded call.

    The server lists each tool's requires-approval flag; the gateway reads it and calls only
    what its approver allowed, so a call that arrives here was approved already.
    """
    return Approve()


def build_server(backend: RefundDeskBackend | None = None) -> Server[Any]:
    """The server, over ``backend`` (a freshly seeded one when omitted)."""
    backend = backend if backend is not None else RefundDeskBackend.seeded()
    tools = [*tools_from(RefundService(backend)), *tools_from(PaymentService(backend))]
    manager = ToolCallingManager(approval=approved_by_the_gateway)
    return tools_server(ToolCatalog(tools), name=NAME, tool_calling_manager=manager)


if __name__ == "__main__":
    anyio.run(run_stdio, build_server())
