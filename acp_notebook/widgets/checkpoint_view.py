"""A view's "Revert this turn" bar, kernel side: which turn it offers, its preview, its revert.

Format in ``js/WIRE.md`` (Checkpoints). The page asks once it is drawn (``checkpoint_status``); from
then on the kernel tells it (``checkpoint``) whenever the session takes a checkpoint or reverts a
turn. A view offers the turn it shows: a turn's view (``%%acp``) offers that turn; a view showing
several turns (the session's) offers the last one that ended. Previews and reverts run as tasks on
the kernel's loop and each is answered by one message; a failure (or a read-only view: a replay, a
pinned past state) is that message's ``error``.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import TYPE_CHECKING, Any

from . import viewmodel as vm

if TYPE_CHECKING:
    from .session_view import SessionView

REQUESTS = frozenset({"checkpoint_status", "checkpoint_preview", "checkpoint_revert"})
FILES_SHOWN = 200
_TASKS: set[asyncio.Task] = set()


def handle(view: SessionView, content: dict[str, Any]) -> None:
    """One checkpoint message from the page."""
    kind = content.get("type")
    if kind == "checkpoint_status":
        _follow(view)
        view.send(status(view))
        return
    turn = content.get("turn")
    cp = _checkpoint(view, turn)
    reply = "checkpoint_preview" if kind == "checkpoint_preview" else "checkpoint_reverted"
    if view.read_only or cp is None:
        why = "this view shows a past state or a replay: back to live first" if view.read_only else None
        view.send({"type": reply, "turn": turn, "error": why or f"this view has no turn {turn!r} to revert"})
        return
    preview, force = kind == "checkpoint_preview", content.get("force") is True
    task = asyncio.get_running_loop().create_task(_revert(view, cp, reply, preview, force))
    _TASKS.add(task)
    task.add_done_callback(_TASKS.discard)


def offered(view: SessionView) -> tuple[Any, str] | None:
    """The checkpoint of the turn this view offers to revert, and ``"turn"`` or ``"last"``."""
    session = view.session
    if session is None or getattr(session, "checkpoints", None) is None:
        return None
    keys, timeline = set(view.entry_keys), view.state.timeline
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


def status(view: SessionView) -> dict[str, Any]:
    """The ``checkpoint`` message: the offered turn and what it changed."""
    message: dict[str, Any] = {"type": "checkpoint", "turn": None, "busy": _busy(view)}
    found = offered(view)
    if found is None:
        return message
    cp, scope = found
    message.update(turn=cp.number, scope=scope, error=cp.error, reverted=_reverted(cp))
    if not cp.ready:
        message["state"] = "error" if cp.error else "pending"
        return message
    rows = cp.changes()
    message.update(state="ready", count=len(rows), files=rows[:FILES_SHOWN])
    message["revertible"] = sum(1 for r in rows if r["revertible"])
    return message


def _reverted(cp: Any) -> dict[str, Any] | None:
    result = cp.reverted
    if result is None:
        return None
    return {"restored": len(result.restored), "refused": len(result.refused)}


def _busy(view: SessionView) -> bool:
    """A turn runs or waits (the turn that just ended and is finishing up does not count)."""
    session = view.session
    return bool(session.running or session.queued_prompts) if session is not None else False


def _checkpoint(view: SessionView, turn: Any) -> Any:
    found = offered(view)
    return found[0] if found is not None and found[0].number == turn else None


async def _revert(view: SessionView, cp: Any, reply: str, preview: bool, force: bool) -> None:
    message: dict[str, Any] = {"type": reply, "turn": cp.number, "force": force}
    try:
        message.update((await cp.revert(force=force, preview=preview)).to_dict())
    except Exception as exc:  # the page says why; the session goes on
        message["error"] = str(exc) or type(exc).__name__
    if view.comm is not None:
        view.send(message)


def _follow(view: SessionView) -> None:
    """Tell this view about every checkpoint from now on (once per view; dropped when it closes)."""
    keeper = getattr(view.session, "checkpoints", None)
    if keeper is None or getattr(view, "_acp_checkpoints", None) is keeper:
        return
    view._acp_checkpoints = keeper  # type: ignore[attr-defined]
    ref = weakref.ref(view)

    def tell(_cp: Any) -> None:
        target = ref()
        if target is None or target.comm is None:
            keeper.listeners.remove(tell)
            return
        target.send(status(target))

    keeper.listeners.append(tell)
