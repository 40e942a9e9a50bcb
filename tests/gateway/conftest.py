"""The gateway needs the MCP SDK."""

import pytest

pytest.importorskip("mcp", reason="needs the mcp extra (the MCP SDK)")
