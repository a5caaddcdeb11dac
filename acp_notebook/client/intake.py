"""What the agent sends, passed to the session it concerns (the wire's routing table points here).

A message for a session this agent does not have is a diagnostic; a request for one is answered
``-32002`` (resource not found), never left waiting.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..protocol.diagnostics import Diagnostic
from ..protocol.jsonrpc import RESOURCE_NOT_FOUND, Notification, Request
from .errors import RpcError

if TYPE_CHECKING:
    from .session import Session


class Intake:
    """The ``Handlers`` of one agent: finds the session of each incoming message."""

    def __init__(self, sessions: dict[str, Session], diagnose: Callable[[Diagnostic], None]) -> None:
        self.sessions, self._diagnose = sessions, diagnose

    def on_update(self, message: Notification) -> None:
        """``session/update``: to its session."""
        params = message.params if isinstance(message.params, dict) else {}
        session = self.sessions.get(params.get("sessionId"))
        if session is None:
            self._diagnose(Diagnostic("unknown-session", f"{message.method} for an unknown session", params))
            return
        session.on_update(params.get("update"))

    def on_cancel_request(self, message: Notification) -> None:
        """``$/cancel_request``: the session holding that request answers it ``cancelled``."""
        params = message.params if isinstance(message.params, dict) else {}
        for session in self.sessions.values():
            session.on_cancel_request(params.get("requestId"))

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
            self._diagnose(Diagnostic("unknown-session", message, params))
            raise RpcError(RESOURCE_NOT_FOUND, message, {"sessionId": params.get("sessionId")})
        return session
