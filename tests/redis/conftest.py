"""The tests of toolrelay.redis: the redis extra, and Redis (``redis_url`` and ``prefix`` in
tests/conftest.py: .ci/services.sh starts a server; without one these tests skip).

(This folder has no ``__init__.py`` on purpose: as a package it would be importable as
``redis`` and hide the Redis client library. As a folder on sys.path it still passes for a
``redis`` namespace package, so the modules skip without the extra on ``redis.asyncio``.)
"""

from __future__ import annotations

import pytest


@pytest.fixture
def free_port() -> int:
    """A loopback port nothing listens on."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
