"""Canonical JSON: one text per value, so equal arguments give equal digests and keys."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from toolrelay._storable import to_bytes


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, non-ASCII kept; values JSON lacks are written as ``str``.

    Numbers equal in value are one text: a float with a whole value is written as the integer
    (``7.0`` as ``7``), so every spelling of one number a schema accepts (JSON Schema's
    ``integer`` takes ``7.0``, its ``number`` both) digests alike. Arguments reach it read and
    validated, nested no deeper than the reader allows.
    """
    return json.dumps(
        _whole_numbers(value),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=str,
    )


def _whole_numbers(value: Any) -> Any:
    if type(value) is float:
        return int(value) if value.is_integer() else value
    if isinstance(value, Mapping):
        return {key: _whole_numbers(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_whole_numbers(item) for item in value]
    return value


def sha256_hex(text: str) -> str:
    """The SHA-256 digest of ``text`` (UTF-8; a model's lone surrogates too) in hex."""
    return hashlib.sha256(to_bytes(text)).hexdigest()
