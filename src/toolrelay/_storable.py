r"""Text from a model, in a form every store and file accepts, and back exactly.

A Python string may hold lone surrogates (code points U+D800-U+DFFF): a model's JSON can
escape one (``"\ud83d"``, half an emoji), and decoding it gives a code point that UTF-8
cannot encode. SQLite, Redis and files encode text as strict UTF-8 and would raise
``UnicodeEncodeError`` on it, so every store converts what it keeps through this module:

- :func:`to_store` / :func:`from_store`: a SQLite parameter: the text itself when UTF-8 can
  carry it (so existing rows and other readers see plain text), else its UTF-8 bytes with
  the surrogates passed through (a BLOB), decoded back to the very same string;
- :func:`to_bytes` / :func:`from_bytes`: the same, always as bytes (Redis keys and values);
- :func:`json_text`: JSON for writers that want valid UTF-8 text (an audit line, a saved
  approval state): non-ASCII kept as it is, surrogates written as ``\uXXXX`` escapes, which
  ``json.loads`` turns back into the same lone surrogate.

A reader that needs valid Unicode and gives nothing back (a provider's API, a tokenizer) gets
:func:`valid_unicode`: each lone surrogate becomes U+FFFD, so the request is sent rather than
failing on the model's own half emoji.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = [
    "from_bytes",
    "from_store",
    "json_text",
    "to_bytes",
    "to_store",
    "valid_unicode",
    "valid_unicode_data",
]

_SURROGATE = re.compile("[\ud800-\udfff]")
_ERRORS = "surrogatepass"


def to_bytes(text: str) -> bytes:
    """``text`` as UTF-8, lone surrogates included (each as its own three bytes)."""
    return text.encode("utf-8", _ERRORS)


def from_bytes(data: bytes) -> str:
    """The string :func:`to_bytes` encoded (plain UTF-8 decodes as usual)."""
    return data.decode("utf-8", _ERRORS)


def to_store(text: str) -> str | bytes:
    """``text`` when UTF-8 can encode it, else :func:`to_bytes` of it."""
    return text if _SURROGATE.search(text) is None else to_bytes(text)


def from_store(value: str | bytes) -> str:
    """The string :func:`to_store` gave (a value read back from the store)."""
    return from_bytes(value) if isinstance(value, bytes) else value


def json_text(value: Any, **options: Any) -> str:
    r"""``json.dumps(value, ensure_ascii=False, **options)`` with surrogates escaped.

    Surrogates only ever appear inside JSON strings, where ``\uXXXX`` is their JSON form,
    so the result is valid JSON and valid UTF-8. A high and a low surrogate side by side read
    back as the one character they encode, which is what JSON means by them.
    """
    text = json.dumps(value, ensure_ascii=False, **options)
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def valid_unicode(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (a surrogate pair joined)."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16", _ERRORS).decode("utf-16", "replace")


def valid_unicode_data(value: Any) -> Any:
    """JSON-like ``value`` (dicts, lists, tuples, strings) with :func:`valid_unicode` text."""
    if isinstance(value, str):
        return valid_unicode(value)
    if isinstance(value, dict):
        return {valid_unicode_data(k): valid_unicode_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(valid_unicode_data(item) for item in value)
    return value
