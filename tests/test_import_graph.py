"""No import circle among toolrelay's modules, ``TYPE_CHECKING`` imports included.

A circle is a strongly connected component of the module import graph (as grimp builds it,
the graph import-linter checks) with more than one module. Each one is reported as a path of
imports with their line numbers, so the import to move is in the failure message.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import pytest

from tests.extras import needs_extra

grimp = pytest.importorskip("grimp", reason=needs_extra("dev"))


def import_circles(graph: Any) -> list[list[str]]:
    """The strongly connected components of ``graph`` with two modules or more, each sorted.

    Tarjan's algorithm, iterative (a deep chain of imports must not hit the recursion limit).
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, imported = work[-1]
            step = next(imported, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph.find_modules_directly_imported_by(step)))))
                elif step in on_stack:
                    low[module] = min(low[module], index[step])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def one_cycle(graph: Any, component: list[str]) -> str:
    """A path of imports around ``component`` from its first module back to it, with lines."""
    members = set(component)
    start = component[0]
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        module = queue.popleft()
        for imported in sorted(graph.find_modules_directly_imported_by(module) & members):
            if imported == start:
                path = [module]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                path.reverse()
                steps = zip(path, [*path[1:], start], strict=True)
                return " -> ".join(f"{a} (line {_lines(graph, a, b)})" for a, b in steps) + (
                    f" -> {start}"
                )
            if imported not in came_from:
                came_from[imported] = module
                queue.append(imported)
    raise AssertionError(f"{component} is not a circle")


def _lines(graph: Any, importer: str, imported: str) -> str:
    details = graph.get_import_details(importer=importer, imported=imported)
    return ", ".join(str(d["line_number"]) for d in details)


def test_there_is_no_import_circle_among_toolrelays_modules() -> None:
    graph = grimp.build_graph("toolrelay", cache_dir=None)
    circles = import_circles(graph)
    assert not circles, "import circles:\n" + "\n".join(one_cycle(graph, c) for c in circles)


def test_a_circle_is_found_and_shown_with_its_import_lines() -> None:
    graph = grimp.ImportGraph()
    for name in ("pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.d"):
        graph.add_module(name)
    for importer, imported, line in [
        ("pkg.a", "pkg.b", 3),
        ("pkg.b", "pkg.c", 5),
        ("pkg.c", "pkg.a", 7),
        ("pkg.c", "pkg.d", 8),
        ("pkg.d", "pkg.d", 1),  # a module importing itself is no circle between modules
    ]:
        graph.add_import(
            importer=importer, imported=imported, line_number=line, line_contents="import"
        )
    assert import_circles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]
    assert one_cycle(graph, ["pkg.a", "pkg.b", "pkg.c"]) == (
        "pkg.a (line 3) -> pkg.b (line 5) -> pkg.c (line 7) -> pkg.a"
    )
    graph.remove_import(importer="pkg.c", imported="pkg.a")
    assert import_circles(graph) == []
