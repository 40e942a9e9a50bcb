"""Provider-neutral tool-choice settings, read from an adapter's defaults and the request.

Two keys of :attr:`ChatOptions.extras <toolrelay.prompt.ChatOptions.extras>` are understood
by every adapter (and removed before the rest of the extras go to the provider):

- ``"tool_choice"`` (:data:`TOOL_CHOICE`): ``"auto"`` (the model decides), ``"required"``
  (it must call a tool), ``"none"`` (it must not), or a tool's name (it must call that tool;
  either name form). A ``dict`` is the provider's own format and is sent unchanged.
- ``"parallel_tool_calls"`` (:data:`PARALLEL_TOOL_CALLS`): ``False`` asks for at most one
  call per answer.

A request's value wins over the adapter's default; ``None`` leaves the provider's default.
A choice the request cannot honour is refused rather than dropped
(:meth:`ToolChoiceSettings.check`): a call required, or a tool named, in a request that offers
no tools (or not that one).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolrelay.exceptions import ConfigurationError
from toolrelay.models._tool_names import ToolNameMap

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
        requested: Whether the choice is the request's own (not the adapter's default).
    """

    mode: str | None = None
    tool: str | None = None
    raw: Mapping[str, Any] | None = None
    parallel: bool | None = None
    extras: Mapping[str, Any]
    requested: bool = False

    def check(self, names: ToolNameMap, *, model: str) -> None:
        """Refuse a choice the request gave that ``names`` (its tools) cannot satisfy.

        An adapter's default choice applies to the requests that offer tools and is left out
        of the others; a request's own choice is the request's wish, and is never dropped.

        Raises:
            ConfigurationError: The request asks for ``"required"``, a tool name or a
                provider-format choice but offers no tools, or names a tool it does not offer.
        """
        if not self.requested:
            return
        wants_call = self.mode in ("required", "tool", "raw")
        if wants_call and not names.definitions:
            choice = self.tool if self.mode == "tool" else (self.raw or self.mode)
            raise ConfigurationError(
                f"{model}: tool_choice {choice!r} asks for a tool call, but the request offers "
                "no tools; offer the tools or drop the tool_choice"
            )
        if self.mode == "tool" and self.tool is not None and names.definition(self.tool) is None:
            offered = [d.name for d in names.definitions]
            raise ConfigurationError(
                f"{model}: tool_choice names {self.tool!r}, which is not one of the request's "
                f"tools {offered}"
            )


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
    requested = extras.get(TOOL_CHOICE) is not None
    choice = extras.get(TOOL_CHOICE, default_choice)
    parallel = extras.get(PARALLEL_TOOL_CALLS, default_parallel)
    if parallel is not None and not isinstance(parallel, bool):
        raise ConfigurationError(f"parallel_tool_calls must be a bool or None, not {parallel!r}")
    if choice is None:
        return ToolChoiceSettings(parallel=parallel, extras=rest)
    if isinstance(choice, Mapping):
        return ToolChoiceSettings(
            mode="raw", raw=dict(choice), parallel=parallel, extras=rest, requested=requested
        )
    if not isinstance(choice, str) or not choice:
        raise ConfigurationError(
            f"tool_choice must be 'auto', 'required', 'none', a tool name or a mapping, "
            f"not {choice!r}"
        )
    if choice in _MODES:
        return ToolChoiceSettings(mode=choice, parallel=parallel, extras=rest, requested=requested)
    return ToolChoiceSettings(
        mode="tool", tool=choice, parallel=parallel, extras=rest, requested=requested
    )
