"""The tests of toolrelay.gateway: every one needs the mcp extra, so without it the folder
skips as a whole (any test module added here included)."""

import pytest

pytest.importorskip("mcp_types", reason="needs the mcp extra: pip install 'toolrelay[mcp]'")
