"""The agent process: newline-delimited stdout, stderr capture, orderly shutdown.

With ``spawning`` (which starts it), the only module that touches the process. The agent runs
under a ``supervisor`` (POSIX), the
kernel's direct child, that leads no group the kernel's interrupts reach and ends the agent's whole
tree when the agent ends or the kernel dies (even by SIGKILL); ``pid`` is the agent's own, the id
of its process group. Shutdown follows the usual order: close stdin, wait, terminate, wait, kill —
each signal to the agent's whole process group — and always reap, so no zombie and no descendant
is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections import deque
from collections.abc import Callable, Sequence

from . import spawning, supervisor
from .lines import LineBuffer
from .spawning import to_argv

LINE_LIMIT = 64 * 1024 * 1024
READ_SIZE = 256 * 1024
PARTIAL_AFTER = 0.5  # s of quiet before a line without its newline is shown
STDERR_LINES = 500
STDERR_BYTES = 1024 * 1024  # kept in all (the oldest lines go first)
STDERR_LINE_BYTES = 64 * 1024  # kept of one line (cut, saying how much was left out)


def clip_line(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` bytes of UTF-8, saying how much was left out."""
    raw = text.encode("utf-8", "replace")
    if len(raw) <= limit:
        return text
    kept = raw[:limit].decode("utf-8", "ignore")
    return f"{kept}… ({len(raw) - limit:,} more bytes)"


async def _poll(done: Callable[[], bool], timeout: float, interval: float = 0.02) -> bool:
    """Check ``done()`` until it holds (True) or ``timeout`` s pass (False)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not done():
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(interval)
    return True


def _group_alive(pgid: int) -> bool:
    """True while a live (not zombie) process of group ``pgid`` exists."""
    return os.name == "posix" and supervisor.group_alive(pgid)


class AgentProcess:
    """A running agent subprocess speaking newline-delimited JSON-RPC on stdio."""

    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        argv: list[str],
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        agent_pid: int | None = None,
        death_fd: int | None = None,
    ) -> None:
        self.proc = proc  # the supervisor's process (or the agent's own, without one)
        self._pid = agent_pid or proc.pid
        self._supervisor = proc.pid if death_fd is not None else None
        self._death_fd = death_fd  # its EOF (our exit, or ``_release``) tells the supervisor to end all
        self.argv = argv
        self.cwd = cwd
        self.env = dict(env or {})  # what was merged over os.environ (kept for a restart, never shown)
        self.stderr_lines: deque[str] = deque(maxlen=STDERR_LINES)
        self._stderr_bytes = 0  # the UTF-8 size of the kept lines (bounded by STDERR_BYTES)
        self.partial_line: str | None = None
        self.on_stderr: Callable[[str], None] | None = None  # each stderr line, as it comes
        self._lines = LineBuffer(LINE_LIMIT)
        self._reading: asyncio.Future[bytes] | None = None
        self._stderr_task = asyncio.get_running_loop().create_task(self._read_stderr())

    @classmethod
    async def spawn(
        cls, command: str | Sequence[str], cwd: str | None = None, env: dict[str, str] | None = None
    ) -> AgentProcess:
        """Start ``command`` with stdin/stdout pipes; ``env`` is merged over ``os.environ``."""
        argv = to_argv(command)
        started = await spawning.start(argv, cwd, env, LINE_LIMIT)
        return cls(started.proc, argv, cwd, env, started.pid, started.death_fd)

    @property
    def pid(self) -> int:
        """The agent's process id (that of its process group)."""
        return self._pid

    @property
    def supervisor_pid(self) -> int | None:
        """The process id of the agent's supervisor (the kernel's child), None without one."""
        return self._supervisor

    @property
    def returncode(self) -> int | None:
        """The exit code once the process has ended (negative for a signal)."""
        return self.proc.returncode

    def stderr_tail(self, lines: int = 20) -> list[str]:
        """The last ``lines`` lines the agent wrote to stderr."""
        return list(self.stderr_lines)[-lines:]

    async def readline(self) -> bytes | None:
        """The next stdout line, or None at end of stream; raises ValueError for an overlong line.

        A last line without its newline (a prompt waiting for input) shows as ``partial_line``
        once stdout has been quiet for ``PARTIAL_AFTER`` s.
        """
        lines = self._lines
        while True:
            line = lines.next_line()
            if line is not None:
                self.partial_line = None
                return line
            chunk = await self._read_chunk()
            if not chunk:
                self.partial_line = None
                return lines.rest()
            lines.feed(chunk)

    async def _read_chunk(self) -> bytes:
        if self._reading is None:
            self._reading = asyncio.ensure_future(self.proc.stdout.read(READ_SIZE))
        reading = self._reading
        if self._lines.pending:
            done, _ = await asyncio.wait({reading}, timeout=PARTIAL_AFTER)
            if not done:
                self.partial_line = self._lines.pending_text()
        try:
            chunk = await reading
        except asyncio.CancelledError:
            reading.cancel()
            raise
        finally:
            self._reading = None
        return chunk

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
        self._release()
        with contextlib.suppress(asyncio.CancelledError, asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._stderr_task), 1.0)
        return code

    async def close(self, grace: float = 2.0) -> int:
        """Close stdin, wait ``grace`` s, then TERM and KILL the agent's whole process group.

        The group, not just the child: an npm launcher that does not forward signals must not
        leave its native binary (or the tools it started) behind; once the agent has gone, its
        supervisor ends what is left, even what left the group. Always reaps the process.
        """
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        exited = await self._ended(grace)  # the agent's own orderly exit
        for signum in (signal.SIGTERM, signal.SIGKILL):
            if exited and not _group_alive(self.pid):
                break
            self.signal_group(signum)  # a leader gone already: its stragglers get a shorter grace
            exited = await self._ended(min(grace, 0.5) if exited else grace)
            exited = exited and not await self._group_lingers(0.5)
        return await self.wait()

    def _release(self) -> None:
        """Close our end of the supervisor's death pipe (once it has exited)."""
        if self._death_fd is not None:
            os.close(self._death_fd)
            self._death_fd = None

    async def _ended(self, grace: float) -> bool:
        """True once the agent itself has exited (within ``grace`` s).

        Its ``returncode``, not ``proc.wait()``: asyncio's wait also waits for every pipe to
        close, which a surviving descendant holding stdout would delay for ever.
        """
        return await _poll(lambda: self.proc.returncode is not None, grace)

    def signal_group(self, signum: int) -> None:
        """Send ``signum`` to the agent's process group (its own, see ``spawn``)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if os.name == "posix":
                os.killpg(self.pid, signum)
            else:  # pragma: no cover - no process groups
                self.proc.send_signal(signum)

    async def _group_lingers(self, grace: float) -> bool:
        """After the leader exited: True if processes of its group are still there after ``grace``."""
        return not await _poll(lambda: not _group_alive(self.pid), grace)

    async def _read_stderr(self) -> None:
        while True:
            try:
                line = await self.proc.stderr.readline()
            except ValueError:  # an overlong line: keep going
                continue
            if not line:
                return
            text = clip_line(line.decode("utf-8", "replace").rstrip("\r\n"), STDERR_LINE_BYTES)
            self._keep_stderr(text)
            if self.on_stderr is not None:
                self.on_stderr(text)

    def _keep_stderr(self, text: str) -> None:
        """Keep one line; the oldest go while the lines are over ``STDERR_LINES`` or ``STDERR_BYTES``."""
        if len(self.stderr_lines) == self.stderr_lines.maxlen:
            self._stderr_bytes -= len(self.stderr_lines[0].encode("utf-8", "replace"))
        self.stderr_lines.append(text)
        self._stderr_bytes += len(text.encode("utf-8", "replace"))
        while self._stderr_bytes > STDERR_BYTES and len(self.stderr_lines) > 1:
            self._stderr_bytes -= len(self.stderr_lines.popleft().encode("utf-8", "replace"))
