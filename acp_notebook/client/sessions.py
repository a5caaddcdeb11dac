"""The ``Sessions`` table of one agent: opens, resumes and lists sessions, and routes what the
agent sends — every ``session/update`` and agent→client request by its session id, and
``$/cancel_request`` by the agent's request id — to the ``Route`` registered for it.

A new session is registered the moment ``session/new`` answers, in the reader, because updates
may follow at once; a resumed one before its request goes out, because the replayed history comes
before the answer (a failed resume puts back what was there; the subagents of a session resumed
again leave the table first, so its replayed ``subagent_update``s register them anew). A message
for a session id the table does not have is counted (``unknown``, by id) and the first
``UNKNOWN_KEPT`` are diagnostics (id, method, update kind; never the body), so a flood costs a few
counters — the traffic ring and the trace keep every such message whole, and the doctor places a
child's that came before its announcement (``child-before-announcement``); a request
for one is answered ``-32002`` (resource not found), never left waiting. The agent's login status
(``_auth/status_update``) is agent-wide: kept here and told to every session.

``elicitation/create`` is routed by its scope: a ``sessionId`` to that session's route (a child's
to the root's desk; unknown: -32002), a ``requestId`` naming one of our own pending requests that
may ask (``ELICITATION_SCOPES``: ``initialize``, a login, ``session/new``, a resume) to the agent's
desk (``agent.pending_elicitations``; anything else: -32602), as is a mode we did not advertise or
a malformed request. ``elicitation/complete`` goes to whichever desk holds that ``elicitationId``
(none: ignored, noted as info).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

from ..protocol.auth_status import AuthStatus, read_auth_status
from ..protocol.diagnostics import Diagnostic
from ..protocol.elicitation import check_params
from ..protocol.jsonrpc import INVALID_PARAMS, RESOURCE_NOT_FOUND, Notification, Request
from ..protocol.trace import id_key
from .connection import DEFERRED
from .elicitations import ElicitationDesk
from .errors import AcpError, AgentExited, RpcError
from .host import FilePolicy
from .notebook_link import NotebookLink
from .recorder import Traffic
from .routing import Route, SessionParts
from .session import Session
from .summary import AgentSummary
from .wire import ELICITATION_SCOPES, AgentConnection

UNKNOWN_KEPT = 20  # messages for unknown sessions kept as diagnostics; the rest are only counted
UNKNOWN_IDS = 100  # unknown session ids counted by name; any further ones count under OTHER
OTHER = "<other>"
Dirs = Sequence[str | os.PathLike]


class Sessions:
    """One agent's sessions by id, and the ``Handlers`` its connection routes to."""

    def __init__(
        self,
        diagnose: Callable[[Diagnostic], None],
        traffic: Traffic,
        agent_summary: Callable[[], AgentSummary],
        elicitations: ElicitationDesk,
        pending_method: Callable[[Any], str | None],
    ) -> None:
        self._diagnose, self._traffic, self._agent_summary = diagnose, traffic, agent_summary
        self._elicitations = elicitations  # the agent's: request-scoped elicitations
        self._pending_method = pending_method  # our request by id, while it waits: its method
        self._conn: AgentConnection | None = None
        self._sessions: dict[str, Session] = {}  # the sessions opened on this agent
        self._routes: dict[str, Route] = {}  # every session id messages may name
        self._requests: dict[Any, str] = {}  # the agent's pending request id -> its session id
        self._agent_requests: set[Any] = set()  # the agent's request-scoped elicitations' ids
        self.auth_status: AuthStatus | None = None  # the last the agent reported (agent-wide)
        self.unknown: dict[str, int] = {}  # unknown session id -> messages received for it
        self._unknown_total = 0

    @property
    def opened(self) -> MappingProxyType[str, Session]:
        """The sessions opened on this agent, by id (read-only)."""
        return MappingProxyType(self._sessions)

    def connected(self, conn: AgentConnection) -> None:
        """``initialize`` answered: sessions open on ``conn`` from now on."""
        self._conn = conn

    def _connection(self) -> AgentConnection:
        if self._conn is None:
            raise AcpError("the agent has not been initialized yet")
        return self._conn

    # -- opening ----------------------------------------------------------------------------------
    async def open(
        self,
        cwd: Any,
        mcp_servers: Any,
        additional_directories: Dirs,
        files: FilePolicy | None,
        timeout: Any,
        checkpoints: bool | None = None,
        notebook: NotebookLink | None = None,
    ) -> Session:
        """``session/new``; the session is registered in the reader, when the answer arrives."""
        conn = self._connection()
        cwd, extra = _roots(cwd, additional_directories)
        created: list[Any] = []

        def register(result: Any) -> None:  # in the reader: updates may follow at once
            result = result if isinstance(result, dict) else {}
            try:
                session = self._session(result.get("sessionId"), cwd, extra, files, checkpoints, notebook)
                session.settings.adopt(result)
            except Exception as exc:
                created.append(exc)
                raise
            created.append(session)

        await conn.new_session(cwd, list(mcp_servers or []), extra, timeout, register)
        if not created or isinstance(created[0], Exception):
            raise AcpError(
                f"session/new: could not open the session ({created[0] if created else 'no answer'!r})"
            )
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
        conn = self._connection()
        cwd, extra = _roots(cwd, additional_directories)
        previous = self._sessions.get(session_id), self._routes.get(session_id)
        rejoin = previous[0].detach_subagents() if previous[0] is not None else None
        session = self._session(session_id, cwd, extra, files, checkpoints, None)
        try:
            result = await conn.resume_session(
                session_id, cwd, replay, list(mcp_servers or []), extra, timeout
            )
        except BaseException:
            self._put_back(session_id, *previous)
            if rejoin is not None:
                rejoin()
            raise
        session.settings.adopt(result if isinstance(result, dict) else {})
        return session

    async def listed(self, cwd: str | None) -> list[dict[str, Any]]:
        """Every session the agent knows (``session/list``, following ``nextCursor``)."""
        return await self._connection().list_sessions(cwd)

    def _session(
        self,
        session_id: Any,
        cwd: str,
        extra: list[str],
        files: FilePolicy | None,
        checkpoints: bool | None,
        notebook: NotebookLink | None,
    ) -> Session:
        routes = self._routes
        parts = SessionParts(
            self._traffic, self._agent_summary, routes.__setitem__, self._forget, routes.__contains__,
            self._elicitations.url_shown,
        )  # fmt: skip
        session = Session(
            self._connection(), session_id, cwd, parts,
            roots=[cwd, *extra], files=files, checkpoints=checkpoints, notebook=notebook,
        )  # fmt: skip
        self._sessions[session.session_id] = session
        return session

    def _put_back(self, session_id: str, session: Session | None, route: Route | None) -> None:
        self._forget(session_id)
        if session is not None and route is not None:
            self._sessions[session_id], self._routes[session_id] = session, route

    def _forget(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)
        self._routes.pop(session_id, None)

    def clear(self) -> None:
        """Forget every session (the agent restarted: they ended with it)."""
        self._sessions.clear()
        self._routes.clear()
        self._requests.clear()
        self._agent_requests.clear()

    # -- what the agent sends (the ``Handlers``) -------------------------------------------------------
    def on_update(self, message: Notification) -> None:
        """``session/update``: to its session."""
        params = message.params if isinstance(message.params, dict) else {}
        route = self._routes.get(params.get("sessionId"))  # type: ignore[arg-type]
        if route is None:
            self._stray(params.get("sessionId"), f"{message.method} for an unknown session", params)
            return
        route.update(params.get("update"))

    def on_permission(self, request: Request) -> Any:
        """``session/request_permission``: to its session (answered later)."""
        session_id, route = self._route_of(request)
        self._requests[id_key(request.id)] = session_id
        return route.permission(request)

    def on_host_request(self, request: Request) -> Any:
        """``fs/*`` and ``terminal/*`` (v1, where offered): to its session."""
        return self._route_of(request)[1].host_request(request)

    def on_elicitation(self, request: Request) -> Any:
        """``elicitation/create``: to its session, or to the agent's desk when it names one of our
        pending requests (answered later); an invalid one is answered -32602 at once."""
        params = request.params if isinstance(request.params, dict) else {}
        problem = check_params(params, self._elicitations.modes)
        if problem is not None:
            raise RpcError(INVALID_PARAMS, problem)
        if params.get("sessionId") is None:
            scope = self._request_scope(params.get("requestId"))
            self._elicitations.receive(request, scope)
            self._agent_requests.add(id_key(request.id))
            return DEFERRED
        session_id, route = self._route_of(request)
        self._requests[id_key(request.id)] = session_id
        return route.elicitation(request)

    def _request_scope(self, request_id: Any) -> dict[str, Any]:
        method = self._pending_method(request_id)
        if method not in ELICITATION_SCOPES:
            what = f"our pending {method}" if method else "no pending request of ours"
            raise RpcError(INVALID_PARAMS, f"requestId {request_id!r} names {what}: it cannot ask the user")
        return {"id": request_id, "method": method}

    def on_elicitation_complete(self, message: Notification) -> None:
        """``elicitation/complete``: the desk holding that URL elicitation marks it done; an
        unknown or repeated id is ignored."""
        params = message.params if isinstance(message.params, dict) else {}
        elicitation_id = params.get("elicitationId")
        if isinstance(elicitation_id, str):
            desks = [
                self._elicitations.complete,
                *(route.elicitation_done for route in self._routes.values()),
            ]
            if any(done(elicitation_id) for done in desks):
                return
        note = (
            f"elicitation/complete for {elicitation_id!r}: no accepted URL elicitation waits for it (ignored)"
        )
        self._diagnose(Diagnostic("elicitation-complete-ignored", note, level="info"))

    def on_cancel_request(self, message: Notification) -> None:
        """``$/cancel_request``: the session (or the agent's desk) holding that request answers it
        ``cancelled`` / ``cancel``."""
        params = message.params if isinstance(message.params, dict) else {}
        request_id = params.get("requestId")
        key = id_key(request_id)
        if key in self._agent_requests:
            self._agent_requests.discard(key)
            self._elicitations.cancel_request(request_id)
            return
        route = self._routes.get(self._requests.pop(key, None))  # type: ignore[arg-type]
        if route is not None:
            route.withdrawn(request_id)

    def on_auth_status(self, message: Notification) -> None:
        """``_auth/status_update`` / ``auth/status_update``: agent-wide, kept and told to every session
        (kind and label only: ``protocol.auth_status``; a malformed one is noted without its body)."""
        status = read_auth_status(message.params)
        if status is None:
            self._diagnose(Diagnostic("malformed-auth-status", f"{message.method} without a status kind"))
            return
        self.auth_status = status
        for route in self._routes.values():
            route.state.set_auth_status(status)

    def _route_of(self, request: Request) -> tuple[str, Route]:
        params = request.params if isinstance(request.params, dict) else {}
        session_id = params.get("sessionId")
        route = self._routes.get(session_id)  # type: ignore[arg-type]
        if route is None:
            message = f"{request.method}: unknown session {session_id!r}"
            self._stray(session_id, message, params)
            raise RpcError(RESOURCE_NOT_FOUND, message, {"sessionId": session_id})
        return session_id, route

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

    # -- agent-wide events ------------------------------------------------------------------------
    def diagnose_all(self, diag: Diagnostic) -> None:
        """An agent-wide problem: noted in every session's state."""
        for route in self._routes.values():
            route.state.diagnose(diag.code, diag.message, diag.detail, diag.level)

    def exited(self, error: AgentExited, expected: bool) -> None:
        """The agent is gone: every session ends what it left open."""
        for route in list(self._routes.values()):
            route.exited(error, expected)

    async def close_all(self) -> None:
        """Release what each session holds (terminals, its notebook server) before the agent ends."""
        for route in list(self._routes.values()):
            await route.release()


def _sample(session_id: Any, params: dict[str, Any]) -> dict[str, Any]:
    """What a diagnostic keeps of a stray message: its session id and update kind, never its body."""
    update = params.get("update")
    kind = update.get("sessionUpdate") if isinstance(update, dict) else None
    return {
        "sessionId": session_id if isinstance(session_id, str) else repr(session_id)[:100],
        "update": kind,
    }


def _roots(cwd: str | os.PathLike | None, extra: Dirs) -> tuple[str, list[str]]:
    root = os.path.abspath(os.fspath(cwd) if cwd is not None else os.getcwd())
    return root, [os.path.abspath(os.fspath(d)) for d in extra]
