"""A live session: its state, prompt turns, cancellation and permission requests.

Updates are applied to ``state`` in arrival order by the agent's reader. ``prompt`` returns the
stop reason when the turn ends (rule in ``protocol.turn``); prompts sent during a turn wait
their turn client-side. ``cancel`` sends ``session/cancel``, answers every pending permission
``cancelled`` and marks this turn's unfinished tool calls ``cancelled``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..protocol.jsonrpc import INTERNAL_ERROR, Request
from ..protocol.patch import cancel_supported
from ..protocol.state import SessionState
from ..protocol.turn import Turn
from ..protocol.v1 import normalize_v1_update
from .connection import DEFERRED
from .errors import RpcError
from .host import FilePolicy, Host
from .permissions import PermissionDesk, PermissionHandler

if TYPE_CHECKING:
    from .agent import Agent

TOOL_CALL_KINDS = frozenset({"tool_call_update", "tool_call", "tool_call_content_chunk"})


def to_blocks(prompt: str | dict | Sequence[Any]) -> list[Any]:
    """Content blocks for a prompt given as text, one block, or a list of blocks/strings."""
    if isinstance(prompt, str):
        return [{"type": "text", "text": prompt}]
    if isinstance(prompt, dict):
        return [prompt]
    return [{"type": "text", "text": p} if isinstance(p, str) else p for p in prompt]


class Session:
    """One ACP session on an agent; ``state`` is its live ``SessionState``."""

    def __init__(
        self,
        agent: Agent,
        session_id: str,
        cwd: str,
        state: SessionState | None = None,
        roots: list[str] | None = None,
        files: FilePolicy | None = None,
    ) -> None:
        self.agent = agent
        self.session_id = session_id
        self.cwd = cwd
        self.roots = roots or [cwd]
        self.state = state or SessionState()
        self.host = Host(self.state, self.roots, files)
        self.turn: Turn | None = None
        self.turns: list[Turn] = []
        self.last_error: Any = None
        self.modes: Any = None
        self._permissions = PermissionDesk(self)
        self._turn_lock = asyncio.Lock()
        self._turn_done: asyncio.Future | None = None
        self._host_tasks: set[asyncio.Task] = set()  # host requests and cancels in flight

    @property
    def protocol_version(self) -> int:
        """The agent's negotiated protocol version (1 or 2)."""
        return self.agent.protocol_version

    @property
    def permission_handler(self) -> PermissionHandler | None:
        """``handler(request) -> option_id | None`` (sync or async), run for each new request."""
        return self._permissions.handler

    @permission_handler.setter
    def permission_handler(self, handler: PermissionHandler | None) -> None:
        self._permissions.handler = handler

    @property
    def pending_permissions(self) -> list:
        """Permission requests still waiting for an answer."""
        return self.state.pending_permissions

    @property
    def running(self) -> bool:
        """True while a prompt turn is in progress."""
        return self.turn is not None and not self.turn.ended

    # -- incoming -------------------------------------------------------------------------------
    def handle_update(self, update: Any) -> None:
        """Apply one ``session/update`` (called by the agent's reader, in arrival order)."""
        if self.protocol_version == 1:
            update = normalize_v1_update(update)
        self._note_out_of_order(update)
        self.state.apply(update)
        turn = self.turn
        if turn is None or turn.ended or not isinstance(update, dict):
            return
        kind = update.get("sessionUpdate")
        if kind in TOOL_CALL_KINDS and isinstance(update.get("toolCallId"), str):
            turn.tool_call_ids.add(update["toolCallId"])
        elif kind == "state_update" and turn.on_state(update):
            self._finish_turn(turn)

    def _note_out_of_order(self, update: Any) -> None:
        """Diagnose (info) what is accepted but out of order: v1 patches before their create,
        tool-call updates after a cancelled turn ended."""
        if not isinstance(update, dict) or update.get("sessionUpdate") not in TOOL_CALL_KINDS:
            return
        tc_id = update.get("toolCallId")
        v1_patch = self.protocol_version == 1 and update["sessionUpdate"] == "tool_call_update"
        if v1_patch and isinstance(tc_id, str) and tc_id not in self.state.tool_calls:
            self.state.diagnose(
                "update-before-create", f"v1 tool_call_update for unknown {tc_id!r}", update, "info"
            )
        turn = self.turn
        if turn is not None and turn.ended and turn.stop_reason == "cancelled":
            self.state.diagnose(
                "update-after-cancel", f"tool call {tc_id!r} updated after the cancelled turn", update, "info"
            )

    def handle_permission(self, request: Request) -> object:
        """Take a ``session/request_permission`` request (answered later)."""
        return self._permissions.receive(request)

    def handle_host_request(self, request: Request) -> object:
        """Serve a v1 ``fs/*`` or ``terminal/*`` request as its own task (answered when done)."""
        params = request.params if isinstance(request.params, dict) else {}
        connection = self.agent.connection

        async def serve() -> None:
            try:
                result = await self.host.serve(request.method, params)
            except RpcError as exc:
                connection.respond_error(request.id, exc.code, exc.message, exc.data)
            except Exception as exc:
                self.state.diagnose("host-error", f"{request.method} failed: {exc!r}")
                connection.respond_error(request.id, INTERNAL_ERROR, f"client error: {exc}")
            else:
                connection.respond(request.id, result)

        self._spawn(serve())
        return DEFERRED

    def handle_cancel_request(self, request_id: Any) -> bool:
        """The agent withdrew a request: answer a matching pending permission ``cancelled``."""
        return self._permissions.cancel_request(request_id)

    # -- prompting ------------------------------------------------------------------------------
    async def prompt(self, prompt: str | dict | Sequence[Any]) -> str | None:
        """Send a prompt and wait for the end of the turn; returns the stop reason.

        Cancelling the task that awaits it (a timeout, an interrupt) cancels the turn as well.
        """
        blocks = to_blocks(prompt)
        async with self._turn_lock:
            turn = self.turn = Turn(self.protocol_version)
            self.turns.append(turn)
            self._turn_done = asyncio.get_running_loop().create_future()
            if self.protocol_version == 1:
                self._v1_turn_started(blocks)
            request = self.agent.connection.request(
                "session/prompt",
                {"sessionId": self.session_id, "prompt": blocks},
                hook=lambda result: self._on_prompt_response(turn, result),
            )
            try:
                return await self._await_turn(turn, request)
            except asyncio.CancelledError:  # whoever awaited the turn gave up: stop the agent too
                if not turn.ended:
                    self._spawn(self.cancel())
                raise

    async def _await_turn(self, turn: Turn, request: asyncio.Future) -> str | None:
        done = self._turn_done
        await asyncio.wait({request, done}, return_when=asyncio.FIRST_COMPLETED)
        if request.done() and request.exception() is not None and not done.done():
            turn.ended = True
            raise request.exception()
        await done
        self.last_error = turn.error
        return turn.stop_reason

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._host_tasks.add(task)
        task.add_done_callback(self._host_tasks.discard)

    def _on_prompt_response(self, turn: Turn, result: Any) -> None:
        if turn.on_response(result):
            self.state.apply(
                {"sessionUpdate": "state_update", "state": "idle", "stopReason": turn.stop_reason}
            )
            self._finish_turn(turn)

    def _finish_turn(self, turn: Turn) -> None:
        if self._turn_done is not None and not self._turn_done.done() and turn is self.turn:
            self._turn_done.set_result(turn.stop_reason)

    def _v1_turn_started(self, blocks: list[Any]) -> None:
        for block in blocks:  # v1 agents do not echo the prompt: record it ourselves
            self.state.apply({"sessionUpdate": "user_message_chunk", "content": block})
        self.state.apply({"sessionUpdate": "state_update", "state": "running"})

    def fail_turn(self, error: BaseException) -> None:
        """End a waiting turn with ``error`` (the agent exited)."""
        if self._turn_done is not None and not self._turn_done.done():
            self._turn_done.set_exception(error)
            self._turn_done.exception()

    # -- cancelling -----------------------------------------------------------------------------
    async def cancel(self) -> None:
        """Cancel the current turn: notify the agent, answer permissions, mark tool calls."""
        self.agent.connection.notify("session/cancel", {"sessionId": self.session_id})
        turn = self.turn
        if turn is not None and not turn.ended:
            turn.cancel_requested = True
        self._permissions.cancel_all()
        if turn is None:
            return
        for tc_id in sorted(turn.tool_call_ids):
            tc = self.state.tool_calls.get(tc_id)
            if tc is not None and not tc.finished:
                self.state.apply(
                    {"sessionUpdate": "tool_call_update", "toolCallId": tc_id, "status": "cancelled"}
                )
        await self.agent.connection.process.drain()

    async def cancel_tool_call(self, tool_call_id: str) -> Any:
        """Ask the agent to cancel one tool call (v2 ``tool_call/cancel``; needs its capability)."""
        tc = self.state.tool_calls.get(tool_call_id)
        if tc is None or not tc.cancellable:
            raise ValueError(f"tool call {tool_call_id!r} does not advertise capabilities.cancel")
        params = {"sessionId": self.session_id, "toolCallId": tool_call_id}
        return await self.agent.connection.request("tool_call/cancel", params)

    async def cancel_terminal(self, terminal_id: str) -> Any:
        """Ask the agent to cancel one terminal (v2 ``terminal/cancel``; needs its capability)."""
        term = self.state.terminals.get(terminal_id)
        if term is None or not cancel_supported(term.capabilities):
            raise ValueError(f"terminal {terminal_id!r} does not advertise capabilities.cancel")
        params = {"sessionId": self.session_id, "terminalId": terminal_id}
        return await self.agent.connection.request("terminal/cancel", params)

    async def close(self) -> None:
        """Close the session: a running turn is cancelled first and ends ``cancelled``; then
        ``session/close`` where the agent supports it; terminals released."""
        if self.running:
            await self.cancel()
        if self.protocol_version >= 2 or self.agent.supports("close"):
            await self.agent.connection.request("session/close", {"sessionId": self.session_id})
        turn = self.turn
        if turn is not None and not turn.ended:  # the agent will say no more about this session
            turn.ended, turn.stop_reason = True, "cancelled"
            self.state.apply({"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"})
            self._finish_turn(turn)
        await self.host.close()
        self.agent.sessions.pop(self.session_id, None)

    # -- notebook conveniences (client.background, client.sync, client.settings) ----------------
    def prompt_task(self, prompt: str | dict | Sequence[Any]) -> asyncio.Task:
        """Run a turn as a background task (after this session's earlier ones); returns the task."""
        from .background import start_turn

        return start_turn(self, prompt)

    def prompt_sync(self, prompt: str | dict | Sequence[Any], permissions: Any = None) -> str | None:
        """Block until the turn ends; ``permissions`` answers requests (default: cancel the turn)."""
        from .sync import prompt_sync

        return prompt_sync(self, prompt, permissions)

    async def set_config_option(self, config_id: str, value: str | bool) -> list[Any]:
        """``session/set_config_option``; returns the agent's complete, updated option list."""
        from .settings import set_config_option

        return await set_config_option(self, config_id, value)

    async def set_mode(self, mode_id: str) -> str:
        """Switch mode (the ``mode`` config option, else v1 ``session/set_mode``)."""
        from .settings import set_mode

        return await set_mode(self, mode_id)

    def __repr__(self) -> str:
        return f"<Session {self.session_id} v{self.protocol_version} {self.state.run_state}>"
