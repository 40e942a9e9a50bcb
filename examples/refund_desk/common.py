"""Small helpers shared by the refund-desk services."""

from __future__ import annotations

import copy
from datetime import date
from typing import TypeVar

from toolrelay.tools import ToolContext

from .backend import RefundDeskBackend

__all__ = ["actor_of", "day_or_yesterday", "detached"]

_T = TypeVar("_T")


def actor_of(context: ToolContext | None) -> str:
    """Who is acting: the context's user id, else ``assistant`` (recorded in the audit log)."""
    if context is not None and context.user_id:
        return str(context.user_id)
    return "assistant"


def day_or_yesterday(backend: RefundDeskBackend, day: date | None) -> date:
    """``day``, or the back end's yesterday when the model left it out."""
    return day if day is not None else backend.yesterday


def detached(record: _T) -> _T:
    """A deep copy, so a result handed to the model never aliases live back-end state."""
    return copy.deepcopy(record)
