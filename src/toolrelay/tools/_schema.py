"""JSON Schema and argument validation for Python callables.

Two shapes of callable become tools:

- :func:`build_function_schema`: every parameter is a property (``get_weather(city, unit)``);
  a pydantic model is created from the signature with ``pydantic.create_model``.
- :func:`build_model_function_schema`: the single input parameter is a pydantic model, a
  dataclass or a TypedDict, and the tool's schema *is* that type's schema, flattened to the
  top level.

Both produce a :class:`FunctionSchema`: the schema shown to the model, a ``TypeAdapter`` that
validates and coerces the decoded arguments, and an :class:`InputBinding` strategy that maps the
validated value to call arguments. Only public pydantic API is used (and, to read a dataclass's
config and fields, the ``__pydantic_config__`` and ``__pydantic_fields__`` attributes pydantic
sets on it).

A parameter's description is its ``Field(description=...)``, else its entry in the docstring,
else a plain string in ``Annotated`` (``Annotated[int, "How many"]``). A ``Field(...)`` given
as a parameter's default (``limit: int = Field(10, le=50)``) is read exactly like one in
``Annotated``: its constraints, description, alias and default (none: required) apply, and the
function never receives the ``FieldInfo`` itself. TypedDicts and stdlib dataclasses without a
config of their own are described by their attribute docstrings; pydantic models follow their
own config (``use_attribute_docstrings``).

Schemas follow JSON Schema draft 2020-12 with every ``$defs`` entry hoisted to the top, before
the properties that use them.
pydantic's automatic ``"title"`` keys are dropped: they repeat the property names and cost
tokens on every request. A property is required when its parameter has no default (the Python
rule); ``@tool(required=[...])`` makes parameters with defaults required as well. Parameters
typed ``ToolContext`` (or ``ToolContext | None``) are injected by the runtime and never appear
in the schema.

An argument name the schema does not list is an error the model is told about, for every shape:
the top level says ``"additionalProperties": false``, and validation reports each unknown key
as a problem rather than dropping it. pydantic itself would drop the unknown keys of a model or
dataclass that declares no ``extra`` behaviour; such an input type is held to the schema it
shows all the same. An input type that declares ``extra="allow"`` or ``extra="ignore"`` in its
own config keeps that behaviour, and the top level says ``"additionalProperties": true``.
Nested models keep their own config and schema.
"""

from __future__ import annotations

import dataclasses
import inspect
import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Protocol

from pydantic import (
    AliasChoices,
    AliasPath,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    create_model,
)
from pydantic.fields import FieldInfo

from toolrelay.exceptions import ToolDefinitionError
from toolrelay.tools._docstrings import DocstringInfo, parse_docstring
from toolrelay.tools._meta_schema import JSON_SCHEMA_DIALECT
from toolrelay.tools._parameters import (
    is_model_type,
    read_parameters,
    strip_annotated,
    type_name,
)

__all__ = [
    "JSON_SCHEMA_DIALECT",
    "FunctionSchema",
    "InputBinding",
    "build_function_schema",
    "build_model_function_schema",
    "cached_function_schema",
]

_CACHE_ATTRIBUTE = "_toolrelay_schemas"

# Unknown argument names are errors; TypedDicts and stdlib dataclasses without a config of
# their own inherit this one, so their attribute docstrings describe their fields.
_ARGUMENTS_CONFIG = ConfigDict(extra="forbid", use_attribute_docstrings=True)

# Schemas are built one at a time: reading attribute docstrings parses source with ``ast``,
# which CPython 3.11 cannot do in two threads at once (its recursion bookkeeping is shared:
# "AST constructor recursion depth mismatch"). Each function's schema is built once and cached.
_BUILD_LOCK = threading.Lock()


class InputBinding(Protocol):
    """Strategy: how a validated input becomes keyword arguments of the call."""

    def arguments(self, validated: Any) -> dict[str, Any]:
        """Parameter name → value for everything except the context."""
        ...


@dataclass(frozen=True)
class _SpreadFields:
    """Each field of the validated model is one parameter (``f(city, unit)``)."""

    fields: tuple[tuple[str, str], ...]  # (model field name, parameter name)

    def arguments(self, validated: Any) -> dict[str, Any]:
        return {param: getattr(validated, field) for field, param in self.fields}


@dataclass(frozen=True)
class _WholeInput:
    """The validated model is the single input parameter (``f(request)``)."""

    parameter: str

    def arguments(self, validated: Any) -> dict[str, Any]:
        return {self.parameter: validated}


@dataclass(frozen=True, kw_only=True)
class FunctionSchema:
    """Everything needed to show a callable to a model and to call it with validated input.

    Attributes:
        json_schema: The input schema shown to the model.
        adapter: Validates and coerces the decoded JSON arguments object.
        binding: Maps the validated value to keyword arguments.
        description: The tool description found in docstrings, if any.
        context_parameter: The parameter that receives the ``ToolContext``, if any.
        context_required: The context parameter does not accept ``None``.
        positional_only: Parameters that must be passed positionally, in order.
        known_arguments: The argument names accepted at the top level when the adapter
            itself would drop other keys silently (an input type that declares no ``extra``
            behaviour); ``None`` when the adapter decides (it forbids unknown keys, or the
            input type accepts them on purpose).
    """

    json_schema: Mapping[str, Any]
    adapter: TypeAdapter[Any]
    binding: InputBinding
    description: str | None = None
    context_parameter: str | None = None
    context_required: bool = False
    positional_only: tuple[str, ...] = ()
    known_arguments: frozenset[str] | None = None


def build_function_schema(
    fn: Callable[..., Any],
    *,
    tool_name: str,
    required: Collection[str] = (),
    skip_receiver: bool = False,
) -> FunctionSchema:
    """Build the schema of a callable whose parameters are the tool's properties.

    Args:
        fn: The function, bound method or callable.
        tool_name: Used in error messages.
        required: Parameters that must be sent even though they have a default.
        skip_receiver: Ignore the first parameter (an unbound method's ``self``/``cls``).

    Raises:
        ToolDefinitionError: Lists every problem of the declaration at once.
    """
    # 1. What the docstring says about the tool and its parameters.
    doc = parse_docstring(fn)
    # 2-3. The parameters with their type hints, sorted into the injected context and the
    #      inputs the model fills; every problem noted.
    params = read_parameters(fn, tool_name=tool_name, skip_receiver=skip_receiver)
    problems = list(params.problems)
    problems.extend(
        f"required lists {name!r}, which is not a parameter"
        for name in required
        if name not in {p.name for p in params.inputs}
    )
    # 4. One pydantic field per input; the alias keeps the parameter name as the property
    #    name while the field name cannot clash with BaseModel attributes.
    fields: dict[str, Any] = {}
    for index, param in enumerate(params.inputs):
        made, field_problems = _field(param, params.hints[param.name], doc, required)
        problems.extend(field_problems)
        if made is not None:
            fields[f"p{index}_{param.name}"] = made
    if problems:
        raise ToolDefinitionError(tool_name, problems)
    # 5. The model and its raw JSON Schema.
    adapter, raw = _adapter_and_schema(
        tool_name,
        lambda: create_model("ToolArguments", __config__=_ARGUMENTS_CONFIG, **fields),
    )
    # 6. Tidy it: drop titles, hoist $defs, add the dialect and the object keywords.
    return FunctionSchema(
        json_schema=_finish(raw),
        adapter=adapter,
        binding=_SpreadFields(tuple(zip(fields, (p.name for p in params.inputs), strict=True))),
        description=doc.tool_description,
        context_parameter=params.context.name if params.context else None,
        context_required=params.context_required,
        positional_only=params.positional_only,
    )


def cached_function_schema(
    fn: Callable[..., Any],
    *,
    tool_name: str,
    required: Collection[str] = (),
    skip_receiver: bool = False,
) -> FunctionSchema:
    """:func:`build_function_schema`, remembered on the function for the next call.

    ``@tool`` builds the schema when the function is declared (so mistakes surface at import)
    and :meth:`FunctionTool.from_function` reuses it. A bound method shares the entry of its
    function with the receiver skipped.
    """
    owner = getattr(fn, "__func__", None)
    key = (skip_receiver or owner is not None, tuple(sorted(required)))
    owner = fn if owner is None else owner
    cache: dict[Any, FunctionSchema] | None = None
    if inspect.isfunction(owner):
        cache = owner.__dict__.setdefault(_CACHE_ATTRIBUTE, {})
        if key in cache:
            return cache[key]
    schema = build_function_schema(
        fn, tool_name=tool_name, required=required, skip_receiver=skip_receiver
    )
    if cache is not None:
        cache[key] = schema
    return schema


def build_model_function_schema(fn: Callable[..., Any], *, tool_name: str) -> FunctionSchema:
    """Build the schema of a callable whose single input is a model, dataclass or TypedDict.

    The accepted shapes are ``f(input)``, ``f(input, context)``, ``f()`` and ``f(context)``
    (a supplier: its schema is an empty object). The schema is the input type's own schema,
    flattened to the top level; the type's docstring becomes the fallback description.

    Raises:
        ToolDefinitionError: Lists every problem of the declaration at once.
    """
    # 1-3. The parameters, split into the context and the single input (the docstring is read
    #      last, as the description only).
    params = read_parameters(fn, tool_name=tool_name)
    problems = list(params.problems)
    inputs, hints = params.inputs, params.hints
    if not inputs and not problems:
        return build_function_schema(fn, tool_name=tool_name)
    if len(inputs) > 1:
        names = ", ".join(repr(p.name) for p in inputs)
        problems.append(
            f"a model function takes one input parameter (a pydantic model, a dataclass or a "
            f"TypedDict), found {names}"
        )
    elif inputs and not is_model_type(hints[inputs[0].name]):
        problems.append(
            f"parameter {inputs[0].name!r} must be a pydantic model, a dataclass or a "
            f"TypedDict, got {type_name(hints[inputs[0].name])}"
        )
    if problems:
        raise ToolDefinitionError(tool_name, problems)
    # 4-5. The input type validates itself; its schema is the tool's schema.
    input_type = hints[inputs[0].name]
    adapter, raw = _adapter_and_schema(tool_name, lambda: input_type)
    if not _is_base_model(input_type):
        # Read through a wrapper whose config a TypedDict or stdlib dataclass inherits, so
        # its attribute docstrings describe its fields (validation is the type's own).
        _, raw = _adapter_and_schema(tool_name, lambda: _wrapper(input_type))
        raw = {**raw["properties"]["value"], "$defs": raw.get("$defs", {})}
    # 6. Tidy as for plain functions; the type's own description moves to the tool. Unknown
    #    keys are an error unless the type says otherwise (see the module docstring).
    extra = _declared_extra(input_type)
    schema = _finish(raw, extra_allowed=extra in ("allow", "ignore"))
    type_description = schema.pop("description", None)
    return FunctionSchema(
        json_schema=schema,
        adapter=adapter,
        binding=_WholeInput(inputs[0].name),
        description=parse_docstring(fn).tool_description or type_description,
        context_parameter=params.context.name if params.context else None,
        context_required=params.context_required,
        positional_only=params.positional_only,
        known_arguments=_known_arguments(input_type, schema) if extra is None else None,
    )


def _is_base_model(input_type: Any) -> bool:
    hint = strip_annotated(input_type)
    return isinstance(hint, type) and issubclass(hint, BaseModel)


def _wrapper(input_type: Any) -> type[BaseModel]:
    return create_model(
        "ToolInput",
        __config__=ConfigDict(use_attribute_docstrings=True),
        value=(input_type, ...),
    )


def _declared_extra(input_type: Any) -> str | None:
    """The ``extra`` behaviour the input type sets in its own config, or ``None``."""
    input_type = strip_annotated(input_type)
    config: Mapping[str, Any] = (
        input_type.model_config
        if issubclass(input_type, BaseModel)
        # Pydantic dataclasses and stdlib dataclasses decorated with ``with_config``.
        else getattr(input_type, "__pydantic_config__", None) or {}
    )
    extra = config.get("extra")
    return extra if isinstance(extra, str) else None


def _known_arguments(input_type: Any, schema: Mapping[str, Any]) -> frozenset[str]:
    """Every top-level key pydantic reads into a field of ``input_type``.

    That is the schema's property names, the other validation aliases, and the field names
    when the config allows population by name.
    """
    input_type = strip_annotated(input_type)
    known = set(schema["properties"])
    if issubclass(input_type, BaseModel):
        config: Mapping[str, Any] = input_type.model_config
        fields: Mapping[str, FieldInfo] = input_type.model_fields
        names: Collection[str] = fields.keys()
    elif dataclasses.is_dataclass(input_type):
        config = getattr(input_type, "__pydantic_config__", None) or {}
        fields = getattr(input_type, "__pydantic_fields__", None) or {}
        names = [f.name for f in dataclasses.fields(input_type)]
    else:  # a TypedDict: its keys, and the aliases its schema already shows
        config = getattr(input_type, "__pydantic_config__", None) or {}
        fields = {}
        names = list(input_type.__annotations__)
    for info in fields.values():
        known.update(_alias_keys(info.validation_alias))
    if config.get("validate_by_name") or config.get("populate_by_name"):
        known.update(names)
    return frozenset(known)


def _alias_keys(alias: str | AliasPath | AliasChoices | None) -> set[str]:
    """The top-level keys a validation alias reads (a path reads its first key)."""
    if alias is None:
        return set()
    choices = alias.choices if isinstance(alias, AliasChoices) else [alias]
    keys = set()
    for choice in choices:
        head = choice.path[0] if isinstance(choice, AliasPath) else choice
        if isinstance(head, str):
            keys.add(head)
    return keys


# --- fields ----------------------------------------------------------------------------------


def _field(
    param: inspect.Parameter, hint: Any, doc: DocstringInfo, required: Collection[str]
) -> tuple[tuple[Any, FieldInfo] | None, list[str]]:
    """The pydantic field of one parameter, or the problems that prevent it.

    A ``Field(...)`` given as the parameter's default counts as if it were in ``Annotated``:
    its constraints, description and alias apply, and its own ``default`` or
    ``default_factory`` (none: required) is the default.
    """
    default = param.default
    if isinstance(default, FieldInfo):
        hint, default = Annotated[hint, default], inspect.Parameter.empty
    infos = [m for m in getattr(hint, "__metadata__", ()) if isinstance(m, FieldInfo)]
    if param.name in required and any(not info.is_required() for info in infos):
        return None, [
            f"parameter {param.name!r}: required lists it, but its Field() declares a default; "
            "drop the Field default or leave the parameter out of required"
        ]
    options: dict[str, Any] = {}
    if not any(info.alias or info.validation_alias for info in infos):
        options["alias"] = param.name
    # An explicit Field(description=...) wins over the docstring, which wins over a plain
    # string in Annotated; passed only when present, as description=None would erase one.
    if not any(info.description for info in infos):
        text = doc.parameters.get(param.name) or _annotated_text(hint)
        if text:
            options["description"] = text
    if default is not inspect.Parameter.empty and param.name not in required:
        options["default"] = default
    return (hint, Field(**options)), []


def _annotated_text(hint: Any) -> str | None:
    """The first plain string in ``Annotated[...]`` metadata (``Annotated[int, "How many"]``)."""
    text = next((m for m in getattr(hint, "__metadata__", ()) if isinstance(m, str)), None)
    return text.strip() or None if text else None


# --- schema post-processing ------------------------------------------------------------------

_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas"})
_SCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SCHEMA_VALUES = frozenset(
    {"items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else"}
)


def _adapter_and_schema(
    tool_name: str, input_type: Callable[[], Any]
) -> tuple[TypeAdapter[Any], dict[str, Any]]:
    try:
        with _BUILD_LOCK:
            adapter: TypeAdapter[Any] = TypeAdapter(input_type())
            return adapter, adapter.json_schema()
    except Exception as exc:  # pydantic raises several types for unsupported annotations
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ToolDefinitionError(
            tool_name, [f"cannot build a JSON Schema for the arguments: {reason}"]
        ) from exc


def _tidy(node: Any, defs: dict[str, Any]) -> Any:
    """Copy a schema node without ``title`` keys, moving every ``$defs`` entry into ``defs``."""
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "$defs" and isinstance(value, dict):
            for name, sub in value.items():
                defs.setdefault(name, _tidy(sub, defs))
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {k: _tidy(v, defs) for k, v in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_tidy(v, defs) for v in value]
        elif key in _SCHEMA_VALUES:
            out[key] = _tidy(value, defs)
        else:
            out[key] = value
    return out


def _finish(raw: Mapping[str, Any], *, extra_allowed: bool = False) -> dict[str, Any]:
    defs: dict[str, Any] = {}
    body: dict[str, Any] = _tidy(dict(raw), defs)
    ref = body.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        # The input type itself is a definition (a recursive model is emitted that way, and
        # so is an input read through a wrapper): inline it at the top, and keep the $defs
        # entry only if something still refers to it.
        body.pop("$ref")
        name = ref.removeprefix("#/$defs/")
        body = {**defs[name], **body}
        if not _refers_to(ref, [body, *(d for key, d in defs.items() if key != name)]):
            del defs[name]
    # Definitions come before the properties that use them: a model reads the schema in order.
    schema: dict[str, Any] = {"$schema": JSON_SCHEMA_DIALECT, "type": "object"}
    if defs:
        schema["$defs"] = defs
    schema["properties"] = body.pop("properties", {})
    schema["required"] = body.pop("required", [])
    schema["additionalProperties"] = extra_allowed
    body.pop("type", None)
    body.pop("additionalProperties", None)
    schema.update(body)
    return schema


def _refers_to(ref: str, nodes: list[Any]) -> bool:
    """Whether any of ``nodes`` (schema fragments, at any depth) holds ``{"$ref": ref}``."""
    while nodes:
        node = nodes.pop()
        if isinstance(node, dict):
            if node.get("$ref") == ref:
                return True
            nodes.extend(node.values())
        elif isinstance(node, list):
            nodes.extend(node)
    return False
