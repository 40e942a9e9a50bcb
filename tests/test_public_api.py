"""The public API is what ``tests/public_api.txt`` says: a change to it is deliberate.

The public API is every public module of ``src/toolrelay`` (no ``_``-prefixed part in its
dotted path; ``__init__`` names its package, ``__main__`` is public) and the names of its
``__all__``, read from the source without importing it (the extras need not be installed).
After a deliberate change, write the file again and review its diff::

    python -m tests.test_public_api --write
"""

from __future__ import annotations

import ast
import difflib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "src" / "toolrelay"
EXPECTED = Path(__file__).resolve().parent / "public_api.txt"
REGENERATE = "python -m tests.test_public_api --write"

_HEADER = f"""\
# toolrelay's public API: each public module, then the names of its __all__ (indented).
# tests/test_public_api.py fails when the source differs. After a deliberate change:
#     {REGENERATE}
"""


def module_name(path: Path, source: Path = SOURCE) -> str:
    """The dotted name of the module at ``path`` (``tools/__init__.py``: ``toolrelay.tools``)."""
    parts = path.relative_to(source.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_public(name: str) -> bool:
    """No part of the dotted ``name`` starts with ``_`` (``__main__`` aside)."""
    return not any(part.startswith("_") and part != "__main__" for part in name.split("."))


def public_modules(source: Path = SOURCE) -> dict[str, Path]:
    """Every public module under ``source``, by dotted name, sorted."""
    found = {module_name(path, source): path for path in source.rglob("*.py")}
    return {name: found[name] for name in sorted(found) if is_public(name)}


def exported_names(path: Path) -> list[str]:
    """The names of the module's ``__all__`` (none without one).

    Raises:
        ValueError: ``__all__`` is not a literal list or tuple of strings.
    """
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            assert isinstance(node, ast.Assign | ast.AnnAssign)
            try:
                names = ast.literal_eval(node.value) if node.value is not None else None
            except ValueError:
                names = None
            if not isinstance(names, list | tuple) or not all(isinstance(n, str) for n in names):
                raise ValueError(f"{path}: write __all__ as a literal list of strings")
            return list(names)
    return []


def render(source: Path = SOURCE) -> str:
    """The public API of the tree at ``source`` in the format of ``tests/public_api.txt``."""
    lines = [_HEADER.rstrip("\n")]
    for name, path in public_modules(source).items():
        lines.append(name)
        lines += [f"    {exported}" for exported in sorted(exported_names(path))]
    return "\n".join(lines) + "\n"


def test_the_public_api_is_the_one_written_down() -> None:
    expected = EXPECTED.read_text(encoding="utf-8")
    actual = render()
    if actual != expected:
        diff = difflib.unified_diff(
            expected.splitlines(),
            actual.splitlines(),
            "tests/public_api.txt",
            "the source",
            lineterm="",
        )
        raise AssertionError(
            "the public API changed: update tests/public_api.txt deliberately "
            f"({REGENERATE}) and review its diff\n" + "\n".join(diff)
        )


def test_a_private_part_anywhere_in_the_path_makes_a_module_private(tmp_path: Path) -> None:
    source = tmp_path / "toolrelay"
    for relative, text in {
        "__init__.py": '__all__ = ["tool"]\n',
        "__main__.py": "",
        "exceptions.py": '__all__: list[str] = ["B", "A"]\n',
        "_sync.py": '__all__ = ["run_sync"]\n',
        "tools/__init__.py": '__all__ = ("Tool",)\n',
        "tools/_schema.py": "",
        "_impl/public_looking.py": "",
    }.items():
        (source / relative).parent.mkdir(parents=True, exist_ok=True)
        (source / relative).write_text(text, encoding="utf-8")
    assert render(source).removeprefix(_HEADER) == (
        "toolrelay\n    tool\ntoolrelay.__main__\ntoolrelay.exceptions\n    A\n    B\n"
        "toolrelay.tools\n    Tool\n"
    )
    (source / "tools" / "__init__.py").write_text("__all__ = [*names]\n", encoding="utf-8")
    with pytest.raises(ValueError, match="write __all__ as a literal list of strings"):
        render(source)


def main(argv: list[str]) -> int:
    if argv != ["--write"]:
        print(f"usage: {REGENERATE}", file=sys.stderr)
        return 2
    EXPECTED.write_text(render(), encoding="utf-8")
    print(f"wrote {EXPECTED.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
