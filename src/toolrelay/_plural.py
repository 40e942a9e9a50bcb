"""A count with its noun, in the right number: ``1 tool``, ``2,574 tools``, ``1 query``.

Shared by every text that counts things (the command line, lint reports), so that none of them
says "1 tools".
"""

from __future__ import annotations

__all__ = ["plural"]


def plural(count: int, noun: str, plural_noun: str | None = None) -> str:
    """``count`` with thousands separators and ``noun``, or its plural unless ``count`` is 1.

    Args:
        count: How many.
        noun: The singular (``"tool"``).
        plural_noun: The plural when it is not ``noun + "s"`` (``"queries"``, ``"info"``).
    """
    if count == 1:
        return f"1 {noun}"
    return f"{count:,} {plural_noun if plural_noun is not None else noun + 's'}"
