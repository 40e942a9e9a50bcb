"""The tool contract: a definition the model sees, metadata it does not, and ``call``.

A tool is anything that satisfies :class:`Tool`: a :class:`ToolDefinition` (name, description,
JSON Schema of the arguments), a :class:`ToolMetadata` (how the runtime treats it) and
``async call(arguments_json, context) -> str``. JSON text in, text out, because that is what
models produce and read. The :class:`ToolContext` carries what the caller knows and the model
must never see (tenant, user, session).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, TypeAlias, runtime_checkable

from toolrelay._sync import run_sync
from toolrelay.exceptions import ConfigurationError
from toolrelay.tools.meta_schema import check_input_schema

__all__ = [
    "IdempotencyKey",
    "Tool",
    "ToolContext",
    "ToolDefinition",
    "ToolMetadata",
    "check_timeout",
]


@dataclass(frozen=True, kw_only=True)
class ToolDefinition:
    """What the model is shown: name, description and the JSON Schema of the arguments.

    Attributes:
        name: The canonical name; dotted domain names (``refund.find_failed_orders``) are
            allowed and sent to providers in their provider-safe form.
        description: What the tool does and when to use it; this is also retrieval text.
        input_schema: A JSON Schema (draft 2020-12 unless its ``$schema`` names another)
            whose top level is an object schema (``{"type": "object", ...}``).

    Raises:
        ToolDefinitionError: ``input_schema`` is not valid JSON Schema, or its top level is
            not an object schema; every problem is named by its JSON pointer, with the fix
            (see :mod:`toolrelay.tools.meta_schema`).
    """

    name: str
    description: str
    input_schema: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )

    def __post_init__(self) -> None:
        check_input_schema(self.name, self.input_schema)


@dataclass(frozen=True, kw_only=True)
class ToolMetadata:
    """How the runtime treats a tool; never shown to the model.

    Attributes:
        return_direct: The tool's result is the answer: the loop ends without asking the
            model again (see the execution layer for how a round with several tools decides).
        timeout: Seconds the tool may run before its call is cancelled, a finite number > 0
            (anything else raises :class:`~toolrelay.exceptions.ConfigurationError`, see
            :func:`check_timeout`); ``None`` uses the execution manager's default.
        read_only: The tool changes nothing outside itself.
        destructive: The tool may change or delete data irreversibly.
        requires_approval: A person or policy must approve each call before it runs.
        idempotency_key: How a call's idempotency key is derived: the names of the arguments
            that identify the operation, or a function ``(arguments, context) -> str``.
            Repeated calls with the same key get the recorded result instead of running
            again (see the execution layer's ``IdempotencyInterceptor``).
        extra: Free-form flags for integrations.
    """

    return_direct: bool = False
    timeout: float | None = None
    read_only: bool = False
    destructive: bool = False
    requires_approval: bool = False
    idempotency_key: IdempotencyKey | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_timeout(self.timeout)


def check_timeout(seconds: object, *, name: str = "timeout") -> None:
    """Refuse a timeout that cannot be honoured: only ``None`` or finite seconds > 0 can.

    ``inf`` would never fire and ``nan`` compares false with everything, so both would leave
    a hanging call running forever while looking configured.

    Raises:
        ConfigurationError: ``seconds`` is not ``None`` or a finite positive number.
    """
    if seconds is None:
        return
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise ConfigurationError(
            f"{name} must be a number of seconds or None, got {type(seconds).__name__} {seconds!r}"
        )
    if not math.isfinite(seconds) or seconds <= 0:
        raise ConfigurationError(
            f"{name} must be a finite positive number of seconds (or None for no limit), "
            f"got {seconds!r}"
        )


class ToolContext(Mapping[str, Any]):
    """A read-only mapping the caller passes to tools alongside the model's arguments.

    It holds what the model must never see or forge (tenant, user, session, handles). Tools
    declare a parameter typed ``ToolContext`` to receive it; that parameter never appears in
    the schema. The well-known keys ``tenant_id``, ``user_id`` and ``session_id`` have
    properties.
    """

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any] | None = None, /, **values: Any) -> None:
        self._data: Mapping[str, Any] = MappingProxyType({**(data or {}), **values})

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"ToolContext({dict(self._data)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self._data) == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    @property
    def tenant_id(self) -> Any:
        """The ``tenant_id`` entry, or ``None``."""
        return self._data.get("tenant_id")

    @property
    def user_id(self) -> Any:
        """The ``user_id`` entry, or ``None``."""
        return self._data.get("user_id")

    @property
    def session_id(self) -> Any:
        """The ``session_id`` entry, or ``None``."""
        return self._data.get("session_id")


IdempotencyKey: TypeAlias = str | Sequence[str] | Callable[[Mapping[str, Any], ToolContext], str]
"""An argument name, several of them, or a function of the arguments and the context."""


@runtime_checkable
class Tool(Protocol):
    """The contract every tool satisfies.

    ``call`` takes the model's arguments as JSON text and returns the text the model will read.
    It raises :class:`~toolrelay.exceptions.ToolArgumentError` for unusable arguments,
    :class:`~toolrelay.exceptions.ToolContextError` when a required context is missing, and
    lets the tool's own exceptions propagate; the execution layer turns all of them into
    feedback for the model.
    """

    @property
    def definition(self) -> ToolDefinition:
        """What the model is shown."""
        ...

    @property
    def metadata(self) -> ToolMetadata:
        """How the runtime treats the tool."""
        ...

    async def call(self, arguments_json: str, context: ToolContext | None = None) -> str:
        """Run the tool with the model's arguments and return the text for the model."""
        ...


def call_sync(tool: Tool, arguments_json: str, context: ToolContext | None = None) -> str:
    """Synchronous wrapper around ``tool.call`` (works inside a running event loop too)."""
    return run_sync(tool.call(arguments_json, context))
