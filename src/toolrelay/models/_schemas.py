"""Tool input schemas as sent to providers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["provider_schema"]


def provider_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` without its ``$schema`` dialect marker.

    Providers read tool schemas as JSON Schema without needing the dialect URI, and the
    marker costs about ten tokens in every tool of every request.
    """
    return {key: value for key, value in schema.items() if key != "$schema"}
