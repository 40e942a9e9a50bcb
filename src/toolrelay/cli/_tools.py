"""``toolrelay tools CATALOG``: every tool with its parameters and token size, and findings.

Findings are names providers would reject and names used twice. They are listed with the
tools, and the command then exits with status 1, so it can guard a catalog in CI.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.json import JSON
from rich.table import Table
from rich.text import Text

from toolrelay._plural import plural
from toolrelay.cli._catalogs import CatalogEntry, Finding, LoadedCatalog, load_catalog
from toolrelay.cli._output import JsonOption, emit_json, stdout_console
from toolrelay.search._documents import summarize
from toolrelay.tools._base import ToolMetadata
from toolrelay.tools._names import provider_safe_name
from toolrelay.tools._tokens import TokenSummary, summarize_tokens

__all__ = ["CatalogArgument", "Order", "tools_command"]

CatalogArgument = Annotated[
    str,
    typer.Argument(
        metavar="CATALOG",
        help=(
            "A JSONL/JSON file of tool definitions, a folder with tools.jsonl, or a Python "
            "module (pkg.module, path/to/file.py, a package folder; :attribute optional)."
        ),
        show_default=False,
    ),
]

_MAX_ENUM_SHOWN = 4


class Order(StrEnum):
    """How ``toolrelay tools`` orders the listing."""

    CATALOG = "catalog"
    NAME = "name"
    TOKENS = "tokens"


def tools_command(
    catalog: CatalogArgument,
    schemas: Annotated[
        bool, typer.Option("--schemas", help="Also print each tool's full JSON Schema.")
    ] = False,
    order: Annotated[
        Order, typer.Option("--sort", help="Order of the listing.", case_sensitive=False)
    ] = Order.CATALOG,
    as_json: JsonOption = False,
) -> None:
    """List the tools of a catalog with their parameters and token sizes (cl100k_base).

    Names providers would reject and names used twice are reported as findings; the
    command then exits with status 1.
    """
    loaded = load_catalog(catalog)
    sizes = summarize_tokens(loaded.definitions())
    rows = list(zip(loaded.entries, sizes.sizes, strict=True))
    if order is Order.NAME:
        rows.sort(key=lambda row: row[0].definition.name)
    elif order is Order.TOKENS:
        rows.sort(key=lambda row: -row[1])
    findings = loaded.findings()
    if as_json:
        emit_json(_as_json(loaded, rows, sizes, findings))
    else:
        _print(loaded, rows, sizes, findings, schemas=schemas)
    if findings:
        typer.echo(
            f"error: {plural(len(findings), 'finding')} in {catalog} "
            "(invalid or duplicate tool names)",
            err=True,
        )
        raise typer.Exit(1)


def _print(
    loaded: LoadedCatalog,
    rows: list[tuple[CatalogEntry, int]],
    sizes: TokenSummary,
    findings: list[Finding],
    *,
    schemas: bool,
) -> None:
    console = stdout_console()
    with_flags = any(e.metadata is not None and _flags(e.metadata) for e, _ in rows)
    table = Table(title=f"{plural(len(rows), 'tool')} in {loaded.source}", title_justify="left")
    table.add_column("#", justify="right", style="dim")
    table.add_column("Name", style="bold", overflow="fold")
    table.add_column("Parameters", overflow="fold")
    table.add_column("Tokens", justify="right")
    if with_flags:
        table.add_column("Flags", style="yellow")
    table.add_column("Description", overflow="fold")
    for number, (entry, size) in enumerate(rows, start=1):
        definition = entry.definition
        cells: list[Text] = [
            Text(str(number)),
            Text(definition.name),
            Text(_signature(definition.input_schema)),
            Text(f"{size:,}"),
        ]
        if with_flags:
            cells.append(Text(", ".join(_flags(entry.metadata))))
        cells.append(Text(summarize(definition.description)))
        table.add_row(*cells)
    console.print(table)
    largest = max(rows, key=lambda row: row[1])[0].definition.name
    console.print(
        f"Total: {plural(len(rows), 'tool')}, {plural(sizes.total, 'token')} (cl100k_base); "
        f"mean {sizes.mean:,.0f}, largest {sizes.largest:,} ({largest})",
        markup=False,
    )
    if schemas:
        for entry, _ in rows:
            console.rule(Text(entry.definition.name), align="left")
            console.print(JSON(json.dumps(dict(entry.definition.input_schema))))
    if findings:
        console.print(Text(f"\nFindings ({len(findings)}):", style="bold red"))
        for finding in findings:
            console.print(Text(f"- {finding.kind}: {finding.message}"))


def _as_json(
    loaded: LoadedCatalog,
    rows: list[tuple[CatalogEntry, int]],
    sizes: TokenSummary,
    findings: list[Finding],
) -> dict[str, Any]:
    return {
        "catalog": loaded.source,
        "kind": loaded.kind,
        "encoding": "cl100k_base",
        "tools": [
            {
                "name": entry.definition.name,
                "provider_name": provider_safe_name(entry.definition.name),
                "description": entry.definition.description,
                "parameters": entry.definition.input_schema,
                "tokens": size,
                "origin": entry.origin,
                "metadata": _metadata_json(entry.metadata),
            }
            for entry, size in rows
        ],
        "totals": {
            "tools": len(rows),
            "tokens": sizes.total,
            "mean_tokens": round(sizes.mean, 1),
            "largest_tokens": sizes.largest,
        },
        "findings": [{"kind": f.kind, "name": f.name, "message": f.message} for f in findings],
    }


def _metadata_json(metadata: ToolMetadata | None) -> dict[str, Any] | None:
    if metadata is None:
        return None
    return {
        "return_direct": metadata.return_direct,
        "timeout": metadata.timeout,
        "read_only": metadata.read_only,
        "destructive": metadata.destructive,
        "requires_approval": metadata.requires_approval,
    }


def _flags(metadata: ToolMetadata | None) -> list[str]:
    if metadata is None:
        return []
    flags = [
        ("read-only", metadata.read_only),
        ("destructive", metadata.destructive),
        ("approval", metadata.requires_approval),
        ("direct", metadata.return_direct),
    ]
    return [label for label, on in flags if on]


def _signature(schema: Any) -> str:
    """``city: string, unit?: "c"|"f"`` from an object schema (``?`` marks optional)."""
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping) or not properties:
        return ""
    required = schema.get("required") or []
    parts = []
    for name, spec in properties.items():
        mark = "" if name in required else "?"
        parts.append(f"{name}{mark}: {_type_label(spec)}")
    return ", ".join(parts)


def _type_label(spec: Any) -> str:
    if not isinstance(spec, Mapping):
        return "any"
    enum = spec.get("enum")
    if isinstance(enum, list) and enum:
        shown = "|".join(json.dumps(v, ensure_ascii=False) for v in enum[:_MAX_ENUM_SHOWN])
        return shown + ("|…" if len(enum) > _MAX_ENUM_SHOWN else "")
    kind = spec.get("type")
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind)
    if kind == "array":
        return f"{_type_label(spec.get('items'))}[]"
    if isinstance(kind, str):
        return kind
    for key in ("anyOf", "oneOf"):
        options = spec.get(key)
        if isinstance(options, list) and options:
            return "|".join(_type_label(o) for o in options)
    return "any"
