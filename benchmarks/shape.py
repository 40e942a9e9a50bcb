"""The shape of the library: how much of it a reader meets, and how deep one tool call runs.

Counted on the source tree of this checkout (``src/toolrelay``), which must be the
``toolrelay`` Python imports (an editable install, or ``PYTHONPATH=src``):

- public modules: modules with no ``_``-prefixed part in their dotted name (``__init__``
  names its package; ``__main__`` is public), and private modules, all the others;
- exported names: the names in the ``__all__`` of the public modules, root package included;
  root names: those of ``toolrelay.__all__`` alone;
- source lines: non-blank lines of every ``.py`` file under ``src/toolrelay``;
- import circles: strongly connected components of more than one module in the import graph
  grimp builds (``TYPE_CHECKING`` imports included), as ``tests/test_import_graph.py`` finds;
- tool call frames: the frames of toolrelay's source on the stack inside one async tool
  called once through ``ChatClient`` with a scripted model, the tool's own frame excluded.
  A task the library started would cut the stack at its start; on this path it starts none.

Writes ``benchmarks/results/shape.json`` and ``.md`` and the shape section of
``docs/architecture.md``. Run: ``python benchmarks/shape.py`` (needs grimp, a dev dependency).
Nothing is timed.
"""

from __future__ import annotations

import asyncio
import json
import sys
import traceback
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
SOURCE = ROOT / "src" / "toolrelay"
PAGE = ROOT / "docs" / "architecture.md"

sys.path.insert(0, str(HERE))
from docs_section import Section, write_sections  # noqa: E402

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # tests.test_public_api and tests.test_import_graph

FIGURES = (
    ("public_modules", "public modules"),
    ("private_modules", "private modules"),
    ("exported_names", "names in public modules' `__all__`"),
    ("root_names", "root package names (`toolrelay.__all__`)"),
    ("source_lines", "non-blank source lines"),
    ("import_circles", "import circles"),
    ("tool_call_frames", "toolrelay frames under one async tool call via `ChatClient`"),
)
"""The figures, by JSON key, with how the tables name them."""


def _source_package() -> Path:
    import toolrelay

    imported = Path(toolrelay.__file__).resolve().parent
    if imported != SOURCE:
        raise SystemExit(
            f"toolrelay is imported from {imported}, not this checkout's {SOURCE}: "
            "install it editable or set PYTHONPATH=src"
        )
    return imported


def module_counts() -> dict[str, int]:
    """Public and private modules, exported and root names, non-blank source lines."""
    from tests.test_public_api import exported_names, is_public, module_name, public_modules

    paths = sorted(SOURCE.rglob("*.py"))
    public = public_modules(SOURCE)
    texts = [path.read_text(encoding="utf-8") for path in paths]
    lines = sum(1 for text in texts for line in text.splitlines() if line.strip())
    return {
        "public_modules": len(public),
        "private_modules": sum(1 for p in paths if not is_public(module_name(p, SOURCE))),
        "exported_names": sum(len(exported_names(path)) for path in public.values()),
        "root_names": len(exported_names(SOURCE / "__init__.py")),
        "source_lines": lines,
    }


def circles() -> list[list[str]]:
    """The import circles among toolrelay's modules (each a sorted list of modules)."""
    import grimp
    from tests.test_import_graph import import_circles

    return import_circles(grimp.build_graph("toolrelay", cache_dir=None))


def tool_call_stack() -> list[str]:
    """toolrelay's frames (``path/in/toolrelay.py:function``) inside one async tool call."""
    from toolrelay.client import ChatClient
    from toolrelay.testing import ScriptedModel, text_response, tool_call_response
    from toolrelay.tools import tool

    source = _source_package()
    stacks: list[traceback.StackSummary] = []

    @tool
    async def look_up(order_id: str) -> str:
        """Look up an order."""
        stacks.append(traceback.extract_stack())
        return f"order {order_id}: shipped"

    model = ScriptedModel(
        [tool_call_response(("look_up", {"order_id": "A1"})), text_response("It shipped.")]
    )
    client = ChatClient(model, tools=[look_up])
    answer = asyncio.run(client.run("Where is order A1?")).text
    if answer != "It shipped." or len(stacks) != 1:
        raise RuntimeError(f"the scripted turn did not call the tool once: {answer!r}, {stacks}")
    return [
        f"{Path(frame.filename).resolve().relative_to(source).as_posix()}:{frame.name}"
        for frame in stacks[0]
        if Path(frame.filename).resolve().is_relative_to(source)
    ]


def measure() -> dict[str, Any]:
    """Every figure of the shape, with the circles and the frames they count."""
    _source_package()
    found = circles()
    stack = tool_call_stack()
    return {
        **module_counts(),
        "import_circles": len(found),
        "tool_call_frames": len(stack),
        "circles": found,
        "frames": stack,
    }


def table(data: dict[str, Any]) -> str:
    lines = ["| measure | value |", "|---|---:|"]
    lines += [f"| {label} | {data[key]:,} |" for key, label in FIGURES]
    return "\n".join(lines)


def docs_sections(data: dict[str, Any] | None = None) -> list[Section]:
    """The shape section of docs/architecture.md (default: from the committed results)."""
    if data is None:
        data = json.loads((RESULTS / "shape.json").read_text(encoding="utf-8"))
    text = (
        f"{table(data)}\n\n"
        "Counted on the source by `python benchmarks/shape.py`, which says how; the frames "
        "are listed in `benchmarks/results/shape.md`."
    )
    return [Section(name="shape", page=PAGE, text=text)]


def results_markdown(data: dict[str, Any]) -> str:
    frames = "\n".join(f"{n}. `{frame}`" for n, frame in enumerate(data["frames"], 1))
    circles_text = "\n".join(f"- {' ↔ '.join(c)}" for c in data["circles"]) or "None."
    return (
        f"# Shape\n\n{table(data)}\n\n"
        f"## toolrelay frames under one async tool call, outermost first\n\n{frames}\n\n"
        f"## Import circles\n\n{circles_text}\n"
    )


def write(data: dict[str, Any], results: Path = RESULTS) -> None:
    """``shape.json`` and ``shape.md`` in ``results``."""
    results.mkdir(parents=True, exist_ok=True)
    (results / "shape.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    (results / "shape.md").write_text(results_markdown(data), encoding="utf-8")


def main() -> None:
    data = measure()
    print(table(data))
    write(data)
    write_sections(docs_sections(data))


if __name__ == "__main__":
    main()
