"""The agents and named sessions of this kernel (or process), and their end at exit.

Agents started by the magic or ``start_agent_sync`` — and those the extension finds in the user
namespace — are kept here, so ``%acp status`` can list them and none outlives the kernel:

- a normal exit (kernel shutdown or restart, end of a script) runs ``terminate_all`` (atexit):
  SIGTERM to each agent's process group, a short wait, then SIGKILL to what is left of it, then a
  wait for each agent's ``supervisor`` to end the rest of its tree (tools that ``setsid``-ed away).
  Agents run in their own process group (``transport``), so this also reaches the tools they
  started, and a kernel interrupt (which jupyter_client sends to the kernel's whole group) does
  not kill them;
- a killed kernel (SIGKILL, a forced restart) cannot run anything: there each agent's supervisor
  sees the kernel die and ends the agent's whole tree.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import time
import weakref
from collections.abc import Callable
from pathlib import Path

from .agent import Agent
from .session import Session
from .supervisor import group_alive

EXIT_GRACE = 1.0
SWEEP_WAIT = 2.0  # s for the supervisors to end what is left (they take GRACE = 0.5 s at most, then KILL)


class Registry:
    """Kernel-wide: the agents started here (in order) and the sessions bound to names."""

    def __init__(self) -> None:
        self.agents: list[Agent] = []
        self.names: dict[str, Session] = {}
        self._owners: weakref.WeakKeyDictionary[Session, Agent] = weakref.WeakKeyDictionary()
        self._atexit = False

    def add_agent(self, agent: Agent) -> None:
        """Track ``agent`` (listed, and ended at exit)."""
        if agent not in self.agents:
            self.agents.append(agent)
        if not self._atexit:
            atexit.register(self.terminate_all)
            self._atexit = True

    def bind(self, name: str, session: Session) -> None:
        """Remember ``session`` under ``name`` (and track its agent)."""
        agent = self.agent_of(session)
        if agent is not None:
            self.add_agent(agent)
        self.names[name] = session

    def agent_of(self, session: Session) -> Agent | None:
        """The agent ``session`` was opened on (None for a session no living agent ever opened)."""
        agent = self._owners.get(session)
        if agent is None:
            agent = next((a for a in Agent.opened_on() if session in a.sessions.values()), None)
            if agent is not None:
                self._owners[session] = agent
        return agent

    def names_of(self, session: Session) -> list[str]:
        """The names bound to ``session``."""
        return [name for name, bound in self.names.items() if bound is session]

    def sessions(self) -> list[Session]:
        """Every session of every tracked agent, in order."""
        return [session for agent in self.agents for session in agent.sessions.values()]

    def number(self, agent: Agent) -> int:
        """The agent's 1-based number in start order."""
        return self.agents.index(agent) + 1

    def forget(self, agent: Agent) -> None:
        """Stop tracking ``agent`` and drop the names of its sessions."""
        if agent in self.agents:
            self.agents.remove(agent)
        for name in [n for n, s in self.names.items() if self.agent_of(s) is agent]:
            del self.names[name]

    def live_pids(self) -> list[int]:
        """Process ids of tracked agents that are still running."""
        return [a.process.pid for a in self.agents if _alive(a.process.pid)]

    def terminate_all(self, grace: float = EXIT_GRACE) -> None:
        """Synchronously end every agent still running (SIGTERM, wait ``grace``, SIGKILL), and its tree."""
        processes = [a.process for a in self.agents if _alive(a.process.pid)]
        pids = [p.pid for p in processes]
        for pid in pids:
            _signal(pid, signal.SIGTERM)
        _wait(lambda: any(_alive(pid, reap=True) for pid in pids), grace)
        for pid in pids:
            if _alive(pid, reap=True) or group_alive(pid):
                _signal(pid, signal.SIGKILL)
        supervisors = [s for s in (getattr(p, "supervisor_pid", None) for p in processes) if s]
        _wait(lambda: any(_alive(s) for s in supervisors), SWEEP_WAIT)  # asyncio's watcher reaps them


def _wait(busy: Callable[[], bool], timeout: float) -> None:
    """Poll ``busy()`` until it is false or ``timeout`` s have passed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and busy():
        time.sleep(0.02)


def _signal(pid: int, signum: int) -> None:
    """Signal the agent's process group (its own: ``transport``); nothing once that group is gone.

    Never the bare pid: once the group is gone, a process with that pid is someone else's.
    """
    with contextlib.suppress(OSError):
        os.killpg(pid, signum)


def _alive(pid: int, reap: bool = False) -> bool:
    """True while ``pid`` runs (a zombie counts as gone; with ``reap``, reaped if it is our child)."""
    if reap:  # only at exit: while the loop lives, asyncio's child watcher reaps its children
        with contextlib.suppress(ChildProcessError, OSError):
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except OSError:
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return not sys.platform.startswith("linux")


_registry: Registry | None = None


def registry() -> Registry:
    """The registry of this process."""
    global _registry
    if _registry is None:
        _registry = Registry()
    return _registry


def agent_of(session: Session) -> Agent | None:
    """The ``Agent`` a session was opened on (a session holds its connection, not its agent)."""
    return registry().agent_of(session)
