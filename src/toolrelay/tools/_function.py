"""``FunctionTool``: a :class:`~toolrelay.tools.Tool` backed by a Python callable.

One class serves every shape of callable: plain parameters (``get_weather(city, unit)``), a
single pydantic model or dataclass input (``refund(request)``), no input at all (a supplier),
no output (a consumer, whose result is ``"Done"``), each with or without a ``ToolContext``
parameter. The shapes differ only in the schema and in how the validated input maps to call
arguments (the ``InputBinding`` strategy); calling is the same.

A call decodes the JSON text, validates and coerces it with pydantic, injects the context,
runs the function (sync functions in the pool of :func:`~toolrelay.tools.sync_tool_workers`,
which also carries the caller's contextvars; async functions are awaited) and converts the
result to text.
The tool is a :class:`~toolrelay.tools.ValidatingTool`: the execution layer validates a call
once with :meth:`FunctionTool.validate_arguments`, and runs the validated input with
:meth:`FunctionTool.call_validated`.
"""

from __future__ import annotations

import copy
import inspect
import json
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from pydantic_core import PydanticSerializationError

from toolrelay.exceptions import ToolContextError, ToolDefinitionError, ToolResultError
from toolrelay.tools import _base as base
from toolrelay.tools._arguments import decode_arguments, validate_arguments
from toolrelay.tools._base import (
    ToolBase,
    ToolContext,
    ToolDefinition,
    ToolMetadata,
    ValidatedArguments,
)
from toolrelay.tools._decorator import ToolSpec, get_tool_spec
from toolrelay.tools._names import split_name_words, validate_tool_name
from toolrelay.tools._parameters import is_receiver_parameter
from toolrelay.tools._results import ResultConverter, convert_result
from toolrelay.tools._schema import (
    FunctionSchema,
    build_model_function_schema,
    cached_function_schema,
)
from toolrelay.tools._workers import SyncRunner, sync_tool_workers

__all__ = ["FunctionTool"]


class FunctionTool(ToolBase):
    """A tool that validates the model's arguments and calls a Python function with them.

    Build one with :meth:`from_function` (parameters become properties) or
    :meth:`from_model_function` (one pydantic model or dataclass input is the whole schema).

    Attributes:
        definition: What the model is shown.
        metadata: How the runtime treats the tool.
        function: The wrapped callable.
        source: Where the tool comes from (``"module.qualname"``), used in error messages.
    """

    def __init__(
        self,
        *,
        function: Callable[..., Any],
        definition: ToolDefinition,
        metadata: ToolMetadata,
        schema: FunctionSchema,
        result_converter: ResultConverter | None = None,
        source: str | None = None,
    ) -> None:
        super().__init__(definition, metadata)
        self._function = function
        self._schema = schema
        self._convert: ResultConverter = result_converter or convert_result
        self._source = source or _source_of(function)
        self._is_async = inspect.iscoroutinefunction(function) or (
            # An object whose __call__ is async.
            not inspect.isroutine(function) and inspect.iscoroutinefunction(type(function).__call__)
        )

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        metadata: ToolMetadata | None = None,
        result_converter: ResultConverter | None = None,
    ) -> FunctionTool:
        """Make a tool of a function whose parameters are the tool's arguments.

        Options attached by ``@tool`` apply; the keyword arguments here override them. Any
        callable works: functions, bound methods, static methods, ``functools.partial``
        objects and callable instances (these need ``name``).

        Raises:
            InvalidToolNameError: The name is invalid.
            ToolDefinitionError: The signature cannot be turned into a schema (all problems).
        """
        spec = get_tool_spec(fn) or ToolSpec()
        tool_name = validate_tool_name(name or spec.name or _function_name(fn))
        _reject_unbound_method(fn, tool_name)
        schema = cached_function_schema(fn, tool_name=tool_name, required=spec.required)
        return cls._build(fn, tool_name, schema, spec, description, metadata, result_converter)

    @classmethod
    def from_model_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        metadata: ToolMetadata | None = None,
        result_converter: ResultConverter | None = None,
    ) -> FunctionTool:
        """Make a tool of a function whose single input is a pydantic model or dataclass.

        The tool's schema is the input type's schema (flattened to the top level). Accepted
        shapes: ``f(input)``, ``f(input, context)``, a supplier ``f()`` (empty object schema)
        and a consumer returning ``None`` (result ``"Done"``). The description defaults to the
        function's docstring, then the input type's docstring, then the name in words.

        As with :meth:`from_function`, an argument name the schema does not list is reported
        to the model (``"additionalProperties": false``), even though pydantic would drop it
        for a model that declares nothing. An input type whose config sets ``extra="allow"``
        or ``extra="ignore"`` keeps that behaviour, and its schema says
        ``"additionalProperties": true``.

        Raises:
            InvalidToolNameError: The name is invalid.
            ToolDefinitionError: The function does not have one of the accepted shapes.
        """
        spec = get_tool_spec(fn) or ToolSpec()
        tool_name = validate_tool_name(name or spec.name or _function_name(fn))
        schema = build_model_function_schema(fn, tool_name=tool_name)
        return cls._build(fn, tool_name, schema, spec, description, metadata, result_converter)

    @classmethod
    def _build(
        cls,
        fn: Callable[..., Any],
        tool_name: str,
        schema: FunctionSchema,
        spec: ToolSpec,
        description: str | None,
        metadata: ToolMetadata | None,
        result_converter: ResultConverter | None,
    ) -> FunctionTool:
        text = (
            description
            or spec.description
            or schema.description
            or " ".join(split_name_words(tool_name))
        )
        return cls(
            function=fn,
            definition=ToolDefinition(
                # A copy per tool: the schema is cached, and callers may adapt their copy.
                name=tool_name,
                description=text,
                input_schema=copy.deepcopy(dict(schema.json_schema)),
            ),
            metadata=metadata or spec.metadata(),
            schema=schema,
            result_converter=result_converter or spec.result_converter,
        )

    @property
    def context_required(self) -> bool:
        """Whether the function takes a ``ToolContext`` it cannot do without."""
        return self._schema.context_required

    @property
    def function(self) -> Callable[..., Any]:
        """The wrapped callable."""
        return self._function

    @property
    def source(self) -> str:
        """Where the tool was defined (``"module.qualname"``)."""
        return self._source

    async def call(self, arguments_json: str, context: Mapping[str, Any] | None = None) -> str:
        """Validate the arguments, run the function and return its result as text.

        Args:
            arguments_json: The model's arguments (a JSON object; blank means ``{}``).
            context: Handed to the function's ``ToolContext`` parameter, if it has one.

        Raises:
            ToolContextError: The function needs a context and none was given.
            InvalidJsonError: The arguments are not a JSON object.
            ToolArgumentError: The arguments break the schema (one problem per field; an
                argument name the schema does not list is a problem too, unless the input
                type declares ``extra="allow"`` or ``extra="ignore"``).
            ToolResultError: The function returned a value its converter cannot turn into
                text (the converter's exception is ``__cause__``).
            Exception: Whatever the function itself raises, unchanged.
        """
        self._check_context(context)
        arguments = self.validate_arguments(decode_arguments(self.name, arguments_json))
        return await self.call_validated(arguments, _as_context(context))

    def validate_arguments(self, arguments: Mapping[str, Any]) -> ValidatedArguments:
        """Validate and coerce decoded arguments with the tool's pydantic model.

        The result's ``values`` are the validated input dumped as JSON data, keyed by the
        property names of the schema, defaults included: ``{"refund_id": "05"}`` for an
        ``int`` parameter gives ``{"refund_id": 5}``.

        Raises:
            ToolArgumentError: One problem per invalid, missing or unexpected field.
        """
        schema = self._schema
        validated = validate_arguments(
            self.name, schema.adapter, dict(arguments), known=schema.known_arguments
        )
        try:
            values = schema.adapter.dump_python(validated, mode="json", by_alias=True)
        except (PydanticSerializationError, TypeError, ValueError):
            values = None  # a type pydantic cannot write as JSON: the values as given
        if not isinstance(values, dict):
            values = dict(arguments)
        try:
            text = json.dumps(values, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            text = json.dumps(values, ensure_ascii=False, default=str)
        return ValidatedArguments(values=values, text=text, native=validated)

    async def call_validated(
        self,
        arguments: ValidatedArguments,
        context: ToolContext | None = None,
        *,
        workers: SyncRunner | None = None,
    ) -> str:
        """Run the function with arguments :meth:`validate_arguments` returned.

        Args:
            arguments: The validated arguments (ones made elsewhere, without the validated
                input, are validated first).
            context: Handed to the function's ``ToolContext`` parameter, if it has one.
            workers: Where a synchronous function runs; the process-wide pool
                (:func:`~toolrelay.tools.sync_tool_workers`) when ``None``, within the tool's
                share of its threads.

        Raises:
            ToolContextError: The function needs a context and none was given.
            ToolArgumentError: ``arguments`` were not validated yet and break the schema.
            ToolResultError: The function returned a value its converter cannot turn into
                text (the converter's exception is ``__cause__``).
            Exception: Whatever the function itself raises, unchanged.
        """
        schema = self._schema
        self._check_context(context)
        if arguments.native is None:
            arguments = self.validate_arguments(arguments.values)
        kwargs = schema.binding.arguments(arguments.native)
        if schema.context_parameter is not None:
            kwargs[schema.context_parameter] = _as_context(context)
        args = [kwargs.pop(p) for p in schema.positional_only]
        if self._is_async:
            return self._converted(await self._function(*args, **kwargs))
        body = partial(self._run, args, kwargs)
        if workers is not None:
            return await workers.run(body)
        share = self._metadata.thread_share
        return await sync_tool_workers().run(body, tool=self.name, share=share)

    def _check_context(self, context: Mapping[str, Any] | None) -> None:
        # An empty context counts as missing (Spring's rule): the execution layer always passes
        # one, empty when the request carries none.
        if self._schema.context_required and not context:
            raise ToolContextError(self.name)

    def call_sync(self, arguments_json: str, context: Mapping[str, Any] | None = None) -> str:
        """Blocking :meth:`call`; works inside a running event loop too."""
        return base.call_sync(self, arguments_json, _as_context(context))

    def _run(self, args: list[Any], kwargs: dict[str, Any]) -> str:
        # Converting in the worker thread keeps slow conversions (PNG encoding) off the loop.
        return self._converted(self._function(*args, **kwargs))

    def _converted(self, value: Any) -> str:
        try:
            return self._convert(value)
        except Exception as exc:  # the function did its work: say so, apart from its failures
            raise ToolResultError(self.name) from exc

    def __repr__(self) -> str:
        return f"FunctionTool(name={self.name!r}, source={self._source!r})"


def _as_context(context: Mapping[str, Any] | None) -> ToolContext | None:
    if context is None or isinstance(context, ToolContext):
        return context
    return ToolContext(context)


def _reject_unbound_method(fn: Callable[..., Any], tool_name: str) -> None:
    # A decorated method taken from the class (``Shop.price``) still expects ``self``.
    if inspect.isfunction(fn) and is_receiver_parameter(fn):
        raise ToolDefinitionError(
            tool_name,
            [
                f"{fn.__qualname__} is a method that needs its instance; use tools_from(instance) "
                "or pass the bound method (instance.method)"
            ],
        )


def _function_name(fn: Callable[..., Any]) -> str:
    name = getattr(fn, "__name__", None)
    if not isinstance(name, str):
        raise ToolDefinitionError(
            repr(fn), ["this callable has no __name__; pass name=... to give the tool a name"]
        )
    return name


def _source_of(fn: Callable[..., Any]) -> str:
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return f"{module}.{qualname}" if module else qualname
