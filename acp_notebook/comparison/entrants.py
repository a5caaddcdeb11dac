"""Several agents on one prompt: one session per agent, each in its own copy of the working tree.

``Entrant`` says what to run (a known name such as ``"claude"``, ``"demo"`` for the bundled demo
agent, a command, or a dict with ``command``/``label``/``env``/``protocol``). ``Entry`` is one
agent's run: its copy (``workspace``), agent, session, the last prompt's timing and stop
reason, and the error that stopped it (it failed to start, its prompt failed or timed out). Every
entry starts, prompts and closes concurrently with the others; one failing never stops the rest.
``ROWS`` are the columns of ``records`` (one row per agent): see ``row``.
"""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import policies
from ..client.errors import AcpError
from ..client.launch import demo_command, start_agent
from ..client.session import Session
from ..client.spawning import to_argv
from .workspace import Changes, Copy, changes, make_copy, remove_copy

DEMO = "demo"
ROWS = (
    "agent",
    "stop_reason",
    "duration",
    "tool_calls",
    "files_touched",
    "files",
    "lines_added",
    "lines_removed",
    "tokens_used",
    "context_size",
    "cost",
    "currency",
    "copy",
    "error",
)


@dataclass(frozen=True)
class Entrant:
    """One agent to compare: its label (unique), command, extra environment, protocol version."""

    label: str
    command: str | tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    protocol: int = 2


def entrants(agents: Any) -> list[Entrant]:
    """``Entrant``s from a list (names, commands, dicts) or a mapping ``label -> command``."""
    if isinstance(agents, str):
        agents = [a.strip() for a in agents.split(",") if a.strip()]
    items = [{"label": k, "command": v} for k, v in agents.items()] if isinstance(agents, Mapping) else agents
    made = [_entrant(item) for item in items]
    if not made:
        raise ValueError("compare needs at least one agent")
    return _unique(made)


def _entrant(item: Any) -> Entrant:
    if isinstance(item, Entrant):
        return item
    if isinstance(item, Mapping):
        unknown = set(item) - {"label", "command", "env", "protocol"}
        if unknown or "command" not in item:
            raise ValueError(f"an agent dict takes command, label, env, protocol; got {sorted(item)}")
        command = _command(item["command"])
        label = str(item.get("label") or _label(command))
        return Entrant(label, command, dict(item.get("env") or {}), int(item.get("protocol", 2)))
    command = _command(item)
    return Entrant(_label(command), command)


def _command(value: Any) -> str | tuple[str, ...]:
    if isinstance(value, str) and value.strip():
        return value.strip()
    if isinstance(value, Sequence) and value and all(isinstance(v, str | os.PathLike) for v in value):
        return tuple(os.fspath(v) for v in value)
    raise TypeError(f"an agent is a name, a command or a dict, not {value!r}")


def _label(command: str | tuple[str, ...]) -> str:
    argv = to_argv(command)
    if command == DEMO or any(argv[i : i + 2] == ["-m", "acp_notebook.demo_agent"] for i in range(len(argv))):
        return DEMO
    return Path(argv[0]).name


def _unique(made: list[Entrant]) -> list[Entrant]:
    seen: dict[str, int] = {}
    out = []
    for entrant in made:
        count = seen[entrant.label] = seen.get(entrant.label, 0) + 1
        label = entrant.label if count == 1 else f"{entrant.label}-{count}"
        out.append(Entrant(label, entrant.command, entrant.env, entrant.protocol))
    return out


class Entry:
    """One agent's run in a comparison."""

    def __init__(self, entrant: Entrant) -> None:
        self.entrant = entrant
        self.copy: Copy | None = None
        self.agent: Any = None
        self.session: Session | None = None
        self.error: str | None = None
        self.stop_reason: str | None = None
        self.started: float | None = None  # monotonic times of the last prompt
        self.ended: float | None = None
        self._cancelling: asyncio.Future | None = None

    @property
    def label(self) -> str:
        """The agent's label (a column header, a directory name)."""
        return self.entrant.label

    @property
    def path(self) -> Path | None:
        """The copy this agent works in (its cwd)."""
        return self.copy.path if self.copy is not None else None

    @property
    def duration(self) -> float | None:
        """Seconds the last prompt took (None before it ended)."""
        if self.started is None or self.ended is None:
            return None
        return self.ended - self.started

    async def start(self, cwd: Path, destination: Path, permissions: Any, timeout: float) -> None:
        """Copy ``cwd`` to ``destination``, start the agent, open a session there (errors kept)."""
        try:
            self.copy = await asyncio.to_thread(make_copy, cwd, destination)
            self.agent = await start_agent(
                _argv(self.entrant.command),
                self.copy.path,
                dict(self.entrant.env),
                protocol_version=self.entrant.protocol,
                init_timeout=timeout,
            )
            self.session = await self.agent.new_session(self.copy.path, timeout=timeout)
        except (AcpError, OSError, ValueError) as exc:
            text = _first_line(exc)
            self.error = text if text.startswith("could not start") else f"could not start: {text}"
            if self.agent is not None:  # it started but opened no session
                await self.agent.close(0.5)
            self.agent, self.session = None, None
            return
        if permissions is not None:
            self.session.permission_handler = permissions

    async def prompt(self, text: str, timeout: float | None) -> str | None:
        """Run one prompt turn (``timeout``: cancel it after so many seconds)."""
        if self.session is None:
            return None
        self.error, self.stop_reason = None, None
        self.started, self.ended = time.monotonic(), None
        task = self.session.prompt_task(text)
        try:
            self.stop_reason = await asyncio.wait_for(asyncio.shield(task), timeout)
        except TimeoutError:
            await self.session.cancel()  # its turn ends ``cancelled``
            self.stop_reason = await _settled(task)
            self.error = f"timed out after {timeout:g} s (turn cancelled)"
        except asyncio.CancelledError:  # interrupted: the turn is cancelled too
            self.ended = time.monotonic()
            self._cancelling = asyncio.ensure_future(self.session.cancel())
            raise
        except Exception as exc:  # one agent's failure never stops the others
            self.error = f"prompt failed: {_first_line(exc)}"
        self.ended = time.monotonic()
        return self.stop_reason

    def changes(self) -> Changes | None:
        """What this agent changed in its copy (None without a copy)."""
        return changes(self.copy) if self.copy is not None and self.copy.root.exists() else None

    async def close(self, keep: bool) -> None:
        """Close the agent; remove the copy unless ``keep``."""
        if self.agent is not None and not self.agent.closed:
            await self.agent.close()
        if self.copy is not None and not keep:
            await asyncio.to_thread(remove_copy, self.copy)

    def row(self) -> dict[str, Any]:
        """This agent's row: see ``ROWS``."""
        found = self.changes()
        usage = (self.session.state.usage if self.session is not None else None) or {}
        cost = usage.get("cost") if isinstance(usage.get("cost"), dict) else {}
        return {
            "agent": self.label,
            "stop_reason": self.stop_reason,
            "duration": self.duration,
            "tool_calls": len(self.session.state.tool_calls) if self.session is not None else None,
            "files_touched": len(found.files) if found is not None else None,
            "files": found.files if found is not None else [],
            "lines_added": found.lines_added if found is not None else None,
            "lines_removed": found.lines_removed if found is not None else None,
            "tokens_used": usage.get("used"),
            "context_size": usage.get("size"),
            "cost": cost.get("amount"),
            "currency": cost.get("currency"),
            "copy": str(self.path) if self.path is not None else None,
            "error": self.error,
        }


def check_permissions(permissions: Any) -> Any:
    """A policy for every agent's session (None: the views' buttons answer)."""
    return None if permissions is None else policies.as_policy(permissions)


def copies_home(cwd: Any) -> tuple[Path, Path]:
    """The resolved tree to copy and a fresh temporary directory to hold the copies."""
    source = Path(cwd if cwd is not None else os.getcwd()).expanduser().resolve()
    if not source.is_dir():
        raise NotADirectoryError(f"compare: {source} is not a directory")
    return source, Path(tempfile.mkdtemp(prefix="acp-compare-"))


async def _settled(task: asyncio.Task) -> str | None:
    try:
        return await asyncio.wait_for(task, 10)
    except (TimeoutError, AcpError, asyncio.CancelledError):
        return None


def _argv(command: str | tuple[str, ...]) -> Any:
    if command == DEMO:
        return demo_command()  # it reads ``ACP_DEMO_SPEED`` itself
    return command if isinstance(command, str) else list(command)


def dirname(number: int, label: str) -> str:
    """The name of an agent's copy: its position and its label, made safe for a path."""
    return f"{number}-" + (re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("._") or "agent")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
