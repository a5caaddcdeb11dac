"""Opening sessions on an agent: new, resumed (with the history replayed), listed.

A new session is registered the moment ``session/new`` answers, in the reader, because updates
may follow at once; a resumed one before its request goes out, because the replayed history comes
before the answer (and a failed resume puts back what was there).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .errors import AcpError
from .host import FilePolicy
from .session import Session

if TYPE_CHECKING:
    from .agent import Agent

Dirs = Sequence[str | os.PathLike]


class Opening:
    """The session calls of one agent."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    async def listed(self, cwd: str | None) -> list[dict[str, Any]]:
        """Every session the agent knows (``session/list``, following ``nextCursor``)."""
        sessions: list[dict[str, Any]] = []
        cursor = None
        while True:
            result = await self.agent.request(self.agent.wire.list_sessions(cwd, cursor)) or {}
            sessions += [s for s in result.get("sessions") or [] if isinstance(s, dict)]
            cursor = result.get("nextCursor")
            if not cursor:
                return sessions

    async def new(
        self,
        cwd: Any,
        mcp_servers: Any,
        additional_directories: Dirs,
        files: FilePolicy | None,
        timeout: Any,
        checkpoints: bool | None = None,
    ) -> Session:
        """``session/new``; the session is registered in the reader, when the answer arrives."""
        agent = self.agent
        cwd, extra = _roots(cwd, additional_directories)
        created: list[Session] = []

        def register(result: Any) -> None:  # in the reader: updates may follow at once
            result = result if isinstance(result, dict) else {}
            session = Session(
                agent, result.get("sessionId"), cwd, roots=[cwd, *extra], files=files, checkpoints=checkpoints
            )
            agent.sessions[session.session_id] = session
            session.settings.adopt(result)
            created.append(session)

        await agent.request(agent.wire.new_session(cwd, list(mcp_servers or []), extra), timeout, register)
        if not created:  # the hook failed: its diagnostic says why
            why = [d.message for d in agent.diagnostics if d.code == "handler-error"][-1:]
            raise AcpError(f"session/new: could not open the session ({''.join(why)})")
        return created[0]

    async def resume(
        self,
        session_id: str,
        cwd: Any,
        replay: bool,
        mcp_servers: Any,
        additional_directories: Dirs,
        files: FilePolicy | None,
        timeout: Any,
        checkpoints: bool | None = None,
    ) -> Session:
        """``session/resume`` (or v1 ``session/load``), registered before the request goes out."""
        agent = self.agent
        cwd, extra = _roots(cwd, additional_directories)
        call = agent.wire.resume_session(session_id, cwd, replay, list(mcp_servers or []), extra)
        session = Session(agent, session_id, cwd, roots=[cwd, *extra], files=files, checkpoints=checkpoints)
        previous = agent.sessions.get(session_id)
        agent.sessions[session_id] = session
        try:
            result = await agent.request(call, timeout)
        except BaseException:
            agent.sessions.pop(session_id, None)
            if previous is not None:
                agent.sessions[session_id] = previous
            raise
        session.settings.adopt(result if isinstance(result, dict) else {})
        return session


def _roots(cwd: str | os.PathLike | None, extra: Dirs) -> tuple[str, list[str]]:
    root = os.path.abspath(os.fspath(cwd) if cwd is not None else os.getcwd())
    return root, [os.path.abspath(os.fspath(d)) for d in extra]
