"""Starting an agent's process: under its ``supervisor`` (POSIX), piped stdio, its own process group.

The supervisor is the kernel's direct child and says on a status pipe which pid the agent got (or
why it could not be started); the kernel keeps the write end of a "death pipe" whose EOF — its
exit, even by SIGKILL — tells the supervisor to end the agent's whole tree. Without POSIX groups
(or a Python to run the supervisor) the agent is started directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from . import supervisor

START_TIMEOUT = 30.0  # s for the supervisor to say the agent runs (it takes milliseconds)


@dataclass(frozen=True)
class Started:
    """A started agent: the kernel's child (the supervisor, or the agent), the agent's pid, the death pipe."""

    proc: asyncio.subprocess.Process
    pid: int | None = None
    death_fd: int | None = None


def to_argv(command: str | Sequence[str]) -> list[str]:
    """An argv list from a shell-like string or a sequence."""
    argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
    if not argv:
        raise ValueError("empty agent command")
    return argv


def die_with_parent() -> None:
    """In the child between fork and exec (host terminals): SIGKILL when the parent dies (Linux)."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(Exception):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


async def _exec(
    argv: list[str], cwd: str | None, env: dict[str, str] | None, limit: int, pass_fds: tuple[int, ...] = ()
) -> asyncio.subprocess.Process:
    """Run ``argv`` with piped stdio in its own process group (a kernel interrupt must not reach it)."""
    return await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        limit=limit,
        pass_fds=pass_fds,
        process_group=0 if os.name == "posix" else None,
    )


async def _agent_pid(proc: asyncio.subprocess.Process, status_fd: int, program: str) -> int:
    """The agent's pid, from the supervisor's status line on ``status_fd`` (closed after)."""
    loop = asyncio.get_running_loop()
    said: asyncio.Future[None] = loop.create_future()
    loop.add_reader(status_fd, lambda: said.done() or said.set_result(None))
    try:
        await asyncio.wait_for(said, START_TIMEOUT)
        line = os.read(status_fd, 256)  # one write of a few bytes: all of it, or EOF
    except TimeoutError:
        raise OSError(f"its supervisor did not start it within {START_TIMEOUT:g} s") from None
    finally:
        loop.remove_reader(status_fd)
        os.close(status_fd)
    return supervisor.parse_status(line, program)


async def _reaped(proc: asyncio.subprocess.Process, timeout: float = 5.0) -> None:
    """Wait for ``proc`` to end (KILL after ``timeout`` s) and reap it."""
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(proc.wait(), timeout)
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()


async def start(argv: list[str], cwd: str | None, env: dict[str, str] | None, limit: int) -> Started:
    """Start ``argv`` (``env`` merged over ``os.environ``; stream buffers of ``limit`` bytes)."""
    if os.name != "posix" or not sys.executable:  # pragma: no cover - no groups, or no Python to run
        return Started(await _exec(argv, cwd, env, limit))
    status_r, status_w = os.pipe()
    death_r, death_w = os.pipe()  # non-inheritable: no other child of ours holds the write end
    try:
        command = supervisor.command(argv, status_w, death_r)
        proc = await _exec(command, cwd, env, limit, (status_w, death_r))
    except BaseException:
        os.close(status_r)
        os.close(death_w)
        raise
    finally:
        os.close(status_w)
        os.close(death_r)
    try:
        pid = await _agent_pid(proc, status_r, argv[0])
    except BaseException:
        os.close(death_w)  # at EOF on its death pipe the supervisor ends what it began, and exits
        await _reaped(proc)
        raise
    return Started(proc, pid, death_w)
