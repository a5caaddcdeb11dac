"""The layer order and the absence of import cycles, checked by import-linter (``lint-imports``, also
run by ``.ci/run``) against the contracts in ``pyproject.toml``: every import counts — module-level,
type-only (``if TYPE_CHECKING:``) and function-local — and none is ignored (STYLE.md 13, 15)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def lint(cwd: Path, config: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` in ``cwd`` (its ``pyproject.toml``, or ``config``), importing from ``cwd``."""
    args = ["--no-cache", *(["--config", str(config)] if config is not None else [])]
    code = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd, capture_output=True, text=True, timeout=120, env={"PYTHONPATH": str(cwd), "PATH": ""},
    )  # fmt: skip


def test_the_package_keeps_every_contract() -> None:
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout and "BROKEN" not in result.stdout, result.stdout


def test_the_contracts_count_every_import_and_ignore_none() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert config.get("exclude_type_checking_imports", False) is False
    contracts = {c["type"]: c for c in config["contracts"]}
    assert all("ignore_imports" not in c for c in config["contracts"])
    assert contracts["layers"]["containers"] == ["acp_notebook"]
    assert set(contracts["acyclic_siblings"]["ancestors"]) >= {"acp_notebook.client", "acp_notebook.widgets"}


def test_a_cycle_hidden_behind_type_checking_or_in_a_function_breaks_a_contract(tmp_path: Path) -> None:
    """The same kinds of contract on a small package: an owner back-pointer imported only for type
    checking, and a function-local import, are both reported."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "owner.py").write_text("from . import helper\n")
    typed = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .owner import Owner\n"
    (pkg / "sub" / "helper.py").write_text(typed)
    (pkg / "low.py").write_text("def f():\n    from . import high\n")
    (pkg / "high.py").write_text("from . import low\n")
    config = tmp_path / "contracts.toml"
    config.write_text(
        '[tool.importlinter]\nroot_package = "pkg"\n\n'
        '[[tool.importlinter.contracts]]\nname = "siblings"\ntype = "acyclic_siblings"\n'
        'ancestors = ["pkg.sub"]\n\n'
        '[[tool.importlinter.contracts]]\nname = "layers"\ntype = "layers"\ncontainers = ["pkg"]\n'
        'layers = ["high", "low"]\n'
    )
    result = lint(tmp_path, config)
    assert result.returncode != 0
    assert "siblings BROKEN" in result.stdout and "layers BROKEN" in result.stdout, result.stdout
    assert "pkg.low is not allowed to import pkg.high" in result.stdout, result.stdout
