"""The tests of toolrelay.redis: the redis extra, and Redis (``redis_url`` and ``prefix`` in
tests/conftest.py: .ci/services.sh starts a server; without one these tests skip). Without
the redis extra the folder skips as a whole, any test module added here included.
"""

from __future__ import annotations

import pytest

from tests.extras import needs_extra

pytest.importorskip("redis.asyncio", reason=needs_extra("redis"))


@pytest.fixture
def free_port() -> int:
    """A loopback port nothing listens on."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
