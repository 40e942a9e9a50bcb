"""The tables of toolrelay's TOML files as pydantic models, and their problems as text.

Each table (the gateway file's, ``[tool.toolrelay.lint]``) is a :class:`Settings` model:
frozen, unknown keys refused, TOML's types taken as they are (``"5"`` is no number, ``true``
no 1). :func:`read_table` validates a file's data and names each problem by its place in the
file (``[search] max_results``, ``[tools."refund.*"] idempotency_key``, ``[[servers]] #2
command``), with what the key takes; a model built in Python names its field instead
(``SearchSettings.max_results``). Both raise :class:`~toolrelay.exceptions.ConfigurationError`.
"""

from __future__ import annotations

import json
import re
import tomllib
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, ValidationInfo
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from toolrelay.exceptions import ConfigurationError, LoadError

__all__ = [
    "FrozenMapping",
    "RelativePath",
    "Settings",
    "file_folder",
    "read_table",
    "read_toml",
]

_FOLDER = "folder"  # the validation context's entry: the folder of the file being read
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_TYPES = {
    "string_type": "must be a string",
    "bool_type": "must be true or false",
    "int_type": "must be a whole number",
    "float_type": "must be a number",
    "dict_type": "must be a table",
    "tuple_type": "must be an array",
    "list_type": "must be an array",
    "frozen_set_type": "must be an array",
    "string_too_short": "must not be empty",
}
_BOUNDS = {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}

_Table = TypeVar("_Table", bound=BaseModel)


class Settings(BaseModel):
    """A table of a configuration file (see the module docs)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise ConfigurationError(_describe(exc, type(self), None)) from exc

    # Marked as pydantic's own, so validation inside another model or from a file never calls
    # it: a problem keeps its whole location, and validators get the file's folder.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]


def read_table(
    model: type[_Table],
    data: object,
    *,
    table: Sequence[str] = (),
    folder: Path | None = None,
) -> _Table:
    """``data``, the file's table ``table`` (``()``: the whole file), as ``model``.

    Keys are read by their aliases where a model has them (``per-tool``), never by the
    Python names.

    Args:
        model: The table's model.
        data: The parsed table.
        table: Where the table is in the file, for the problems' names.
        folder: The file's folder: :data:`RelativePath` values become paths in it.

    Raises:
        ConfigurationError: One entry per problem, each naming its key in the file.
    """
    try:
        return model.model_validate(data, context={_FOLDER: folder}, by_alias=True, by_name=False)
    except ValidationError as exc:
        raise ConfigurationError(_describe(exc, model, tuple(table))) from exc


def read_toml(path: Path) -> dict[str, Any]:
    """The parsed file.

    Raises:
        LoadError: It cannot be read, or it is not TOML.
    """
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise LoadError(str(path), f"cannot read the file: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise LoadError(str(path), f"not valid TOML: {exc}") from exc


def file_folder(info: ValidationInfo) -> Path | None:
    """The folder of the file being read (see :func:`read_table`); ``None`` outside one."""
    context = info.context
    return context.get(_FOLDER) if isinstance(context, dict) else None


def _beside_file(path: str, info: ValidationInfo) -> str:
    folder = file_folder(info)
    return path if folder is None else str(folder / path)


RelativePath = Annotated[str, AfterValidator(_beside_file)]
"""A path; read from a file, relative to the file's folder (and then absolute)."""

_Value = TypeVar("_Value")
FrozenMapping = Annotated[
    Mapping[str, _Value], AfterValidator(types.MappingProxyType), Field(validate_default=True)
]
"""A mapping of names to values, kept read-only: the model holding it is frozen."""


@dataclass(frozen=True, kw_only=True)
class _Place:
    """Where a problem is: a table (its header's keys), or a key in one."""

    tables: tuple[str, ...] = ()
    entry: int | None = None  # 1-based, for an entry of an array of tables
    keys: tuple[str | int, ...] = ()  # the key and the items in its value; () for the table
    model: type[BaseModel] | None = None  # the innermost table's
    field: FieldInfo | None = None  # the key's
    kind: str = "table"  # "table", "tables" (an array of tables), "value"
    in_map: bool = False  # the innermost table is named by its key ([tools."NAME"])


def _describe(exc: ValidationError, model: type[BaseModel], table: tuple[str, ...] | None) -> str:
    return "; ".join(_problem(error, model, table) for error in exc.errors(include_url=False))


def _problem(error: ErrorDetails, model: type[BaseModel], table: tuple[str, ...] | None) -> str:
    place = _locate(model, error["loc"])
    if error["type"] == "extra_forbidden" and place.model is not None:
        accepted = ", ".join(f.alias or name for name, f in place.model.model_fields.items())
        stray = str(place.keys[0])
        in_table = isinstance(error["input"], Mapping)  # a table: named by its header
        text = f"unknown {'table' if in_table else 'key'}; expected one of {accepted}"
        if in_table and place.in_map and table is not None:
            # [tools.refund.retry] is the table "retry" in [tools."refund"]
            quoted = _path((*table, *place.tables[:-1], f"{place.tables[-1]}.{stray}"))
            text += f" (a name with dots needs quotes: [{quoted}])"
        if in_table:
            place = _Place(tables=(*place.tables, stray), entry=place.entry)
    else:
        text = _reason(error, place)
    if table is None:  # a model built in Python: its field (a check of the whole says what)
        where = _path((model.__name__, *error["loc"]), quote=False) if error["loc"] else ""
    else:
        where = _toml_place(table, place)
    return f"{where}: {text}" if where else text


def _reason(error: ErrorDetails, place: _Place) -> str:
    kind = error["type"]
    if kind == "missing":
        text = "required"
    elif kind == "value_error":
        text = str(error.get("ctx", {}).get("error", error["msg"]))
    elif place.kind == "tables":
        text = "must be an array of tables"
    elif place.kind == "table":
        text = "must be a table"
    elif kind in ("literal_error", "enum"):
        text = f"must be {error.get('ctx', {}).get('expected')}"
    elif kind in _BOUNDS and place.field is not None:
        text = _range(place.field)
    else:
        text = _TYPES.get(kind) or error["msg"].replace("Input should be", "must be")
    if place.field is not None and place.field.description:
        text += f", {place.field.description}"
    if kind != "missing" and (place.kind == "value" or not isinstance(error["input"], Mapping)):
        text += f" (got {_shown(error['input'])})"
    return text


def _range(field: FieldInfo) -> str:
    bounds = {
        name: getattr(limit, name)
        for limit in field.metadata
        for name in ("gt", "ge", "lt", "le")
        if hasattr(limit, name)
    }
    if "ge" in bounds and "le" in bounds:
        return f"must be between {bounds['ge']} and {bounds['le']}"
    signs = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}
    return "must be " + " and ".join(f"{signs[n]} {bounds[n]}" for n in signs if n in bounds)


def _locate(model: type[BaseModel], loc: Sequence[str | int]) -> _Place:
    """The place of ``loc`` in a file read as ``model``: which parts name tables, which a key."""
    tables: list[str] = []
    entry: int | None = None
    in_map = False
    parts = list(loc)
    while parts:
        fields: dict[str | int | None, FieldInfo] = {
            key: f for name, f in model.model_fields.items() for key in (name, f.alias)
        }
        field = fields.get(parts[0])
        nested = None if field is None else _tables_in(field.annotation)
        if nested is None:  # a key, known or not
            return _Place(
                tables=tuple(tables),
                entry=entry,
                keys=tuple(parts),
                model=model,
                field=field,
                kind="value",
                in_map=in_map,
            )
        collection, model = nested
        tables.append(str(parts.pop(0)))
        in_map = collection == "map"
        if not parts:
            kind = "tables" if collection == "array" else "table"
            return _Place(tables=tuple(tables), entry=entry, kind=kind)
        if collection == "array":
            entry = int(parts.pop(0)) + 1
        elif collection == "map":
            tables.append(str(parts.pop(0)))
    return _Place(tables=tuple(tables), entry=entry, in_map=in_map)


def _tables_in(annotation: Any) -> tuple[str, type[BaseModel]] | None:
    """``("table" | "array" | "map", model)`` when a field holds tables, else ``None``."""
    if get_origin(annotation) in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        annotation = members[0] if len(members) == 1 else None
    origin, args = get_origin(annotation), get_args(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "table", annotation
    inner = args[0] if origin is tuple else args[-1] if origin in (dict, Mapping) else None
    if isinstance(inner, type) and issubclass(inner, BaseModel):
        return ("array" if origin is tuple else "map"), inner
    return None


def _toml_place(table: tuple[str, ...], place: _Place) -> str:
    header = _path((*table, *place.tables))
    if place.entry is not None:
        where = f"[[{header}]] #{place.entry}"
    elif place.kind == "tables":
        where = f"[[{header}]]"
    else:
        where = f"[{header}]" if header else ""
    key = _path(place.keys)
    return f"{where} {key}" if where and key else where or key


def _path(parts: Sequence[str | int], *, quote: bool = True) -> str:
    """Keys joined by dots (quoted where TOML needs it), items as ``[i]``."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            bare = not quote or _BARE_KEY.fullmatch(part)
            text += ("." if text else "") + (part if bare else json.dumps(part, ensure_ascii=False))
    return text


def _shown(value: object) -> str:
    """A value as TOML writes it, near enough: ``"text"``, ``true``, ``[1, 2]``."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)
