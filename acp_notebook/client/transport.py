"""The agent process: spawn, newline-delimited stdout, stderr capture, orderly shutdown.

The only module that touches the process. Shutdown follows the usual order: close stdin, wait,
terminate, wait, kill — and always reap, so no zombie is left. On Linux the child gets
``PR_SET_PDEATHSIG`` so it dies with the kernel even if the kernel is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import sys
from collections import deque
from collections.abc import Sequence

LINE_LIMIT = 64 * 1024 * 1024
STDERR_LINES = 500


def to_argv(command: str | Sequence[str]) -> list[str]:
    """An argv list from a shell-like string or a sequence."""
    argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
    if not argv:
        raise ValueError("empty agent command")
    return argv


def _die_with_parent() -> None:  # runs in the child between fork and exec
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(Exception):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class AgentProcess:
    """A running agent subprocess speaking newline-delimited JSON-RPC on stdio."""

    def __init__(self, proc: asyncio.subprocess.Process, argv: list[str]) -> None:
        self.proc = proc
        self.argv = argv
        self.stderr_lines: deque[str] = deque(maxlen=STDERR_LINES)
        self._stderr_task = asyncio.get_running_loop().create_task(self._read_stderr())

    @classmethod
    async def spawn(
        cls, command: str | Sequence[str], cwd: str | None = None, env: dict[str, str] | None = None
    ) -> AgentProcess:
        """Start ``command`` with stdin/stdout pipes; ``env`` is merged over ``os.environ``."""
        argv = to_argv(command)
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env={**os.environ, **(env or {})},
            limit=LINE_LIMIT,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
            # its own process group: a kernel interrupt (killpg SIGINT) must not reach it
            process_group=0 if os.name == "posix" else None,
        )
        return cls(proc, argv)

    @property
    def pid(self) -> int:
        """The process id."""
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        """The exit code once the process has ended (negative for a signal)."""
        return self.proc.returncode

    def stderr_tail(self, lines: int = 20) -> list[str]:
        """The last ``lines`` lines the agent wrote to stderr."""
        return list(self.stderr_lines)[-lines:]

    async def readline(self) -> bytes | None:
        """The next stdout line, or None at end of stream; raises ValueError for an overlong line."""
        line = await self.proc.stdout.readline()
        return line if line else None

    def write(self, data: bytes) -> bool:
        """Queue bytes for the agent's stdin; False if stdin is already closed."""
        stdin = self.proc.stdin
        if stdin is None or stdin.is_closing():
            return False
        stdin.write(data)
        return True

    async def drain(self) -> None:
        """Wait until written bytes are flushed (ignores a closed pipe)."""
        with contextlib.suppress(ConnectionError, AttributeError):
            await self.proc.stdin.drain()

    async def wait(self) -> int:
        """Wait for the process to end and return its exit code."""
        code = await self.proc.wait()
        with contextlib.suppress(asyncio.CancelledError, asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._stderr_task), 1.0)
        return code

    async def close(self, grace: float = 2.0) -> int:
        """Close stdin, wait ``grace`` s, terminate, wait, kill: always reaps the process."""
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        for step in (None, self.proc.terminate, self.proc.kill):
            if step is not None and self.proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    step()
            with contextlib.suppress(asyncio.TimeoutError):
                return await asyncio.wait_for(self.wait(), grace)
        return await self.wait()

    async def _read_stderr(self) -> None:
        while True:
            try:
                line = await self.proc.stderr.readline()
            except ValueError:  # an overlong line: keep going
                continue
            if not line:
                return
            self.stderr_lines.append(line.decode("utf-8", "replace").rstrip("\r\n"))
