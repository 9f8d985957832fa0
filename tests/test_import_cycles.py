"""The lab's modules form no import circle, and the audit layer knows nothing above it.

Read from the source with ast, so a circle hidden in a function-level import counts too (it
only postpones the failure); imports under `if TYPE_CHECKING:` are left out (they never run).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAB = ROOT / "lab"
# Layers that must never import what sits above them.
BELOW = {"lab.audit": ("lab.operator", "lab.web", "lab.alerts", "lab.api", "lab.runs")}


def _module_of(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_of(path): path for path in LAB.rglob("*.py")}


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(tree: ast.AST, here: str, is_package: bool) -> Iterator[str]:
    """Every module name an import statement of the tree names, with `from x import y` as x.y."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _type_checking_only(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = here.split(".") if is_package else here.split(".")[:-1]
                package = package[: len(package) - node.level + 1]
                base = ".".join([*package, base] if base else package)
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)
        stack.extend(ast.iter_child_nodes(node))


def import_graph() -> dict[str, set[str]]:
    """Module → the lab modules it imports."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        names = _imported(tree, name, path.name == "__init__.py")
        graph[name] = {target for target in names if target in modules and target != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_checker_finds_a_circle_through_a_function_level_import():
    source = {"a": "import b\n", "b": "def f():\n    from a import x\n"}
    graph = {
        name: {t for t in _imported(ast.parse(text), name, False) if t in source}
        for name, text in source.items()
    }
    assert cycles(graph) == [frozenset({"a", "b"})]
    guarded = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import a\n"
    assert "a" not in set(_imported(ast.parse(guarded), "b", False))


def test_no_module_of_the_lab_is_part_of_an_import_circle():
    assert [sorted(c) for c in cycles(import_graph())] == []


def test_the_audit_layer_imports_nothing_from_the_layers_above_it():
    graph = import_graph()
    wrong = sorted(
        (module, target)
        for layer, above in BELOW.items()
        for module, targets in graph.items()
        if module == layer or module.startswith(layer + ".")
        for target in targets
        if target.startswith(above)
    )
    assert wrong == []
