"""The agent side of ACP: initialize, sessions, prompt turns, cancellation."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from .data import AGENT_NAME, AGENT_TITLE, AGENT_VERSION
from .emitter import BaseEmitter, Session, TurnCancelled, prompt_text
from .replies import REPLIES
from .router import route
from .scenarios import SCENARIOS, NoisyOut, Scenario
from .shapes_v1 import V1Emitter
from .shapes_v2 import V2Emitter
from .wire import (
    DEFERRED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
    RpcError,
    Wire,
)

V2_ONLY = frozenset(
    {"session/list", "session/resume", "session/close", "tool_call/cancel", "terminal/cancel"}
)


class Agent:
    """Answers the client's requests and plays a scenario on each prompt.

    With `routed`, each prompt's words choose the scenario (see `router`); without, every prompt
    plays `scenario`.
    """

    def __init__(
        self, wire: Wire, scenario: Scenario, speed: float, protocol: int | None, routed: bool = False
    ) -> None:
        self.wire, self.scenario, self.speed, self.forced = wire, scenario, speed, protocol
        self.routed = routed
        self.mcp = False  # advertise MCP server transports (``--mcp``)
        self.version = protocol or 2
        self.client: dict = {}
        self.sessions: dict[str, Session] = {}
        self.session_count = 0
        self.v1_prompts: dict[Any, BaseEmitter] = {}
        self.tasks: set[asyncio.Task] = set()
        wire.on_request, wire.on_notification = self.on_request, self.on_notification

    # -- dispatch -----------------------------------------------------------------

    async def on_request(self, req_id: Any, method: str, params: dict) -> Any:
        """Route one request to its handler."""
        if not self.scenario.answers_initialize:
            return DEFERRED  # the `hang` scenario reads everything and answers nothing
        name = "do_" + method.replace("/", "_")
        handler = getattr(self, name, None)
        if handler is None or (method in V2_ONLY and self.version < 2):
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
        return await handler(req_id, params)

    def on_notification(self, method: str, params: dict) -> None:
        """Handle `session/cancel` and `$/cancel_request`; ignore the rest."""
        if method == "session/cancel":
            session = self.sessions.get(params.get("sessionId"))
            if session is not None and not session.cancellable:
                print(f"demo agent: {session.session_id} does not allow cancel; ignored", file=sys.stderr)
                return
            for em in session.active if session else []:
                em.cancel()
        elif method == "$/cancel_request" and params.get("requestId") in self.v1_prompts:
            self.v1_prompts[params["requestId"]].cancel()

    # -- initialize and sessions --------------------------------------------------

    async def do_initialize(self, req_id: Any, params: dict) -> dict:
        """Negotiate the version and describe the agent in that version's shape."""
        requested = params.get("protocolVersion")
        valid = type(requested) is int and requested in (1, 2)
        self.version = self.forced or (requested if valid else 2)
        announced = self.scenario.announce_version or self.version
        print(f"demo agent: client asked for v{requested}, answering v{announced}", file=sys.stderr)
        if self.version == 1:
            self.client = _dict(params.get("clientCapabilities"))
            caps = {"image": True, "audio": False, "embeddedContext": True}
            agent_caps = {"loadSession": False, "promptCapabilities": caps}
            if self.mcp:
                agent_caps["mcpCapabilities"] = {"http": True, "sse": False}
            return {
                "protocolVersion": announced,
                "agentCapabilities": agent_caps,
                "agentInfo": _info(),
                "authMethods": [],
            }
        self.client = _dict(params.get("capabilities"))
        caps = {"session": {"prompt": {"image": {}, "embeddedContext": {}}}}
        if self.mcp:
            caps["session"]["mcp"] = {"http": {}, "stdio": {}}
        return {"protocolVersion": announced, "info": _info(), "capabilities": caps, "authMethods": []}

    async def do_session_new(self, req_id: Any, params: dict) -> dict:
        """Create a session rooted at the absolute `cwd`."""
        cwd = params.get("cwd")
        if not isinstance(cwd, str) or not os.path.isabs(cwd):
            raise RpcError(INVALID_PARAMS, "cwd must be an absolute path")
        self.session_count += 1
        session_id = f"sess_demo_{self.session_count}"
        settings = (
            await self.scenario.on_new(self.wire, self.client, req_id) if self.scenario.on_new else None
        )
        self.sessions[session_id] = Session(session_id, cwd, settings=settings)
        servers = params.get("mcpServers")
        self.sessions[session_id].mcp_servers = servers if isinstance(servers, list) else []
        asyncio.get_running_loop().call_soon(self._send_commands, session_id)
        if self.version == 1:
            return {"sessionId": session_id}
        return {"sessionId": session_id, "availableCommands": self._commands()}

    def _commands(self) -> list[dict]:
        """The (decorative) slash commands, in the negotiated version's shape."""
        hint = {"hint": "anything; the demo plays its script"}
        command = {"name": "demo", "description": "Play the demo story again", "input": hint}
        if self.version >= 2:
            command = {"type": "command", **command, "input": {"type": "text", **hint}}
        return [command]

    def _send_commands(self, session_id: str) -> None:
        """Advertise the commands right after `session/new` was answered."""
        update = {"sessionUpdate": "available_commands_update", "availableCommands": self._commands()}
        self.wire.notify("session/update", {"sessionId": session_id, "update": update})

    def _session(self, params: dict) -> Session:
        """The session a request names, or a 'not found' error."""
        session = self.sessions.get(params.get("sessionId"))
        if session is None:
            data = {"sessionId": str(params.get("sessionId"))}
            raise RpcError(RESOURCE_NOT_FOUND, "Session not found", data)
        return session

    def _root(self, params: dict) -> Session:
        """The session a request names, which must be one the client created (not a subagent's)."""
        session = self._session(params)
        if session.parent_id is not None:
            message = f"{session.session_id} is a subagent session: it permits only what it advertises"
            raise RpcError(INVALID_PARAMS, message)
        return session

    async def do_session_list(self, req_id: Any, params: dict) -> dict:
        """List the client's live sessions (optionally only those under one cwd)."""
        cwd = params.get("cwd")
        found = [s for s in self.sessions.values() if s.parent_id is None and cwd in (None, s.cwd)]
        return {"sessions": [_session_info(s) for s in found]}

    async def do_session_resume(self, req_id: Any, params: dict) -> dict:
        """Reattach to a live session (history is not retained, so nothing is replayed)."""
        self._root(params)
        return {"availableCommands": self._commands()}

    async def do_session_close(self, req_id: Any, params: dict) -> dict:
        """Cancel the session's work, and its subagents', and forget them all."""
        session = self._root(params)
        for member in self._family(session.session_id):
            for em in member.active:
                em.cancel()
            for task in member.work:
                task.cancel()
            del self.sessions[member.session_id]
        return {}

    def _family(self, session_id: str) -> list[Session]:
        """A session and every subagent session below it."""
        found = [self.sessions[session_id]]
        for member in found:
            found += [s for s in self.sessions.values() if s.parent_id == member.session_id]
        return found

    # -- prompt turns -------------------------------------------------------------

    async def do_session_prompt(self, req_id: Any, params: dict) -> Any:
        """Accept a prompt and play its scenario as a turn of its own."""
        session = self._root(params)
        prompt = params.get("prompt")
        if not isinstance(prompt, list) or not prompt:
            raise RpcError(INVALID_PARAMS, "prompt must be a non-empty array of content blocks")
        scenario = self.scenario_for(prompt)
        out = NoisyOut(self.wire, session.session_id) if scenario.noisy else self.wire
        shape = V1Emitter if self.version == 1 else V2Emitter
        em = shape(out, session, self.speed, self.client)
        em.prompt, em.play_no = prompt, session.played(scenario)
        em.sessions, em.start_turn = self.sessions, self.start_turn
        session.active.append(em)
        if self.version == 1:
            self.v1_prompts[req_id] = em
        else:
            if scenario.idle_first:
                em.state("idle", "end_turn")  # stale: sent before the acknowledgement
            out.respond(req_id, {"messageId": em.user_message_id})
            em.accepted()
        task = asyncio.ensure_future(self._turn(em, req_id, scenario))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return DEFERRED

    def scenario_for(self, prompt: list) -> Scenario:
        """The scenario a prompt plays: the fixed one, or the one its words route to."""
        if not self.routed:
            return self.scenario
        name = route(prompt_text(prompt))
        return REPLIES.get(name) or SCENARIOS[name]

    async def _turn(self, em: BaseEmitter, req_id: Any, scenario: Scenario) -> None:
        """Run one turn (turns of a session run one after another) and end it."""
        async with em.session.lock:
            try:
                em.check()
                em.begin()
                await scenario.play(em)
                stop, error = "end_turn", None
            except TurnCancelled:
                stop, error = "cancelled", None
            except Exception as exc:  # a bug in a scenario ends the turn, not the agent
                print(f"demo agent: scenario failed: {exc!r}", file=sys.stderr)
                stop = "error" if em.version >= 2 else "end_turn"  # v1 answers with an error
                error = RpcError(INTERNAL_ERROR, str(exc))
            result = await em.finish(stop)
        em.ended.set()
        em.session.active.remove(em)
        self.v1_prompts.pop(req_id, None)
        if em.version == 1:
            if error:
                em.out.respond_error(req_id, error)
            else:
                em.out.respond(req_id, result)

    def start_turn(self, session: Session, play: Callable[[Any], Awaitable[None]]) -> asyncio.Task:
        """Start foreground work in `session` that no prompt asked for (v2), e.g. a task
        notification: `running` ... `idle`, after the session's current turn."""
        em = V2Emitter(self.wire, session, self.speed, self.client)
        em.play_no, em.sessions, em.start_turn = session.played(play), self.sessions, self.start_turn
        session.active.append(em)
        task = asyncio.ensure_future(self._turn(em, None, Scenario(play)))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    # -- per-tool cancellation (v2) -----------------------------------------------

    async def do_tool_call_cancel(self, req_id: Any, params: dict) -> dict:
        """Cancel one running tool call that advertised `capabilities.cancel`."""
        session = self._session(params)
        call_id = params.get("toolCallId")
        if not any(em.cancel_tool(call_id) for em in session.active):
            raise RpcError(INVALID_PARAMS, f"Tool call {call_id!r} cannot be cancelled")
        return {}

    async def do_terminal_cancel(self, req_id: Any, params: dict) -> dict:
        """No demo terminal advertises `capabilities.cancel`."""
        self._session(params)
        raise RpcError(INVALID_PARAMS, "Terminal is not cancellable")


def _dict(value: Any) -> dict:
    """`value` if it is a dict, else an empty dict."""
    return value if isinstance(value, dict) else {}


def _info() -> dict:
    """The agent's implementation info."""
    return {"name": AGENT_NAME, "title": AGENT_TITLE, "version": AGENT_VERSION}


def _session_info(session: Session) -> dict:
    """A SessionInfo entry for `session/list`."""
    info = {"sessionId": session.session_id, "cwd": session.cwd}
    if session.title:
        info["title"] = session.title
    return info
