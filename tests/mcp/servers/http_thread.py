"""Serving an ASGI app (an MCP server's streamable HTTP app) on a free loopback port."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn


@contextmanager
def serve_app(app: Any, *, path: str = "/mcp", startup_timeout: float = 10.0) -> Iterator[str]:
    """Serve ``app`` in a daemon thread; yield its URL; stop it on exit."""
    # A socket bound before the server starts: no race for the port.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the HTTP test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
