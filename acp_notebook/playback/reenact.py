"""Re-enacting a trace through the real client: an ``Agent`` over a memory stream, entry by entry.

What the agent sent (``in``) is pushed into the stream as if the agent wrote it (responses get
the ids this client actually used). What the client sent (``out``) is done again through the
public API — ``initialize``, ``new_session``, ``prompt_task``, ``cancel`` (a subagent's too),
choosing the recorded permission option, giving an elicitation the recorded answer (its
``action`` and ``content`` as sent, by whom the trace says) — so the echo, turn tracking and the
permission and elicitation desks run as they did live (a subagent's requests are on its root's
desk; a request-scoped elicitation's ``requestId`` names the id this client used, and it waits on
the agent's desk); the client is ``replaying``: it shows no question and prints no URL. Other
requests and notifications go out as recorded. v1 ``fs/*``/``terminal/*`` requests are not served
again (nothing touches the disk or starts a process): the recorded answer is sent instead.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from ..client.connection import DEFERRED
from ..client.host import HOST_METHODS
from ..protocol import answering
from ..protocol.elicitation import ACTIONS, Elicitation, ElicitationAlreadyAnswered, ElicitationTooLate
from ..protocol.state import SessionState
from .memory import MemoryStream
from .recorded_host import apply_answer

SETTLE = 8  # loop turns after each entry, so the tasks it woke have run (deterministic: no I/O)


class ReplayStream(MemoryStream):
    """A memory stream that also delivers recorded stderr lines."""

    on_stderr: Any = None


def offer_of(params: Any) -> dict[str, bool]:
    """The ``Agent`` options matching a recorded ``initialize`` offer (elicitation: offered when
    either shape names a mode; a trace from before it was offered replays without it)."""
    caps = params.get("clientCapabilities") if isinstance(params, dict) else None
    caps = caps if isinstance(caps, dict) else {}
    v2 = params.get("capabilities") if isinstance(params, dict) else None
    fs = caps.get("fs") if isinstance(caps.get("fs"), dict) else {}
    meta = caps.get("_meta") if isinstance(caps.get("_meta"), dict) else {}
    offers = [c.get("elicitation") for c in (caps, v2) if isinstance(c, dict)]
    elicitation = any(
        isinstance(o, dict) and any(o.get(m) is not None for m in ("form", "url")) for o in offers
    )
    return {
        "files": bool(fs.get("readTextFile", True)),
        "terminals": bool(caps.get("terminal", True)),
        "terminal_output": bool(meta.get("terminal_output", True)),
        "elicitation": elicitation or params is None,  # no initialize recorded: as we offer today
    }


class Reenactment:
    """One client, fed a trace's entries in order (``await apply(entry)``)."""

    def __init__(
        self,
        agent_class: type,
        command: list[str] | None,
        init_params: Any = None,
        session_id: str | None = None,
    ) -> None:
        self.stream = ReplayStream(argv=list(command or ["(replay)"]))
        self.agent = agent_class(self.stream, **offer_of(init_params), replaying=True)  # the client's
        self.blank = SessionState()
        self.session_id: str | None = session_id  # the session followed (default: the first one)
        self._ids: dict[Any, Any] = {}  # recorded request id -> the id this client used
        self._host_requests: dict[Any, tuple[str, Any]] = {}  # agent's id -> (method, params)
        self._tasks: list[asyncio.Future] = []

    @property
    def session(self) -> Any:
        """The followed session, as this client rebuilt it (None before it exists)."""
        return self.agent.sessions.get(self.session_id) if self.session_id else None

    @property
    def state(self) -> SessionState:
        """The followed session's state (an empty one before it exists)."""
        session = self.session
        return session.state if session is not None else self.blank

    async def apply(self, entry: dict[str, Any]) -> None:
        """Re-enact one entry."""
        kind = entry.get("kind")
        if kind == "stderr":
            if self.stream.on_stderr is not None:
                self.stream.on_stderr(str(entry.get("text", "")))
        elif entry.get("dir") == "out" and kind == "message":
            await self._client_sends(entry.get("message"), entry.get("decided_by"))
        elif kind == "stdout":
            await self._push(str(entry.get("text", "")).encode("utf-8", "replace"))
        elif kind == "message":
            await self._push(json.dumps(self._remap(entry.get("message"))).encode())
        await _settle()

    async def _push(self, line: bytes) -> None:
        self._serve_no_host()
        self.stream.push(line)
        await asyncio.wait_for(self.stream.idle(), 5.0)

    def _remap(self, message: Any) -> Any:
        if isinstance(message, list):
            return [self._remap(m) for m in message]
        if isinstance(message, dict) and "method" not in message and "id" in message:
            return {**message, "id": self._ids.get(_key(message["id"]), message["id"])}
        if isinstance(message, dict) and message.get("method") in HOST_METHODS:
            self._host_requests[_key(message.get("id"))] = (message["method"], message.get("params"))
        if isinstance(message, dict) and message.get("method") == "elicitation/create":
            return self._scoped(message)
        return message

    def _scoped(self, message: dict[str, Any]) -> dict[str, Any]:
        """A request-scoped elicitation names our request by the id this client used for it."""
        params = message.get("params")
        if not isinstance(params, dict) or params.get("requestId") is None:
            return message
        used = self._ids.get(_key(params["requestId"]), params["requestId"])
        return {**message, "params": {**params, "requestId": used}}

    def _serve_no_host(self) -> None:
        """Once initialized: host requests wait for their recorded answer instead of running."""
        routes = self.agent.rpc.routes.requests
        for method in HOST_METHODS & routes.keys():
            routes[method] = lambda _request: DEFERRED

    # -- what the client sent --------------------------------------------------------------------
    async def _client_sends(self, message: Any, decided_by: Any = None) -> None:
        if not isinstance(message, dict):
            return  # a batch reply: its answers were produced by the requests it answers
        before = len(self.stream.sent)
        if "method" not in message:
            self._answer(message, decided_by if isinstance(decided_by, str) else "replay")
            return
        self._start(message)
        for _ in range(SETTLE * 4):
            if len(self.stream.sent) > before:
                break
            await asyncio.sleep(0)
        sent = self.stream.sent[before:]
        if "id" in message and sent and isinstance(sent[-1], dict) and "id" in sent[-1]:
            self._ids[_key(message["id"])] = sent[-1]["id"]

    def _start(self, message: dict[str, Any]) -> None:
        method, params = message["method"], message.get("params")
        params = params if isinstance(params, dict) else {}
        session = self.agent.sessions.get(params.get("sessionId"))
        if method == "initialize":
            self._spawn(self.agent.initialize(params.get("protocolVersion", 2)))
        elif method == "session/new":
            extra = params.get("additionalDirectories") or ()
            self._spawn(self._new(params.get("cwd"), params.get("mcpServers"), extra))
        elif method in ("session/load", "session/resume") and isinstance(params.get("sessionId"), str):
            self._spawn(self._resume(method, params))
        elif method == "session/prompt" and session is not None:
            self._track(session.prompt_task(params.get("prompt") or [{"type": "text", "text": ""}]))
        elif method == "session/cancel" and session is not None:
            self._spawn(session.cancel())
        elif method == "session/cancel" and self._cancellable(params.get("sessionId")) is not None:
            self._spawn(self._cancellable(params.get("sessionId")).cancel())
        elif "id" in message:
            self._track(self.agent.rpc.request(method, params))
        else:
            self.agent.rpc.notify(method, message.get("params"))

    def _cancellable(self, session_id: Any) -> Any:
        """The subagent ``session_id`` of any session here, where it allows ``cancel()`` (else None)."""
        todo = [session.subagents for session in self.agent.sessions.values()]
        while todo:
            children = todo.pop()
            child = children.get(session_id) if isinstance(session_id, str) else None
            if child is not None:
                return child if child.info.cancellable else None
            todo.extend(c.subagents for c in children.values())
        return None

    async def _new(self, cwd: Any, servers: Any, extra: Any) -> None:
        session = await self.agent.new_session(
            cwd or "/", servers or [], additional_directories=extra, checkpoints=False
        )  # a replay touches no disk
        if self.session_id is None:
            self.session_id = session.session_id

    async def _resume(self, method: str, params: dict[str, Any]) -> None:
        history = method == "session/load" or "replayFrom" in params
        servers, extra = params.get("mcpServers") or [], params.get("additionalDirectories") or ()
        cwd = params.get("cwd") or "/"
        if self.session_id is None:
            self.session_id = params["sessionId"]
        await self.agent.resume_session(
            params["sessionId"],
            cwd,
            replay=history,
            mcp_servers=servers,
            additional_directories=extra,
            checkpoints=False,
        )

    def _answer(self, response: dict[str, Any], decided_by: str) -> None:
        """The client's answer to the agent's request: the same choice (by whom the trace says), or
        the recorded answer."""
        request_id = response.get("id")
        for session in self.agent.sessions.values():
            for perm in session.pending_permissions:
                if perm.request_id == request_id:
                    return _choose(perm, response.get("result"), decided_by)
        for elicitation in self._pending_elicitations():
            if elicitation.request_id == request_id:
                return _give(elicitation, response.get("result"), decided_by)
        host = self._host_requests.pop(_key(request_id), None)
        if host is not None:
            self._host_answer(request_id, host, response)
        # anything else was answered by the client itself when the request arrived

    def _pending_elicitations(self) -> list[Elicitation]:
        """Every elicitation waiting here: each session's (a subagent's on its root's) and the
        agent's request-scoped ones."""
        found = [e for s in self.agent.sessions.values() for e in s.pending_elicitations]
        return found + list(self.agent.pending_elicitations)

    def _host_answer(self, request_id: Any, host: tuple[str, Any], response: dict[str, Any]) -> None:
        method, params = host
        error = response.get("error")
        if isinstance(error, dict):
            code, text = error.get("code", -32603), str(error.get("message", ""))
            self.agent.rpc.respond_error(request_id, code, text, error.get("data"))
            return
        session = self.agent.sessions.get(params.get("sessionId") if isinstance(params, dict) else None)
        if session is not None:
            apply_answer(session.state, session.cwd, method, params, response.get("result"))
        self.agent.rpc.respond(request_id, response.get("result"))

    def _spawn(self, coroutine: Any) -> None:
        self._track(asyncio.ensure_future(coroutine))

    def _track(self, future: asyncio.Future) -> None:
        future.add_done_callback(_quiet)
        self._tasks.append(future)

    async def close(self) -> None:
        """End the re-enactment (its agent closes; its tasks end)."""
        await self.agent.close(0)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


def _choose(perm: Any, result: Any, by: str) -> None:
    outcome = result.get("outcome") if isinstance(result, dict) else None
    outcome = outcome if isinstance(outcome, dict) else {}
    if outcome.get("outcome") == "selected" and outcome.get("optionId") in perm.option_ids:
        perm.select(outcome["optionId"], by=by)
    else:
        perm.cancel(by=by)


def _give(elicitation: Elicitation, result: Any, by: str) -> None:
    """The recorded answer, exactly as it was sent (a form's content is not merged or checked
    again: the trace says what the agent got)."""
    if isinstance(result, dict) and result.get("action") in ACTIONS:
        outcome = dict(result)
        answering.give(
            elicitation, outcome, by, ElicitationAlreadyAnswered, ElicitationTooLate, "elicitation"
        )


def _quiet(task: asyncio.Future) -> None:
    if not task.cancelled():
        task.exception()  # a re-enacted call may fail as it did live: the state says so


def _key(value: Any) -> Any:
    return json.dumps(value, sort_keys=True) if isinstance(value, dict | list) else value


async def _settle() -> None:
    for _ in range(SETTLE):
        await asyncio.sleep(0)
