"""Loading catalogs: JSON(L) files in every accepted shape, modules in every accepted form."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from toolrelay.cli._catalogs import load_catalog, read_jsonl
from toolrelay.exceptions import DuplicateToolError, LoadError

from ._helpers import REFUND_DESK, ROOT, WEATHER_TOOLS, write_jsonl
from .conftest import Invoke

TOOL_MODULE = '''
from toolrelay.tools import ToolCatalog, as_tools, tool


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return city


@tool(name="orders.cancel", read_only=False)
def cancel(order_id: str) -> str:
    """Cancel an order."""
    return order_id


def helper() -> int:
    return 1
'''


def _module(folder: Path, name: str, source: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


# --- files -----------------------------------------------------------------------------------


def test_jsonl_rows_become_definitions_with_line_origins(catalog_file: Path) -> None:
    loaded = load_catalog(str(catalog_file))
    assert loaded.kind == "file"
    assert [d.name for d in loaded.definitions()] == ["get_weather", "refund.create", "send_email"]
    first = loaded.entries[0]
    assert first.definition.input_schema["required"] == ["city"]
    assert first.origin == f"{catalog_file}:1"
    assert first.metadata is None


def test_json_list_and_wrapped_shapes_are_accepted(tmp_path: Path) -> None:
    rows = [
        {"type": "function", "function": WEATHER_TOOLS[0]},  # OpenAI wrapper
        {"name": "b", "description": "B.", "input_schema": {"type": "object"}},  # Anthropic
        {"name": "c", "inputSchema": {"type": "object", "properties": {"x": {}}}},  # MCP
        {"name": "d"},  # no description, no schema
    ]
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    loaded = load_catalog(str(path))
    by_name = {d.name: d for d in loaded.definitions()}
    assert list(by_name) == ["get_weather", "b", "c", "d"]
    assert by_name["get_weather"].description.startswith("Current weather")
    assert by_name["c"].input_schema == {"type": "object", "properties": {"x": {}}}
    assert by_name["d"].description == ""
    assert by_name["d"].input_schema == {"type": "object", "properties": {}}
    assert loaded.entries[1].origin == f"{path} item 2"


def test_json_object_with_tools_list(tmp_path: Path) -> None:
    path = tmp_path / "request.json"
    path.write_text(json.dumps({"model": "m", "tools": WEATHER_TOOLS[:2]}), encoding="utf-8")
    assert [d.name for d in load_catalog(str(path)).definitions()] == [
        "get_weather",
        "refund.create",
    ]


def test_a_folder_with_tools_jsonl_is_a_dataset(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "tools.jsonl", WEATHER_TOOLS)
    assert len(load_catalog(str(tmp_path)).entries) == 3


def test_benchmark_dataset_loads() -> None:
    loaded = load_catalog(str(ROOT / "benchmarks" / "data" / "restbench"))
    assert len(loaded.entries) > 50


def test_bad_json_line_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "tools.jsonl"
    path.write_text('{"name": "a"}\n\n{"name": "b",}\n', encoding="utf-8")
    with pytest.raises(LoadError) as caught:
        load_catalog(str(path))
    assert caught.value.line == 3
    assert str(caught.value).startswith(f"{path}:3: not valid JSON")


def test_bad_json_document_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text('[\n  {"name": "a"},\n  {"name": }\n]\n', encoding="utf-8")
    with pytest.raises(LoadError) as caught:
        load_catalog(str(path))
    assert caught.value.line == 3


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"description": "no name"}, '"name"'),
        ({"name": ""}, '"name"'),
        ({"name": "a", "description": 3}, '"description"'),
        ({"name": "a", "parameters": [1]}, '"parameters"'),
        (["not", "an", "object"], "JSON object"),
    ],
)
def test_malformed_definitions_are_load_errors(tmp_path: Path, row: object, message: str) -> None:
    path = write_jsonl(tmp_path / "tools.jsonl", [{"name": "ok"}, row])
    with pytest.raises(LoadError, match=message) as caught:
        load_catalog(str(path))
    assert caught.value.line == 2


BAD_SCHEMA = {
    "name": "get_weather",
    "description": "Weather.",
    "parameters": {"type": "object", "properties": {"city": {"type": "objekt"}}},
}
TYPE_FIX = (
    'input schema at /properties/city/type: "objekt" is not a JSON Schema type; did you mean '
    '"object"? (the types are array, boolean, integer, null, number, object, string)'
)


def test_an_invalid_input_schema_names_the_line_the_tool_the_pointer_and_the_fix(
    tmp_path: Path,
) -> None:
    path = write_jsonl(tmp_path / "tools.jsonl", [{"name": "ok"}, BAD_SCHEMA])
    with pytest.raises(LoadError) as caught:
        load_catalog(str(path))
    assert str(caught.value) == f"{path}:2: tool 'get_weather': {TYPE_FIX}"
    assert caught.value.line == 2


def test_every_tool_with_an_invalid_schema_is_named_at_once(tmp_path: Path) -> None:
    clock = {"name": "clock", "parameters": {"type": "string"}}
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([BAD_SCHEMA, {"name": "ok"}, clock]), encoding="utf-8")
    with pytest.raises(LoadError) as caught:
        load_catalog(str(path))
    assert str(caught.value) == (
        f"{path}: 2 tools are invalid\n"
        f"item 1, tool 'get_weather': {TYPE_FIX}\n"
        "item 3, tool 'clock': input schema at /type: the top level must be an object schema, "
        'not "string": a tool\'s arguments are one JSON object; write {"type": "object", '
        '"properties": {"<name>": <this schema>}}'
    )


@pytest.mark.parametrize("command", [["tools"], ["lint", "--index", "bm25"], ["search"]])
def test_tools_lint_and_search_refuse_an_invalid_schema(
    cli: Invoke, tmp_path: Path, command: list[str]
) -> None:
    path = write_jsonl(tmp_path / "tools.jsonl", [BAD_SCHEMA])
    query = ["weather"] if command == ["search"] else []
    result = cli(*command, str(path), *query)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == f"error: {path}:1: tool 'get_weather': {TYPE_FIX}\n"


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="no such file"):
        load_catalog(str(tmp_path / "missing.jsonl"))
    with pytest.raises(LoadError, match="no such file"):
        load_catalog("missing.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(LoadError, match="no tool definitions"):
        load_catalog(str(tmp_path / "empty.jsonl"))
    with pytest.raises(LoadError, match="no such file or module"):
        load_catalog("no_such_package_xyz.mod")


def test_read_jsonl_skips_blank_lines_and_counts_them(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"a": 1}\n\n  \n{"a": 2}\n', encoding="utf-8")
    assert list(read_jsonl(path)) == [(1, {"a": 1}), (4, {"a": 2})]


# --- findings --------------------------------------------------------------------------------


def test_findings_report_invalid_and_duplicate_names(tmp_path: Path) -> None:
    rows = [
        {"name": "a"},
        {"name": "a"},
        {"name": "bad name"},
        {"name": "x.y"},
        {"name": "x__y"},
        {"name": "fine"},
    ]
    loaded = load_catalog(str(write_jsonl(tmp_path / "t.jsonl", rows)))
    findings = loaded.findings()
    assert [(f.kind, f.name) for f in findings] == [
        ("invalid-name", "bad name"),
        ("duplicate-name", "a"),
        ("duplicate-name", "x.y"),
    ]
    assert "t.jsonl:1" in findings[1].message
    assert "t.jsonl:2" in findings[1].message
    assert "'x__y'" in findings[2].message


def test_a_name_defined_twice_is_reported_beside_its_provider_name_clash(tmp_path: Path) -> None:
    rows = [{"name": "get.time"}, {"name": "get__time"}, {"name": "get.time"}]
    path = write_jsonl(tmp_path / "t.jsonl", rows)
    assert [f.message for f in load_catalog(str(path)).findings()] == [
        f"'get.time' is defined twice ({path}:1, {path}:3)",
        f"'get.time' and 'get__time' are sent to providers as the same name 'get__time' "
        f"({path}:1, {path}:2)",
    ]


def test_unique_definitions_rejects_the_first_duplicate(tmp_path: Path) -> None:
    loaded = load_catalog(str(write_jsonl(tmp_path / "t.jsonl", [{"name": "a"}, {"name": "a"}])))
    with pytest.raises(DuplicateToolError) as caught:
        loaded.unique_definitions()
    assert caught.value.first_source.endswith("t.jsonl:1")
    assert caught.value.second_source.endswith("t.jsonl:2")


def test_a_clean_catalog_has_no_findings(catalog_file: Path) -> None:
    loaded = load_catalog(str(catalog_file))
    assert loaded.findings() == []
    assert len(loaded.unique_definitions()) == 3


# --- modules ---------------------------------------------------------------------------------


def test_module_file_yields_its_decorated_functions(tmp_path: Path) -> None:
    path = _module(tmp_path, "weather_tools", TOOL_MODULE)
    loaded = load_catalog(str(path))
    assert loaded.kind == "module"
    assert [d.name for d in loaded.definitions()] == ["get_weather", "orders.cancel"]
    assert loaded.entries[0].origin == "weather_tools.get_weather"
    assert loaded.entries[0].metadata is not None


def test_module_by_dotted_name_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    _module(package, "tools_here", TOOL_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.path", [p for p in __import__("sys").path if p not in ("", ".")])
    loaded = load_catalog("mypkg.tools_here")
    assert [d.name for d in loaded.definitions()] == ["get_weather", "orders.cancel"]


def test_file_inside_a_package_keeps_relative_imports(tmp_path: Path) -> None:
    package = tmp_path / "relpkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    _module(package, "impl", TOOL_MODULE)
    _module(package, "facade", "from .impl import get_weather, cancel\n")
    loaded = load_catalog(str(package / "impl.py"))
    assert len(loaded.entries) == 2
    # Re-exported functions belong to another module: tools_from(module) skips them.
    with pytest.raises(LoadError, match="no tools found"):
        load_catalog(str(package / "facade.py"))


def test_build_catalog_and_module_level_catalogs(tmp_path: Path) -> None:
    source = TOOL_MODULE + textwrap.dedent('''
        @tool
        def extra(text: str) -> str:
            """Not in any catalog."""
            return text


        def build_catalog() -> ToolCatalog:
            return ToolCatalog(as_tools(get_weather, cancel))


        CATALOG = ToolCatalog(as_tools(get_weather))
    ''')
    loaded = load_catalog(str(_module(tmp_path, "with_factory", source)))
    # Each tool once, though it is reached through the factory, CATALOG and the module.
    assert [d.name for d in loaded.definitions()] == ["get_weather", "orders.cancel", "extra"]


def test_attribute_selects_a_factory_catalog_or_tool(tmp_path: Path) -> None:
    source = TOOL_MODULE + textwrap.dedent("""
        def only_weather():
            return [get_weather]


        def needs_argument(x):
            return [get_weather]


        CATALOG = ToolCatalog(as_tools(cancel))
    """)
    path = _module(tmp_path, "attribute_tools", source)
    names = lambda spec: [d.name for d in load_catalog(spec).definitions()]  # noqa: E731
    assert names(f"{path}:only_weather") == ["get_weather"]
    assert names(f"{path}:CATALOG") == ["orders.cancel"]
    assert names(f"{path}:get_weather") == ["get_weather"]
    with pytest.raises(LoadError, match="needs arguments"):
        load_catalog(f"{path}:needs_argument")
    with pytest.raises(LoadError, match="no attribute 'nothing'"):
        load_catalog(f"{path}:nothing")
    data = write_jsonl(tmp_path / "x.jsonl", [{"name": "a"}])
    with pytest.raises(LoadError, match=":attribute"):
        load_catalog(f"{data}:attr")


def test_module_import_failures_are_load_errors(tmp_path: Path) -> None:
    broken = _module(tmp_path, "broken_mod", "import no_such_dependency_xyz\n")
    with pytest.raises(LoadError, match="importing failed: ModuleNotFoundError"):
        load_catalog(str(broken))
    syntax = _module(tmp_path, "syntax_mod", "def (:\n")
    with pytest.raises(LoadError, match="importing failed: SyntaxError"):
        load_catalog(str(syntax))
    empty = _module(tmp_path, "empty_mod", "X = 1\n")
    with pytest.raises(LoadError, match="no tools found"):
        load_catalog(str(empty))


def test_failing_factory_is_a_load_error(tmp_path: Path) -> None:
    path = _module(
        tmp_path, "bad_factory", "def build_catalog():\n    raise RuntimeError('boom')\n"
    )
    with pytest.raises(LoadError, match="RuntimeError: boom"):
        load_catalog(str(path))


def test_a_module_name_taken_by_another_file_is_refused(tmp_path: Path) -> None:
    path = _module(tmp_path, "json", TOOL_MODULE)
    with pytest.raises(LoadError, match="already taken"):
        load_catalog(str(path))


def test_refund_desk_by_path_and_by_dotted_name(monkeypatch: pytest.MonkeyPatch) -> None:
    by_path = load_catalog(str(REFUND_DESK))
    assert len(by_path.entries) == 78
    assert by_path.findings() == []
    monkeypatch.chdir(ROOT)
    by_name = load_catalog("examples.refund_desk")
    assert [d.name for d in by_name.definitions()] == [d.name for d in by_path.definitions()]
    refund = next(e for e in by_name.entries if e.definition.name == "refund.find_failed_orders")
    assert refund.metadata is not None
    assert refund.metadata.read_only
