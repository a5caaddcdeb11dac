"""A session's one turn queue: every prompt runs as a task, after the ones sent before it.

``submit`` returns the task at once, so a cell can end while the turn goes on (buttons keep
working); ``Session.prompt`` awaits the same kind of task. Each task waits for the turns queued
before it, calls ``on_start`` (e.g. to build the per-turn view), runs the turn, then ``on_end``.
A turn the agent started itself joins the queue already running (``adopt``): prompts sent meanwhile
wait behind it, and ``wait_idle`` waits for it. A turn nobody awaits that fails records the error
on the state.

Waiting is where interrupts land: ipykernel (7.4, measured) turns a kernel interrupt during an
awaiting cell into ``CancelledError`` in the cell's coroutine. ``wait`` and ``wait_idle`` catch it,
cancel the turn (``session/cancel``, which answers pending permissions ``cancelled``), let it end,
and raise ``TurnInterrupted`` — a ``KeyboardInterrupt`` that IPython shows as one line.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

CANCEL_GRACE = 5.0
Hook = Callable[[], None] | None


class TurnInterrupted(KeyboardInterrupt):
    """The kernel (or Ctrl-C) interrupted a wait: the turn was cancelled, the agent is still up."""

    def _render_traceback_(self) -> list[str]:  # IPython: a one-line error, no traceback
        return [f"TurnInterrupted: {self}"]


def interrupted_message(reason: str | None) -> str:
    """What an interrupted wait tells the user."""
    ended = f"it ended with {reason!r}" if reason else "it had not ended yet"
    return f"interrupted: the turn was cancelled (session/cancel sent; {ended}); the agent is still running"


class TurnQueue:
    """The turns of one session, in the order they were sent."""

    def __init__(
        self,
        loop: Callable[[], asyncio.AbstractEventLoop],
        run: Callable[[Any], Awaitable[str | None]],
        cancel: Callable[[], Awaitable[None]],
        on_error: Callable[[BaseException], None],
    ) -> None:
        self._loop, self._run, self._cancel, self._on_error = loop, run, cancel, on_error
        self._tasks: list[asyncio.Task] = []
        self._started: weakref.WeakSet[asyncio.Task] = weakref.WeakSet()
        self._awaited: set[asyncio.Task] = set()
        self._side: set[asyncio.Task] = set()  # cancels sent for callers that gave up

    # -- the queue ----------------------------------------------------------------------------
    def submit(self, prompt: Any, on_start: Hook = None, on_end: Hook = None) -> asyncio.Task:
        """Queue a turn; returns its task (which returns the stop reason)."""
        earlier = self.pending()
        task = self._loop().create_task(self._turn(prompt, earlier, on_start, on_end))
        self._tasks.append(task)
        task.add_done_callback(self._finished)
        return task

    def adopt(self, follow: Coroutine[Any, Any, Any]) -> asyncio.Task:
        """Add a turn that is already running (the agent started it); ``follow`` runs until it
        ends. Returns its task."""
        task = self._loop().create_task(follow)
        self._tasks.append(task)
        self._started.add(task)
        task.add_done_callback(self._finished)
        return task

    def pending(self) -> list[asyncio.Task]:
        """The turns not finished yet: the running one first, then the queued ones."""
        self._tasks = [t for t in self._tasks if not t.done()]
        return list(self._tasks)

    def queued(self) -> list[asyncio.Task]:
        """The turns still waiting for an earlier one."""
        return [t for t in self.pending() if t not in self._started]

    def started(self, task: asyncio.Task) -> bool:
        """True once a turn has left the queue and sent its prompt."""
        return task in self._started

    def drop_queued(self) -> int:
        """Cancel the turns that have not started yet; returns how many."""
        queued = self.queued()
        for task in queued:
            task.cancel()
        return len(queued)

    async def _turn(self, prompt: Any, earlier: list[asyncio.Task], on_start: Hook, on_end: Hook) -> Any:
        if earlier:
            await asyncio.wait(earlier)
        self._started.add(asyncio.current_task())  # type: ignore[arg-type]
        if on_start is not None:
            on_start()
        try:
            return await self._run(prompt)
        finally:
            if on_end is not None:
                on_end()

    def _finished(self, task: asyncio.Task) -> None:
        awaited = task in self._awaited
        self._awaited.discard(task)
        if task.cancelled():
            return
        exc = task.exception()  # also marks it retrieved
        if exc is not None and not awaited:
            self._on_error(exc)

    # -- waiting ------------------------------------------------------------------------------
    async def wait(
        self, task: asyncio.Task, grace: float = CANCEL_GRACE, *, raise_interrupt: bool = True
    ) -> Any:
        """Await a turn; if this wait is cancelled (an interrupt), cancel the turn too.

        ``raise_interrupt`` raises ``TurnInterrupted`` once the turn has ended; else the
        ``CancelledError`` goes on (``Session.prompt``: the caller gave up).
        """
        self._awaited.add(task)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is None or not current.cancelling():  # the turn itself was dropped
                if task.cancelled():
                    return "cancelled"
                raise
            if not raise_interrupt:
                self._stop(task)
                raise
            current.uncancel()
            reason = await self.stop(task, grace)
            raise TurnInterrupted(interrupted_message(reason)) from None

    def _stop(self, task: asyncio.Task) -> None:
        if not self.started(task):
            task.cancel()
        elif not task.done():
            side = self._loop().create_task(self._cancel())
            self._side.add(side)
            side.add_done_callback(self._side.discard)

    async def stop(self, task: asyncio.Task, grace: float = CANCEL_GRACE) -> str | None:
        """Cancel a turn (still queued: drop it; running: ``session/cancel``) and let it end."""
        if not self.started(task):
            task.cancel()
            return "cancelled"
        await self._cancel()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            return await asyncio.wait_for(asyncio.shield(task), grace)
        return None

    async def wait_idle(
        self, timeout: float | None, last_reason: Callable[[], str | None], grace: float = CANCEL_GRACE
    ) -> bool:
        """Wait until no turn runs or waits (False on timeout); an interrupt cancels them all."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        try:
            while tasks := self.pending():
                left = None if deadline is None else deadline - loop.time()
                if left is not None and left <= 0:
                    return False
                await asyncio.wait(tasks, timeout=left)
            return True
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is None or not current.cancelling():
                raise
            current.uncancel()
            self.drop_queued()
            await self._cancel()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self.wait_idle(None, last_reason), grace)
            raise TurnInterrupted(interrupted_message(last_reason())) from None
