"""The tests of toolrelay.gateway: every one needs the mcp extra, so without it the folder
skips as a whole (any test module added here included)."""

import pytest

from tests.extras import needs_extra

pytest.importorskip("mcp_types", reason=needs_extra("mcp"))
