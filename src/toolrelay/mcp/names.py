"""The names MCP tools get in toolrelay: prefixed by server, provider-safe, at most 64 characters.

An MCP server names its tools as it likes; providers accept only ``^[a-zA-Z0-9_-]{1,64}$``.
:func:`mcp_tool_name` turns the server's name into a toolrelay name:

1. each character providers reject becomes ``_`` (dots stay: they separate categories);
2. the server's prefix goes in front as a category: ``payments.get_transaction``
   (sent as ``payments__get_transaction``);
3. when step 1 changed anything, or the provider-safe form is longer than 64 characters, the
   name is cut to fit and ends in ``_`` plus 8 hex digits of a SHA-256 of prefix and original
   name. Two different tools therefore never end up with the same name, however long and
   alike their names are (keeping the last 64 characters, as some libraries do, makes
   ``..._for_customer_a`` and ``..._for_customer_b`` collide).

The server is always called with the original name.
"""

from __future__ import annotations

import hashlib
import re

from toolrelay.exceptions import ConfigurationError
from toolrelay.tools.names import DOT_REPLACEMENT, MAX_NAME_LENGTH, provider_safe_name

__all__ = ["HASH_LENGTH", "MAX_PREFIX_LENGTH", "mcp_tool_name", "validate_prefix"]

HASH_LENGTH = 8
"""Hex digits of the hash that ends a shortened or cleaned-up name."""

MAX_PREFIX_LENGTH = 40
"""Longest prefix (provider-safe form), so a shortened name keeps part of the tool's own name."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_PREFIX_SEGMENT = re.compile(r"^[A-Za-z0-9_-]+$")


def validate_prefix(prefix: str, *, what: str = "prefix") -> str:
    """Return ``prefix`` if it can start tool names, else raise.

    An empty prefix (no prefix) is valid; otherwise it is one or more dotted segments of
    letters, digits, ``_`` and ``-``, at most :data:`MAX_PREFIX_LENGTH` characters once
    provider-safe.

    Raises:
        ConfigurationError: The prefix is not usable.
    """
    if not prefix:
        return prefix
    if not all(_PREFIX_SEGMENT.fullmatch(segment) for segment in prefix.split(".")):
        raise ConfigurationError(
            f"{what} {prefix!r} is not usable in tool names; use letters, digits, '_' and '-' "
            "(and '.' between segments)"
        )
    if len(provider_safe_name(prefix)) > MAX_PREFIX_LENGTH:
        raise ConfigurationError(
            f"{what} {prefix!r} is too long; at most {MAX_PREFIX_LENGTH} characters"
        )
    return prefix


def mcp_tool_name(original: str, prefix: str = "") -> str:
    """The toolrelay name of the MCP tool ``original`` of a server with this prefix.

    >>> mcp_tool_name("get_transaction", "payments")
    'payments.get_transaction'
    >>> mcp_tool_name("get transaction", "payments")  # cleaned up, so made unique by a hash
    'payments.get_transaction_9d1e4bf9'

    Args:
        original: The tool's name on its server.
        prefix: The server's prefix (see :func:`validate_prefix`); ``""`` for none.

    Returns:
        A valid toolrelay tool name whose provider-safe form has at most 64 characters.
    """
    body = ".".join(_UNSAFE.sub("_", segment) or "_" for segment in original.split("."))
    name = f"{prefix}.{body}" if prefix else body
    if body == original and len(provider_safe_name(name)) <= MAX_NAME_LENGTH:
        return name
    digest = hashlib.sha256(f"{prefix}\x00{original}".encode()).hexdigest()[:HASH_LENGTH]
    return f"{_head(name, MAX_NAME_LENGTH - HASH_LENGTH - 1)}_{digest}"


def _head(name: str, budget: int) -> str:
    """The longest start of ``name`` whose provider-safe form fits ``budget`` characters."""
    used = 0
    end = 0
    for position, char in enumerate(name):
        used += len(DOT_REPLACEMENT) if char == "." else 1
        if used > budget:
            break
        end = position + 1
    # A cut right after a dot would leave an empty segment.
    return name[:end].rstrip(".")
