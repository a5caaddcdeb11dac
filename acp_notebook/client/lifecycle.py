"""Authentication and session lifecycle beyond ``session/new``, for both protocol versions.

v1 ``authenticate``/``logout`` are v2 ``auth/login``/``auth/logout``. ``resume_session``
replays history into a fresh state: v2 ``session/resume`` with ``replayFrom: {type: start}``,
v1 ``session/load`` when the agent advertises ``loadSession`` (else v1 ``session/resume``,
which replays nothing). The session is registered before the request goes out, because the
replayed updates arrive before the response.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .errors import AcpError
from .host import FilePolicy
from .session import Session

if TYPE_CHECKING:
    from .connection import Connection


class LifecycleMixin:
    """``Agent`` methods for authentication, listing and resuming sessions."""

    protocol_version: int
    capabilities: dict[str, Any]
    sessions: dict[str, Session]
    connection: Connection
    _adopt_session_result: Any
    supports: Any

    async def authenticate(self, method_id: str) -> Any:
        """Log in with one of ``agent.auth_methods`` (v1 ``authenticate``, v2 ``auth/login``)."""
        method = "authenticate" if self.protocol_version == 1 else "auth/login"
        return await self.connection.request(method, {"methodId": method_id})

    async def logout(self) -> Any:
        """Log out (v1 ``logout``, v2 ``auth/logout``)."""
        return await self.connection.request("logout" if self.protocol_version == 1 else "auth/logout", {})

    async def list_sessions(self, cwd: str | None = None) -> list[dict[str, Any]]:
        """Every session the agent knows (``session/list``, following ``nextCursor``)."""
        if self.protocol_version == 1 and not self.supports("list"):
            raise AcpError("this v1 agent does not advertise session listing (sessionCapabilities.list)")
        sessions: list[dict[str, Any]] = []
        cursor = None
        while True:
            params = {k: v for k, v in (("cwd", cwd), ("cursor", cursor)) if v is not None}
            result = await self.connection.request("session/list", params) or {}
            sessions += [s for s in result.get("sessions") or [] if isinstance(s, dict)]
            cursor = result.get("nextCursor")
            if not cursor:
                return sessions

    async def resume_session(
        self,
        session_id: str,
        cwd: str | os.PathLike | None = None,
        *,
        replay: bool = True,
        mcp_servers: Sequence[Any] | None = None,
        additional_directories: Sequence[str | os.PathLike] = (),
        files: FilePolicy | None = None,
    ) -> Session:
        """Reattach to an existing session; with ``replay`` its history fills the new state."""
        cwd = os.path.abspath(os.fspath(cwd) if cwd is not None else os.getcwd())
        extra = [os.path.abspath(os.fspath(d)) for d in additional_directories]
        method, params = self._resume_request(session_id, cwd, replay, list(mcp_servers or []))
        if extra and self.supports("additionalDirectories"):
            params["additionalDirectories"] = extra
        session = Session(self, session_id, cwd, roots=[cwd, *extra], files=files)
        previous = self.sessions.get(session_id)
        self.sessions[session_id] = session
        try:
            result = await self.connection.request(method, params)
        except BaseException:
            self.sessions.pop(session_id, None)
            if previous is not None:
                self.sessions[session_id] = previous
            raise
        self._adopt_session_result(session, result if isinstance(result, dict) else {})
        return session

    def _resume_request(self, session_id: str, cwd: str, replay: bool, mcp: list[Any]) -> tuple[str, dict]:
        params: dict[str, Any] = {"sessionId": session_id, "cwd": cwd, "mcpServers": mcp}
        if self.protocol_version >= 2:
            if replay:
                params["replayFrom"] = {"type": "start"}
            return "session/resume", params
        if replay and self.capabilities.get("loadSession"):
            return "session/load", params
        if replay or not self.supports("resume"):
            raise AcpError("this v1 agent cannot load sessions (no `loadSession` capability)")
        return "session/resume", params
