"""Bump the pinned real agents to the newest of each, then run their tests.

From the repository's root: ``python -m tests.real_agents.bump``. ``--dry-run`` only prints the
pinned and the newest versions. Otherwise it installs the newest version of every package that
``package.json`` pins (``npm install --save-exact`` rewrites ``package.json`` and the lockfile),
writes the same versions into the entries of ``acp_notebook/client/agents.json`` that run those
packages (so ``%acp start claude`` runs what was tested), and runs ``pytest tests/real_agents
tests/test_agents_table.py``. Read the result as ``tests/real_agents/README.md`` says; revert with
``git checkout`` if the new versions are not ready.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
PACKAGE = HERE / "package.json"
TABLE = ROOT / "acp_notebook" / "client" / "agents.json"


def newest(package: str) -> str:
    """The version the npm registry tags ``latest`` for ``package``."""
    out = subprocess.run(["npm", "view", package, "version"], capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1].strip("'\" ")


def pin_table(versions: dict[str, str]) -> list[str]:
    """Write ``versions`` (package → version) into the agents table; the names it changed."""
    table = json.loads(TABLE.read_text(encoding="utf-8"))
    changed = []
    for name, entry in table.items():
        if isinstance(entry, dict) and entry.get("npm") in versions:
            if entry.get("version") != versions[entry["npm"]]:
                changed.append(f"{name}: {entry.get('version')} -> {versions[entry['npm']]}")
            entry["version"] = versions[entry["npm"]]
    TABLE.write_text(json.dumps(table, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return changed


def main(argv: list[str] | None = None) -> int:
    """Print pinned and newest versions; unless ``--dry-run``, install them, re-pin, run the tests."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="only print the pinned and newest versions")
    args = parser.parse_args(argv)
    pinned = json.loads(PACKAGE.read_text(encoding="utf-8"))["dependencies"]
    latest = {package: newest(package) for package in pinned}
    for package, version in pinned.items():
        mark = "" if latest[package] == version else "  <- newer"
        print(f"{package}: pinned {version}, newest {latest[package]}{mark}")
    if args.dry_run:
        return 0
    specs = [f"{p}@{v}" for p, v in latest.items()]
    install = ["npm", "install", "--save-exact", "--no-audit", "--no-fund", *specs]
    subprocess.run(install, cwd=HERE, check=True)
    for line in pin_table(latest):
        print(f"agents.json {line}")
    tests = ["tests/real_agents", "tests/test_agents_table.py"]
    return subprocess.run([sys.executable, "-m", "pytest", *tests, "-q", "-rxX"], cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main())
