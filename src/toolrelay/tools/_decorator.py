"""``@tool``: declare a function or method as a tool without changing it.

``@tool`` validates the declaration right away (name, parameters, schema), so mistakes surface
when the module is imported, then attaches a :class:`ToolSpec` to the function and returns the
function itself: it stays a plain callable and methods bind as usual.
:meth:`~toolrelay.tools.FunctionTool.from_function` and :func:`~toolrelay.tools.tools_from`
turn decorated callables into tools.

Example::

    @tool
    def get_weather(city: str, unit: Literal["c", "f"] = "c") -> dict[str, Any]:
        \"\"\"Current weather for a city (an Args section describes the parameters).\"\"\"

    class Orders:
        @tool(name="orders.refund", destructive=True, requires_approval=True)
        def refund(self, order_id: str) -> str: ...

        @tool(destructive=True, idempotency_key=["refund_id"])  # a retry runs once
        def retry_refund(self, refund_id: str) -> str: ...

        @staticmethod      # either order works
        @tool
        def currencies() -> list[str]: ...
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, overload

from toolrelay.exceptions import ConfigurationError, InvalidToolNameError, ToolDefinitionError
from toolrelay.tools._base import IdempotencyKey, IdempotencyScope, ToolMetadata
from toolrelay.tools._names import validate_tool_name
from toolrelay.tools._parameters import is_receiver_parameter
from toolrelay.tools._results import ResultConverter
from toolrelay.tools._schema import cached_function_schema

__all__ = ["ToolSpec", "get_tool_spec", "tool"]

_SPEC_ATTRIBUTE = "_toolrelay_tool_spec"

# A string: staticmethod and classmethod are not subscriptable at runtime on Python 3.11.
F = TypeVar("F", bound="Callable[..., Any] | staticmethod[Any, Any] | classmethod[Any, Any, Any]")


@dataclass(frozen=True, kw_only=True)
class ToolSpec:
    """The options given to ``@tool``; attached to the decorated function.

    Attributes:
        name: The tool name; defaults to the function's name.
        description: The tool description; defaults to the docstring, else the name in words.
        return_direct: See :class:`~toolrelay.tools.ToolMetadata`.
        result_converter: Turns the return value into text, replacing the default conversion.
        timeout: See :class:`~toolrelay.tools.ToolMetadata`.
        read_only: See :class:`~toolrelay.tools.ToolMetadata`.
        destructive: See :class:`~toolrelay.tools.ToolMetadata`.
        requires_approval: See :class:`~toolrelay.tools.ToolMetadata`.
        idempotency_key: See :class:`~toolrelay.tools.ToolMetadata`.
        context_keys: See :class:`~toolrelay.tools.ToolMetadata`.
        required: Parameters the model must always send although they have a default.
        max_result_chars: See :class:`~toolrelay.tools.ToolMetadata`.
        idempotency_scope: See :class:`~toolrelay.tools.ToolMetadata`.
    """

    name: str | None = None
    description: str | None = None
    return_direct: bool = False
    result_converter: ResultConverter | None = None
    timeout: float | None = None
    read_only: bool = False
    destructive: bool = False
    requires_approval: bool = False
    idempotency_key: IdempotencyKey | None = None
    context_keys: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    max_result_chars: int | None = None
    idempotency_scope: IdempotencyScope = "user"

    def __post_init__(self) -> None:
        self.metadata()  # the options a ToolMetadata refuses are refused here already

    def metadata(self) -> ToolMetadata:
        """The runtime metadata these options describe."""
        return ToolMetadata(
            return_direct=self.return_direct,
            timeout=self.timeout,
            read_only=self.read_only,
            destructive=self.destructive,
            requires_approval=self.requires_approval,
            idempotency_key=self.idempotency_key,
            context_keys=self.context_keys,
            max_result_chars=self.max_result_chars,
            idempotency_scope=self.idempotency_scope,
        )


@overload
def tool(fn: F, /) -> F: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    return_direct: bool = False,
    result_converter: ResultConverter | None = None,
    timeout: float | None = None,
    read_only: bool = False,
    destructive: bool = False,
    requires_approval: bool = False,
    idempotency_key: IdempotencyKey | None = None,
    context_keys: Sequence[str] = (),
    required: Sequence[str] = (),
    max_result_chars: int | None = None,
    idempotency_scope: IdempotencyScope = "user",
) -> Callable[[F], F]: ...


def tool(
    fn: F | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    return_direct: bool = False,
    result_converter: ResultConverter | None = None,
    timeout: float | None = None,
    read_only: bool = False,
    destructive: bool = False,
    requires_approval: bool = False,
    idempotency_key: IdempotencyKey | None = None,
    context_keys: Sequence[str] = (),
    required: Sequence[str] = (),
    max_result_chars: int | None = None,
    idempotency_scope: IdempotencyScope = "user",
) -> F | Callable[[F], F]:
    """Declare a function, method, static method or class method as a tool.

    Use it bare (``@tool``) or with options (``@tool(name="orders.refund")``). Sync and async
    functions are both supported. The function is returned unchanged, with the options attached.

    Args:
        fn: The function (when used bare).
        name: Tool name (letters, digits, ``_``, ``-``, dots between segments); defaults to
            the function's name.
        description: What the tool does and when to use it; defaults to the docstring, else
            the name in words (``get_weather`` → ``"get weather"``).
        return_direct: The result is the final answer; the loop does not call the model again.
        result_converter: Turns the return value into the text for the model.
        timeout: Seconds a call may run: a finite number > 0, or ``None`` for the execution
            manager's default.
        read_only: The tool changes nothing.
        destructive: The tool may change or delete data irreversibly.
        requires_approval: Each call must be approved before it runs.
        idempotency_key: How a call's idempotency key is derived: a parameter name, a list
            of them (checked here), or a function ``(arguments, context) -> str``. Calls
            with a key already recorded get the recorded result instead of running again.
        context_keys: Keys the tool needs in its ``ToolContext`` (``["tenant_id"]``): a
            request lacking one fails before the first model call.
        required: Parameters with a default that the model must nevertheless always send (the
            default then only applies to direct Python calls). Without it, a parameter is
            required exactly when it has no default.
        max_result_chars: Characters of a result the model reads (a longer one is cut, with
            a note), replacing the execution manager's bound for this tool; ``None`` keeps
            the manager's.

        idempotency_scope: Whose calls share a key made of parameter names: ``"user"`` (the
            default: the context's tenant and user), ``"tenant"`` or ``"global"``. A key
            function decides its key alone and keeps the default.

    Raises:
        ConfigurationError: ``timeout`` is not a finite number of seconds above 0 (``inf``, ``nan``,
            zero or negative), ``max_result_chars`` is not an integer >= 1, or
            ``idempotency_scope`` is unknown or given with a key function; raised by
            ``tool(...)`` itself.
        InvalidToolNameError: The name is the declaration's only problem.
        ToolDefinitionError: Every problem of the declaration (bad name, ``*args``/``**kwargs``,
            unannotated parameters, unknown ``required`` entries, types without a schema...).
    """
    spec = ToolSpec(
        name=name,
        description=description,
        return_direct=return_direct,
        result_converter=result_converter,
        timeout=timeout,
        read_only=read_only,
        destructive=destructive,
        requires_approval=requires_approval,
        idempotency_key=idempotency_key,
        context_keys=(context_keys,) if isinstance(context_keys, str) else tuple(context_keys),
        required=tuple(required),
        max_result_chars=max_result_chars,
        idempotency_scope=idempotency_scope,
    )

    def decorate(target: F) -> F:
        function = _unwrap(target)
        if function is None:
            raise ToolDefinitionError(
                repr(target),
                [
                    "@tool decorates functions and methods; "
                    "use FunctionTool.from_function() for other callables"
                ],
            )
        skip_receiver = isinstance(target, classmethod) or (
            not isinstance(target, staticmethod) and is_receiver_parameter(function)
        )
        _check_declaration(function, spec, skip_receiver)
        setattr(function, _SPEC_ATTRIBUTE, spec)
        return target

    return decorate if fn is None else decorate(fn)


def get_tool_spec(fn: object) -> ToolSpec | None:
    """The :class:`ToolSpec` attached by ``@tool`` to ``fn`` (or its method wrapper), if any."""
    function = _unwrap(fn)
    if function is None:
        function = getattr(fn, "__func__", None)
    spec = getattr(function, _SPEC_ATTRIBUTE, None)
    return spec if isinstance(spec, ToolSpec) else None


def _unwrap(target: object) -> Callable[..., Any] | None:
    if isinstance(target, staticmethod | classmethod):
        target = target.__func__
    return target if inspect.isfunction(target) else None


def _check_declaration(function: Callable[..., Any], spec: ToolSpec, skip_receiver: bool) -> None:
    tool_name = spec.name if spec.name is not None else function.__name__
    problems: list[str] = []
    alone: InvalidToolNameError | ConfigurationError | None = None  # raised when the only one
    try:
        validate_tool_name(tool_name)
    except InvalidToolNameError as exc:
        alone = exc
        problems.extend(exc.problems)
    if spec.result_converter is not None and not callable(spec.result_converter):
        problems.append("result_converter must be callable")
    try:
        schema = cached_function_schema(
            function, tool_name=tool_name, required=spec.required, skip_receiver=skip_receiver
        )
        problems.extend(_idempotency_key_problems(spec.idempotency_key, schema.json_schema))
    except ToolDefinitionError as exc:
        if isinstance(exc.__cause__, NameError):
            # A forward reference to something defined later in the module (the enclosing
            # class, a model below): the schema is built when the tool is first made.
            pass
        else:
            problems.extend(exc.problems)
    if alone is not None and len(problems) == 1:
        raise alone
    if problems:
        raise ToolDefinitionError(tool_name, problems)


def _idempotency_key_problems(key: object, schema: Mapping[str, Any]) -> list[str]:
    """What is wrong with an ``idempotency_key`` option, given the tool's argument schema."""
    if key is None or callable(key):
        return []
    names = [key] if isinstance(key, str) else key
    if not isinstance(names, Sequence) or not names or not all(isinstance(n, str) for n in names):
        return [
            "idempotency_key must be a parameter name, a non-empty list of them, or a "
            f"function (arguments, context) -> str, not {key!r}"
        ]
    known = schema.get("properties", {})
    return [f"idempotency_key names unknown parameter {n!r}" for n in names if n not in known]
