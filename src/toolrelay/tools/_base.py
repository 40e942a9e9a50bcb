"""The tool contract: a definition the model sees, metadata it does not, and ``call``.

A tool is anything that satisfies :class:`Tool`: a :class:`ToolDefinition` (name, description,
JSON Schema of the arguments), a :class:`ToolMetadata` (how the runtime treats it) and
``async call(arguments_json, context) -> str``. JSON text in, text out, because that is what
models produce and read. The :class:`ToolContext` carries what the caller knows and the model
must never see (tenant, user, session).

A tool may also validate arguments ahead of the call (:class:`ValidatingTool`): the execution
layer then validates a call's arguments once, shows every interceptor (authorization,
approval, idempotency, audit) the validated values, and runs the tool with them
(:class:`ValidatedArguments`). Tools without that capability are validated against their
JSON Schema and called with ``call``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, ItemsView, Iterator, KeysView, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, get_args, runtime_checkable

from toolrelay._sync import run_sync
from toolrelay.exceptions import ConfigurationError
from toolrelay.tools._meta_schema import check_input_schema

if TYPE_CHECKING:
    from toolrelay.tools._workers import SyncRunner

__all__ = [
    "IdempotencyKey",
    "IdempotencyScope",
    "Tool",
    "ToolBase",
    "ToolContext",
    "ToolDefinition",
    "ToolMetadata",
    "ValidatedArguments",
    "ValidatingTool",
    "check_result_chars",
    "check_seconds",
]


def check_seconds(option: str, value: float | None) -> float | None:
    """``value`` if it is ``None`` or a finite number of seconds above zero.

    Raises:
        ConfigurationError: ``value`` is zero, negative, ``nan`` or infinite (``None`` is the
            way to say "no limit").
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigurationError(f"{option} must be a number of seconds, not {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise ConfigurationError(
            f"{option} must be a finite number of seconds above 0, not {value!r}"
            " (None means no limit)"
        )
    return value


def check_result_chars(option: str, value: int | None, *, unbounded: str) -> int | None:
    """``value`` if it is ``None`` or a whole number of characters of at least 1.

    Args:
        option: The option's name, for the error.
        value: The bound.
        unbounded: What ``None`` means for this option, for the error.

    Raises:
        ConfigurationError: ``value`` is not an integer, or below 1.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(
            f"{option} must be a whole number of characters >= 1, not {value!r} ({unbounded})"
        )
    return value


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
            (see ``_meta_schema.py``).
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
        timeout: Seconds the tool may run before its call is cancelled (finite, above 0);
            ``None`` uses the execution manager's default.
        read_only: The tool changes nothing outside itself.
        destructive: The tool may change or delete data irreversibly.
        requires_approval: A person or policy must approve each call before it runs.
        idempotency_key: How a call's idempotency key is derived: the names of the arguments
            that identify the operation, or a function ``(arguments, context) -> str``.
            Repeated calls with the same key get the recorded result instead of running
            again (see the execution layer's ``IdempotencyInterceptor``).
        extra: Free-form flags for integrations.
        context_keys: Keys the tool needs in its :class:`ToolContext` (``("tenant_id",)``):
            a request whose context lacks one fails before the first model call
            (:class:`~toolrelay.exceptions.ToolContextError`), never after the model was
            paid. A function tool with a required ``ToolContext`` parameter needs a
            non-empty context even without keys.
        thread_share: The most threads of the pool for synchronous tools this tool's calls
            occupy at once, stuck ones included (at least 1); ``None`` uses the pool's
            ``tool_share`` (see :class:`~toolrelay.tools.WorkerPool`).
        max_result_chars: Characters of the tool's result the model reads; a longer result
            is cut, with a note (the whole text stays on the call's outcome). ``None`` uses
            the execution manager's bound.
        idempotency_scope: Whose calls share keys derived from argument names: ``"user"``
            (the default: the context's ``tenant_id`` and ``user_id`` are part of the key),
            ``"tenant"`` (the users of one tenant share results) or ``"global"`` (everyone
            does). A key function decides its key alone, so it needs the default.
    """

    return_direct: bool = False
    timeout: float | None = None
    read_only: bool = False
    destructive: bool = False
    requires_approval: bool = False
    idempotency_key: IdempotencyKey | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    context_keys: tuple[str, ...] = ()
    thread_share: int | None = None
    max_result_chars: int | None = None
    idempotency_scope: IdempotencyScope = "user"

    def __post_init__(self) -> None:
        check_seconds("timeout", self.timeout)
        if isinstance(self.context_keys, str) or not all(
            isinstance(k, str) and k for k in self.context_keys
        ):
            raise ConfigurationError(
                f"context_keys must be a tuple of key names, e.g. ('tenant_id',), "
                f"not {self.context_keys!r}"
            )
        share = self.thread_share
        if share is not None and (
            isinstance(share, bool) or not isinstance(share, int) or share < 1
        ):
            raise ConfigurationError(f"thread_share must be an integer >= 1, not {share!r}")
        check_result_chars(
            "max_result_chars", self.max_result_chars, unbounded="None uses the manager's bound"
        )
        check_idempotency_scope(self.idempotency_scope, self.idempotency_key)


def check_idempotency_scope(scope: object, key: object) -> None:
    """Refuse an ``idempotency_scope`` that is unknown, or that a key function would ignore.

    Raises:
        ConfigurationError: ``scope`` is not ``"user"``, ``"tenant"`` or ``"global"``, or it
            widens the scope of a key function (which decides its key alone).
    """
    scopes = get_args(IdempotencyScope)
    if scope not in scopes:
        raise ConfigurationError(
            f"idempotency_scope must be one of {', '.join(map(repr, scopes))}, not {scope!r}"
        )
    if scope != "user" and callable(key):
        raise ConfigurationError(
            f"idempotency_scope={scope!r} applies to keys made of argument names; an "
            "idempotency_key function decides its key alone: leave the scope out and put "
            "what should be shared (or kept apart) into the key the function returns"
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

IdempotencyScope: TypeAlias = Literal["user", "tenant", "global"]
"""Whose calls share idempotency keys made of argument names (see ``ToolMetadata``)."""


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


class ToolBase:
    """What a tool class shares: the definition and metadata it was made with.

    A subclass adds ``call`` (and, for a :class:`ValidatingTool`, the validation).

    Args:
        definition: What the model is shown.
        metadata: How the runtime treats the tool.
    """

    def __init__(self, definition: ToolDefinition, metadata: ToolMetadata) -> None:
        self._definition = definition
        self._metadata = metadata

    @property
    def definition(self) -> ToolDefinition:
        """What the model is shown."""
        return self._definition

    @property
    def metadata(self) -> ToolMetadata:
        """How the runtime treats the tool."""
        return self._metadata

    @property
    def name(self) -> str:
        """The tool's canonical name."""
        return self._definition.name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


@dataclass(frozen=True, kw_only=True)
class ValidatedArguments:
    """A call's arguments after validation against the tool's schema.

    They read like a read-only mapping of :attr:`values` (``arguments["amount"]``,
    ``arguments.get("note")``, ``dict(arguments)``).

    Attributes:
        values: The validated values, JSON-ready and keyed as the schema names them; where
            the tool coerces (a function tool's ``int`` parameter given ``"5"``), the coerced
            values, with defaults filled in. Read-only.
        text: The arguments as JSON text (what ``Tool.call`` would be given).
        native: The tool's own form of the validated input (a function tool's pydantic
            model), handed back to :meth:`ValidatingTool.call_validated`; ``None`` for
            arguments validated against a JSON Schema only.
    """

    values: Mapping[str, Any]
    text: str
    native: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.values, MappingProxyType):
            object.__setattr__(self, "values", MappingProxyType(dict(self.values)))

    # Read like the mapping of ``values`` (``arguments["amount"]``, ``dict(arguments)``,
    # ``{**arguments}``), which is what a policy deciding about a call reads. Not a
    # ``Mapping`` subclass: ``values`` is the attribute, not ``Mapping.values()``.

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)

    def __contains__(self, name: object) -> bool:
        return name in self.values

    def get(self, name: str, default: Any = None) -> Any:
        """The value of argument ``name``, or ``default``."""
        return self.values.get(name, default)

    def keys(self) -> KeysView[str]:
        """The argument names."""
        return self.values.keys()

    def items(self) -> ItemsView[str, Any]:
        """The ``(name, value)`` pairs."""
        return self.values.items()


@runtime_checkable
class ValidatingTool(Tool, Protocol):
    """A tool that validates arguments ahead of the call, so they are validated only once.

    :class:`~toolrelay.tools.FunctionTool` implements it with its pydantic model. The
    execution layer validates each call with :meth:`validate_arguments`, lets its
    interceptors see the result, then runs :meth:`call_validated` with it, never parsing the
    arguments again.
    """

    def validate_arguments(self, arguments: Mapping[str, Any]) -> ValidatedArguments:
        """Validate (and coerce) decoded arguments.

        Raises:
            ToolArgumentError: One problem per invalid, missing or unexpected field.
        """
        ...

    async def call_validated(
        self,
        arguments: ValidatedArguments,
        context: ToolContext | None = None,
        *,
        workers: SyncRunner | None = None,
    ) -> str:
        """Run the tool with arguments :meth:`validate_arguments` returned.

        Args:
            arguments: The validated arguments.
            context: The call's tool context.
            workers: Where a synchronous body runs; the process-wide pool of
                :func:`~toolrelay.tools.sync_tool_workers` when ``None``.
        """
        ...


def call_sync(tool: Tool, arguments_json: str, context: ToolContext | None = None) -> str:
    """Synchronous wrapper around ``tool.call`` (works inside a running event loop too)."""
    return run_sync(tool.call(arguments_json, context))
