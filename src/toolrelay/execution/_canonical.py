"""Canonical JSON: one text per value, so equal arguments give equal digests and keys."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from toolrelay._storable import to_bytes


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, non-ASCII kept; values JSON lacks are written as ``str``."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256_hex(text: str) -> str:
    """The SHA-256 digest of ``text`` (UTF-8; a model's lone surrogates too) in hex."""
    return hashlib.sha256(to_bytes(text)).hexdigest()
