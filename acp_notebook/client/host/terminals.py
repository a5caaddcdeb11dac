"""v1 client-run terminals: ``terminal/create``, ``output``, ``wait_for_exit``, ``kill``, ``release``.

Each command runs on a PTY; its bytes stream into the session state as they come (the same
``Terminal`` objects and views as v2 agent-owned terminals), and stay there after release, as
the v1 docs ask. Commands get the user's environment plus non-interactive defaults
(``PAGER=cat``, ``GIT_PAGER=cat``, ``TERM=xterm-256color``) plus the request's ``env``. A
``command`` without ``args`` runs through ``/bin/sh -c`` (agents send whole command lines).
"""

from __future__ import annotations

import os
import shlex
from typing import Any

from ...protocol.jsonrpc import INVALID_PARAMS, RESOURCE_NOT_FOUND
from ...protocol.state import SessionState
from ..errors import RpcError
from .fs import FileAccess
from .pty_process import PtyProcess

COMMAND_DEFAULTS = {"PAGER": "cat", "GIT_PAGER": "cat", "TERM": "xterm-256color"}


class TerminalHost:
    """The terminals one session's agent asked the client to run."""

    def __init__(self, state: SessionState, files: FileAccess, cwd: str) -> None:
        self.state, self.files, self.cwd = state, files, cwd
        self.processes: dict[str, PtyProcess] = {}
        self._count = 0

    async def create(self, params: dict[str, Any]) -> dict[str, Any]:
        """Start a command; returns ``{"terminalId"}`` at once."""
        argv, display = _argv(params)
        cwd = params.get("cwd") or self.cwd
        if cwd is not None:
            cwd = self.files.resolve(cwd, "terminal cwd")
        process = PtyProcess(
            argv, cwd, _environment(params.get("env")), _limit(params.get("outputByteLimit"))
        )
        self._count += 1
        terminal_id = f"term_{self._count}"
        self.state.apply(
            {"sessionUpdate": "terminal_update", "terminalId": terminal_id, "command": display, "cwd": cwd}
        )
        process.on_output = lambda data: self.state.append_output(terminal_id, data)
        process.on_exit = lambda status: self.state.apply(
            {"sessionUpdate": "terminal_update", "terminalId": terminal_id, "exitStatus": status}
        )
        try:
            await process.start()
        except OSError as exc:
            self.state.apply(
                {
                    "sessionUpdate": "terminal_update",
                    "terminalId": terminal_id,
                    "exitStatus": {"exitCode": 127},
                }
            )
            raise RpcError(
                INVALID_PARAMS, f"terminal/create: cannot run {display!r}: {exc.strerror}"
            ) from None
        self.processes[terminal_id] = process
        return {"terminalId": terminal_id}

    async def output(self, params: dict[str, Any]) -> dict[str, Any]:
        """The retained output, whether it was truncated, and the exit status once exited."""
        process = self._get(params)
        result: dict[str, Any] = {"output": process.output(), "truncated": process.truncated}
        if process.exit_status is not None:
            result["exitStatus"] = process.exit_status
        return result

    async def wait_for_exit(self, params: dict[str, Any]) -> dict[str, Any]:
        """Wait until the command exits (the reader keeps going meanwhile)."""
        return dict(await self._get(params).wait())

    async def kill(self, params: dict[str, Any]) -> dict[str, Any]:
        """Kill the command; the terminal stays valid for ``output`` and ``wait_for_exit``."""
        self._get(params).kill()
        return {}

    async def release(self, params: dict[str, Any]) -> dict[str, Any]:
        """Kill if running and free the PTY and the id; bytes and exit status stay in state."""
        process = self._get(params)
        del self.processes[params["terminalId"]]
        await process.release()
        return {}

    def input(self, terminal_id: str, data: bytes) -> bool:
        """Keystrokes from the view for a running terminal; False if it is not one of ours."""
        process = self.processes.get(terminal_id)
        if process is None:
            return False
        process.write(data)
        return True

    def resize(self, terminal_id: str, cols: int, rows: int) -> bool:
        """The view's size for a terminal; recorded in the state too."""
        process = self.processes.get(terminal_id)
        if process is None:
            return False
        process.resize(rows, cols)
        size = {"cols": cols, "rows": rows}
        self.state.apply({"sessionUpdate": "terminal_update", "terminalId": terminal_id, "size": size})
        return True

    def interactive(self) -> list[str]:
        """The terminals still running, which accept input."""
        return [tid for tid, process in self.processes.items() if process.running]

    async def close(self) -> None:
        """Release every terminal (the session or the agent is closing)."""
        for terminal_id in list(self.processes):
            await self.release({"terminalId": terminal_id})

    def _get(self, params: dict[str, Any]) -> PtyProcess:
        process = self.processes.get(params.get("terminalId"))
        if process is None:
            raise RpcError(RESOURCE_NOT_FOUND, f"unknown or released terminal {params.get('terminalId')!r}")
        return process


def _argv(params: dict[str, Any]) -> tuple[list[str], str]:
    command, args = params.get("command"), params.get("args") or []
    if not isinstance(command, str) or not command or not all(isinstance(a, str) for a in args):
        raise RpcError(INVALID_PARAMS, "terminal/create needs a string `command` and string `args`")
    if not args:
        return ["/bin/sh", "-c", command], command
    return [command, *args], shlex.join([command, *args])


def _environment(env: Any) -> dict[str, str]:
    out = {**os.environ, **COMMAND_DEFAULTS}
    for item in env or []:
        if (
            isinstance(item, dict)
            and isinstance(item.get("name"), str)
            and isinstance(item.get("value"), str)
        ):
            out[item["name"]] = item["value"]
    return out


def _limit(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
