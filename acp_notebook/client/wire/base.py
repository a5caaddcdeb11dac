"""The wire interface: what one protocol generation says on the connection, and how.

A ``Wire`` holds every ACP method name, parameter and result shape, capability key and quirk of
its version, and the table that routes what the agent sends to the client's handlers. It does
no I/O: it builds ``Call``s (method + params) for the agent and the connection sends them, and
it reads results. Everything else in the client asks the wire instead of comparing versions.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from ...protocol.jsonrpc import Notification, Request
from ...protocol.permission import PermissionRequest
from ...protocol.turn import Turn
from ..errors import AcpError
from .auth import AuthMethod, read_method
from .terminal_output import Translated


@dataclass(frozen=True)
class Offer:
    """What the client offers the agent in ``initialize`` (v1 host capabilities)."""

    files: bool = True
    terminals: bool = True
    terminal_output: bool = True  # v1 extension: agent-run shell output in ``_meta`` (Zed's)
    terminal_auth: bool = True  # we can run a login in an interactive terminal


class Call(NamedTuple):
    """One request or notification to send: its method and params."""

    method: str
    params: dict[str, Any]


class Handlers(Protocol):
    """The client's side of the routing table (``Agent`` implements it)."""

    def on_update(self, message: Notification) -> None: ...
    def on_cancel_request(self, message: Notification) -> None: ...
    def on_permission(self, request: Request) -> Any: ...
    def on_host_request(self, request: Request) -> Any: ...
    def on_auth_status(self, message: Notification) -> None: ...


# the agent's login status, agent-wide, in both versions: claude-agent-acp's and codex-acp's
# extension, and the unstable schema's notification (``protocol.auth_status`` reads both shapes)
AUTH_STATUS_METHODS = ("_auth/status_update", "auth/status_update")


@dataclass
class Routes:
    """Incoming method name → handler; anything else gets -32601 (requests) or a diagnostic."""

    requests: dict[str, Callable[[Request], Any]] = field(default_factory=dict)
    notifications: dict[str, Callable[[Notification], None]] = field(default_factory=dict)


class Unsupported(AcpError):
    """The agent (or this protocol version) does not offer what was asked."""


class Wire(ABC):
    """One protocol generation's view of the connection, after ``initialize``."""

    version: int = 0
    null_ids: bool = True  # may a request id be null (v1 yes, v2 no)
    announces_before_asking: bool = False  # v1: a tool call is announced before permission is asked

    method_id_key: str = "methodId"  # how an auth method spells its id
    env_as_list: bool = True  # a terminal auth method's ``env``: a list of {name, value}

    def __init__(self, offer: Offer, result: dict[str, Any]) -> None:
        self.offer = offer
        self.result = result
        self.auth_methods: list[Any] = _list(result.get("authMethods"))

    def auth_method(self, method_id: str) -> AuthMethod | None:
        """The advertised auth method ``method_id``, read for this version."""
        for raw in self.auth_methods:
            method = read_method(raw, self.method_id_key, self.env_as_list)
            if method is not None and method.id == method_id:
                return method
        return None

    def login(self, method_id: str, meta: dict[str, Any] | None = None) -> Call:
        """Log in with an advertised method the agent handles itself (never a terminal one)."""
        method = self.auth_method(method_id)
        if method is not None and method.runs_in_terminal:
            raise Unsupported(f"{method_id!r} is a terminal login: the client runs it (agent.login_terminal)")
        call = self._login(method_id)
        return Call(call.method, {**call.params, "_meta": meta}) if meta else call

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

    # -- routing ------------------------------------------------------------------------------
    @abstractmethod
    def mcp_transports(self) -> frozenset[str]:
        """The MCP server transports the agent takes in ``mcpServers`` (``"http"``, ``"stdio"``)."""

    @abstractmethod
    def mcp_server(self, name: str, transport: str, **fields: Any) -> dict[str, Any]:
        """One ``mcpServers`` entry: ``url``/``headers`` (dict) for http, ``command``/``args``/``env``
        (dict) for stdio, in this version's shape."""

    @abstractmethod
    def routes(self, handlers: Handlers) -> Routes:
        """The routing table for what the agent sends."""

    # -- calls --------------------------------------------------------------------------------
    def new_session(self, cwd: str, mcp_servers: Sequence[Any], extra_roots: Sequence[str]) -> Call:
        """``session/new``."""
        params: dict[str, Any] = {"cwd": cwd, "mcpServers": list(mcp_servers)}
        if extra_roots and self.supports("additionalDirectories"):  # else they are local roots only
            params["additionalDirectories"] = list(extra_roots)
        return Call("session/new", params)

    @abstractmethod
    def resume_session(
        self, session_id: str, cwd: str, replay: bool, mcp_servers: Sequence[Any], extra_roots: Sequence[str]
    ) -> Call:
        """Reattach to a session (with its history replayed when ``replay``)."""

    def list_sessions(self, cwd: str | None, cursor: str | None) -> Call:
        """One page of ``session/list``."""
        return Call("session/list", {k: v for k, v in (("cwd", cwd), ("cursor", cursor)) if v is not None})

    @abstractmethod
    def close_session(self, session_id: str) -> Call | None:
        """``session/close`` where the agent supports it, else None."""

    @abstractmethod
    def _login(self, method_id: str) -> Call:
        """The login request of this version."""

    @abstractmethod
    def logout(self) -> Call:
        """Log out."""

    def prompt(self, session_id: str, blocks: list[Any]) -> Call:
        """``session/prompt``."""
        return Call("session/prompt", {"sessionId": session_id, "prompt": blocks})

    def cancel(self, session_id: str) -> Call:
        """The ``session/cancel`` notification."""
        return Call("session/cancel", {"sessionId": session_id})

    @abstractmethod
    def set_config_option(self, session_id: str, config_id: str, value: str | bool) -> Call:
        """``session/set_config_option``."""

    def set_mode(self, session_id: str, mode_id: str) -> Call:
        """``session/set_mode`` (agents that offer modes outside config options)."""
        return Call("session/set_mode", {"sessionId": session_id, "modeId": mode_id})

    @abstractmethod
    def cancel_tool_call(self, session_id: str, tool_call_id: str) -> Call:
        """Ask the agent to cancel one tool call."""

    @abstractmethod
    def cancel_terminal(self, session_id: str, terminal_id: str) -> Call:
        """Ask the agent to cancel one terminal."""

    # -- turns and updates --------------------------------------------------------------------
    @abstractmethod
    def new_turn(self) -> Turn:
        """A ``Turn`` that knows how this version ends a turn."""

    @abstractmethod
    def prompt_echo(self, blocks: list[Any]) -> list[dict[str, Any]]:
        """Updates the client applies itself when a prompt goes out (v1 agents don't echo it)."""

    @abstractmethod
    def normalize_update(self, update: Any) -> Any:
        """The v2-rules form of one received update."""

    @abstractmethod
    def is_patch_before_create(self, update: dict[str, Any], known: bool) -> bool:
        """True when ``update`` patches a tool call not yet created, and this version says create first."""

    def extension_updates(self, update: Any, known_meta: Any = None) -> Translated:
        """The further updates an update implies through an extension this wire offered
        (``known_meta``: the stored ``_meta`` of the tool call it patches)."""
        return Translated()

    def permission(self, key: str, request: Request, on_answer: Any) -> PermissionRequest:
        """The ``PermissionRequest`` model of an incoming ``session/request_permission``."""
        params = request.params if isinstance(request.params, dict) else {}
        return PermissionRequest(key, request.id, params, self.version, on_answer=on_answer)

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
