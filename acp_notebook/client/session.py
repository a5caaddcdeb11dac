"""A live session: its state, its permission desk and its one turn queue, on its connection.

A session holds the parts it uses — its version's ``AgentConnection`` (every ACP call), the
agent's traffic recorder, and its entry in the agent's ``Sessions`` table (``SessionParts``) —
never the agent. It registers one ``Route`` there: the agent's reader hands it each
``session/update`` (read by the connection, applied by the state, then looked at by the turn),
each permission and v1 host request, in arrival order. Every prompt is a turn in the queue
(``turns.TurnQueue``): ``prompt`` awaits its turn and returns the stop reason (rule in
``protocol.turn``), ``prompt_task`` returns the task at once. ``cancel`` sends ``session/cancel``,
answers every pending permission ``cancelled`` (and every write held for review rejected) and
marks this turn's unfinished tool calls ``cancelled`` — but answers no elicitation (its scope does
not tie it to the turn). ``close`` answers the pending elicitations ``cancel`` first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from ..protocol.elicitation import Elicitation
from ..protocol.jsonrpc import Request
from ..protocol.permission import PermissionRequest
from ..protocol.review import Review
from ..protocol.state import SessionState
from ..protocol.turn import Turn
from . import blocking, headless, item_cancels, quiet, session_tables
from .checkpoints.checkpointer import Checkpointer, checkpoint_wanted
from .connection import DEFERRED
from .elicitations import ElicitationDesk, ElicitationHandler
from .errors import AcpError, AgentExited
from .exit_cleanup import settle_exit
from .host import FilePolicy, Host
from .notebook_link import NotebookLink
from .permission_memory import PermissionLog, PermissionRules
from .permissions import PermissionDesk, PermissionHandler
from .recorder import Traffic
from .routing import Route, SessionParts
from .settings import SessionSettings, SettingChanged
from .subagents import SUBAGENT_UPDATE, Children, Subagent
from .summary import SessionSummary
from .turn_runner import Prompt, TurnRunner, to_blocks
from .turns import CANCEL_GRACE, TurnQueue
from .wire import AgentConnection

CANCELLED = "cancelled"


class Session:
    """One ACP session on an agent; ``state`` is its live ``SessionState``."""

    def __init__(
        self,
        conn: AgentConnection,
        session_id: str,
        cwd: str,
        parts: SessionParts,
        *,
        state: SessionState | None = None,
        roots: list[str] | None = None,
        files: FilePolicy | None = None,
        checkpoints: bool | None = None,
        notebook: NotebookLink | None = None,
    ) -> None:
        self.session_id, self.cwd = session_id, cwd
        self._conn, self._parts = conn, parts
        self.state = state or SessionState()
        self.state.traffic_source = lambda: self.traffic  # the `traffic` table reads it
        self._host = Host(self.state, roots or [cwd], files)
        self.settings = SessionSettings(self.state, conn, session_id)
        self._permissions = PermissionDesk(
            self.state, conn.permission, conn.respond, note_unannounced=conn.announces_before_asking,
            cancel_turn=self.cancel, note_decider=parts.traffic.note_decider,
        )  # fmt: skip
        self._elicitations = ElicitationDesk(
            self.state, conn.respond, conn.offer.elicitation_modes, self._permissions.log,
            fallback=lambda: self._permissions.handler, note_decider=parts.traffic.note_decider,
            url_shown=parts.url_shown,
        )  # fmt: skip
        wanted = checkpoint_wanted(cwd, checkpoints)
        busy = lambda: self.busy  # noqa: E731 - a revert waits for the turns to end
        self.checkpoints = Checkpointer(self.state, cwd, session_id, busy) if wanted else None
        adopt = lambda follow: self._queue.adopt(follow)  # noqa: E731 - an agent-started turn joins the queue
        self._runner = TurnRunner(self.state, conn, session_id, self.checkpoints, adopt)
        self._queue = TurnQueue(conn.loop, self._runner.run, self.cancel, self._turn_failed)
        self._tasks: set[asyncio.Task] = set()  # host requests and cancels in flight
        self._notebook = notebook  # the `notebook` MCP server (new_session(share=))
        self._children = Children(
            self.state, lambda: self.cwd, conn, self._permissions, self._elicitations, parts, session_id
        )
        if notebook is not None:
            notebook.bind(self.state, self._ask, self._permissions.wait)
        parts.register(session_id, self._route())

    def _route(self) -> Route:
        return Route(
            self.state, self._take_update, self._take_permission, self._take_host_request,
            self._withdrawn, self._agent_exited, self._release, self._take_elicitation,
            self._elicitations.complete,
        )  # fmt: skip

    def _withdrawn(self, request_id: Any) -> bool:
        """``$/cancel_request``: a pending permission or elicitation of this session's is answered."""
        return self._permissions.cancel_request(request_id) or self._elicitations.cancel_request(request_id)

    # -- what it is -----------------------------------------------------------------------------
    @property
    def protocol_version(self) -> int:
        """The agent's negotiated protocol version (1 or 2)."""
        return self._conn.version

    @property
    def notebook(self) -> NotebookLink | None:
        """The ``notebook`` MCP server of this session (``new_session(share=...)``), if any."""
        return self._notebook

    @property
    def permission_handler(self) -> PermissionHandler | None:
        """``handler(request) -> option_id | None`` (sync or async), run for each new request."""
        return self._permissions.handler

    @permission_handler.setter
    def permission_handler(self, handler: PermissionHandler | None) -> None:
        self._permissions.handler = handler

    @property
    def pending_permissions(self) -> list[PermissionRequest]:
        """Permission requests still waiting for an answer: this session's and its subagents'."""
        return self._permissions.pending()

    @property
    def elicitation_handler(self) -> ElicitationHandler | None:
        """``handler(elicitation) -> values | "decline" | "cancel" | None`` (sync or async), run
        for each new elicitation (a policy works too); unset, a policy permission handler answers."""
        return self._elicitations.handler

    @elicitation_handler.setter
    def elicitation_handler(self, handler: ElicitationHandler | None) -> None:
        self._elicitations.handler = handler

    @property
    def pending_elicitations(self) -> list[Elicitation]:
        """Elicitations (forms, URLs) still waiting for an answer: this session's and its subagents'."""
        return self._elicitations.pending()

    def dismiss_elicitation(self, key: str) -> bool:
        """Close a URL elicitation's card that waits for the agent (``status`` ``dismissed``)."""
        return self._elicitations.dismiss(key)

    @property
    def elicitation_desk(self) -> ElicitationDesk:
        """This session's elicitation desk (``standing_in`` for a turn's policy, ``answer``)."""
        return self._elicitations

    @property
    def pending_reviews(self) -> list[Review]:
        """Writes held for review (``FilePolicy(review=True)``) still waiting for decisions."""
        return self._host.reviews.pending

    @property
    def permission_rules(self) -> PermissionRules:
        """Decisions remembered from the user's "always" answers (``.clear()`` forgets them)."""
        return self._permissions.rules

    @property
    def permission_log(self) -> PermissionLog:
        """Every answer to a permission request: who decided, when, which option."""
        return self._permissions.log

    @property
    def turn(self) -> Turn | None:
        """The current (or last) turn."""
        return self._runner.turn

    @property
    def turns(self) -> list[Turn]:
        """Every turn of this session, in order."""
        return self._runner.turns

    @property
    def last_error(self) -> Any:
        """Details of the last turn's ``error`` stop (or the agent's exit)."""
        return self._runner.last_error

    @property
    def running(self) -> bool:
        """True while a turn is in progress (a prompt's, or one the agent started)."""
        return self._runner.running

    @property
    def busy(self) -> bool:
        """True when a new prompt would wait: a turn runs or one is queued."""
        return self.running or bool(self._queue.pending())

    @property
    def starting_turns(self) -> int:
        """How many prompts have left the queue but whose turn has not begun yet (a checkpoint first)."""
        return self._runner.starting

    @property
    def queued_prompts(self) -> int:
        """How many prompts wait for the running turn to end."""
        return len(self._queue.queued())

    @property
    def subagents(self) -> Mapping[str, Subagent]:
        """The child sessions the agent runs for this one (``subagent_update``), in order: read-only,
        each with its own ``state``; their permission requests are in ``pending_permissions``."""
        return self._children.view

    def records(self, kind: str, descendants: bool = False) -> list[dict[str, Any]]:
        """Table ``kind`` of this session (``state.records``); ``descendants=True``: also every
        subagent's rows, each led by ``session_id`` and ``parent_session_id``."""
        return session_tables.records(self, self._parts.traffic, self.state, kind, descendants)

    def frame(self, kind: str, descendants: bool = False) -> Any:
        """``records`` as a pandas DataFrame (the ``[pandas]`` extra)."""
        return session_tables.frame(self, self._parts.traffic, self.state, kind, descendants)

    def detach_subagents(self) -> Callable[[], None]:
        """Take this session's subagents out of the agent's table, so that a resume of the same id
        registers the children its replayed history announces; returns what puts them back."""
        self._children.forget_all()
        return self._children.rejoin_all

    @property
    def traffic(self) -> list[dict[str, Any]]:
        """This session's recent messages (the agent's traffic entries tagged with its id)."""
        return self._parts.traffic.ring.list(self.session_id)

    @property
    def traffic_log(self) -> Traffic:
        """The agent's traffic recorder (ring and trace file) this session's messages go through."""
        return self._parts.traffic

    def summary(self) -> SessionSummary:
        """A typed snapshot for views and reports."""
        return SessionSummary(
            self.session_id, self.cwd, self._parts.agent_summary(), self.state.run_state, self.running,
            self.queued_prompts, self.state.usage, self.last_error,
        )  # fmt: skip

    # -- incoming (the agent's reader, in arrival order, through the route) ---------------------
    def _take_update(self, update: Any) -> None:
        """One ``session/update``: the connection reads it, the state applies it, the turn looks."""
        incoming = self._conn.read_update(update, self.state.tool_calls.get)
        self.state.take(incoming)
        self._runner.saw(incoming.update)
        if isinstance(incoming.update, dict) and incoming.update.get("sessionUpdate") == SUBAGENT_UPDATE:
            self._children.saw(incoming.update)

    def _ask(self, params: dict[str, Any]) -> PermissionRequest:
        """A question of the client's own about this session, on its permission desk."""
        return self._permissions.ask({"sessionId": self.session_id, **params})

    def _take_permission(self, request: Request) -> object:
        self._permissions.receive(request, self.turn)
        return DEFERRED

    def _take_elicitation(self, request: Request) -> object:
        elicitation = self._elicitations.receive(request)
        if elicitation.tool_call_id is not None and elicitation.tool_call_id not in self.state.tool_calls:
            message = f"{elicitation.key} names unknown tool call {elicitation.tool_call_id!r}"
            self.state.diagnose("elicitation-unknown-tool-call", message, level="info")
        return DEFERRED

    def _take_host_request(self, request: Request) -> object:
        self._spawn(self._host.answer(request, self._conn))
        return DEFERRED

    def _agent_exited(self, error: AgentExited, expected: bool) -> None:
        """The agent is gone: everything it left open ends (``exit_cleanup``); terminals released."""
        settle_exit(self.state, self._permissions, self._elicitations, self._runner, error, expected)
        self.state.agent_ended()  # the headers say "agent stopped" / "agent exited" now
        self._spawn(self._release())

    # -- turns ----------------------------------------------------------------------------------
    async def prompt(self, prompt: Prompt) -> str | None:
        """Send a prompt and wait for the end of the turn; returns the stop reason.

        Cancelling the task that awaits it (a timeout, an interrupt) cancels the turn as well.
        """
        with headless.notices(self):
            return await self._queue.wait(self.prompt_task(prompt), raise_interrupt=False)

    def prompt_task(
        self,
        prompt: Prompt,
        on_start: Callable[[], None] | None = None,
        on_end: Callable[[], None] | None = None,
    ) -> asyncio.Task:
        """Start a turn as a task (after this session's earlier ones); returns the task."""
        return self._queue.submit(to_blocks(prompt), on_start, on_end)

    async def wait_turn(self, task: asyncio.Task, grace: float = CANCEL_GRACE) -> str | None:
        """Await a turn's task; an interrupt cancels the turn and raises ``TurnInterrupted``."""
        return await self._queue.wait(task, grace)

    async def wait_blocking(self, task: asyncio.Task, permissions: Any = None) -> str | None:
        """``wait_turn`` for a caller that blocks (no clicks arrive): ``permissions`` (a policy)
        answers requests after the handler, else the turn is cancelled (an elicitation nothing
        answers: ``cancel``); SIGINT cancels it."""
        return await blocking.wait_blocking(
            self.wait_turn(task), self._permissions, self.cancel, permissions, self._elicitations
        )

    async def wait_idle(
        self, timeout: float | None = None, grace: float = CANCEL_GRACE, *, background: bool = False
    ) -> bool:
        """Wait until no turn runs or waits (False on timeout); an interrupt cancels them all.

        ``background``: also until the agent reports no background work (``state.background`` is
        ``[]`` or was never reported) and every subagent, at any depth, is idle — and, if that
        started a turn of the agent's own, until it ended too. Pending permissions are described
        meanwhile in a headless run (``client.headless``)."""
        with headless.notices(self):
            if not background:
                return await self._queue.wait_idle(timeout, lambda: self.state.stop_reason, grace)
            return await quiet.wait_quiet(self.state, self.subagents, self._queue, timeout, grace)

    def drop_queued(self) -> int:
        """Cancel the prompts that wait behind the running turn; returns how many."""
        return self._queue.drop_queued()

    def prompt_sync(self, prompt: Prompt, permissions: Any = None) -> str | None:
        """Block until the turn ends; ``permissions`` answers requests (default: cancel the turn)."""
        blocks = to_blocks(prompt)
        turn = lambda: self.prompt(blocks)  # noqa: E731 - made on the loop
        loop = self._conn.loop()
        return blocking.prompt_sync(
            turn, self._permissions, self.cancel, loop, permissions, self._elicitations
        )

    def _turn_failed(self, error: BaseException) -> None:
        self.state.diagnose("turn-error", f"the turn failed: {str(error).splitlines()[0]}", level="error")

    # -- cancelling -----------------------------------------------------------------------------
    async def cancel(self) -> None:
        """Cancel the current turn: notify the agent, answer permissions and reviews, mark tool calls."""
        sent = self._conn.cancel(self.session_id)  # the notification goes out now
        unfinished = self._runner.cancel_requested()
        self._permissions.cancel_all(self._children.spared(self.state.background))
        self._host.reviews.cancel_all()
        for tc_id in unfinished:
            self.state.apply(
                {"sessionUpdate": "tool_call_update", "toolCallId": tc_id, "status": "cancelled"}
            )
        await sent

    async def cancel_tool_call(self, tool_call_id: str) -> Any:
        """Ask the agent to cancel one tool call (needs its ``capabilities.cancel``)."""
        return await item_cancels.cancel_tool_call(self._conn, self.state, self.session_id, tool_call_id)

    async def cancel_terminal(self, terminal_id: str) -> Any:
        """Ask the agent to cancel one terminal (needs its ``capabilities.cancel``)."""
        return await item_cancels.cancel_terminal(self._conn, self.state, self.session_id, terminal_id)

    async def close(self) -> None:
        """Close the session: a running turn is cancelled first and ends ``cancelled``; then
        ``session/close`` where the agent supports it; terminals released."""
        self.drop_queued()
        if self.running:
            await self.cancel()
        self._elicitations.cancel_all("session closed")
        await self._conn.close_session(self.session_id)
        self._runner.end_running(CANCELLED)  # the agent will say no more about this session
        await self._release()
        self._children.forget_all()
        self._parts.forget(self.session_id)

    async def _release(self) -> None:
        """Release what the session holds: its client-run terminals and its notebook server."""
        await self._host.close()
        if self._notebook is not None:
            await self._notebook.close()

    def _spawn(self, coroutine: Any) -> None:
        task = self._conn.loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- client-run terminals (v1 ``terminal/*``): typing and resizing from the view --------------
    def terminal_input(self, terminal_id: str, data: bytes) -> bool:
        """Send keystrokes to a terminal the client runs; False if there is none by that id."""
        return self._host.terminals.input(terminal_id, data)

    def terminal_resize(self, terminal_id: str, cols: int, rows: int) -> bool:
        """Resize a terminal the client runs (the view's size)."""
        return self._host.terminals.resize(terminal_id, cols, rows)

    def interactive_terminals(self) -> list[str]:
        """The ids of the running terminals that accept input."""
        return self._host.terminals.interactive()

    # -- settings (``settings`` holds the logic) -------------------------------------------------
    async def set_config_option(self, config_id: str, value: str | bool) -> SettingChanged:
        """``session/set_config_option``; returns the option's new value in one line (every option:
        ``settings.options``)."""
        return await self.settings.set_config_option(config_id, value)

    async def set_mode(self, mode_id: str) -> str:
        """Switch mode (the ``mode`` config option, else ``session/set_mode``)."""
        return await self.settings.set_mode(mode_id)

    def code_blocks(self, message: int | None = None) -> list[Any]:
        """The code blocks of the agent's messages (or of agent message ``message``, from 1)."""
        from ..protocol.code_blocks import code_blocks  # markdown-it loads on first use

        return code_blocks(self.state.messages.values(), message)

    # -- the notebook MCP server (``notebook_link``) ---------------------------------------------
    def share(self, **objects: Any) -> None:
        """Share more kernel objects with the agent (by name) through the ``notebook`` server."""
        self._shared().share.share(**objects)

    def unshare(self, *names: str) -> None:
        """Stop sharing ``names``: the agent's next calls no longer see them."""
        self._shared().share.unshare(*names)

    def allow_run_code(self, allowed: bool = True) -> None:
        """Let the agent run code in this kernel (each call still approved), or stop it."""
        self._shared().share.run_code = bool(allowed)

    @property
    def mcp_log(self) -> list[Any]:
        """Every ``notebook`` tool call: arguments, duration, result size, who approved it."""
        return list(self._notebook.share.log) if self._notebook is not None else []

    def _shared(self) -> NotebookLink:
        if self._notebook is None:
            raise AcpError("this session has no notebook server: open it with new_session(cwd, share={...})")
        return self._notebook

    def __repr__(self) -> str:
        return f"<Session {self.session_id} v{self.protocol_version} {self.state.run_state}>"
