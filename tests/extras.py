"""Skips for want of an extra: each names the extra and the command that installs it.

- :func:`needs_extra`: the reason, ``needs the redis extra: pip install -e '.[redis]'``; at the
  top of a module, ``pytest.importorskip("redis.asyncio", reason=needs_extra("redis"))``;
- :func:`import_extra`: the same skip from inside a test or fixture;
- :func:`server_variable`: the server an environment variable names (a Redis URL, a
  PostgreSQL DSN). A test that finds one set goes on to use it, so when the server's client
  package is missing it skips naming the extra, instead of failing on the import.
"""

from __future__ import annotations

import os
from types import ModuleType

import pytest

__all__ = ["import_extra", "needs_extra", "server_variable"]


def needs_extra(extra: str) -> str:
    """The reason of a skip for want of ``extra``, with the command that installs it."""
    return f"needs the {extra} extra: pip install -e '.[{extra}]'"


def import_extra(module: str, extra: str) -> ModuleType:
    """``module``; when it cannot be imported the test (or module) skips naming ``extra``."""
    return pytest.importorskip(module, reason=needs_extra(extra))


def server_variable(variable: str, *, module: str, extra: str) -> str | None:
    """The server environment variable ``variable`` names, or ``None`` when it is unset.

    When it is set, ``module`` (the server's client, installed by ``extra``) must import:
    otherwise the test skips naming the extra, instead of failing on the import.
    """
    value = os.environ.get(variable) or None
    if value is not None:
        import_extra(module, extra)
    return value
