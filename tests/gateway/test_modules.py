from __future__ import annotations

from pathlib import Path

import pytest

from toolrelay.exceptions import LoadError
from toolrelay.gateway._modules import load_module_tools

TOOLS_FILE = '''
from toolrelay.tools import ToolCatalog, tool


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


@tool(name="clock.now")
def now() -> str:
    """The time."""
    return "12:00"


EXTRA = ToolCatalog([])
'''

FACTORY_FILE = '''
from toolrelay.tools import FunctionTool, ToolCatalog


def hello() -> str:
    """Say hello."""
    return "hello"


def build_catalog() -> ToolCatalog:
    return ToolCatalog([FunctionTool.from_function(hello, name="greet.hello")])
'''


def test_tools_of_a_file(tmp_path: Path) -> None:
    path = tmp_path / "tools.py"
    path.write_text(TOOLS_FILE, encoding="utf-8")
    tools = load_module_tools(str(path))
    assert [t.definition.name for t in tools] == ["ping", "clock.now"]
    # Imported once: loading it again finds the same function.
    assert load_module_tools(str(path))[0].function is tools[0].function  # type: ignore[attr-defined]


def test_a_factory_supplies_the_tools(tmp_path: Path) -> None:
    path = tmp_path / "factory.py"
    path.write_text(FACTORY_FILE, encoding="utf-8")
    assert [t.definition.name for t in load_module_tools(str(path))] == ["greet.hello"]


def test_a_dotted_module_name() -> None:
    tools = load_module_tools("examples.quickstart")
    assert tools, "the quickstart example defines tools"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("x = 1\n", "no tools found"),
        ("raise RuntimeError('broken')\n", "importing failed: RuntimeError: broken"),
        ("def build_catalog():\n    raise ValueError('nope')\n", "build_catalog\\(\\) failed"),
    ],
)
def test_load_errors(tmp_path: Path, source: str, message: str) -> None:
    path = tmp_path / "bad.py"
    path.write_text(source, encoding="utf-8")
    with pytest.raises(LoadError, match=message):
        load_module_tools(str(path))


def test_missing_modules() -> None:
    with pytest.raises(LoadError, match="no such file"):
        load_module_tools("/nonexistent/tools.py")
    with pytest.raises(LoadError, match="no such file or module"):
        load_module_tools("no_such_package.tools")
