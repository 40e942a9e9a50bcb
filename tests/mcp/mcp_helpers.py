"""Helpers of the MCP tests: the demo server's config, and the server scripts on the path."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from toolrelay.mcp import McpServerConfig

SERVERS = Path(__file__).parent / "servers"
if str(SERVERS) not in sys.path:
    sys.path.insert(0, str(SERVERS))


def demo_stdio(name: str = "demo", *, legacy: bool = False, **options: Any) -> McpServerConfig:
    """The demo server (servers/demo_server.py) as a stdio subprocess.

    ``legacy`` makes it serve only the protocol before 2026 (the initialize handshake and
    ``notifications/tools/list_changed``).
    """
    options.setdefault("stderr", "discard")
    options.setdefault("timeout", 10.0)
    return McpServerConfig(
        name=name,
        command=sys.executable,
        args=(str(SERVERS / "demo_server.py"),),
        env={"DEMO_SERVER_NAME": name, "DEMO_SERVER_LEGACY": "1" if legacy else "0"},
        **options,
    )
