"""The pure core (``acp_notebook/protocol``) does no I/O and pulls in no UI: nothing to mock to test it."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROTOCOL = ROOT / "acp_notebook" / "protocol"
FORBIDDEN = ("asyncio", "subprocess", "ipywidgets", "anywidget", "IPython", "threading", "socket")

_REPORT = """
import json, sys
FORBIDDEN = {forbidden!r}
loaded = sorted({{m.split(".")[0] for m in sys.modules}} & set(FORBIDDEN))
print(json.dumps(loaded))
"""

# Import the protocol package as `import acp_notebook.protocol` does.
_IMPORT_PACKAGE = "import sys\nsys.path.insert(0, {root!r})\nimport acp_notebook.protocol\n"

# Import only the protocol package: its parent is a bare namespace, so acp_notebook/__init__.py
# (which may import the client) does not run. This isolates the core's own imports.
_IMPORT_CORE_ONLY = (
    "import sys, types\n"
    "parent = types.ModuleType('acp_notebook')\n"
    "parent.__path__ = [{pkg!r}]\n"
    "sys.modules['acp_notebook'] = parent\n"
    "import acp_notebook.protocol\n"
    "import acp_notebook.protocol.turn\n"
)


def _loaded_after(code: str) -> list[str]:
    """Run ``code`` in a fresh interpreter (no site, no environment); the forbidden modules it loaded."""
    script = code + _REPORT.format(forbidden=FORBIDDEN)
    result = subprocess.run(
        [sys.executable, "-S", "-E", "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_baseline_interpreter_has_none_of_them() -> None:
    assert _loaded_after("") == []


def test_importing_acp_notebook_protocol_loads_no_io_or_ui_module() -> None:
    loaded = _loaded_after(_IMPORT_PACKAGE.format(root=str(ROOT)))
    assert loaded == [], f"`import acp_notebook.protocol` loaded {loaded}"


def test_protocol_modules_alone_load_no_io_or_ui_module() -> None:
    loaded = _loaded_after(_IMPORT_CORE_ONLY.format(pkg=str(ROOT / "acp_notebook")))
    assert loaded == [], f"the protocol modules themselves loaded {loaded}"


def _imports(path: Path) -> list[tuple[int, str, int]]:
    """Every import in a module, anywhere in it: (line, dotted name, relative level)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, 0) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, node.module or "", node.level))
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__":
            found.append((node.lineno, "__import__", 0))
    return found


MODULES = sorted(PROTOCOL.glob("*.py"))


def test_protocol_package_has_modules() -> None:
    names = {p.stem for p in MODULES}
    assert {"state", "toolcall", "terminal", "jsonrpc", "permission", "v1"} <= names


@pytest.mark.parametrize("path", MODULES, ids=[p.name for p in MODULES])
def test_no_io_or_ui_import_line(path: Path) -> None:
    bad = []
    for line, name, level in _imports(path):
        top = name.split(".")[0]
        if level == 0 and (top in FORBIDDEN or name == "__import__" or top in ("importlib", "acp_notebook")):
            bad.append((line, name))
        if level >= 2:  # `from .. import x` reaches outside the protocol package (client, widgets)
            bad.append((line, "." * level + name))
    assert bad == [], f"{path.name} imports {bad}"


REPLAY = ROOT / "acp_notebook" / "playback"
PURE_REPLAY = [
    REPLAY / f"{name}.py"
    for name in ("doctor_rules", "doctor_sessions", "doctor_elicitations", "doctor_spec", "findings", "xray")
]


@pytest.mark.parametrize("path", PURE_REPLAY, ids=[p.name for p in PURE_REPLAY])
def test_the_replay_rules_stay_pure(path: Path) -> None:
    """The doctor's and the X-ray's rules (in ``playback/``) import only the pure core and each other."""
    pure = {p.stem for p in PURE_REPLAY}
    bad = []
    for line, name, level in _imports(path) + _siblings(path):
        top = name.split(".")[0]
        inside = level == 1 and (top in pure or name == "")
        core = level == 2 and (name == "protocol" or name.startswith("protocol."))
        stdlib = (
            level == 0 and top not in FORBIDDEN and top not in ("importlib", "acp_notebook", "__import__")
        )
        if not (inside or core or stdlib):
            bad.append((line, "." * level + name))
    assert bad == [], f"{path.name} imports {bad}"


def _siblings(path: Path) -> list[tuple[int, str, int]]:
    """``from . import a, b`` as imports of ``a`` and ``b`` (``_imports`` gives them as ``.``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [
        (node.lineno, alias.name, 1)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 1 and not node.module
        for alias in node.names
    ]
