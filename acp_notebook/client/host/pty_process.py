"""A command run in a pseudo-terminal, so programs colour and redraw as in a real terminal.

The process gets its own session (``setsid``) so kill reaches its children, and dies with the
kernel (``PR_SET_PDEATHSIG``). Output is read from the PTY master as it comes and retained up
to ``byte_limit`` bytes, truncated from the beginning on a UTF-8 character boundary.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import fcntl
import os
import pty
import signal
import struct
import termios
from collections.abc import Callable

from ..spawning import die_with_parent

DEFAULT_SIZE = (30, 120)  # rows, cols
READ_SIZE = 65536


class PtyProcess:
    """One running (or finished) command on a PTY."""

    def __init__(self, argv: list[str], cwd: str | None, env: dict[str, str], byte_limit: int | None) -> None:
        self.argv, self.cwd, self.env, self.byte_limit = argv, cwd, env, byte_limit
        self.retained = bytearray()
        self.truncated = False
        self.exit_status: dict[str, object] | None = None
        self.on_output: Callable[[bytes], None] | None = None
        self.on_exit: Callable[[dict[str, object]], None] | None = None
        self._master: int | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._eof = asyncio.Event()
        self._exited = asyncio.Event()
        self._watcher: asyncio.Task | None = None

    async def start(self) -> None:
        """Spawn the process on a new PTY and start reading."""
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", *DEFAULT_SIZE, 0, 0))
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=slave,
                stdout=slave,
                stderr=slave,
                cwd=self.cwd,
                env=self.env,
                start_new_session=True,
                preexec_fn=die_with_parent,
            )
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(slave)
        self._master = master
        os.set_blocking(master, False)
        asyncio.get_running_loop().add_reader(master, self._readable)
        self._watcher = asyncio.get_running_loop().create_task(self._watch())

    @property
    def running(self) -> bool:
        """True until the process has exited."""
        return self.exit_status is None

    def output(self) -> str:
        """The retained output as text (an incomplete trailing character is left out)."""
        return codecs.getincrementaldecoder("utf-8")("replace").decode(bytes(self.retained))

    async def wait(self) -> dict[str, object]:
        """Wait for the exit; returns ``{"exitCode", "signal"}``."""
        await self._exited.wait()
        return self.exit_status

    def write(self, data: bytes) -> None:
        """Type ``data`` into the terminal (ignored once the process has exited)."""
        if self._master is None or not self.running:
            return
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self._master, view) :]
            except BlockingIOError:  # the line discipline is full: drop the rest, as a real tty would
                return
            except OSError:
                return

    def resize(self, rows: int, cols: int) -> None:
        """Set the terminal's size (the program gets SIGWINCH)."""
        if self._master is not None:
            with contextlib.suppress(OSError):
                fcntl.ioctl(self._master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def kill(self) -> None:
        """Terminate the process group now, and kill it if it lingers."""
        if self._proc is None or not self.running:
            return
        self._signal(signal.SIGTERM)
        asyncio.get_running_loop().call_later(2.0, self._signal, signal.SIGKILL)

    async def release(self) -> None:
        """Kill if running, wait for the exit, and free the PTY."""
        self.kill()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._exited.wait(), 5.0)
        self._close_master()

    def _signal(self, sig: int) -> None:
        if self._proc is not None and self._proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._proc.pid, sig)

    def _readable(self) -> None:
        try:
            data = os.read(self._master, READ_SIZE)
        except BlockingIOError:
            return
        except OSError:  # EIO: every writer closed the slave side
            data = b""
        if not data:
            self._stop_reading()
            return
        self._retain(data)
        if self.on_output is not None:
            self.on_output(data)

    def _retain(self, data: bytes) -> None:
        self.retained += data
        limit = self.byte_limit
        if limit is None or len(self.retained) <= limit:
            return
        cut = len(self.retained) - limit
        while cut < len(self.retained) and 0x80 <= self.retained[cut] < 0xC0:
            cut += 1  # never start inside a UTF-8 character
        del self.retained[:cut]
        self.truncated = True

    async def _watch(self) -> None:
        code = await self._proc.wait()
        with contextlib.suppress(asyncio.TimeoutError):  # let the last bytes through
            await asyncio.wait_for(self._eof.wait(), 1.0)
        self._stop_reading()
        self.exit_status = _exit_status(code)
        self._exited.set()
        if self.on_exit is not None:
            self.on_exit(self.exit_status)

    def _stop_reading(self) -> None:
        if self._master is not None and not self._eof.is_set():
            asyncio.get_running_loop().remove_reader(self._master)
        self._eof.set()

    def _close_master(self) -> None:
        self._stop_reading()
        if self._master is not None:
            with contextlib.suppress(OSError):
                os.close(self._master)
            self._master = None


def _exit_status(code: int) -> dict[str, object]:
    if code < 0:
        with contextlib.suppress(ValueError):
            return {"exitCode": None, "signal": signal.Signals(-code).name}
        return {"exitCode": None, "signal": str(-code)}
    return {"exitCode": code, "signal": None}
