"""One turn at a time, on the wire: send the prompt, follow the updates, end the turn.

The runner knows the session's current turn (``protocol.turn.Turn`` holds the rule for when it
ends) and every turn so far. A turn that ends without the agent's ``state_update`` — a v1 prompt
response, an error response, the agent exiting, the session closing — leaves the state idle and
consistent. It never waits on a user: the session's ``TurnQueue`` decides when a turn starts.
A ``running`` with no turn in progress is a turn the agent started (``protocol.turn.agent_starts``):
the runner makes it the current turn and hands its follower to ``adopt`` (the queue: prompts wait
behind it); a prompt whose turn was about to start waits for it to end. Observers of the state
hear of every turn that starts, changes where it came from, or ends (``state.turn_changed``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from ..protocol.state import SessionState
from ..protocol.turn import Turn, agent_starts
from .checkpoints.checkpointer import Checkpointer
from .wire import AgentConnection

Prompt = str | dict | Sequence[Any]
TOOL_CALL_KINDS = frozenset({"tool_call_update", "tool_call", "tool_call_content_chunk"})


def to_blocks(prompt: Prompt) -> list[Any]:
    """Content blocks for a prompt given as text, one block, or a list of blocks/strings."""
    if isinstance(prompt, str):
        blocks: list[Any] = [{"type": "text", "text": prompt}]
    elif isinstance(prompt, dict):
        blocks = [prompt]
    else:
        blocks = [{"type": "text", "text": p} if isinstance(p, str) else p for p in prompt]
    if not blocks:
        raise ValueError("an empty prompt: give some text or at least one content block")
    return blocks


class TurnRunner:
    """The turns of one session: the running one and those before it."""

    def __init__(
        self,
        state: SessionState,
        conn: AgentConnection,
        session_id: str,
        checkpoints: Checkpointer | None = None,
        adopt: Callable[[Coroutine[Any, Any, Any]], Any] | None = None,
    ) -> None:
        self.state, self.conn, self.session_id = state, conn, session_id
        self.checkpoints = checkpoints  # a snapshot before each prompt and at each turn's end
        self.adopt = adopt  # runs an agent-started turn's follower in the session's queue
        self.turn: Turn | None = None
        self.turns: list[Turn] = []
        self.last_error: Any = None
        self.starting = 0  # prompts sent to ``run`` whose turn has not begun yet (a checkpoint first)
        self._done: asyncio.Future | None = None

    @property
    def running(self) -> bool:
        """True while a turn is in progress."""
        return self.turn is not None and not self.turn.ended

    async def run(self, blocks: list[Any]) -> str | None:
        """Send one prompt and wait for the end of its turn; returns the stop reason."""
        self.starting += 1
        try:
            turn, start = await self._ready()
        finally:
            self.starting -= 1
        self._begin(turn, start)
        try:
            return await self._run(turn, blocks)
        finally:
            if self.checkpoints is not None:
                await self.checkpoints.end(turn)

    async def _ready(self) -> tuple[Turn, int]:
        """A new turn and where it starts, once no other turn runs and its checkpoint is taken."""
        while True:
            await self._agent_turn_over()
            turn, start = self.conn.new_turn(), len(self.state.timeline)
            if self.checkpoints is not None:  # before the echo's "running": the turn is not on yet
                await self.checkpoints.begin(turn, len(self.turns) + 1, start)
            if not self.running:  # else the agent started a turn meanwhile: after it, afresh
                return turn, start

    def _begin(self, turn: Turn, start: int) -> None:
        self.turn = turn
        self.turns.append(turn)
        turn.place(len(self.turns), start)
        self.state.turn_changed(len(self.turns), ("origin",), True)

    async def _agent_turn_over(self) -> None:
        """Wait until no turn the agent started runs (prompts of ours never overlap)."""
        while self.running and self._done is not None:
            await asyncio.wait({self._done})

    def _agent_turn(self) -> None:
        """The agent started foreground work with no turn of ours in progress: it is a turn."""
        turn, start = Turn.by_agent(), len(self.state.timeline)
        done = self._done = self.conn.loop().create_future()
        self._begin(turn, start)
        if self.adopt is not None:
            self.adopt(self._follow(turn, done, start))

    async def _follow(self, turn: Turn, done: asyncio.Future, start: int) -> str | None:
        """An agent-started turn from its start to its end: its checkpoints, its stop reason."""
        if self.checkpoints is not None:  # as soon as its `running` arrived
            await self.checkpoints.begin(turn, turn.number or len(self.turns), start)
        try:
            with contextlib.suppress(Exception):  # the agent exited: the turn was abandoned
                await done
        finally:
            if self.checkpoints is not None:
                await self.checkpoints.end(turn)
        self.last_error = turn.error
        return turn.stop_reason

    async def _run(self, turn: Turn, blocks: list[Any]) -> str | None:
        done = self._done = self.conn.loop().create_future()
        for update in self.conn.prompt_echo(blocks):
            self.state.apply(update)
        hook = lambda result: self._on_response(turn, result)  # noqa: E731
        request = self.conn.prompt(self.session_id, blocks, hook)
        await asyncio.wait({request, done}, return_when=asyncio.FIRST_COMPLETED)
        if request.done() and request.exception() is not None and not done.done():
            self.end(turn, None)
            raise request.exception()  # type: ignore[misc]
        await done
        self.last_error = turn.error
        refused = self.conn.refusal(turn)
        if refused is not None:  # v2's refusal is an `error` stop: raised as v1's failed prompt is
            raise refused
        return turn.stop_reason

    def saw(self, update: Any) -> None:
        """An update of this session was applied: follow the running turn; note (info) a tool-call
        update that came after its cancelled turn ended."""
        if agent_starts(update, self.turn):
            self._agent_turn()
        turn = self.turn
        if turn is None or not isinstance(update, dict):
            return
        if turn.on_update(update) and turn.number is not None:
            self.state.turn_changed(turn.number, ("origin_kind",))
        kind = update.get("sessionUpdate")
        if kind in TOOL_CALL_KINDS and turn.ended:
            if turn.stop_reason == "cancelled":
                tc_id = update.get("toolCallId")
                message = f"tool call {tc_id!r} updated after the cancelled turn"
                self.state.diagnose("update-after-cancel", message, update, "info")
        elif kind in TOOL_CALL_KINDS and isinstance(update.get("toolCallId"), str):
            turn.saw_tool_call(update["toolCallId"])
        elif kind == "state_update" and not turn.ended and turn.on_state(update):
            self._finish(turn)

    def _on_response(self, turn: Turn, result: Any) -> None:
        if turn.on_response(result):
            self.end(turn, turn.stop_reason)

    def end(self, turn: Turn, reason: str | None) -> None:
        """End ``turn`` without the agent's ``state_update``: the state reads idle."""
        turn.abandon(reason)
        self.state.apply({"sessionUpdate": "state_update", "state": "idle", "stopReason": turn.stop_reason})
        self._finish(turn)

    def end_running(self, reason: str) -> None:
        """End the running turn, if any (the agent will say no more about it)."""
        if self.turn is not None and not self.turn.ended:
            self.end(self.turn, reason)

    def fail(self, error: BaseException, details: dict[str, Any] | None = None) -> None:
        """End the waiting turn with ``error`` (the agent exited); the state reads idle. With
        ``details``, as an ``error`` stop carrying them (like the agent's own, v2)."""
        turn, reason = self.turn, None if details is None else "error"
        ended = turn is not None and turn.abandon(reason, details or str(error).splitlines()[0])
        if ended or (reason is not None and self.state.run_state != "idle"):
            stop = {} if reason is None else {"stopReason": reason, "error": details}
            self.state.apply({"sessionUpdate": "state_update", "state": "idle", **stop})
            if reason is not None:
                self.last_error = details
        if self._done is not None and not self._done.done():
            self._done.set_exception(error)
            self._done.exception()
        if ended and turn is not None and turn.number is not None:
            self.state.turn_changed(turn.number, ("ended",))

    def cancel_requested(self) -> list[str]:
        """``session/cancel`` went out: the running turn's unfinished tool calls, to mark cancelled."""
        turn = self.turn
        if turn is None:
            return []
        turn.request_cancel()
        calls = self.state.tool_calls
        return [i for i in sorted(turn.tool_call_ids) if i in calls and not calls[i].finished]

    def _finish(self, turn: Turn) -> None:
        if self._done is not None and not self._done.done() and turn is self.turn:
            self._done.set_result(turn.stop_reason)
        if turn.number is not None:
            self.state.turn_changed(turn.number, ("ended",))
