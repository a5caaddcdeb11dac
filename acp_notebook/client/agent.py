"""An agent: its process, the connection over its stdio, the wire of its version, its sessions.

``launch.start_agent`` spawns the process and sends the one ``initialize`` offer (``wire``); the
version the agent answers picks the wire that takes over and routes what the agent sends to
``intake``, which passes it to the right session.
Sessions are created (``new_session``), resumed (``resume_session``, with the history replayed
into a fresh state) and listed through the wire's calls.
"""

from __future__ import annotations

import asyncio
import os
from collections import deque
from collections.abc import Sequence
from typing import Any

from ..protocol.diagnostics import Diagnostic
from .agents import stderr_hints
from .connection import Connection, Stream
from .errors import AcpError, AgentExited
from .host import FilePolicy
from .intake import Intake
from .login import Logins, TerminalLogin
from .session import Session
from .summary import AgentSummary
from .transport import AgentProcess
from .wire import Call, Offer, Wire, choose_wire, initialize_params

HINTS = stderr_hints()  # known stderr lines that need the user's action (agents.json `_hints`)
STDOUT_LINES = 50  # non-JSON stdout lines kept (login prompts, stray logs)
STDOUT_LINE_CHARS = 16_384  # each kept whole up to this (a login URL is ~600)


class Agent:
    """A running ACP agent process and its sessions."""

    def __init__(
        self, process: Stream, *, files: bool = True, terminals: bool = True, terminal_output: bool = True
    ) -> None:
        self.offer = Offer(files=files, terminals=terminals, terminal_output=terminal_output)
        self.initialize_result: dict[str, Any] = {}
        self.sessions: dict[str, Session] = {}
        self.diagnostics: list[Diagnostic] = []
        self.stdout_lines: deque[str] = deque(maxlen=STDOUT_LINES)  # what it printed that is not JSON
        self.intake = Intake(self.sessions, self._on_diagnostic)
        self._wire: Wire | None = None
        self._asked = 2
        self._closing = False  # close() was called: the exit is expected, not an error
        self._hinted: set[str] = set()
        self._attach(process)

    def _attach(self, process: Stream) -> None:
        self.process: Any = process
        self.connection = Connection(process, self._on_diagnostic)
        self.connection.closed.add_done_callback(self._on_closed)
        self.connection.auth_methods = lambda: self.auth_methods
        self.connection.on_stdout = self._on_stdout
        if hasattr(process, "on_stderr"):
            process.on_stderr = self._on_stderr

    # -- what initialize negotiated -------------------------------------------------------------
    @property
    def wire(self) -> Wire:
        """The protocol generation the agent answered (after ``initialize``)."""
        if self._wire is None:
            raise AcpError("the agent has not been initialized yet")
        return self._wire

    @property
    def protocol_version(self) -> int:
        """The negotiated protocol version: 2 or 1."""
        return self.wire.version

    @property
    def info(self) -> dict[str, Any]:
        """The agent's ``name``, ``title`` and ``version``."""
        return self._wire.info if self._wire is not None else {}

    @property
    def capabilities(self) -> dict[str, Any]:
        """The agent's capabilities."""
        return self._wire.capabilities if self._wire is not None else {}

    @property
    def auth_methods(self) -> list[Any]:
        """The authentication methods the agent offers."""
        return self._wire.auth_methods if self._wire is not None else []

    def supports(self, session_capability: str) -> bool:
        """Whether the agent advertises a session capability such as ``list``, ``resume``,
        ``close``, ``additionalDirectories`` (v2 ``session.X``, v1 ``sessionCapabilities.X``)."""
        return self.wire.supports(session_capability)

    # -- the process ------------------------------------------------------------------------------
    @property
    def returncode(self) -> int | None:
        """The process's exit code once it has ended."""
        return self.process.returncode

    @property
    def closed(self) -> bool:
        """True once the agent's stdout has closed."""
        return self.connection.closed.done()

    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop the agent lives on (its pipes and futures belong to it)."""
        return self.connection.closed.get_loop()

    @property
    def stdout_partial(self) -> str | None:
        """A last stdout line without its newline, shown after a quiet time (a prompt, often)."""
        return getattr(self.process, "partial_line", None)

    def _on_stdout(self, text: str) -> None:
        self.stdout_lines.append(text[:STDOUT_LINE_CHARS])

    def _on_stderr(self, text: str) -> None:
        for needle, advice in HINTS:
            if needle in text and needle not in self._hinted:
                self._hinted.add(needle)
                self._on_diagnostic(Diagnostic("agent-hint", advice, text[:300]))

    def stderr_tail(self, lines: int = 20) -> list[str]:
        """The last lines the agent wrote to stderr."""
        return self.process.stderr_tail(lines)

    def summary(self) -> AgentSummary:
        """A typed snapshot for views and reports."""
        info = self.info
        text = {
            k: v if isinstance(v, str) else None for k in ("name", "title", "version") for v in [info.get(k)]
        }
        version = self._wire.version if self._wire is not None else 0
        return AgentSummary(
            text["name"], text["title"], text["version"], version, getattr(self.process, "pid", None),
            self.closed, self.returncode, tuple(self.stderr_tail(50)),
            tuple(self.stdout_lines), self.stdout_partial,
        )  # fmt: skip

    # -- calls ------------------------------------------------------------------------------------
    def call(self, call: Call, hook: Any = None) -> asyncio.Future:
        """Send one of the wire's calls as a request."""
        return self.connection.request(call.method, call.params, hook=hook)

    async def initialize(self, protocol_version: int = 2) -> None:
        """Send ``initialize`` and adopt the wire of the version the agent answers (1 or 2)."""
        self._asked = protocol_version
        result = await self.connection.request("initialize", initialize_params(self.offer, protocol_version))
        wire = choose_wire(self.offer, result, protocol_version, self.stderr_tail())
        self._wire, self.initialize_result = wire, wire.result
        self.connection.route(wire.routes(self.intake), null_ids=wire.null_ids)

    async def request(self, call: Call, timeout: float | None = None) -> Any:
        """Send one of the wire's calls and await its result; a timeout or an interrupt
        withdraws it (``$/cancel_request``) and raises."""
        return await self.connection.wait(self.call(call), timeout)

    async def authenticate(
        self, method_id: str, timeout: float | None = None, *, api_key: str | None = None
    ) -> Any:
        """Log in with one of ``agent.auth_methods`` (v1 ``authenticate``, v2 ``auth/login``);
        cancellable (an interrupt) and bounded by ``timeout`` s. ``api_key`` goes in
        ``_meta["api-key"]`` (methods marked so, e.g. Gemini CLI's ``gemini-api-key``)."""
        meta = {"api-key": api_key} if api_key is not None else None
        return await self.request(self.wire.login(method_id, meta), timeout)

    async def login_terminal(self, method_id: str) -> TerminalLogin:
        """Run a ``terminal`` login method in a PTY (``login.Logins.terminal``)."""
        return await Logins(self).terminal(method_id)

    async def login_env(self, method_id: str, values: dict[str, str], timeout: float | None = None) -> Any:
        """Log in with an ``env_var`` method: restart with ``values`` set, then ``authenticate``."""
        return await Logins(self).env(method_id, values, timeout)

    async def restart(self, env: dict[str, str] | None = None) -> None:
        """Start the agent again — same command and directory, its environment plus ``env`` — and
        initialize it as before; its sessions end."""
        old = self.process
        await self.close(0.5)
        self.sessions.clear()
        self._closing = False
        self._attach(await AgentProcess.spawn(old.argv, old.cwd, {**old.env, **(env or {})}))
        await self.initialize(self._asked)

    async def logout(self) -> Any:
        """Log out (v1 ``logout``, v2 ``auth/logout``)."""
        return await self.call(self.wire.logout())

    async def list_sessions(self, cwd: str | None = None) -> list[dict[str, Any]]:
        """Every session the agent knows (``session/list``, following ``nextCursor``)."""
        sessions: list[dict[str, Any]] = []
        cursor = None
        while True:
            result = await self.call(self.wire.list_sessions(cwd, cursor)) or {}
            sessions += [s for s in result.get("sessions") or [] if isinstance(s, dict)]
            cursor = result.get("nextCursor")
            if not cursor:
                return sessions

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
        cwd, extra = _roots(cwd, additional_directories)
        created: list[Session] = []

        def register(result: Any) -> None:  # in the reader: updates may follow at once
            result = result if isinstance(result, dict) else {}
            session = Session(self, result.get("sessionId"), cwd, roots=[cwd, *extra], files=files)
            self.sessions[session.session_id] = session
            session.settings.adopt(result)
            created.append(session)

        await self.call(self.wire.new_session(cwd, list(mcp_servers or []), extra), hook=register)
        if not created:  # the hook failed: its diagnostic says why
            why = [d.message for d in self.diagnostics if d.code == "handler-error"][-1:]
            raise AcpError(f"session/new: could not open the session ({''.join(why)})")
        return created[0]

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
        """Reattach to an existing session; with ``replay`` its history fills the new state.

        The session is registered before the request goes out: replayed updates come first.
        """
        cwd, extra = _roots(cwd, additional_directories)
        call = self.wire.resume_session(session_id, cwd, replay, list(mcp_servers or []), extra)
        session = Session(self, session_id, cwd, roots=[cwd, *extra], files=files)
        previous = self.sessions.get(session_id)
        self.sessions[session_id] = session
        try:
            result = await self.call(call)
        except BaseException:
            self.sessions.pop(session_id, None)
            if previous is not None:
                self.sessions[session_id] = previous
            raise
        session.settings.adopt(result if isinstance(result, dict) else {})
        return session

    async def close(self, grace: float = 2.0) -> int:
        """Close stdin, wait, terminate, kill; returns the exit code. Safe to call twice."""
        self._closing = True
        for session in list(self.sessions.values()):
            await session.host.close()
        code = await self.process.close(grace)
        await self.connection.aclose()
        return code

    def _on_diagnostic(self, diag: Diagnostic) -> None:
        self.diagnostics.append(diag)
        for session in self.sessions.values():
            session.state.diagnose(diag.code, diag.message, diag.detail, diag.level)

    def _on_closed(self, future: asyncio.Future) -> None:
        error: AgentExited = future.result()
        for session in self.sessions.values():
            session.agent_exited(error, expected=self._closing)

    def __repr__(self) -> str:
        name = self.info.get("name") or getattr(self.process, "argv", ["?"])[0]
        version = self._wire.version if self._wire is not None else "?"
        return f"<Agent {name} v{version} pid={getattr(self.process, 'pid', None)}>"


def _roots(cwd: str | os.PathLike | None, extra: Sequence[str | os.PathLike]) -> tuple[str, list[str]]:
    root = os.path.abspath(os.fspath(cwd) if cwd is not None else os.getcwd())
    return root, [os.path.abspath(os.fspath(d)) for d in extra]
