"""An agent: its process, the JSON-RPC connection over its stdio, its version's connection
object, its ``Sessions`` table.

``launch.start_agent`` spawns the process and sends the one ``initialize`` offer (``wire``); the
version the agent answers picks the ``AgentConnection`` that takes over and routes what the agent
sends to the ``Sessions`` table, which hands it to the session it names. Sessions are created
(``new_session``), resumed (``resume_session``, with the history replayed into a fresh state)
and listed through the table. Elicitations scoped to one of our own requests (``initialize``, a
login, ``session/new``, a resume) wait on the agent's own desk: ``pending_elicitations``, answered
by ``elicitation_handler`` (``start_agent(..., elicitation_handler=)`` sets it before
``initialize``) or by hand; ``elicitation_state`` holds them for views and tables. A URL accepted
by code is printed for the user to open; a replay's client (``replaying=True``) prints nothing and
shows no question.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from .. import frontend
from ..protocol.auth_status import AuthStatus
from ..protocol.diagnostics import Diagnostic
from ..protocol.elicitation import Elicitation
from ..protocol.state import SessionState
from .connection import Connection, Stream
from .elicitations import ElicitationDesk, ElicitationHandler, show_url, unshown
from .errors import AcpError, AgentExited
from .host import FilePolicy
from .login import TerminalLogin, env_values_missing, login_method, terminal_login
from .notebook_link import NotebookLink
from .permission_memory import PermissionLog
from .recorder import Traffic
from .session import Session
from .sessions import Sessions
from .side_channels import SideChannels
from .summary import AgentSummary
from .transport import AgentProcess
from .wire import AgentConnection, AuthMethod, Offer, initialize


class Agent:
    """A running ACP agent process and its sessions."""

    _living: ClassVar[weakref.WeakSet[Agent]] = weakref.WeakSet()

    def __init__(
        self,
        process: Stream,
        *,
        files: bool = True,
        terminals: bool = True,
        terminal_output: bool = True,
        elicitation: bool = True,
        record: str | os.PathLike | None = None,
        elicitation_handler: ElicitationHandler | None = None,
        replaying: bool = False,
    ) -> None:
        offer = {"files": files, "terminals": terminals, "terminal_output": terminal_output}
        self.offer = Offer(**offer, elicitation=elicitation)
        self.diagnostics: list[Diagnostic] = []
        self._conn: AgentConnection | None = None
        self._asked = 2
        self._closing = False  # close() was called: the exit is expected, not an error
        self._ending: asyncio.Future | None = None  # ending an agent that closed its stdout
        self.traffic_log = Traffic(getattr(process, "argv", None), record)  # ring + trace file
        self.side = SideChannels(self.traffic_log, self._on_diagnostic)  # stdout noise, stderr hints
        self.elicitation_state = SessionState()  # the request-scoped elicitations (no session of theirs)
        self._elicitations = ElicitationDesk(
            self.elicitation_state, lambda rid, result: self.rpc.respond(rid, result),
            self.offer.elicitation_modes, PermissionLog(), note_decider=self.traffic_log.note_decider,
            url_shown=unshown if replaying else show_url,
        )  # fmt: skip
        self._replaying = replaying  # a replay's client: it shows and prints nothing to the user
        self._elicitations.handler = elicitation_handler
        self.elicitation_state.subscribe(self._on_question)
        pending_method = lambda rid: self.rpc.pending_method(rid)  # noqa: E731 - the rpc of the moment
        self._table = Sessions(
            self._on_diagnostic, self.traffic_log, self.summary, self._elicitations, pending_method
        )
        self._attach(process)
        Agent._living.add(self)

    @classmethod
    def opened_on(cls) -> Iterator[Agent]:
        """Every agent object still alive in this process (a session's owner is among them)."""
        return iter(list(cls._living))

    def _attach(self, process: Stream) -> None:
        self.process: Any = process
        self.rpc = Connection(process, self._on_diagnostic)
        self.rpc.closed.add_done_callback(self._on_closed)
        self.rpc.on_stdout = self.side.stdout
        self.rpc.taps.append(self.traffic_log.line)
        if hasattr(process, "on_stderr"):
            process.on_stderr = self.side.stderr

    # -- what initialize negotiated -------------------------------------------------------------
    @property
    def connection(self) -> AgentConnection:
        """The connection of the protocol version the agent answered (after ``initialize``)."""
        if self._conn is None:
            raise AcpError("the agent has not been initialized yet")
        return self._conn

    @property
    def sessions(self) -> Any:
        """The sessions opened on this agent, by id (a read-only mapping)."""
        return self._table.opened

    @property
    def initialize_result(self) -> dict[str, Any]:
        """What ``initialize`` answered."""
        return self._conn.result if self._conn is not None else {}

    @property
    def protocol_version(self) -> int:
        """The negotiated protocol version: 2 or 1."""
        return self.connection.version

    @property
    def info(self) -> dict[str, Any]:
        """The agent's ``name``, ``title`` and ``version``."""
        return self._conn.info if self._conn is not None else {}

    @property
    def capabilities(self) -> dict[str, Any]:
        """The agent's capabilities."""
        return self._conn.capabilities if self._conn is not None else {}

    @property
    def auth_methods(self) -> list[Any]:
        """The authentication methods the agent offers."""
        return self._conn.auth_methods if self._conn is not None else []

    def auth_method(self, method_id: str) -> AuthMethod | None:
        """The advertised auth method ``method_id``, read into one shape for both versions."""
        return self.connection.auth_method(method_id)

    def supports(self, session_capability: str) -> bool:
        """Whether the agent advertises a session capability such as ``list``, ``resume``,
        ``close``, ``additionalDirectories`` (v2 ``session.X``, v1 ``sessionCapabilities.X``)."""
        return self.connection.supports(session_capability)

    # -- the process ------------------------------------------------------------------------------
    @property
    def returncode(self) -> int | None:
        """The process's exit code once it has ended."""
        return self.process.returncode

    @property
    def closed(self) -> bool:
        """True once the agent's stdout has closed."""
        return self.rpc.closed.done()

    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop the agent lives on (its pipes and futures belong to it)."""
        return self.rpc.closed.get_loop()

    @property
    def stdout_partial(self) -> str | None:
        """A last stdout line without its newline, shown after a quiet time (a prompt, often)."""
        return getattr(self.process, "partial_line", None)

    @property
    def stdout_lines(self) -> list[str]:
        """What the agent printed on stdout that was not JSON (login prompts, stray logs)."""
        return list(self.side.stdout_lines)

    @property
    def unknown_sessions(self) -> dict[str, int]:
        """Messages received for session ids this agent does not have, counted by id."""
        return dict(self._table.unknown)

    @property
    def traffic(self) -> list[dict[str, Any]]:
        """The recent traffic (the last ``recorder.RING_ENTRIES`` entries, in the trace format)."""
        return self.traffic_log.ring.list()

    def stderr_tail(self, lines: int = 20) -> list[str]:
        """The last lines the agent wrote to stderr."""
        return self.process.stderr_tail(lines)

    def stderr_line(self, number: int) -> str | None:
        """Stderr line ``number`` (0 = the first seen) as kept, or None once it fell off the tail."""
        kept = list(getattr(self.process, "stderr_lines", ()))
        first = self.side.stderr_count - len(kept)
        return kept[number - first] if first >= 0 and first <= number < self.side.stderr_count else None

    def summary(self) -> AgentSummary:
        """A typed snapshot for views and reports."""
        info = self.info
        text = {
            k: v if isinstance(v, str) else None for k in ("name", "title", "version") for v in [info.get(k)]
        }
        version = self._conn.version if self._conn is not None else 0
        return AgentSummary(
            text["name"], text["title"], text["version"], version, getattr(self.process, "pid", None),
            self.closed, self.returncode, tuple(self.stderr_tail(50)),
            tuple(self.side.stdout_lines), self.stdout_partial, self.side.stderr_count,
            self.auth_status.to_dict() if self.auth_status is not None else None, self._closing,
        )  # fmt: skip

    # -- request-scoped elicitations ------------------------------------------------------------
    @property
    def elicitation_handler(self) -> ElicitationHandler | None:
        """``handler(elicitation) -> values | "decline" | "cancel" | None`` (sync or async, or a
        policy) for elicitations scoped to our requests (``initialize``, a login, opening a session)."""
        return self._elicitations.handler

    @elicitation_handler.setter
    def elicitation_handler(self, handler: ElicitationHandler | None) -> None:
        self._elicitations.handler = handler

    @property
    def pending_elicitations(self) -> list[Elicitation]:
        """Request-scoped elicitations still waiting for an answer (a session's are on the session)."""
        return self._elicitations.pending()

    @property
    def elicitation_log(self) -> PermissionLog:
        """Every answer to a request-scoped elicitation: who, when, action, values."""
        return self._elicitations.log

    def _on_question(self, change: Any) -> None:
        """A request-scoped elicitation arrived: shown where our request waits (``frontend.asked``)."""
        found = self.elicitation_state.elicitations.get(change.id) if change.kind == "elicitation" else None
        if change.created and found is not None and not self._replaying:
            request_id = (found.scope_request or {}).get("id")
            frontend.asked(self, found, self.rpc.pending_context(request_id))

    def dismiss_elicitation(self, key: str) -> bool:
        """Close a request-scoped URL elicitation's card that waits for the agent."""
        return self._elicitations.dismiss(key)

    @property
    def auth_status(self) -> AuthStatus | None:
        """The login status the agent last reported (``_auth/status_update``): kind and label only."""
        return self._table.auth_status

    # -- calls ------------------------------------------------------------------------------------
    async def initialize(self, protocol_version: int = 2) -> None:
        """Send ``initialize`` and adopt the connection of the version the agent answers (1 or 2)."""
        self._asked = protocol_version
        self._conn = await initialize(self.rpc, self.offer, self._table, protocol_version, self.stderr_tail)
        self._table.connected(self._conn)

    async def authenticate(
        self, method_id: str, timeout: float | None = None, *, api_key: str | None = None
    ) -> Any:
        """Log in with one of ``agent.auth_methods`` (v1 ``authenticate``, v2 ``auth/login``);
        cancellable (an interrupt) and bounded by ``timeout`` s. ``api_key`` goes in
        ``_meta["api-key"]`` (methods marked so, e.g. Gemini CLI's ``gemini-api-key``)."""
        meta = {"api-key": api_key} if api_key is not None else None
        return await self.connection.login(method_id, meta, timeout)

    async def login_terminal(self, method_id: str) -> TerminalLogin:
        """Run a ``terminal`` login method in a PTY: the agent's own command with the method's
        ``args`` appended and ``env`` added (or its complete ``_meta["terminal-auth"]`` command)."""
        method = login_method(self.connection, method_id, "terminal")
        process = self.process
        return await terminal_login(method, list(process.argv), dict(process.env), process.cwd)

    async def login_env(self, method_id: str, values: dict[str, str], timeout: float | None = None) -> Any:
        """Log in with an ``env_var`` method: restart with ``values`` set, then ``authenticate``.
        The values live only in the agent process's environment."""
        env_values_missing(login_method(self.connection, method_id, "env_var"), values)
        await self.restart(values)
        return await self.authenticate(method_id, timeout)

    async def restart(self, env: dict[str, str] | None = None) -> None:
        """Start the agent again — same command and directory, its environment plus ``env`` — and
        initialize it as before; its sessions end."""
        old = self.process
        await self._shut(0.5)  # the trace goes on: the restarted agent's lines follow
        self._table.clear()
        self._closing = False
        self._attach(await AgentProcess.spawn(old.argv, old.cwd, {**old.env, **(env or {})}))
        await self.initialize(self._asked)

    async def logout(self) -> Any:
        """Log out (v1 ``logout``, v2 ``auth/logout``)."""
        return await self.connection.logout()

    async def list_sessions(self, cwd: str | None = None) -> list[dict[str, Any]]:
        """Every session the agent knows (``session/list``, following ``nextCursor``)."""
        return await self._table.listed(cwd)

    async def new_session(
        self,
        cwd: str | os.PathLike | None = None,
        mcp_servers: Sequence[Any] | None = None,
        *,
        additional_directories: Sequence[str | os.PathLike] = (),
        files: FilePolicy | None = None,
        timeout: float | None = None,
        share: dict[str, Any] | None = None,
        run_code: bool = False,
        checkpoints: bool | None = None,
    ) -> Session:
        """Create a session rooted at ``cwd`` (absolute; default: the current directory).

        ``additional_directories`` are further roots; ``files`` narrows or widens what a v1 agent
        may read and write through the client (``FilePolicy``). ``share`` (objects by name, even
        ``{}``) or ``run_code=True`` gives the agent the ``notebook`` MCP server (``notebook_link``).
        ``checkpoints``: a snapshot of ``cwd`` per turn (``turn.changes()`` / ``revert()``); the
        default takes them except in ``/``, the home directory or the temp directory itself.
        """
        table = self._table
        if share is None and not run_code:
            return await table.open(cwd, mcp_servers, additional_directories, files, timeout, checkpoints)
        link = await NotebookLink.open(self.connection, share, run_code)
        servers = [*(mcp_servers or []), link.entry]
        try:
            return await table.open(cwd, servers, additional_directories, files, timeout, checkpoints, link)
        except BaseException:
            await link.close()
            raise

    async def resume_session(
        self,
        session_id: str,
        cwd: str | os.PathLike | None = None,
        *,
        replay: bool = True,
        mcp_servers: Sequence[Any] | None = None,
        additional_directories: Sequence[str | os.PathLike] = (),
        files: FilePolicy | None = None,
        timeout: float | None = None,
        checkpoints: bool | None = None,
    ) -> Session:
        """Reattach to an existing session; with ``replay`` its history fills the new state.

        The session is registered before the request goes out: replayed updates come first.
        """
        return await self._table.resume(
            session_id, cwd, replay, mcp_servers, additional_directories, files, timeout, checkpoints
        )

    async def close(self, grace: float = 2.0) -> int:
        """Close stdin, wait, terminate, kill; returns the exit code. Safe to call twice."""
        code = await self._shut(grace)
        self.traffic_log.close()
        return code

    async def _shut(self, grace: float) -> int:
        self._closing = True
        await self._table.close_all()
        if self._ending is not None:
            await asyncio.shield(self._ending)
        code = await self.process.close(grace)
        await self.rpc.aclose()
        return code

    def _on_diagnostic(self, diag: Diagnostic) -> None:
        self.diagnostics.append(diag)
        self._table.diagnose_all(diag)

    def _on_closed(self, future: asyncio.Future) -> None:
        error: AgentExited = future.result()
        if not self._closing and self.process.returncode is None:
            self._end_mute(error)
        lead = "the agent was closed" if self._closing else str(error).splitlines()[0]
        self._elicitations.withdraw_all(lead, "agent closed" if self._closing else "agent exited")
        self._table.exited(error, self._closing)

    def _end_mute(self, error: AgentExited) -> None:
        """The agent closed its stdout but runs on: nothing it says can arrive, so end it."""
        pid = getattr(self.process, "pid", None)
        why = f"the agent closed its stdout but kept running (pid {pid}); it was ended"
        self._on_diagnostic(Diagnostic("stdout-closed", why, level="error"))
        self._ending = asyncio.ensure_future(self.process.close(0.5))

    def __repr__(self) -> str:
        name = self.info.get("name") or getattr(self.process, "argv", ["?"])[0]
        version = self._conn.version if self._conn is not None else "?"
        return f"<Agent {name} v{version} pid={getattr(self.process, 'pid', None)}>"
