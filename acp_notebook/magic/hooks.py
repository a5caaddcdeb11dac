"""Cell hooks: know the agents in the user namespace; an interrupted cell cancels its turns.

Before each cell, agents and sessions found in the user namespace join the registry (so
``%acp status`` lists them and they end with the kernel), and each session's turn count is noted.
After a cell that ended with ``CancelledError`` or ``KeyboardInterrupt`` — how ipykernel 7.4
delivers a kernel interrupt to an awaiting cell, e.g. ``await session.prompt(...)`` — every turn
that the cell started and that is still running is cancelled (``session/cancel``). ``%%acp --wait``
and ``prompt_sync`` cancel their own turn and raise ``TurnInterrupted``, which is left alone here.
While a cell runs, a kernel interrupt wakes the loop at once (``wake``): an awaiting cell
such as ``await session.prompt(...)`` on a quiet agent is interrupted within a second.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from ..client.agent import Agent
from ..client.registry import registry
from ..client.session import Session
from ..client.sync import run_sync
from ..client.turns import TurnInterrupted
from . import wake

INTERRUPTS = (asyncio.CancelledError, KeyboardInterrupt)


class CellHooks:
    """``pre_run_cell`` / ``post_run_cell`` callbacks for one shell."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.turns_before: dict[Session, int] = {}
        self._tasks: set[asyncio.Task] = set()
        self._woken: wake.Held | None = None

    def adopt(self) -> None:
        """Track the running agents the user namespace holds (directly or through a session)."""
        reg = registry()
        for value in list(self.shell.user_ns.values()):
            agent = reg.agent_of(value) if isinstance(value, Session) else value
            if isinstance(agent, Agent) and not agent.closed and agent not in reg.agents:
                reg.add_agent(agent)

    def pre_run_cell(self, info: Any = None) -> None:
        """Note each session's turn count; let an interrupt wake the loop while the cell runs."""
        self._release()
        self._woken = wake.hold()
        self.adopt()
        self.turns_before = {s: len(s.turns) for s in registry().sessions()}

    def post_run_cell(self, result: Any = None) -> None:
        """After an interrupted cell, cancel the turns it started."""
        self._release()
        error = getattr(result, "error_in_exec", None)
        if not isinstance(error, INTERRUPTS) or isinstance(error, TurnInterrupted):
            return
        for session in registry().sessions():
            started = session.turns[self.turns_before.get(session, 0) :]
            agent = registry().agent_of(session)
            if session.running and session.turn in started and agent is not None and not agent.closed:
                self._cancel(session)

    def _release(self) -> None:
        woken, self._woken = self._woken, None
        if woken is not None:
            woken.release()

    def _cancel(self, session: Session) -> None:
        names = ", ".join(registry().names_of(session)) or session.session_id
        print(f"acp: the cell was interrupted: cancelling the turn of {names}", file=sys.stderr)
        agent = registry().agent_of(session)
        if agent is None:
            return
        loop = agent.loop()
        if loop.is_running():
            task = loop.create_task(session.cancel())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        else:
            run_sync(session.cancel(), loop)
