"""The refund desk as two MCP servers behind the tool-search gateway.

The payment system (refund and payment tools) and the ticket platform each run as an MCP
server of their own over stdio, built from the :mod:`examples.refund_desk` services (the
same tool code, each server with its own seeded back end). ``gateway.toml`` fronts both:
any MCP client sees ``tool_search`` and ``call_tool``, and the gateway adds what the servers
cannot promise themselves:

- ``refund.retry_failed_order`` is destructive (the server says so) and made idempotent by the
  gateway, keyed by ``refund_id`` and the tenant: a repeated retry gets the recorded result
  and is neither approved nor sent to the payment channel again;
- destructive calls are decided by :func:`examples.refund_desk_mcp.approvals.decide` first.

Serve it with the project installed in the active environment (the servers are started as
``python -m examples.refund_desk_mcp...`` in the repository's root)::

    toolrelay serve examples/refund_desk_mcp/gateway.toml
    toolrelay serve examples/refund_desk_mcp/gateway.toml -t http --port 8765
"""
