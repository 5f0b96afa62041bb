"""The library's import graph has no cycle (issue 18), lazy imports included.

`grimp` sees every `import judgelab...` in a module, at module level or inside a function, so
a cycle hidden behind a function-level import (as `judges.spec` → `judges.offline` →
`judges.table` → `judges.spec` once was) is found too. Lazy imports kept for start-up time
(`judgelab.cli.*`) are fine as long as they close no cycle.
"""

from __future__ import annotations

import grimp
import pytest


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("judgelab", cache_dir=None)


def _children(graph: grimp.ImportGraph, module: str):
    return iter(sorted(graph.find_modules_directly_imported_by(module)))


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Return the strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, _children(graph, root))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, _children(graph, child)))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _chain(graph: grimp.ImportGraph, component: list[str]) -> str:
    first, second = component[0], component[1]
    there = graph.find_shortest_chain(importer=first, imported=second) or ()
    back = graph.find_shortest_chain(importer=second, imported=first) or ()
    return " -> ".join([*there, *back[1:]])


def test_the_graph_sees_the_library_and_function_level_imports(graph):
    assert "judgelab.judges.runner" in graph.modules
    assert len(graph.modules) > 50
    # cli/judge.py imports the judges inside its command function, for start-up time
    assert graph.direct_import_exists(importer="judgelab.cli.judge", imported="judgelab.judges")


def test_no_import_cycles(graph):
    cycles = _cycles(graph)
    assert not cycles, "import cycles: " + "; ".join(_chain(graph, c) for c in cycles)


def test_the_cycle_finder_finds_a_planted_cycle(graph):
    graph.add_import(importer="judgelab.core.paths", imported="judgelab.judges.spec")
    try:
        cycles = _cycles(graph)
    finally:
        graph.remove_import(importer="judgelab.core.paths", imported="judgelab.judges.spec")
    assert any({"judgelab.core.paths", "judgelab.judges.spec"} <= set(c) for c in cycles)
