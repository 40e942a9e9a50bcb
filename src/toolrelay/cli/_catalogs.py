"""Loading a tool catalog named on the command line: a JSON(L) file or a Python module.

``CATALOG`` may be:

- a JSONL file, one tool per line, or a JSON file holding a list of tools (or an object with
  a ``"tools"`` list, or a single tool). A tool is ``{"name", "description", "parameters"}``;
  ``input_schema`` (Anthropic) and ``inputSchema`` (MCP) are accepted for ``parameters``, and
  OpenAI's ``{"type": "function", "function": {...}}`` wrapper is unwrapped;
- a folder holding ``tools.jsonl`` (a benchmark dataset);
- a Python module, by dotted name (``pkg.module``) or path (``path/to/file.py``, a package
  folder), optionally with ``:attribute`` (see ``_catalog_modules.py``).

Problems a user must fix before anything can run (a missing file, a line that is not JSON, a
tool without a name, an input schema that is not valid JSON Schema) raise
:class:`~toolrelay.exceptions.LoadError` naming the file and line (every tool with an invalid
schema at once, each with the JSON pointer of each problem and its fix).
Problems worth reporting but not fatal to listing (names providers reject, duplicates) are
:class:`Finding` s of the loaded catalog.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from toolrelay.cli._catalog_modules import load_module_tools
from toolrelay.exceptions import (
    DuplicateToolError,
    InvalidToolNameError,
    LoadError,
    ToolDefinitionError,
)
from toolrelay.tools._base import ToolDefinition, ToolMetadata
from toolrelay.tools._modules import split_attribute
from toolrelay.tools._names import provider_safe_name, validate_tool_name

__all__ = [
    "CatalogEntry",
    "Finding",
    "LoadedCatalog",
    "load_catalog",
    "read_json",
    "read_jsonl",
]

_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_JSON_SUFFIXES = {".json", ".jsonl", ".ndjson"}
_DATASET_FILE = "tools.jsonl"


@dataclass(frozen=True, kw_only=True)
class CatalogEntry:
    """One tool of a loaded catalog.

    Attributes:
        definition: What the model would be shown.
        origin: Where it was defined: ``file:line`` or a function's ``module.qualname``.
        metadata: The tool's runtime metadata (tools from modules only).
        row: The JSON object it was read from (tools from files only).
    """

    definition: ToolDefinition
    origin: str
    metadata: ToolMetadata | None = None
    row: Mapping[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class Finding:
    """A problem in a catalog that does not stop it from being listed (its message one line)."""

    kind: Literal["invalid-name", "duplicate-name"]
    name: str
    message: str


@dataclass(frozen=True, kw_only=True)
class LoadedCatalog:
    """The tools of a catalog, in the order they were defined, duplicates included.

    Attributes:
        source: The catalog as named on the command line.
    """

    source: str
    kind: Literal["file", "module"]
    entries: tuple[CatalogEntry, ...]

    def definitions(self) -> list[ToolDefinition]:
        return [e.definition for e in self.entries]

    def findings(self) -> list[Finding]:
        """Names providers would reject, and names used twice (also in provider-safe form)."""
        found: list[Finding] = []
        for entry in self.entries:
            try:
                validate_tool_name(entry.definition.name)
            except InvalidToolNameError as exc:
                reason = "; ".join(exc.problems)
                found.append(
                    Finding(
                        kind="invalid-name",
                        name=entry.definition.name,
                        message=f"{entry.definition.name!r} ({entry.origin}): {reason}",
                    )
                )
        by_name: dict[str, list[CatalogEntry]] = {}
        for entry in self.entries:
            by_name.setdefault(entry.definition.name, []).append(entry)
        for name, group in by_name.items():
            if len(group) > 1:
                times = "twice" if len(group) == 2 else f"{len(group)} times"
                origins = ", ".join(e.origin for e in group)
                found.append(
                    Finding(
                        kind="duplicate-name",
                        name=name,
                        message=f"{name!r} is defined {times} ({origins})",
                    )
                )
        # Different names sent to providers as one (a.b and a__b), each clash once.
        by_safe_name: dict[str, list[str]] = {}
        for name in by_name:
            by_safe_name.setdefault(provider_safe_name(name), []).append(name)
        for safe, names in by_safe_name.items():
            if len(names) > 1:
                shown = " and ".join(repr(n) for n in names)
                origins = ", ".join(by_name[n][0].origin for n in names)
                found.append(
                    Finding(
                        kind="duplicate-name",
                        name=names[0],
                        message=f"{shown} are sent to providers as the same name {safe!r} "
                        f"({origins})",
                    )
                )
        return found

    def unique_definitions(self) -> list[ToolDefinition]:
        """Every definition, after checking that no name is used twice.

        Raises:
            DuplicateToolError: Two tools share a name (the first such pair is named).
        """
        seen: dict[str, CatalogEntry] = {}
        for entry in self.entries:
            first = seen.setdefault(entry.definition.name, entry)
            if first is not entry:
                raise DuplicateToolError(entry.definition.name, first.origin, entry.origin)
        return self.definitions()


def load_catalog(spec: str) -> LoadedCatalog:
    """Load the catalog named by ``spec`` (see the module documentation for the forms).

    Raises:
        LoadError: The file or module is missing or malformed, or holds no tools.
        ToolDefinitionError: A module's tools are declared wrongly (duplicates included).
    """
    target, attribute = split_attribute(spec)
    path = Path(target)
    if path.is_dir():
        if (path / _DATASET_FILE).is_file() and not (path / "__init__.py").is_file():
            return _from_file(path / _DATASET_FILE, spec)
        return _from_module(spec)
    if path.is_file():
        if path.suffix == ".py":
            return _from_module(spec)
        if attribute is not None:
            raise LoadError(spec, "an :attribute can only follow a Python module")
        return _from_file(path, spec)
    if "/" in target or "\\" in target or path.suffix in {*_JSON_SUFFIXES, ".py"}:
        raise LoadError(target, "no such file")
    if _DOTTED.fullmatch(target):
        return _from_module(spec)
    raise LoadError(spec, "no such file or module")


def read_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, value)`` for each non-blank line of a JSONL file.

    Raises:
        LoadError: The file cannot be read, or a line is not JSON (its number is given).
    """
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise LoadError(
                str(path), f"not valid JSON: {exc.msg} (column {exc.colno})", line=number
            ) from exc


def read_json(path: Path) -> Any:
    """The JSON value in a file.

    Raises:
        LoadError: The file cannot be read or is not JSON (the line is given).
    """
    try:
        return json.loads(_read_text(path))
    except json.JSONDecodeError as exc:
        raise LoadError(
            str(path), f"not valid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno
        ) from exc


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise LoadError(str(path), "no such file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise LoadError(str(path), f"cannot be read: {exc}") from exc


def _from_file(path: Path, spec: str) -> LoadedCatalog:
    rows: list[tuple[Any, int | None, int | None, str]]  # (row, line, item, origin)
    if path.suffix in {".jsonl", ".ndjson"} or not _looks_like_json_document(path):
        rows = [(row, number, None, f"{path}:{number}") for number, row in read_jsonl(path)]
    else:
        data = read_json(path)
        items = data.get("tools") if isinstance(data, dict) and "tools" in data else data
        if isinstance(items, dict):
            items = [items]
        if not isinstance(items, list):
            raise LoadError(str(path), "expected a list of tool definitions")
        rows = [(row, None, n, f"{path} item {n}") for n, row in enumerate(items, start=1)]
    entries: list[CatalogEntry] = []
    refused: list[tuple[int | None, int | None, ToolDefinitionError]] = []
    for row, line, item, origin in rows:
        try:
            definition = _definition(row, str(path), line=line, item=item)
        except ToolDefinitionError as exc:
            refused.append((line, item, exc))
            continue
        entries.append(CatalogEntry(definition=definition, origin=origin, row=row))
    if refused:
        raise _refused(path, refused)
    if not entries:
        raise LoadError(str(path), "no tool definitions found")
    return LoadedCatalog(source=spec, kind="file", entries=tuple(entries))


def _refused(
    path: Path, refused: list[tuple[int | None, int | None, ToolDefinitionError]]
) -> LoadError:
    """One error naming every tool whose definition was refused (its line, name and fixes)."""

    def what(exc: ToolDefinitionError) -> str:
        return f"tool {exc.tool!r}: {'; '.join(exc.problems)}"

    if len(refused) == 1:
        line, item, exc = refused[0]
        reason = what(exc) if item is None else f"item {item}: {what(exc)}"
        error = LoadError(str(path), reason, line=line)
        error.__cause__ = exc
        return error
    listed = "\n".join(
        f"{'line ' + str(line) if line is not None else 'item ' + str(item)}, {what(exc)}"
        for line, item, exc in refused
    )
    return LoadError(str(path), f"{len(refused)} tools are invalid\n{listed}")


def _looks_like_json_document(path: Path) -> bool:
    """A ``.json`` file, or any file that parses as one JSON value (else it is JSONL)."""
    if path.suffix == ".json":
        return True
    try:
        json.loads(_read_text(path))
    except json.JSONDecodeError:
        return False
    return True


def _definition(row: Any, source: str, *, line: int | None, item: int | None) -> ToolDefinition:
    def fail(reason: str) -> LoadError:
        return LoadError(source, f"item {item}: {reason}" if item else reason, line=line)

    if not isinstance(row, Mapping):
        raise fail(f"expected a JSON object, got {type(row).__name__}")
    function = row.get("function")
    if isinstance(function, Mapping) and row.get("type", "function") == "function":
        row = function
    name = row.get("name")
    if not isinstance(name, str) or not name:
        raise fail('a tool definition needs a non-empty "name" string')
    description = row.get("description")
    if description is None:
        description = ""
    if not isinstance(description, str):
        raise fail(f'the "description" of {name!r} is not a string')
    schema = next(
        (row[k] for k in ("parameters", "input_schema", "inputSchema") if row.get(k) is not None),
        {"type": "object", "properties": {}},
    )
    if not isinstance(schema, Mapping):
        raise fail(f'the "parameters" of {name!r} is not a JSON object')
    return ToolDefinition(name=name, description=description, input_schema=dict(schema))


def _from_module(spec: str) -> LoadedCatalog:
    loaded = load_module_tools(spec)
    entries = tuple(
        CatalogEntry(definition=tool.definition, origin=origin, metadata=tool.metadata)
        for tool, origin in loaded
    )
    return LoadedCatalog(source=spec, kind="module", entries=entries)
