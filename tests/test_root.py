"""The root package: the names a program needs, each the very object of its home package."""

from __future__ import annotations

import importlib
import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pytest

import toolrelay
from toolrelay import ToolContext, as_tools, tool


def test_every_root_name_is_its_home_packages_object() -> None:
    assert len(toolrelay.__all__) >= 25
    assert sorted(set(toolrelay.__all__) - {"__version__"}) == sorted(toolrelay._HOMES)
    for name in toolrelay._HOMES:
        home = importlib.import_module(toolrelay._HOMES[name])
        assert name in home.__all__, f"{name} is not part of {home.__name__}'s API"
        assert getattr(toolrelay, name) is getattr(home, name)


async def test_a_program_writes_its_first_tool_from_the_root() -> None:
    @tool
    def greet(name: str, context: ToolContext) -> str:
        """Greet someone."""
        return f"hello {name} from {context.tenant_id}"

    (made,) = as_tools(greet)
    assert made.definition.name == "greet"
    assert list(made.definition.input_schema["properties"]) == ["name"]  # the context is hidden
    answer = await made.call('{"name": "Ada"}', ToolContext(tenant_id="acme"))
    assert answer == "hello Ada from acme"


def test_importing_the_root_loads_no_package_until_a_name_is_used() -> None:
    code = (
        "import sys, toolrelay\n"
        "print(sorted(m for m in sys.modules if m.startswith('toolrelay.')))\n"
        "toolrelay.tool\n"
        "print('toolrelay.tools' in sys.modules, 'toolrelay.client' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == ["['toolrelay._version']", "True False"]


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'Toool'"):
        _ = toolrelay.Toool  # type: ignore[attr-defined]
    assert "ChatClient" in dir(toolrelay)


def test_library_code_never_imports_the_root_package() -> None:
    # The root re-exports every layer; a module importing it would import all layers above.
    source = Path(toolrelay.__file__).parent
    offenders = [
        f"{path.relative_to(source)}:{number}"
        for path in source.rglob("*.py")
        if path.name != "__init__.py" or path.parent != source
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.match(r"\s*(from toolrelay import |import toolrelay\s*$)", line)
    ]
    assert not offenders, f"import from toolrelay's packages instead: {offenders}"


def test_the_version_is_the_installed_distributions() -> None:
    assert toolrelay.__version__ == importlib.metadata.version("toolrelay")


def test_readme_lists_every_root_name_once() -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    table = readme.split("<!-- the root names, checked by tests/test_root.py -->")[1]
    table = table.split("<!-- end of the root names -->")[0]
    listed = re.findall(r"`(\w+)`", table)
    assert sorted(listed) == sorted(set(toolrelay.__all__) - {"__version__"})
