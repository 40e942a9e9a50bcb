"""Tool names: what providers accept, and the reversible mapping to it.

OpenAI and Anthropic accept names matching ``^[a-zA-Z0-9_-]{1,64}$``. toolrelay accepts more
and sends every name in a provider-safe form:

- dotted domain names, which read better in large catalogs: ``refund.find_failed_orders`` is
  sent as ``refund__find_failed_orders`` (each ``.`` becomes ``__``);
- letters and digits of any script, e.g. ``查询天气`` or ``Navigation.查询火车票``: such a name
  is sent as its ASCII letters (accents dropped, ``météo`` → ``meteo``) followed by ``_`` and
  8 hex digits of a SHA-256 of the whole name, e.g. ``tool_<8 hex>`` for ``查询天气`` (nothing
  of it is ASCII) and ``Navigation_<8 hex>``. The form is deterministic, so it is the same
  in every process, and never longer than 64 characters.

A catalog rejects two tools whose provider-safe forms collide, so the mapping is reversible
within it, and lookups work with either form.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from toolrelay.exceptions import InvalidToolNameError

__all__ = [
    "DOT_REPLACEMENT",
    "HASH_LENGTH",
    "MAX_NAME_LENGTH",
    "PROVIDER_SAFE_NAME",
    "fold_name",
    "is_name_character",
    "is_provider_safe",
    "provider_safe_name",
    "split_name_words",
    "validate_tool_name",
]

MAX_NAME_LENGTH = 64
PROVIDER_SAFE_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
DOT_REPLACEMENT = "__"
HASH_LENGTH = 8
"""Hex digits of the hash that ends the provider-safe form of a name with non-ASCII letters."""
_ASCII_NAME = re.compile(r"^[a-zA-Z0-9_.-]*$")
_NO_NAME_CHARACTER = re.compile(r"[^a-zA-Z0-9_-]+")
_HASHED_PREFIX = "tool"
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[_.\-\s]+")


def is_provider_safe(name: str) -> bool:
    """Whether providers accept ``name`` as it is."""
    return PROVIDER_SAFE_NAME.fullmatch(name) is not None


def provider_safe_name(name: str) -> str:
    """The form sent to providers: dots become ``__``; safe names are unchanged.

    A name with letters or digits outside ASCII becomes its ASCII letters plus a hash (see
    the module docs):

    >>> provider_safe_name("refund.find_failed_orders")
    'refund__find_failed_orders'
    >>> provider_safe_name("查询天气")
    'tool_22cf3c76'

    Anything else that is not a valid name (spaces, punctuation) is only dot-mapped, so it
    stays unsafe and is reported as such.
    """
    dotted = name.replace(".", DOT_REPLACEMENT)
    if _ASCII_NAME.fullmatch(name) or not all(is_name_character(ch) for ch in name):
        return dotted
    digest = hashlib.sha256(name.encode()).hexdigest()[:HASH_LENGTH]
    ascii_form = unicodedata.normalize("NFKD", dotted).encode("ascii", "ignore").decode()
    readable = _NO_NAME_CHARACTER.sub("_", ascii_form).strip("_-")
    head = readable[: MAX_NAME_LENGTH - HASH_LENGTH - 1].rstrip("_-") or _HASHED_PREFIX
    return f"{head}_{digest}"


def is_name_character(char: str) -> bool:
    """Whether ``char`` may appear in a tool name (``.`` included).

    Letters and digits of any script, combining marks (the vowel signs of Devanagari, say),
    ``_``, ``-`` and the ``.`` between segments.
    """
    return char in "_-." or char.isalnum() or unicodedata.category(char).startswith("M")


def validate_tool_name(name: str) -> str:
    """Return ``name`` if it is a valid tool name, else raise.

    Letters and digits of any script are valid (see :func:`provider_safe_name` for how they
    are sent).

    Raises:
        InvalidToolNameError: The name is empty, has characters other than letters, digits,
            ``_``, ``-`` and ``.``, has an empty dotted segment, or is longer than 64
            characters once made provider-safe.
    """
    if not name:
        raise InvalidToolNameError(name, "a tool name must not be empty")
    segments = name.split(".")
    bad = sorted({ch for seg in segments for ch in seg if not is_name_character(ch)})
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
