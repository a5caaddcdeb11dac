"""What the agent sends, passed to the session it concerns (the wire's routing table points here).

A message for a session this agent does not have is counted (``unknown``, by session id) and the
first ``UNKNOWN_KEPT`` of them are diagnostics (a small sample: id, method, update kind), so a
flood costs a few counters; a request for one is answered ``-32002`` (resource not found), never
left waiting.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..protocol.auth_status import AuthStatus, read_auth_status
from ..protocol.diagnostics import Diagnostic
from ..protocol.jsonrpc import RESOURCE_NOT_FOUND, Notification, Request
from .errors import RpcError

if TYPE_CHECKING:
    from .session import Session

UNKNOWN_KEPT = 20  # messages for unknown sessions kept as diagnostics; the rest are only counted
UNKNOWN_IDS = 100  # unknown session ids counted by name; any further ones count under OTHER
OTHER = "<other>"


class Intake:
    """The ``Handlers`` of one agent: finds the session of each incoming message."""

    def __init__(self, sessions: dict[str, Session], diagnose: Callable[[Diagnostic], None]) -> None:
        self.sessions, self._diagnose = sessions, diagnose
        self.auth_status: AuthStatus | None = None  # the last the agent reported (agent-wide)
        self.unknown: dict[str, int] = {}  # unknown session id -> messages received for it
        self._unknown_total = 0

    def on_update(self, message: Notification) -> None:
        """``session/update``: to its session."""
        params = message.params if isinstance(message.params, dict) else {}
        session = self.sessions.get(params.get("sessionId"))
        if session is None:
            self._stray(params.get("sessionId"), f"{message.method} for an unknown session", params)
            return
        session.on_update(params.get("update"))

    def on_cancel_request(self, message: Notification) -> None:
        """``$/cancel_request``: the session holding that request answers it ``cancelled``."""
        params = message.params if isinstance(message.params, dict) else {}
        for session in self.sessions.values():
            session.on_cancel_request(params.get("requestId"))

    def on_auth_status(self, message: Notification) -> None:
        """``_auth/status_update`` / ``auth/status_update``: agent-wide, kept and told to every session
        (kind and label only: ``protocol.auth_status``; a malformed one is noted without its body)."""
        status = read_auth_status(message.params)
        if status is None:
            self._diagnose(Diagnostic("malformed-auth-status", f"{message.method} without a status kind"))
            return
        self.auth_status = status
        for session in self.sessions.values():
            session.state.set_auth_status(status)

    def on_permission(self, request: Request) -> Any:
        """``session/request_permission``: to its session."""
        return self._session_of(request).on_permission(request)

    def on_host_request(self, request: Request) -> Any:
        """``fs/*`` and ``terminal/*`` (v1, where offered): to its session."""
        return self._session_of(request).on_host_request(request)

    def _session_of(self, request: Request) -> Session:
        params = request.params if isinstance(request.params, dict) else {}
        session = self.sessions.get(params.get("sessionId"))
        if session is None:
            message = f"{request.method}: unknown session {params.get('sessionId')!r}"
            self._stray(params.get("sessionId"), message, params)
            raise RpcError(RESOURCE_NOT_FOUND, message, {"sessionId": params.get("sessionId")})
        return session

    def _stray(self, session_id: Any, message: str, params: dict[str, Any]) -> None:
        """Count a message for an unknown session; keep the first ``UNKNOWN_KEPT`` as diagnostics."""
        key = session_id if isinstance(session_id, str) else repr(session_id)[:100]
        if key not in self.unknown and len(self.unknown) >= UNKNOWN_IDS:
            key = OTHER
        self.unknown[key] = self.unknown.get(key, 0) + 1
        self._unknown_total += 1
        if self._unknown_total <= UNKNOWN_KEPT:
            self._diagnose(Diagnostic("unknown-session", message, _sample(session_id, params)))
        if self._unknown_total == UNKNOWN_KEPT:
            more = "further messages for unknown sessions are only counted (agent.unknown_sessions)"
            self._diagnose(Diagnostic("unknown-session", more, level="info"))


def _sample(session_id: Any, params: dict[str, Any]) -> dict[str, Any]:
    """What a diagnostic keeps of a stray message: its session id and update kind, never its body."""
    update = params.get("update")
    kind = update.get("sessionUpdate") if isinstance(update, dict) else None
    return {
        "sessionId": session_id if isinstance(session_id, str) else repr(session_id)[:100],
        "update": kind,
    }
