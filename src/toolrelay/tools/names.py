"""Tool names: what providers accept, and the reversible mapping for dotted domain names.

OpenAI and Anthropic accept names matching ``^[a-zA-Z0-9_-]{1,64}$``. Domain names such as
``refund.find_failed_orders`` read better in large catalogs, so toolrelay accepts dotted names
whose segments are provider-safe and sends them as ``refund__find_failed_orders`` (each ``.``
becomes ``__``). A catalog rejects two tools whose provider-safe forms collide, so the mapping
is reversible within it, and lookups work with either form.
"""

from __future__ import annotations

import re

from toolrelay.exceptions import InvalidToolNameError

__all__ = [
    "DOT_REPLACEMENT",
    "MAX_NAME_LENGTH",
    "PROVIDER_SAFE_NAME",
    "fold_name",
    "is_provider_safe",
    "provider_safe_name",
    "split_name_words",
    "validate_tool_name",
]

MAX_NAME_LENGTH = 64
PROVIDER_SAFE_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
DOT_REPLACEMENT = "__"
_SEGMENT = re.compile(r"^[a-zA-Z0-9_-]+$")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[_.\-\s]+")


def is_provider_safe(name: str) -> bool:
    """Whether providers accept ``name`` as it is."""
    return PROVIDER_SAFE_NAME.fullmatch(name) is not None


def provider_safe_name(name: str) -> str:
    """The form sent to providers: dots become ``__``; safe names are unchanged."""
    return name.replace(".", DOT_REPLACEMENT)


def validate_tool_name(name: str) -> str:
    """Return ``name`` if it is a valid tool name, else raise.

    Raises:
        InvalidToolNameError: The name is empty, has characters providers reject, has an empty
            dotted segment, or is longer than 64 characters once made provider-safe.
    """
    if not name:
        raise InvalidToolNameError(name, "a tool name must not be empty")
    segments = name.split(".")
    bad = sorted({ch for seg in segments for ch in seg if not _SEGMENT.fullmatch(ch)})
    if bad:
        shown = " ".join(repr(ch) for ch in bad)
        raise InvalidToolNameError(
            name,
            f"characters {shown} are not allowed; use letters, digits, '_', '-' "
            "(and '.' between segments)",
        )
    if any(not seg for seg in segments):
        raise InvalidToolNameError(name, "a dotted name must not have empty segments")
    safe = provider_safe_name(name)
    if len(safe) > MAX_NAME_LENGTH:
        raise InvalidToolNameError(
            name,
            f"the provider-safe name {safe!r} has {len(safe)} characters; "
            f"the limit is {MAX_NAME_LENGTH}",
        )
    return name


def split_name_words(name: str) -> list[str]:
    """Split a name into lower-case words on ``_ . -``, spaces and camelCase boundaries.

    >>> split_name_words("refund.findFailedOrders_v2")
    ['refund', 'find', 'failed', 'orders', 'v2']
    """
    words: list[str] = []
    for part in _SEPARATORS.split(name):
        words.extend(w.lower() for w in _CAMEL.split(part) if w)
    return words


def fold_name(name: str) -> str:
    """Case- and separator-insensitive key of a name.

    ``getWeather``, ``get_weather``, ``get-weather`` and ``get.weather`` all fold to
    ``getweather``.
    """
    return "".join(split_name_words(name))
