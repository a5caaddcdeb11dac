"""Between the kernel and an agent: no process of the agent outlives the agent or the kernel.

The kernel runs it — ``STATUS_FD DEATH_FD -- ARGV...`` (``command``) — as its direct child: stdlib
only, few imports and its cached bytecode, so it starts in milliseconds. It forks the agent as the
leader of a new process group, with stdin/stdout/stderr passed straight through (the bytes never
pass through here), writes the agent's pid — or the errno of a failed exec — on STATUS_FD
(``parse_status``), then:

- forwards TERM, INT, HUP and QUIT it gets to the agent's group (the kernel signals that group);
- when the kernel dies — EOF on DEATH_FD, whose write end only the kernel holds, or a new parent —
  ends the agent's group and every descendant (TERM, ``GRACE``, KILL), even one that ``setsid``-ed
  away: on Linux it is the child subreaper, so orphaned descendants become its children;
- when the agent ends, ends what is left the same way, then exits as the agent did (its exit code,
  or killed by the same signal).

The agent gets ``PR_SET_PDEATHSIG`` (SIGKILL): if this process is killed, the agent dies too.
"""

from __future__ import annotations

import os
import select
import sys
import time

try:  # the C module: ``signal`` would import enum, a good part of the start-up time
    import _signal as signal
except ImportError:  # pragma: no cover - not CPython
    import signal

GRACE = 0.5  # s between TERM and KILL
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)
DEFAULTED = (signal.SIGPIPE, signal.SIGXFSZ)  # Python ignores them; a child gets them back (as subprocess)
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
BOOT = "import sys; sys.path.append({!r}); import supervisor; supervisor.main(sys.argv[1:])"
KILL_ROUNDS = 100  # KILL sweeps (a process forking as fast as it is killed must not hold us for ever)


def command(argv: list[str], status_fd: int, death_fd: int) -> list[str]:
    """The command line that runs ``argv`` under a supervisor.

    ``-I -S`` (no site) and an import (a script would be compiled at every start): ~10 ms.
    """
    boot = BOOT.format(os.path.dirname(os.path.abspath(__file__)))
    return [sys.executable, "-I", "-S", "-c", boot, str(status_fd), str(death_fd), "--", *argv]


def parse_status(line: bytes, program: str) -> int:
    """The agent's pid from the supervisor's status line; OSError if it could not be started."""
    word, _, value = line.decode("ascii", "replace").strip().partition(" ")
    if word == "pid" and value.isdigit():
        return int(value)
    if word == "errno" and value.isdigit():
        raise OSError(int(value), os.strerror(int(value)), program)
    raise OSError(f"the agent supervisor did not start {program!r} (it said {line!r})")


def _quietly(call, *args) -> None:
    """``call(*args)``, ignoring an OSError (a process or a reader that is gone already)."""
    try:  # noqa: SIM105 - no contextlib here: every import delays the agent's start
        call(*args)
    except OSError:
        pass


# -- processes, from /proc ------------------------------------------------------------------------------
def _processes():
    """Each process as (pid, state, ppid, pgrp); none without procfs."""
    for entry in os.listdir("/proc") if os.path.isdir("/proc/self") else ():
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    state, ppid, pgrp = f.read().rsplit(b")", 1)[1].split()[:3]
            except (OSError, ValueError):
                continue
            yield int(entry), state, int(ppid), int(pgrp)


def group_alive(pgid: int) -> bool:
    """True while a live (not zombie) process of group ``pgid`` exists."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    if not os.path.isdir("/proc/self"):  # pragma: no cover - no procfs: trust kill(0)
        return True
    return any(pgrp == pgid and state != b"Z" for _, state, _, pgrp in _processes())


def descendants(root: int) -> list[int]:
    """The live (not zombie) descendants of process ``root``."""
    children: dict[int, list[int]] = {}
    live = set()
    for pid, state, ppid, _ in _processes():
        children.setdefault(ppid, []).append(pid)
        if state != b"Z":
            live.add(pid)
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            todo.append(child)
            if child in live:
                found.append(child)
    return found


def _prctl():
    """libc's ``prctl`` (Linux), or None."""
    if not sys.platform.startswith("linux"):  # pragma: no cover
        return None
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # pragma: no cover
        return None


# -- the supervisor -------------------------------------------------------------------------------------
class Supervisor:
    """One agent under watch: its pid (the id of its process group) and how it ended."""

    def __init__(self, death_fd: int) -> None:
        self.death_fd = death_fd
        self.parent = os.getppid()
        self.agent = 0
        self.status: int | None = None  # the agent's wait status, once reaped
        self.pending: list[int] = []  # signals to forward
        self.prctl = _prctl()
        if self.prctl is not None:
            self.prctl(PR_SET_CHILD_SUBREAPER, 1)
        self.wake, wake_w = os.pipe()  # a signal wakes the poll (SIGCHLD: a child ended)
        for fd in (self.wake, wake_w):
            os.set_blocking(fd, False)
        signal.set_wakeup_fd(wake_w)
        self.saved = {sig: signal.getsignal(sig) for sig in (*FORWARDED, signal.SIGCHLD)}
        signal.signal(signal.SIGCHLD, lambda *_: None)
        for sig in FORWARDED:
            signal.signal(sig, lambda sig, _: self.pending.append(sig))
        self.naps = select.poll()
        self.naps.register(self.wake, select.POLLIN)

    def start(self, argv: list[str]) -> int:
        """Fork and exec the agent as the leader of a new group; 0, or the errno of a failed exec."""
        err_r, err_w = os.pipe()
        me = os.getpid()
        pid = os.fork()
        if pid == 0:
            self._exec(argv, err_w, me)
        os.close(err_w)
        with os.fdopen(err_r, "rb") as f:
            failed = f.read()  # EOF: the exec went through (the pipe is close-on-exec)
        if failed:
            os.waitpid(pid, 0)
            return int(failed)
        self.agent = pid
        return 0

    def _exec(self, argv: list[str], err_w: int, supervisor: int) -> None:
        """In the child (never returns): a new group, death with the supervisor, its signals, exec."""
        try:
            signal.set_wakeup_fd(-1)
            for sig, handler in self.saved.items():
                signal.signal(sig, handler)
            for sig in DEFAULTED:
                signal.signal(sig, signal.SIG_DFL)
            os.setpgid(0, 0)
            if self.prctl is not None:
                self.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
                if os.getppid() != supervisor:  # it died before the line above
                    os._exit(1)
            os.execvp(argv[0], argv)
        except OSError as exc:
            os.write(err_w, str(exc.errno or 1).encode())
        finally:
            os._exit(127)

    def watch(self) -> None:
        """Until the agent has ended or the kernel has died: forward signals, reap orphans."""
        poller = select.poll()
        poller.register(self.wake, select.POLLIN)
        poller.register(self.death_fd, select.POLLIN)
        while not self.reap():
            for sig in self.pending:
                _quietly(os.killpg, self.agent, sig)
            self.pending.clear()
            ready = dict(poller.poll(1000))
            self._drain()
            if (self.death_fd in ready and not _read(self.death_fd)) or os.getppid() != self.parent:
                return  # the kernel is gone

    def reap(self) -> bool:
        """Reap every ended child (orphans come here too); True once the agent is one of them."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return True
            if pid == 0:
                return self.status is not None
            if pid == self.agent:
                self.status = status

    def end(self) -> None:
        """TERM the agent's group and every descendant, wait up to ``GRACE``, KILL what is left."""
        if not self._left():
            return
        self._signal_all(signal.SIGTERM)
        deadline = time.monotonic() + GRACE
        while self._left() and time.monotonic() < deadline:
            self._nap(0.02)
        for _ in range(KILL_ROUNDS):
            if not self._left():
                return
            self._signal_all(signal.SIGKILL)
            self._nap(0.01)

    def _left(self) -> bool:
        self.reap()
        return group_alive(self.agent) or bool(descendants(os.getpid()))

    def _signal_all(self, signum: int) -> None:
        _quietly(os.killpg, self.agent, signum)
        for pid in descendants(os.getpid()):
            _quietly(os.kill, pid, signum)

    def _nap(self, seconds: float) -> None:
        """Wait up to ``seconds``; a signal (a child ending) cuts it short."""
        self.naps.poll(seconds * 1000)
        self._drain()

    def _drain(self) -> None:
        try:
            while os.read(self.wake, 512):
                pass
        except OSError:
            pass


def _read(fd: int) -> bytes:
    """What can be read of ``fd`` now: b'' at EOF (or on an error)."""
    try:
        return os.read(fd, 512)
    except BlockingIOError:
        return b"?"
    except OSError:
        return b""


def exit_like(status: int | None) -> None:
    """Exit (never returns) as the agent did: its exit code, or by the same signal, without a core."""
    if status is None:
        os._exit(1)
    if not os.WIFSIGNALED(status):
        os._exit(os.waitstatus_to_exitcode(status))
    sig = os.WTERMSIG(status)
    import resource

    _quietly(resource.setrlimit, resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    try:  # noqa: SIM105
        signal.signal(sig, signal.SIG_DFL)
    except (OSError, ValueError):  # SIGKILL, SIGSTOP: no handler to reset
        pass
    os.kill(os.getpid(), sig)
    os._exit(128 + sig)  # a signal whose default is not to end the process


def main(args: list[str]) -> None:
    """Run ``STATUS_FD DEATH_FD -- ARGV...``: report, watch, end the agent's tree, exit as it did."""
    if len(args) < 4 or args[2] != "--" or not (args[0].isdigit() and args[1].isdigit()):
        sys.stderr.write("usage: python -m acp_notebook.client.supervisor STATUS_FD DEATH_FD -- ARGV...\n")
        os._exit(2)
    status_fd, death_fd = int(args[0]), int(args[1])
    for fd in (status_fd, death_fd):
        os.set_inheritable(fd, False)
    os.set_blocking(death_fd, False)
    supervisor = Supervisor(death_fd)
    failed = supervisor.start(args[3:])
    said = f"errno {failed}\n" if failed else f"pid {supervisor.agent}\n"
    _quietly(os.write, status_fd, said.encode())  # the kernel may have given up: its EOF ends us below
    os.close(status_fd)
    if failed:
        os._exit(127)
    null = os.open(os.devnull, os.O_RDWR)  # the agent's stdin and stdout are its own: let go of ours
    for fd in (0, 1):
        os.dup2(null, fd)
    supervisor.watch()
    supervisor.end()
    exit_like(supervisor.status)


if __name__ == "__main__":
    main(sys.argv[1:])
