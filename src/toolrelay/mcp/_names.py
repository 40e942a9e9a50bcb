"""The names MCP tools get in toolrelay: prefixed by server, valid, at most 64 characters sent.

An MCP server names its tools as it likes. :func:`mcp_tool_name` turns the server's name into a
toolrelay name, valid by :func:`~toolrelay.tools._names.validate_tool_name`:

1. the server's prefix goes in front as a category: ``payments.get_transaction`` (sent to
   providers as ``payments__get_transaction``);
2. a name toolrelay accepts is kept as it is, in any script: ``weather.查询天气`` is sent as
   ``weather_<8 hex>`` by the same rule as every other tool name
   (:func:`~toolrelay.tools.provider_safe_name`) and mapped back;
3. otherwise each character toolrelay rejects (spaces, punctuation) becomes ``_``, an empty
   dotted segment becomes ``_``, and the name ends in ``_`` plus 8 hex digits of a SHA-256 of
   prefix and original name; a name whose provider-safe form would still be longer than 64
   characters is cut to fit first. Two different tools therefore never end up with the same
   name, however long and alike their names are (keeping the last 64 characters, as some
   libraries do, makes ``..._for_customer_a`` and ``..._for_customer_b`` collide).

The server is always called with the original name.
"""

from __future__ import annotations

import hashlib
import re

from toolrelay.exceptions import ConfigurationError, InvalidToolNameError
from toolrelay.tools._names import (
    DOT_REPLACEMENT,
    HASH_LENGTH,
    MAX_NAME_LENGTH,
    is_name_character,
    provider_safe_name,
    validate_tool_name,
)

__all__ = ["HASH_LENGTH", "MAX_PREFIX_LENGTH", "mcp_tool_name", "validate_prefix"]

MAX_PREFIX_LENGTH = 40
"""Longest prefix (provider-safe form), so a shortened name keeps part of the tool's own name."""

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
    >>> mcp_tool_name("查询天气", "weather")  # valid in toolrelay, so kept
    'weather.查询天气'
    >>> mcp_tool_name("get transaction", "payments")  # cleaned up, so made unique by a hash
    'payments.get_transaction_9d1e4bf9'

    Args:
        original: The tool's name on its server.
        prefix: The server's prefix (see :func:`validate_prefix`); ``""`` for none.

    Returns:
        A valid toolrelay tool name whose provider-safe form has at most 64 characters
        (``HASH_LENGTH`` hex digits end a cleaned-up one).
    """
    name = f"{prefix}.{original}" if prefix else original
    try:
        return validate_tool_name(name)
    except InvalidToolNameError:
        pass
    body = ".".join(_clean(segment) for segment in original.split("."))
    cleaned = f"{prefix}.{body}" if prefix else body
    digest = hashlib.sha256(f"{prefix}\x00{original}".encode()).hexdigest()[:HASH_LENGTH]
    whole = f"{cleaned}_{digest}"
    # A name with letters outside ASCII is sent as a hash of itself, which always fits.
    if len(provider_safe_name(whole)) <= MAX_NAME_LENGTH:
        return whole
    return f"{_head(cleaned, MAX_NAME_LENGTH - HASH_LENGTH - 1)}_{digest}"


def _clean(segment: str) -> str:
    """``segment`` (no dots) with each character toolrelay rejects as ``_``; never empty."""
    return "".join(ch if is_name_character(ch) else "_" for ch in segment) or "_"


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
