"""The connection object of one protocol generation: every ACP call, one async method each.

An ``AgentConnection`` holds the JSON-RPC connection (``client.connection.Connection``) once
``initialize`` has picked the version, and is the only place in the client that names an ACP
method, builds its params, reads its result or raises its typed errors (``AuthRequired``,
``Unsupported``). It also reads what the agent sends: the routing table that points each
incoming method at the ``Sessions`` table, and ``read_update``, which turns one received
``session/update`` into what the state applies (version quirks and offered extensions
included). Like the ACP SDK's ``ClientSideConnection`` and Zed's ``AgentConnection``; the rest
of the client asks it instead of comparing versions.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...protocol.elicitation import MODES as ELICITATION_MODES
from ...protocol.jsonrpc import AUTH_REQUIRED, ErrorObject, Notification, Request
from ...protocol.permission import PermissionRequest
from ...protocol.state import Incoming
from ...protocol.turn import Turn
from ..connection import Connection, ResponseHook
from ..errors import AcpError, AuthRequired, RpcError
from .auth import AuthMethod, read_method

CANCEL_REQUEST = "$/cancel_request"
# our requests a request-scoped elicitation may name (``requestId``): the start, login and opening
ELICITATION_SCOPES = frozenset(
    {"initialize", "authenticate", "auth/login", "session/new", "session/resume", "session/load"}
)


@dataclass(frozen=True)
class Offer:
    """What the client offers the agent in ``initialize`` (v1 host capabilities)."""

    files: bool = True
    terminals: bool = True
    terminal_output: bool = True  # v1 extension: agent-run shell output in ``_meta`` (Zed's)
    terminal_auth: bool = True  # we can run a login in an interactive terminal
    elicitation: bool = True  # form and URL elicitations (``elicitation/create``)

    @property
    def elicitation_modes(self) -> tuple[str, ...]:
        """The elicitation modes advertised (what ``elicitation/create`` may ask)."""
        return ELICITATION_MODES if self.elicitation else ()

    def elicitation_capability(self) -> dict[str, Any]:
        """The ``elicitation`` capability object: ``{"form": {}, "url": {}}`` (each mode explicit)."""
        return {mode: {} for mode in self.elicitation_modes}


class Handlers(Protocol):
    """Where what the agent sends goes (the ``Sessions`` table implements it)."""

    def on_update(self, message: Notification) -> None: ...
    def on_cancel_request(self, message: Notification) -> None: ...
    def on_permission(self, request: Request) -> Any: ...
    def on_host_request(self, request: Request) -> Any: ...
    def on_auth_status(self, message: Notification) -> None: ...
    def on_elicitation(self, request: Request) -> Any: ...
    def on_elicitation_complete(self, message: Notification) -> None: ...


# the agent's login status, agent-wide, in both versions: claude-agent-acp's and codex-acp's
# extension, and the unstable schema's notification (``protocol.auth_status`` reads both shapes)
AUTH_STATUS_METHODS = ("_auth/status_update", "auth/status_update")


@dataclass
class Routes:
    """Incoming method name → handler; anything else gets -32601 (requests) or a diagnostic."""

    requests: dict[str, Callable[[Request], Any]] = field(default_factory=dict)
    notifications: dict[str, Callable[[Notification], None]] = field(default_factory=dict)


def early_routes(handlers: Handlers) -> Routes:
    """What is routed while ``initialize`` waits (any version): a request-scoped elicitation may
    name it, and may be withdrawn or completed meanwhile."""
    return Routes(
        requests={"elicitation/create": handlers.on_elicitation},
        notifications={
            "elicitation/complete": handlers.on_elicitation_complete,
            CANCEL_REQUEST: handlers.on_cancel_request,
        },
    )


class Unsupported(AcpError):
    """The agent (or this protocol version) does not offer what was asked."""


class AgentConnection(ABC):
    """One protocol generation's connection to an agent, after ``initialize``."""

    version: int = 0
    null_ids: bool = True  # may a request id be null (v1 yes, v2 no)
    announces_before_asking: bool = False  # v1: a tool call is announced before permission is asked

    method_id_key: str = "methodId"  # how an auth method spells its id
    env_as_list: bool = True  # a terminal auth method's ``env``: a list of {name, value}
    login_method: str = "auth/login"  # v1: ``authenticate``
    logout_method: str = "auth/logout"  # v1: ``logout``

    def __init__(self, rpc: Connection, offer: Offer, result: dict[str, Any]) -> None:
        self.rpc, self.offer, self.result = rpc, offer, result
        self.auth_methods: list[Any] = _list(result.get("authMethods"))
        rpc.typed_error = self._typed_error

    def route(self, handlers: Handlers) -> None:
        """Point what the agent sends at ``handlers`` (in the reader, as ``initialize`` answers)."""
        self.rpc.route(self.routes(handlers), null_ids=self.null_ids)

    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop the connection lives on."""
        return self.rpc.closed.get_loop()

    # -- what initialize said -----------------------------------------------------------------
    @property
    @abstractmethod
    def info(self) -> dict[str, Any]:
        """The agent's name, title and version."""

    @property
    @abstractmethod
    def capabilities(self) -> dict[str, Any]:
        """The agent's capabilities object."""

    @abstractmethod
    def supports(self, session_capability: str) -> bool:
        """Whether the agent advertises a session capability (``list``, ``close``, ...)."""

    def auth_method(self, method_id: str) -> AuthMethod | None:
        """The advertised auth method ``method_id``, read for this version."""
        for raw in self.auth_methods:
            method = read_method(raw, self.method_id_key, self.env_as_list)
            if method is not None and method.id == method_id:
                return method
        return None

    @abstractmethod
    def mcp_transports(self) -> frozenset[str]:
        """The MCP server transports the agent takes in ``mcpServers`` (``"http"``, ``"stdio"``)."""

    @abstractmethod
    def mcp_server(self, name: str, transport: str, **fields: Any) -> dict[str, Any]:
        """One ``mcpServers`` entry: ``url``/``headers`` (dict) for http, ``command``/``args``/``env``
        (dict) for stdio, in this version's shape."""

    def routes(self, handlers: Handlers) -> Routes:
        """The routing table for what the agent sends: permissions, elicitations, updates,
        ``$/cancel_request`` and the login status."""
        routes = early_routes(handlers)
        routes.requests["session/request_permission"] = handlers.on_permission
        routes.notifications["session/update"] = handlers.on_update
        routes.notifications.update(dict.fromkeys(AUTH_STATUS_METHODS, handlers.on_auth_status))
        return routes

    # -- sending ------------------------------------------------------------------------------
    async def call(
        self,
        method: str,
        params: dict[str, Any],
        timeout: float | None = None,
        hook: ResponseHook | None = None,
    ) -> Any:
        """Send a request and await its result; a timeout or an interrupt withdraws it
        (``$/cancel_request``) and raises. A late answer still settles the request quietly."""
        future = self.rpc.request(method, params, hook=hook)
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except (TimeoutError, asyncio.CancelledError):
            self.withdraw(future)
            raise

    def withdraw(self, future: asyncio.Future) -> bool:
        """Tell the agent a request still waiting is withdrawn; False if it is not pending."""
        request_id = self.rpc.pending_id(future)
        if request_id is None:
            return False
        self.rpc.notify(CANCEL_REQUEST, {"requestId": request_id})
        return True

    def _typed_error(self, error: ErrorObject, method: str) -> RpcError:
        if error.code == AUTH_REQUIRED:
            return AuthRequired(error.message, error.data, method, self.auth_methods)
        return RpcError(error.code, error.message, error.data, method)

    # -- the agent --------------------------------------------------------------------------------
    async def login(
        self, method_id: str, meta: dict[str, Any] | None = None, timeout: float | None = None
    ) -> Any:
        """Log in with an advertised method the agent handles itself (never a terminal one)."""
        method = self.auth_method(method_id)
        if method is not None and method.runs_in_terminal:
            raise Unsupported(f"{method_id!r} is a terminal login: the client runs it (agent.login_terminal)")
        params = {"methodId": method_id, **({"_meta": meta} if meta else {})}
        return await self.call(self.login_method, params, timeout)

    async def logout(self) -> Any:
        """Log out."""
        return await self.call(self.logout_method, {})

    # -- sessions -----------------------------------------------------------------------------
    async def new_session(
        self,
        cwd: str,
        mcp_servers: Sequence[Any],
        extra_roots: Sequence[str],
        timeout: float | None = None,
        hook: ResponseHook | None = None,
    ) -> Any:
        """``session/new``; ``hook(result)`` runs in the reader as the answer arrives."""
        return await self.call(
            "session/new", self._session_params(cwd, mcp_servers, extra_roots), timeout, hook
        )

    def _session_params(
        self, cwd: str, mcp_servers: Sequence[Any], extra_roots: Sequence[str]
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"cwd": cwd, "mcpServers": list(mcp_servers)}
        if extra_roots and self.supports("additionalDirectories"):  # else they are local roots only
            params["additionalDirectories"] = list(extra_roots)
        return params

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        replay: bool,
        mcp_servers: Sequence[Any],
        extra_roots: Sequence[str],
        timeout: float | None = None,
    ) -> Any:
        """Reattach to a session (with its history replayed when ``replay``)."""
        params = {"sessionId": session_id, **self._session_params(cwd, mcp_servers, extra_roots)}
        return await self.call(self._resume_method(params, replay), params, timeout)

    @abstractmethod
    def _resume_method(self, params: dict[str, Any], replay: bool) -> str:
        """The request that resumes a session in this version (adding what replaying needs)."""

    async def list_sessions(self, cwd: str | None = None) -> list[dict[str, Any]]:
        """Every session the agent knows (``session/list``, following ``nextCursor``)."""
        sessions: list[dict[str, Any]] = []
        cursor = None
        while True:
            params = {k: v for k, v in (("cwd", cwd), ("cursor", cursor)) if v is not None}
            result = await self.call("session/list", params) or {}
            sessions += [s for s in result.get("sessions") or [] if isinstance(s, dict)]
            cursor = result.get("nextCursor")
            if not cursor:
                return sessions

    @abstractmethod
    async def close_session(self, session_id: str) -> bool:
        """``session/close`` where the agent supports it; False when it does not (nothing sent)."""

    def prompt(self, session_id: str, blocks: list[Any], hook: ResponseHook | None = None) -> asyncio.Future:
        """Send ``session/prompt``; the future settles with the response (the turn may go on)."""
        return self.rpc.request("session/prompt", {"sessionId": session_id, "prompt": blocks}, hook=hook)

    def cancel(self, session_id: str) -> Awaitable[None]:
        """Send the ``session/cancel`` notification now; await the result until it is written."""
        self.rpc.notify("session/cancel", {"sessionId": session_id})
        return self.rpc.drain()

    @abstractmethod
    async def set_config_option(self, session_id: str, config_id: str, value: str | bool) -> Any:
        """``session/set_config_option``; returns the agent's answer."""

    async def set_mode(self, session_id: str, mode_id: str) -> Any:
        """``session/set_mode`` (agents that offer modes outside config options)."""
        return await self.call("session/set_mode", {"sessionId": session_id, "modeId": mode_id})

    @abstractmethod
    async def cancel_tool_call(self, session_id: str, tool_call_id: str) -> Any:
        """Ask the agent to cancel one tool call."""

    @abstractmethod
    async def cancel_terminal(self, session_id: str, terminal_id: str) -> Any:
        """Ask the agent to cancel one terminal."""

    # -- answering the agent --------------------------------------------------------------------
    def respond(self, request_id: Any, result: Any) -> None:
        """Answer one of the agent's requests (``ValueError``, nothing sent, if unencodable)."""
        self.rpc.respond(request_id, result)

    def answer(self, request_id: Any, result: Any) -> None:
        """``respond``, falling back to an internal error when the result cannot be encoded."""
        self.rpc.answer(request_id, result)

    def respond_error(self, request_id: Any, code: int, message: str, data: Any = None) -> None:
        """Answer one of the agent's requests with a JSON-RPC error."""
        self.rpc.respond_error(request_id, code, message, data)

    def permission(self, key: str, request: Request, on_answer: Any) -> PermissionRequest:
        """The ``PermissionRequest`` model of an incoming ``session/request_permission``."""
        params = request.params if isinstance(request.params, dict) else {}
        return PermissionRequest(key, request.id, params, self.version, on_answer=on_answer)

    # -- turns and updates --------------------------------------------------------------------
    @abstractmethod
    def new_turn(self) -> Turn:
        """A ``Turn`` that knows how this version ends a turn."""

    @abstractmethod
    def prompt_echo(self, blocks: list[Any]) -> list[dict[str, Any]]:
        """Updates the client applies itself when a prompt goes out (v1 agents don't echo it)."""

    def refusal(self, turn: Turn) -> AuthRequired | None:
        """The ``AuthRequired`` a turn means that stopped with an ``error`` of code -32000 (v2's
        refusal for want of a login; v1 fails the prompt request with it instead)."""
        error = turn.error
        if turn.stop_reason != "error" or not isinstance(error, dict) or error.get("code") != AUTH_REQUIRED:
            return None
        message = error.get("message")
        text = message if isinstance(message, str) and message else "Authentication required"
        return AuthRequired(text, error.get("data"), "session/prompt", self.auth_methods)

    def read_update(self, update: Any, known: Callable[[str], Any]) -> Incoming:
        """One received update as the state applies it: ``known(tool_call_id)`` is the stored
        tool call (or None), for the version's ordering rule and the extensions' memory."""
        return Incoming(update)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


def http_entry(name: str, fields: dict[str, Any]) -> dict[str, Any]:
    """An ``mcpServers`` HTTP entry (both versions' shape): ``url`` and ``headers`` (a dict)."""
    return {"type": "http", "name": name, "url": fields["url"], "headers": name_values(fields.get("headers"))}


def stdio_entry(name: str, fields: dict[str, Any]) -> dict[str, Any]:
    """An ``mcpServers`` stdio entry without ``type`` (v1's shape; v2 adds ``"type": "stdio"``)."""
    args = list(fields.get("args") or [])
    return {"name": name, "command": fields["command"], "args": args, "env": name_values(fields.get("env"))}


def name_values(values: dict[str, str] | None) -> list[dict[str, str]]:
    """``{"K": "V"}`` as ACP's ``[{"name": "K", "value": "V"}]`` (headers, env)."""
    return [{"name": str(k), "value": str(v)} for k, v in (values or {}).items()]


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def obj(value: Any) -> dict[str, Any]:
    """``value`` if it is an object, else an empty one."""
    return value if isinstance(value, dict) else {}
