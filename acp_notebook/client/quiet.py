"""Waiting for background work: until a session is quiet, so a run nobody watches can end.

A session is quiet when no turn runs or waits (the turn queue), the agent reports no background
work for it (``state.background`` is ``[]``, or was never reported), and every subagent, at any
depth, is idle with no background work of its own. A subagent's activity is what its parent was
told (``subagent_update`` ``state``); when that is unconfirmed (``unknown``: cleared or never
sent), its own session's last ``state_update`` decides (a new session is idle). Background work
that ends often makes the agent start a turn of its own (a task notification; real Claude sends its
``running`` right after the ``background: []`` that ends the work): once the work it waited for is
over, the wait ends only after ``SETTLE`` seconds with no change, and a turn the agent starts
meanwhile is waited for too. Nothing polls: the wait wakes on every change of the session's
state and of each descendant's (subscribed to as they appear). An interrupt stops the wait only:
background work is not a turn, it goes on (``subagent.cancel()`` stops one).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from ..protocol.state import SessionState
from ..protocol.subagents import UNKNOWN
from .subagents import Subagent
from .turns import TurnInterrupted, TurnQueue

SETTLE = 2.0  # s of quiet after background work ended before the wait ends (the agent's follow-up)
INTERRUPTED = (
    "interrupted: stopped waiting for background work, which goes on "
    "(session.subagents[...].cancel() stops a subagent that allows it)"
)


def child_quiet(child: Subagent) -> bool:
    """True when ``child`` and every subagent under it are idle, with no background work."""
    run_state = child.run_state
    if run_state == UNKNOWN:  # unconfirmed by its parent: its own last word
        run_state = child.state.run_state
    return run_state == "idle" and not child.state.background and all_quiet(child.subagents)


def all_quiet(children: Mapping[str, Subagent]) -> bool:
    """True when every child in ``children`` is quiet (``child_quiet``)."""
    return all(child_quiet(child) for child in children.values())


def background_done(state: SessionState, children: Mapping[str, Subagent]) -> bool:
    """True when no background work is reported for ``state``'s session or under it."""
    return not state.background and all_quiet(children)


async def wait_quiet(
    state: SessionState,
    children: Mapping[str, Subagent],
    queue: TurnQueue,
    timeout: float | None,
    grace: float,
) -> bool:
    """Wait until the session is quiet; False on timeout. An interrupt during a turn cancels it
    (``TurnQueue.wait_idle``); during background work it only stops waiting."""
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    changed = asyncio.Event()
    watch = _Watch(changed.set)
    waited = False  # for background work: once it is over, the agent may start a turn about it
    try:
        while True:
            if not await queue.wait_idle(_left(loop, deadline), lambda: state.stop_reason, grace):
                return False
            changed.clear()
            watch.follow(state, children)
            quiet = not queue.pending() and background_done(state, children)
            if quiet and not waited:
                return True
            if quiet:  # quiet for SETTLE seconds, else what changed is looked at again
                if not await _changed(changed, _settle(loop, deadline)):
                    return True
                continue
            waited = True
            if not await _changed(changed, _left(loop, deadline)):
                return False
    finally:
        watch.close()


def _settle(loop: asyncio.AbstractEventLoop, deadline: float | None) -> float:
    left = _left(loop, deadline)
    return SETTLE if left is None else min(SETTLE, left)


def _left(loop: asyncio.AbstractEventLoop, deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - loop.time())


async def _changed(changed: asyncio.Event, timeout: float | None) -> bool:
    """Wait for the next change (False on timeout); an interrupt stops the wait only."""
    try:
        await asyncio.wait_for(changed.wait(), timeout)
    except TimeoutError:
        return False
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is None or not current.cancelling():
            raise
        current.uncancel()
        raise TurnInterrupted(INTERRUPTED) from None
    return True


class _Watch:
    """Subscriptions to a session's state and to each descendant's, made as they appear."""

    def __init__(self, wake: Callable[[], None]) -> None:
        self._wake = wake
        self._unsubscribe: dict[int, Callable[[], None]] = {}

    def follow(self, state: SessionState, children: Mapping[str, Subagent]) -> None:
        """Subscribe to ``state`` and the states of ``children`` (recursively), once each."""
        self._subscribe(state)
        for child in children.values():
            self.follow(child.state, child.subagents)

    def _subscribe(self, state: SessionState) -> None:
        if id(state) not in self._unsubscribe:
            self._unsubscribe[id(state)] = state.subscribe(self._changed)

    def _changed(self, _change: Any) -> None:
        self._wake()

    def close(self) -> None:
        """Drop every subscription."""
        for unsubscribe in self._unsubscribe.values():
            unsubscribe()
        self._unsubscribe.clear()
