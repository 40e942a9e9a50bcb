"""Provider-neutral tool-choice settings, read from an adapter's defaults and the request.

Two keys of :attr:`ChatOptions.extras <toolrelay.prompt.ChatOptions.extras>` are understood
by every adapter (and removed before the rest of the extras go to the provider):

- ``"tool_choice"`` (:data:`TOOL_CHOICE`): ``"auto"`` (the model decides), ``"required"``
  (it must call a tool), ``"none"`` (it must not), or a tool's name (it must call that tool;
  either name form). A ``dict`` is the provider's own format and is sent unchanged.
- ``"parallel_tool_calls"`` (:data:`PARALLEL_TOOL_CALLS`): ``False`` asks for at most one
  call per answer.

A request's value wins over the adapter's default; ``None`` leaves the provider's default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolrelay.exceptions import ConfigurationError

__all__ = ["PARALLEL_TOOL_CALLS", "TOOL_CHOICE", "ToolChoiceSettings", "tool_choice_settings"]

TOOL_CHOICE = "tool_choice"
"""Extras key of the tool choice."""
PARALLEL_TOOL_CALLS = "parallel_tool_calls"
"""Extras key of the parallel-calls switch."""

_MODES = frozenset({"auto", "required", "none"})


@dataclass(frozen=True, kw_only=True)
class ToolChoiceSettings:
    """The tool choice of one request.

    Attributes:
        mode: ``"auto"``, ``"required"``, ``"none"``, ``"tool"`` (call :attr:`tool`),
            ``"raw"`` (send :attr:`raw` unchanged) or ``None`` (provider default).
        tool: The tool's name when ``mode == "tool"``.
        raw: The provider-format value when ``mode == "raw"``.
        parallel: Whether several calls per answer are allowed; ``None`` for the default.
        extras: The request's other extras, for the provider.
    """

    mode: str | None = None
    tool: str | None = None
    raw: Mapping[str, Any] | None = None
    parallel: bool | None = None
    extras: Mapping[str, Any]


def tool_choice_settings(
    extras: Mapping[str, Any],
    *,
    default_choice: str | Mapping[str, Any] | None = None,
    default_parallel: bool | None = None,
) -> ToolChoiceSettings:
    """Read the tool choice of a request from its extras and the adapter's defaults.

    Raises:
        ConfigurationError: The tool choice is neither a mode, a name, nor a mapping, or the
            parallel switch is not a boolean.
    """
    rest = {k: v for k, v in extras.items() if k not in (TOOL_CHOICE, PARALLEL_TOOL_CALLS)}
    choice = extras.get(TOOL_CHOICE, default_choice)
    parallel = extras.get(PARALLEL_TOOL_CALLS, default_parallel)
    if parallel is not None and not isinstance(parallel, bool):
        raise ConfigurationError(f"parallel_tool_calls must be a bool or None, not {parallel!r}")
    if choice is None:
        return ToolChoiceSettings(parallel=parallel, extras=rest)
    if isinstance(choice, Mapping):
        return ToolChoiceSettings(mode="raw", raw=dict(choice), parallel=parallel, extras=rest)
    if not isinstance(choice, str) or not choice:
        raise ConfigurationError(
            f"tool_choice must be 'auto', 'required', 'none', a tool name or a mapping, "
            f"not {choice!r}"
        )
    if choice in _MODES:
        return ToolChoiceSettings(mode=choice, parallel=parallel, extras=rest)
    return ToolChoiceSettings(mode="tool", tool=choice, parallel=parallel, extras=rest)
