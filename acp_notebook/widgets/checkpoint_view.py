"""A view's "Revert this turn" bar, kernel side: which turn it offers, its preview, its revert.

Format in ``js/WIRE.md`` (Checkpoints). The page asks once it is drawn (``checkpoint_status``); from
then on the kernel tells it (``checkpoint``) whenever the session takes a checkpoint or reverts a
turn. A view offers the turn it shows: a turn's view (``%%acp``) offers that turn; a view showing
several turns (the session's) offers the last one that ended. Previews and reverts run as tasks on
the kernel's loop and each is answered by one message; a failure (or a read-only view: a replay, a
pinned past state) is that message's ``error``.

The view hands its bar the parts it uses (the session, a send function, what it shows, whether it
is read-only or still open), never itself; the bar keeps what it follows.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import Any

from ..protocol.state import SessionState
from . import viewmodel as vm

REQUESTS = frozenset({"checkpoint_status", "checkpoint_preview", "checkpoint_revert"})
FILES_SHOWN = 200
_TASKS: set[asyncio.Task] = set()


class CheckpointBar:
    """One view's revert bar: answers its page's checkpoint messages, tells it of new checkpoints.

    A view feature (``extensions.ViewFeature``): the view routes the ``requests`` to ``handle``."""

    requests = REQUESTS

    def __init__(
        self,
        session: Any,
        *,
        send: Callable[[dict[str, Any]], None],
        entry_keys: Callable[[], list[str]],
        state: Callable[[], SessionState],
        read_only: Callable[[], bool],
        is_open: Callable[[], bool],
    ) -> None:
        self.session, self.send, self._entry_keys, self._state = session, send, entry_keys, state
        self._read_only, self._is_open = read_only, is_open
        self._following: Any = None  # the session's checkpoints, once this bar listens to them
        self._listener: Callable[[Any], None] | None = None

    def handle(self, content: dict[str, Any]) -> None:
        """One checkpoint message from the page."""
        kind = content.get("type")
        if kind == "checkpoint_status":
            self._follow()
            self.send(self.status())
            return
        turn = content.get("turn")
        cp = self._checkpoint(turn)
        reply = "checkpoint_preview" if kind == "checkpoint_preview" else "checkpoint_reverted"
        read_only = self._read_only()
        if read_only or cp is None:
            why = "this view shows a past state or a replay: back to live first" if read_only else None
            error = why or f"this view has no turn {turn!r} to revert"
            self.send({"type": reply, "turn": turn, "error": error})
            return
        preview, force = kind == "checkpoint_preview", content.get("force") is True
        task = asyncio.get_running_loop().create_task(self._revert(cp, reply, preview, force))
        _TASKS.add(task)
        task.add_done_callback(_TASKS.discard)

    def offered(self) -> tuple[Any, str] | None:
        """The checkpoint of the turn the view offers to revert, and ``"turn"`` or ``"last"``."""
        session = self.session
        if session is None or getattr(session, "checkpoints", None) is None:
            return None
        keys, timeline = set(self._entry_keys()), self._state().timeline
        shown = []
        for turn in session.turns:
            cp = turn.checkpoint
            start = getattr(cp, "timeline_start", None)
            if isinstance(start, int) and start < len(timeline) and vm.entry_key(*timeline[start]) in keys:
                shown.append((turn, cp))
        if len(shown) == 1:
            return shown[0][1], "turn"
        ended = [cp for turn, cp in shown if turn.ended]
        return (ended[-1], "last") if ended else None

    def status(self) -> dict[str, Any]:
        """The ``checkpoint`` message: the offered turn and what it changed."""
        message: dict[str, Any] = {"type": "checkpoint", "turn": None, "busy": self._busy()}
        found = self.offered()
        if found is None:
            return message
        cp, scope = found
        message.update(turn=cp.number, scope=scope, error=cp.error, reverted=_reverted(cp))
        if not cp.ready:
            message["state"] = "error" if cp.error else "pending"
            return message
        rows = cp.changes()
        message.update(state="ready", count=len(rows), files=rows[:FILES_SHOWN])
        message.update(note=cp.note(), background=list(cp.background))  # background subagents' part
        message["revertible"] = sum(1 for r in rows if r["revertible"])
        return message

    def _busy(self) -> bool:
        """A turn runs or waits (the turn that just ended and is finishing up does not count)."""
        session = self.session
        return bool(session.running or session.queued_prompts) if session is not None else False

    def _checkpoint(self, turn: Any) -> Any:
        found = self.offered()
        return found[0] if found is not None and found[0].number == turn else None

    async def _revert(self, cp: Any, reply: str, preview: bool, force: bool) -> None:
        message: dict[str, Any] = {"type": reply, "turn": cp.number, "force": force}
        try:
            message.update((await cp.revert(force=force, preview=preview)).to_dict())
        except Exception as exc:  # the page says why; the session goes on
            message["error"] = str(exc) or type(exc).__name__
        if self._is_open():
            self.send(message)

    def _follow(self) -> None:
        """Tell the page about every checkpoint from now on (once; dropped when the view closes)."""
        keeper = getattr(self.session, "checkpoints", None)
        if keeper is None or self._following is keeper:
            return
        self.close()
        self._following = keeper
        ref = weakref.ref(self)

        def tell(_cp: Any) -> None:
            target = ref()
            if target is None or not target._is_open():
                keeper.listeners.remove(tell)
                return
            target.send(target.status())

        self._listener = tell
        keeper.listeners.append(tell)

    def close(self) -> None:
        """Stop telling the page (the view closes)."""
        keeper, tell = self._following, self._listener
        self._following = self._listener = None
        if keeper is not None and tell in keeper.listeners:
            keeper.listeners.remove(tell)


def _reverted(cp: Any) -> dict[str, Any] | None:
    result = cp.reverted
    if result is None:
        return None
    return {"restored": len(result.restored), "refused": len(result.refused)}
