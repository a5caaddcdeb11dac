"""Agents by name: ``claude``, ``codex``, ``gemini``, ``opencode``, ``goose`` — and the user's own.

The table is data (``agents.json`` beside this module), merged with the user's
``~/.config/acp-notebook/agents.json`` (or the file ``$ACP_NOTEBOOK_AGENTS`` names) and with
names added by ``register_agent``. A known name always means its entry; anything else is a
command. A command whose program is not installed gives one line saying what to install.
An entry with ``npm`` and ``version`` runs that package at that version (the one CI tested):
``{package}`` in its command stands for ``npm@version``; ``NAME@latest`` (or ``NAME@X.Y.Z``)
runs another version of the same package.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .errors import AgentStartError
from .spawning import to_argv

TABLE = Path(__file__).with_name("agents.json")
USER_TABLE = Path("~/.config/acp-notebook/agents.json")


@dataclass(frozen=True)
class KnownAgent:
    """One entry of the table."""

    name: str
    command: tuple[str, ...]
    title: str = ""
    needs: str = ""
    login: str = ""
    npm: str = ""  # the npm package its command runs, if any
    version: str = ""  # the version of ``npm`` it runs (the one CI tested)

    def at(self, version: str) -> KnownAgent:
        """The same agent at another version of its npm package (``latest`` or ``X.Y.Z``)."""
        if not self.npm:
            raise AgentStartError(f"`{self.name}@{version}`: {self.name} is not run from an npm package here")
        if not _VERSION.fullmatch(version):
            raise AgentStartError(f"`{self.name}@{version}`: a version is `latest`, a tag or X.Y.Z")
        return replace(self, version=version)

    def argv(self) -> list[str]:
        """The command to run, ``{package}`` replaced by ``npm@version``."""
        package = f"{self.npm}@{self.version}" if self.version else self.npm
        return [package if part == "{package}" else part for part in self.command]


_VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+\-]*")
_registered: dict[str, KnownAgent] = {}


def register_agent(name: str, command: str | Sequence[str], *, title: str = "", needs: str = "") -> None:
    """Add (or replace) a name for ``%acp start NAME`` / ``start_agent(NAME)`` in this process."""
    _registered[name] = KnownAgent(name, tuple(to_argv(command)), title or name, needs)


def known_agents() -> dict[str, KnownAgent]:
    """Every name: the bundled table, then the user's file, then ``register_agent``."""
    agents = _read(TABLE)
    user = Path(os.environ.get("ACP_NOTEBOOK_AGENTS") or USER_TABLE).expanduser()
    if user.is_file():
        agents.update(_read(user))
    agents.update(_registered)
    return agents


def stderr_hints() -> list[tuple[str, str]]:
    """``(text, advice)``: a stderr line containing ``text`` means the user needs ``advice``."""
    data = json.loads(TABLE.read_text(encoding="utf-8")).get("_hints", [])
    return [(h["stderr"], h["say"]) for h in data if isinstance(h, dict) and {"stderr", "say"} <= h.keys()]


def resolve(command: str | Sequence[str]) -> tuple[list[str], KnownAgent | None]:
    """The argv to run for a name or a command, and the table entry it came from."""
    argv = to_argv(command)
    entry = _named(argv[0]) if len(argv) == 1 else None
    if entry is not None:
        argv = entry.argv()
    check_installed(argv, entry)
    return argv, entry


def _named(word: str) -> KnownAgent | None:
    """The entry ``word`` names: ``NAME`` or ``NAME@VERSION`` (another version of its package)."""
    known = known_agents()
    name, at, version = word.partition("@")
    if word in known or not (at and name in known):
        return known.get(word)
    return known[name].at(version)


def check_installed(argv: list[str], entry: KnownAgent | None) -> None:
    """Raise one clear line when the program to run is not installed."""
    program = argv[0]
    if os.sep in program or shutil.which(program) is not None:
        return
    what = f"{entry.title or entry.name} needs {entry.needs}" if entry and entry.needs else ""
    hint = f": {what}" if what else " (is it installed and on PATH?)"
    raise AgentStartError(f"could not start agent: `{program}` was not found{hint}")


def _read(path: Path) -> dict[str, KnownAgent]:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AgentStartError(f"the agents table {path} is not readable JSON: {exc}") from None
    out = {}
    for name, entry in data.items() if isinstance(data, dict) else []:
        if name.startswith("_") or not isinstance(entry, dict):
            continue
        command = entry.get("command")
        if isinstance(command, str | list) and command:
            fields = {k: str(entry.get(k, "")) for k in ("title", "needs", "login", "npm", "version")}
            out[name] = KnownAgent(name, tuple(to_argv(command)), **fields)
    return out
