"""The package's import graph, every import counted: module-level, type-only, function-local.

Like import-linter's graph (grimp), ``from . import x`` is an edge to ``x`` when ``x`` is a module
and to the package otherwise; importing a module is no edge to its parent packages. A cycle
hidden behind ``if TYPE_CHECKING:`` or inside a function is still a cycle in the design
(STYLE.md 13, 15). ``python tests/test_layers.py`` prints every cycle the package has now.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "acp_notebook"


def module_names(root: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    names = {}
    for file in sorted(root.rglob("*.py")):
        parts = list(file.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = file
    return names


def imported(name: str, file: Path, modules: dict[str, Path]) -> Iterator[str]:
    """The package's modules that module ``name`` imports, wherever the import statement is."""
    package = name if file.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(file.read_text(), str(file))):
        if isinstance(node, ast.Import):
            yield from (_known(a.name, modules) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                whole = f"{base}.{alias.name}"
                yield whole if whole in modules else _known(base, modules)


def _known(dotted: str, modules: dict[str, Path]) -> str:
    """``dotted`` or its nearest enclosing module of the package ("" when outside it)."""
    while dotted and dotted not in modules:
        dotted = dotted.rpartition(".")[0]
    return dotted


def graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (no self-edges)."""
    modules = module_names(root)
    return {n: {m for m in imported(n, f, modules) if m and m != n} for n, f in modules.items()}


def cycles(edges: dict[str, set[str]], within: str | None = None) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), among ``within.*`` only."""
    inside = {n for n in edges if within is None or n.startswith(within + ".")}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges[node] & inside):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(inside):
        if node not in index:
            visit(node)
    return found


def test_the_graph_counts_type_only_and_function_local_imports(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("def load():\n    from .sub import owner\n")
    (root / "sub" / "__init__.py").write_text("")
    (root / "sub" / "owner.py").write_text("from . import helper\nfrom .. import VERSION\n")
    typed = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .owner import Owner\n"
    (root / "sub" / "helper.py").write_text(typed)
    edges = graph(root)
    assert edges == {
        "pkg": {"pkg.sub.owner"},
        "pkg.sub": set(),
        "pkg.sub.owner": {"pkg.sub.helper", "pkg"},
        "pkg.sub.helper": {"pkg.sub.owner"},
    }
    assert cycles(edges, "pkg.sub") == [["pkg.sub.helper", "pkg.sub.owner"]]
    assert cycles(edges) == [["pkg", "pkg.sub.helper", "pkg.sub.owner"]]
    assert graph()["acp_notebook"] >= {"acp_notebook.magic"}  # inside load_ipython_extension


def test_no_import_cycle_among_the_widgets_modules() -> None:
    found = cycles(graph(), "acp_notebook.widgets")
    assert found == [], f"import cycles in acp_notebook.widgets: {found}"


def test_no_import_cycle_in_the_pure_core() -> None:
    found = cycles(graph(), "acp_notebook.protocol")
    assert found == [], f"import cycles in acp_notebook.protocol: {found}"


def report() -> str:
    """Every cycle in the package and in each subpackage, one line each (later work: client/)."""
    edges = graph()
    lines = []
    for scope in (None, "acp_notebook.protocol", "acp_notebook.client", "acp_notebook.widgets"):
        for component in cycles(edges, scope):
            lines.append(f"{scope or 'acp_notebook (whole)'}: {len(component)} modules: {component}")
    return "\n".join(lines) or "no import cycles"


if __name__ == "__main__":
    print(report())
