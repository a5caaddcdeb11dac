"""Turns as background tasks, and waiting for one so that a kernel interrupt cancels it.

``start_turn`` runs a prompt as a task on the agent's event loop and returns at once, so a cell
can end while the turn goes on (buttons keep working). Background turns of one session run one
after another: each waits for the one started before it, then calls ``on_start`` (e.g. to build
the per-turn view), then ``Session.prompt``. A turn that fails records the error on the state.

``wait_turn`` awaits such a task. ipykernel (7.4, measured) turns a kernel interrupt during an
awaiting cell into ``CancelledError`` in the cell's coroutine: ``wait_turn`` catches it, sends
``session/cancel`` (which answers pending permissions ``cancelled``), lets the turn end, and raises
``TurnInterrupted`` — a ``KeyboardInterrupt`` that IPython shows as one line.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .session import Session

CANCEL_GRACE = 5.0

_queues: weakref.WeakKeyDictionary[Any, list[asyncio.Task]] = weakref.WeakKeyDictionary()
_started: weakref.WeakSet[asyncio.Task] = weakref.WeakSet()


class TurnInterrupted(KeyboardInterrupt):
    """The kernel (or Ctrl-C) interrupted a wait: the turn was cancelled, the agent is still up."""

    def _render_traceback_(self) -> list[str]:  # IPython: a one-line error, no traceback
        return [f"TurnInterrupted: {self}"]


def loop_of(agent: Any) -> asyncio.AbstractEventLoop:
    """The event loop ``agent`` was started on (its pipes and futures belong to it)."""
    return agent.connection.closed.get_loop()


def pending(session: Session) -> list[asyncio.Task]:
    """The session's background turns that have not finished (running first, then queued)."""
    tasks = [t for t in _queues.get(session, []) if not t.done()]
    _queues[session] = tasks
    return tasks


def busy(session: Session) -> bool:
    """True when a new prompt would wait: a turn is running or a background turn is pending."""
    return session.running or bool(pending(session))


def drop_queued(session: Session) -> int:
    """Cancel the background turns that have not started yet; returns how many."""
    queued = [t for t in pending(session) if not started(t)]
    for task in queued:
        task.cancel()
    return len(queued)


def started(task: asyncio.Task) -> bool:
    """True once a background turn has left the queue and sent its prompt."""
    return task in _started


def start_turn(
    session: Session,
    prompt: str | dict | Sequence[Any],
    on_start: Callable[[], None] | None = None,
    on_end: Callable[[], None] | None = None,
) -> asyncio.Task:
    """Run a turn as a task on the agent's loop, after the session's earlier background turns."""
    queue = pending(session)
    task = loop_of(session.agent).create_task(_run(session, prompt, list(queue), on_start, on_end))
    queue.append(task)
    task.add_done_callback(lambda t: _record_error(session, t))
    return task


async def _run(session, prompt, earlier, on_start, on_end) -> str | None:
    if earlier:
        await asyncio.wait(earlier)
    _started.add(asyncio.current_task())
    if on_start is not None:
        on_start()
    try:
        return await session.prompt(prompt)
    finally:
        if on_end is not None:
            on_end()


def _record_error(session: Session, task: asyncio.Task) -> None:
    if task.cancelled():
        return
    exc = task.exception()  # also marks it retrieved: nobody may ever await a background turn
    if exc is not None:
        session.state.diagnose("turn-error", f"the turn failed: {str(exc).splitlines()[0]}", level="error")


async def wait_turn(session: Session, task: asyncio.Task, grace: float = CANCEL_GRACE) -> str | None:
    """Await a background turn; if this wait is cancelled (kernel interrupt), cancel the turn."""
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is None or not current.cancelling():  # the turn itself was dropped from the queue
            if task.cancelled():
                return "cancelled"
            raise
        current.uncancel()
        reason = await cancel_turn(session, task, grace)
        raise TurnInterrupted(interrupted_message(reason)) from None


async def cancel_turn(session: Session, task: asyncio.Task, grace: float = CANCEL_GRACE) -> str | None:
    """Cancel a background turn (still queued: drop it; running: ``session/cancel``) and let it end."""
    if not started(task):
        task.cancel()
        return "cancelled"
    await session.cancel()
    with contextlib.suppress(Exception, asyncio.CancelledError):
        return await asyncio.wait_for(asyncio.shield(task), grace)
    return None


def interrupted_message(reason: str | None) -> str:
    """What an interrupted wait tells the user."""
    ended = f"it ended with {reason!r}" if reason else "it had not ended yet"
    return f"interrupted: the turn was cancelled (session/cancel sent; {ended}); the agent is still running"


async def wait_idle(session: Session, timeout: float | None = None, grace: float = CANCEL_GRACE) -> bool:
    """Wait until no turn runs or waits (False on timeout); an interrupt cancels them all."""
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    try:
        while busy(session):
            left = None if deadline is None else deadline - loop.time()
            if left is not None and left <= 0:
                return False
            tasks = pending(session)
            if tasks:
                await asyncio.wait(tasks, timeout=left)
            else:  # a turn started with `await session.prompt(...)`: not ours to await
                await asyncio.sleep(0.05 if left is None else min(0.05, left))
        return True
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is None or not current.cancelling():
            raise
        current.uncancel()
        drop_queued(session)
        await session.cancel()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(wait_idle(session), grace)
        raise TurnInterrupted(interrupted_message(session.state.stop_reason)) from None
