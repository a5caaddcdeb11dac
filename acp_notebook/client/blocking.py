"""Blocking turns — ``prompt_sync`` — for scripts, terminal IPython and cells that want one.

The call runs the agent's loop (``sync.run_sync``). A blocked cell never receives a click, so
every permission request that arrives meanwhile is answered here (``client.policy``): the
session's own handler first, then ``permissions=``. While it blocks, the first Ctrl-C / kernel
interrupt cancels the turn (``session/cancel``) and raises ``TurnInterrupted`` once the turn has
ended; a second one raises ``KeyboardInterrupt`` at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import threading
from collections.abc import Awaitable, Iterator
from typing import TYPE_CHECKING, Any

from . import policy as policies
from .sync import run_sync
from .turns import TurnInterrupted, interrupted_message

if TYPE_CHECKING:
    from .session import Session

_tasks: set[asyncio.Task] = set()


def prompt_sync(session: Session, prompt: Any, permissions: Any = None) -> str | None:
    """Send a prompt and block until the turn ends; ``permissions`` (a policy) answers requests."""
    chosen = policies.check(permissions)
    return run_sync(_blocking_turn(session, prompt, chosen), session.agent.loop())


async def _blocking_turn(session: Session, prompt: Any, policy: Any) -> str | None:
    return await wait_blocking(session, session.prompt(prompt), policy)


async def wait_blocking(session: Session, turn: Awaitable[str | None], policy: Any = None) -> str | None:
    """Await ``turn`` while the caller blocks: permissions go to ``policy``, SIGINT cancels."""
    guard = PermissionGuard(session, policies.check(policy))
    try:
        with guard, sigint_cancels(session) as hits:
            reason = await turn
    finally:  # printed here, in the caller's cell (a task's output would go to the cell that made it)
        for note in guard.notes:
            print(note, file=sys.stderr)
    if hits:
        raise TurnInterrupted(interrupted_message(reason))
    return reason


class PermissionGuard:
    """Answers every permission request while a blocking turn runs (handler first, then policy)."""

    def __init__(self, session: Session, policy: Any) -> None:
        self.session, self.policy = session, policy
        self.original = session.permission_handler
        self.decisions: dict[str, asyncio.Task] = {}
        self.notes: list[str] = []

    def __enter__(self) -> PermissionGuard:
        for request in list(self.session.pending_permissions):  # e.g. a background turn's question
            self._answer(request)
        self.session.permission_handler = self._answer
        return self

    def __exit__(self, *exc: object) -> None:
        self.session.permission_handler = self.original

    def _answer(self, request: Any) -> asyncio.Task:
        task = self.decisions.get(request.key)
        if task is None:
            task = self.decisions[request.key] = asyncio.ensure_future(self._decide(request))
        return task

    async def _decide(self, request: Any) -> str | None:
        state = self.session.state
        choice, who = await policies.decide_by(request, self.policy, self.original, self.notes, state)
        if not request.pending:
            return choice
        if choice is None:
            self.notes.append(policies.cancelled_note(request, self.policy))
            await self.session.cancel()
        else:
            request.select(choice, by=who)
        return choice


@contextlib.contextmanager
def sigint_cancels(session: Session) -> Iterator[list[int]]:
    """While blocking: the first SIGINT cancels the turn; a second raises KeyboardInterrupt."""
    hits: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield hits
        return
    loop = asyncio.get_running_loop()

    def cancel() -> None:
        task = loop.create_task(session.cancel())
        _tasks.add(task)
        task.add_done_callback(_tasks.discard)

    def on_sigint(signum: int, _frame: Any) -> None:
        if hits:
            raise KeyboardInterrupt
        hits.append(signum)
        loop.call_soon_threadsafe(cancel)

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield hits
    finally:
        signal.signal(signal.SIGINT, previous)
