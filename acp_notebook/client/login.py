"""Logging in from the notebook with a ``terminal`` auth method: the agent's own login TUI.

The client runs the agent's command with the method's ``args`` appended and its ``env`` added
(or the complete ``_meta["terminal-auth"]`` command) in a PTY. Its bytes stream into a small
``SessionState`` — one ``execute`` tool call showing terminal ``login`` — so the same view
draws it, and the view's keystrokes and size come back through ``terminal_input`` /
``terminal_resize``. A zero exit means success (the schema's rule); anything else fails, with
the exit and the last output. ``env_var`` methods restart the agent with the values in its
environment, then ``authenticate``.
"""

from __future__ import annotations

import os
import shlex
from typing import Any

from ..protocol.state import SessionState
from .errors import AcpError
from .host.pty_process import PtyProcess
from .wire import AgentConnection, AuthMethod

TERMINAL_ID = "login"
DEFAULTS = {"TERM": "xterm-256color"}


class TerminalLogin:
    """One run of a terminal login method."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: str | None, title: str) -> None:
        self.argv, self.title = argv, title
        self.state = SessionState()
        self.process = PtyProcess(argv, cwd, {**os.environ, **DEFAULTS, **env}, None)
        self.process.on_output = lambda data: self.state.append_output(TERMINAL_ID, data)
        self.process.on_exit = self._exited
        content = [{"type": "terminal", "terminalId": TERMINAL_ID}]
        self.state.apply(
            {"sessionUpdate": "tool_call_update", "toolCallId": TERMINAL_ID, "title": title}
            | {"kind": "execute", "status": "in_progress", "content": content}
        )
        self.state.apply(
            {"sessionUpdate": "terminal_update", "terminalId": TERMINAL_ID, "command": shlex.join(argv)}
        )

    async def start(self) -> TerminalLogin:
        """Start the login program."""
        await self.process.start()
        return self

    async def wait(self) -> dict[str, Any]:
        """Wait for the login to end; returns its exit status."""
        return await self.process.wait()

    @property
    def succeeded(self) -> bool:
        """True once the login exited with status 0."""
        return (self.process.exit_status or {}).get("exitCode") == 0

    @property
    def output(self) -> str:
        """What the login printed, without escape sequences."""
        return self.state.terminals[TERMINAL_ID].plain_text

    def last_lines(self, n: int = 5) -> list[str]:
        """The last non-empty lines it printed."""
        return [line for line in self.output.splitlines() if line.strip()][-n:]

    # -- what the view sends back (same names as a session's) -----------------------------------
    def terminal_input(self, terminal_id: str, data: bytes) -> bool:
        """Keystrokes for the login terminal."""
        if terminal_id != TERMINAL_ID:
            return False
        self.process.write(data)
        return True

    def terminal_resize(self, terminal_id: str, cols: int, rows: int) -> bool:
        """The view's size for the login terminal."""
        if terminal_id != TERMINAL_ID:
            return False
        self.process.resize(rows, cols)
        return True

    def interactive_terminals(self) -> list[str]:
        """The login terminal, while it runs."""
        return [TERMINAL_ID] if self.process.running else []

    def cancel(self) -> None:
        """Stop the login program."""
        self.process.kill()

    async def close(self) -> None:
        """Kill it if it still runs, and free the PTY."""
        await self.process.release()

    def _exited(self, status: dict[str, Any]) -> None:
        update = {"sessionUpdate": "terminal_update", "terminalId": TERMINAL_ID, "exitStatus": status}
        self.state.apply(update)
        result = "completed" if status.get("exitCode") == 0 else "failed"
        self.state.apply({"sessionUpdate": "tool_call_update", "toolCallId": TERMINAL_ID, "status": result})


async def terminal_login(
    method: AuthMethod, argv: list[str], env: dict[str, str], cwd: str | None
) -> TerminalLogin:
    """Run a ``terminal`` login method of the agent run by ``argv``: its command with the method's
    ``args`` appended and ``env`` added (or its complete ``_meta["terminal-auth"]`` command), in a PTY."""
    command = list(method.command) if method.command else [*argv, *method.args]
    return await TerminalLogin(command, {**env, **dict(method.env)}, cwd, method.label or method.name).start()


def env_values_missing(method: AuthMethod, values: dict[str, str]) -> None:
    """Raise unless ``values`` sets every variable an ``env_var`` method requires."""
    missing = [v["name"] for v in method.vars if not v.get("optional") and not values.get(v["name"])]
    if missing:
        raise AcpError(f"{method.id!r} needs {', '.join(missing)}")


def login_method(conn: AgentConnection, method_id: str, kind: str) -> AuthMethod:
    """The advertised method ``method_id``, checked to be of ``kind`` (``terminal``, ``env_var``)."""
    method = conn.auth_method(method_id)
    if method is None:
        raise AcpError(f"the agent offers no auth method {method_id!r}")
    actual = "terminal" if method.runs_in_terminal else method.type
    if actual != kind:
        raise AcpError(f"{method_id!r} is a {actual!r} method, not {kind!r}")
    return method
