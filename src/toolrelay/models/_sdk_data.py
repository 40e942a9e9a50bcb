"""Provider SDK objects as plain data."""

from __future__ import annotations

from typing import Any

__all__ = ["as_dict"]


def as_dict(value: Any) -> dict[str, Any]:
    """A provider SDK's response object (a pydantic model) or an already plain dict, as a dict."""
    if isinstance(value, dict):
        return value
    # Lenient servers send values off the SDK's types; they are handled, not warned about.
    dumped: dict[str, Any] = value.model_dump(warnings=False)
    return dumped
