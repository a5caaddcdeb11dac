"""Starting an agent: spawn, negotiate the protocol version, route what it sends to sessions.

``initialize`` offers ``protocolVersion: 2`` in both shapes at once — v2 ``info`` +
``capabilities`` and v1 ``clientInfo`` + ``clientCapabilities`` — so a v1-only agent that
answers ``1`` knows what we offer; the conversation then continues in v1. Any other version
closes the agent and raises ``ProtocolVersionError``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import Any

from .. import __version__
from ..protocol.diagnostics import Diagnostic
from ..protocol.jsonrpc import RESOURCE_NOT_FOUND, Notification, Request
from .connection import Connection
from .errors import AgentExited, AgentStartError, ProtocolVersionError, RpcError
from .host import HOST_METHODS, FilePolicy
from .lifecycle import LifecycleMixin
from .session import Session
from .transport import AgentProcess

SUPPORTED_VERSIONS = (1, 2)
CLIENT_INFO = {"name": "acp-notebook", "title": "ACP Notebook", "version": __version__}


def v1_client_capabilities(files: bool = True, terminals: bool = True) -> dict[str, Any]:
    """What a v1 agent may ask of us: file access (limited to session roots) and PTY terminals."""
    return {"fs": {"readTextFile": files, "writeTextFile": files}, "terminal": terminals}


def initialize_params(protocol_version: int, files: bool = True, terminals: bool = True) -> dict[str, Any]:
    """The ``initialize`` params: v2 and v1 shapes together when offering v2."""
    params: dict[str, Any] = {
        "protocolVersion": protocol_version,
        "clientInfo": CLIENT_INFO,
        "clientCapabilities": v1_client_capabilities(files, terminals),
    }
    if protocol_version >= 2:
        params.update({"info": CLIENT_INFO, "capabilities": {}})
    return params


class Agent(LifecycleMixin):
    """A running ACP agent process and its sessions."""

    def __init__(self, process: AgentProcess, *, files: bool = True, terminals: bool = True) -> None:
        self.process = process
        self.offers = {"files": files, "terminals": terminals}
        self.protocol_version = 2
        self.info: dict[str, Any] = {}
        self.capabilities: dict[str, Any] = {}
        self.auth_methods: list[Any] = []
        self.initialize_result: dict[str, Any] = {}
        self.sessions: dict[str, Session] = {}
        self.diagnostics: list[Diagnostic] = []
        self.connection = Connection(process, self._on_request, self._on_notification, self._on_diagnostic)
        self.connection.closed.add_done_callback(self._on_closed)
        self.connection.auth_methods = lambda: self.auth_methods

    @property
    def returncode(self) -> int | None:
        """The process's exit code once it has ended."""
        return self.process.returncode

    @property
    def closed(self) -> bool:
        """True once the agent's stdout has closed."""
        return self.connection.closed.done()

    def supports(self, session_capability: str) -> bool:
        """Whether the agent advertises a session capability (v2 ``session.X``, v1
        ``sessionCapabilities.X``) such as ``list``, ``resume``, ``close``, ``additionalDirectories``."""
        key = "session" if self.protocol_version >= 2 else "sessionCapabilities"
        caps = self.capabilities.get(key)
        return isinstance(caps, dict) and caps.get(session_capability) is not None

    def stderr_tail(self, lines: int = 20) -> list[str]:
        """The last lines the agent wrote to stderr."""
        return self.process.stderr_tail(lines)

    async def initialize(self, protocol_version: int = 2) -> None:
        """Send ``initialize`` and adopt the version the agent answers (1 or 2)."""
        params = initialize_params(protocol_version, self.offers["files"], self.offers["terminals"])
        result = await self.connection.request("initialize", params)
        result = result if isinstance(result, dict) else {}
        version = result.get("protocolVersion")
        if version not in SUPPORTED_VERSIONS or version > protocol_version:
            raise ProtocolVersionError(
                f"the agent answered protocolVersion {version!r}; this client speaks "
                f"{' and '.join(map(str, SUPPORTED_VERSIONS))} (asked for {protocol_version})",
                self.stderr_tail(),
            )
        self.protocol_version = version
        self.initialize_result = result
        self.info = result.get("info" if version >= 2 else "agentInfo") or {}
        self.capabilities = result.get("capabilities" if version >= 2 else "agentCapabilities") or {}
        self.auth_methods = result.get("authMethods") or []

    async def new_session(
        self,
        cwd: str | os.PathLike | None = None,
        mcp_servers: Sequence[Any] | None = None,
        *,
        additional_directories: Sequence[str | os.PathLike] = (),
        files: FilePolicy | None = None,
    ) -> Session:
        """Create a session rooted at ``cwd`` (absolute; default: the current directory).

        ``additional_directories`` are further roots; ``files`` narrows or widens what a v1 agent
        may read and write through the client (``FilePolicy``).
        """
        cwd = os.path.abspath(os.fspath(cwd) if cwd is not None else os.getcwd())
        extra = [os.path.abspath(os.fspath(d)) for d in additional_directories]
        params: dict[str, Any] = {"cwd": cwd, "mcpServers": list(mcp_servers or [])}
        if extra and self.supports("additionalDirectories"):  # else they are local roots only
            params["additionalDirectories"] = extra
        created: list[Session] = []

        def register(result: Any) -> None:  # in the reader: updates may follow at once
            result = result if isinstance(result, dict) else {}
            session = Session(self, result.get("sessionId"), cwd, roots=[cwd, *extra], files=files)
            self.sessions[session.session_id] = session
            self._adopt_session_result(session, result)
            created.append(session)

        await self.connection.request("session/new", params, hook=register)
        return created[0]

    def _adopt_session_result(self, session: Session, result: dict[str, Any]) -> None:
        for key, kind in (
            ("availableCommands", "available_commands_update"),
            ("configOptions", "config_option_update"),
        ):
            if isinstance(result.get(key), list):
                session.state.apply({"sessionUpdate": kind, key: result[key]})
        session.modes = result.get("modes")
        if isinstance(session.modes, dict) and isinstance(session.modes.get("currentModeId"), str):
            mode = session.modes["currentModeId"]
            session.state.apply({"sessionUpdate": "current_mode_update", "currentModeId": mode})

    async def close(self, grace: float = 2.0) -> int:
        """Close stdin, wait, terminate, kill; returns the exit code. Safe to call twice."""
        for session in self.sessions.values():
            await session.host.close()
        code = await self.process.close(grace)
        await self.connection.aclose()
        return code

    # -- dispatch from the reader ---------------------------------------------------------------
    def _on_notification(self, message: Notification) -> None:
        params = message.params if isinstance(message.params, dict) else {}
        if message.method == "session/update":
            session = self._session_for(params, message)
            if session is not None:
                session.handle_update(params.get("update"))
        elif message.method == "$/cancel_request":
            for session in self.sessions.values():
                session.handle_cancel_request(params.get("requestId"))

    def _on_request(self, request: Request) -> Any:
        params = request.params if isinstance(request.params, dict) else {}
        if request.method == "session/request_permission":
            return self._session_or_raise(params, request).handle_permission(request)
        if request.method in HOST_METHODS and self._offered(request.method):
            return self._session_or_raise(params, request).handle_host_request(request)
        return NotImplemented

    def _session_or_raise(self, params: dict[str, Any], request: Request) -> Session:
        session = self.sessions.get(params.get("sessionId"))
        if session is None:
            message = f"{request.method}: unknown session {params.get('sessionId')!r}"
            self._on_diagnostic(Diagnostic("unknown-session", message, params))
            raise RpcError(RESOURCE_NOT_FOUND, message, {"sessionId": params.get("sessionId")})
        return session

    def _offered(self, method: str) -> bool:
        """v1 only, and only what ``initialize`` offered."""
        key = "files" if method.startswith("fs/") else "terminals"
        return self.protocol_version == 1 and self.offers[key]

    def _session_for(self, params: dict[str, Any], message: Any) -> Session | None:
        session = self.sessions.get(params.get("sessionId"))
        if session is None:
            self._on_diagnostic(
                Diagnostic("unknown-session", f"{message.method} for an unknown session", params)
            )
        return session

    def _on_diagnostic(self, diag: Diagnostic) -> None:
        self.diagnostics.append(diag)
        for session in self.sessions.values():
            session.state.diagnose(diag.code, diag.message, diag.detail, diag.level)

    def _on_closed(self, future: asyncio.Future) -> None:
        error: AgentExited = future.result()
        for session in self.sessions.values():
            session.state.diagnose("agent-exited", str(error).splitlines()[0], error.returncode, "error")
            session.fail_turn(error)
            asyncio.get_running_loop().create_task(session.host.close())

    def __repr__(self) -> str:
        name = self.info.get("name", self.process.argv[0]) if isinstance(self.info, dict) else "?"
        return f"<Agent {name} v{self.protocol_version} pid={self.process.pid}>"


async def start_agent(
    command: str | Sequence[str],
    cwd: str | os.PathLike | None = None,
    env: dict[str, str] | None = None,
    *,
    protocol_version: int = 2,
    init_timeout: float = 30.0,
    files: bool = True,
    terminals: bool = True,
) -> Agent:
    """Spawn an ACP agent and initialize it; ``protocol_version=1`` forces v1.

    ``files``/``terminals`` say whether a v1 agent is offered ``fs/*`` and ``terminal/*``.
    """
    try:
        process = await AgentProcess.spawn(command, os.fspath(cwd) if cwd else None, env)
    except (OSError, ValueError) as exc:
        raise AgentStartError(f"could not start agent {command!r}: {exc}") from None
    agent = Agent(process, files=files, terminals=terminals)
    try:
        await asyncio.wait_for(agent.initialize(protocol_version), init_timeout)
    except TimeoutError:
        await agent.close(0.5)
        raise AgentStartError(
            f"the agent did not answer initialize within {init_timeout:g} s", agent.stderr_tail()
        ) from None
    except AgentExited as exc:
        raise AgentStartError(
            f"the agent exited during initialize (exit code {exc.returncode})", exc.stderr_tail
        ) from None
    except BaseException:  # incl. cancellation (an interrupt during a slow start): no stray process
        await agent.close(0.5)
        raise
    return agent
