"""Running the real agents from npm through our client, offline, against local mock model servers.

The pinned agents live in ``tests/real_agents/node_modules`` (``npm ci`` here; CI runs it, and on a
fresh checkout ``installed()`` runs it once). Each agent gets an isolated ``HOME`` (and its own
config directory) under the test's temporary directory, telemetry and auto-update switched off,
and its model API pointed at a mock server on 127.0.0.1. ``open_agent`` starts it with a
``TeeStream`` between the process and our connection, so a test can compare every line on the
wire with the state the client built from it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.client.agent import Agent
from acp_notebook.client.transport import AgentProcess

HERE = Path(__file__).parent
BIN = HERE / "node_modules" / ".bin"
COMMANDS = {
    "claude": [str(BIN / "claude-agent-acp")],
    "codex": [str(BIN / "codex-acp")],
    "gemini": [str(BIN / "gemini"), "--acp"],
}
QUIET_ENV = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "GEMINI_TELEMETRY_ENABLED": "false",
    "NO_UPDATE_NOTIFIER": "1",
    "NO_BROWSER": "1",
    "CI": "1",
}


def installed() -> None:
    """Make sure the pinned agents are installed (``npm ci`` once); fail in CI, skip elsewhere."""
    if not all(Path(c[0]).exists() for c in COMMANDS.values()) and shutil.which("npm"):
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=HERE, check=False, capture_output=True)
    missing = [name for name, c in COMMANDS.items() if not Path(c[0]).exists()]
    if missing:
        message = f"real agents not installed in {HERE} ({', '.join(missing)}): run `npm ci` there"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def base_env(home: Path) -> dict[str, str]:
    """An isolated home and quiet defaults for one agent run."""
    home.mkdir(parents=True, exist_ok=True)
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), **QUIET_ENV}
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "CODEX_HOME"):
        env.setdefault(key, "")
    return env


class LocalServer:
    """A mock model server's HTTP side: 127.0.0.1, a random port, served from a daemon thread."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], name: str) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name=name, daemon=True)

    @property
    def port(self) -> int:
        """The port it listens on."""
        return self._server.server_address[1]

    def start(self) -> None:
        """Start serving."""
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and free the port."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


class TeeStream:
    """The agent process, with every line read from and written to it kept in order."""

    def __init__(self, process: AgentProcess) -> None:
        self.process = process
        self.received: list[Any] = []  # agent → client, decoded (non-JSON lines as text)
        self.sent: list[Any] = []  # client → agent, decoded

    def __getattr__(self, name: str) -> Any:
        return getattr(self.process, name)

    async def readline(self) -> bytes | None:
        """The next stdout line (kept)."""
        line = await self.process.readline()
        if line is not None:
            self.received.append(_decode(line))
        return line

    def write(self, data: bytes) -> bool:
        """Write to the agent's stdin (kept)."""
        self.sent.append(_decode(data))
        return self.process.write(data)

    def updates(self) -> list[dict[str, Any]]:
        """Every ``session/update`` ``update`` object the agent sent."""
        return [
            m["params"]["update"]
            for m in _messages(self.received)
            if m.get("method") == "session/update" and isinstance(m.get("params"), dict)
        ]

    def requests(self, method: str) -> list[dict[str, Any]]:
        """The agent's requests of one method."""
        return [m for m in _messages(self.received) if m.get("method") == method and "id" in m]

    def answers_to(self, request_id: Any) -> list[dict[str, Any]]:
        """What the client answered to one of the agent's requests."""
        return [m for m in _messages(self.sent) if "method" not in m and m.get("id") == request_id]


async def open_agent(
    name: str, env: dict[str, str], cwd: Path, protocol_version: int = 2, **options: Any
) -> tuple[Agent, TeeStream]:
    """Spawn the real agent ``name`` with ``env`` and initialize it through a ``TeeStream``
    (offering ``protocol_version``: 2, or 1 to force a v1 conversation)."""
    process = await AgentProcess.spawn(COMMANDS[name], str(cwd), env)
    tee = TeeStream(process)
    agent = Agent(tee, **options)
    try:
        await agent.initialize(protocol_version)
    except BaseException:
        await agent.close(0.5)
        raise
    return agent, tee


def _decode(line: bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return line.decode("utf-8", "replace").rstrip("\n")


def _messages(lines: list[Any]) -> list[dict[str, Any]]:
    flat = [e for m in lines for e in (m if isinstance(m, list) else [m])]
    return [m for m in flat if isinstance(m, dict)]


# -- the agent's processes (appended: generic helpers for every agent's test) ------------------------
def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it, now (Linux ``/proc/<pid>/task/*/children``)."""
    found, todo = [], [pid]
    while todo and len(found) < 10_000:
        current = todo.pop()
        found.append(current)
        try:  # a process may end while we look
            tasks = list(Path(f"/proc/{current}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                todo += [int(child) for child in (task / "children").read_text().split()]
            except (OSError, ValueError):
                continue
    return found


def processes_with_env(name: str, value: str) -> list[int]:
    """The live processes whose environment has ``name=value`` (e.g. a test's own ``HOME``)."""
    wanted = f"{name}={value}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if wanted in environ and state != "Z":
            found.append(int(entry.name))
    return found


def cmdline(pid: int) -> str:
    """A process's command line ("" once it is gone)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode("utf-8", "replace").strip()


def flat_messages(lines: list[Any]) -> list[dict[str, Any]]:
    """The JSON-RPC messages among kept lines (``TeeStream.received``/``sent``), batches flattened."""
    return _messages(lines)
