"""Blocking turns — ``prompt_sync`` — for scripts, terminal IPython and cells that want one.

The call runs the agent's loop (``sync.run_sync``). A blocked cell never receives a click, so
every permission request and elicitation that arrives meanwhile is answered here
(``client.policy``): the session's own handler first, then ``permissions=`` (an elicitation nothing
answers gets ``cancel``). While it blocks, the first Ctrl-C / kernel
interrupt cancels the turn (``session/cancel``) and raises ``TurnInterrupted`` once the turn has
ended; a second one raises ``KeyboardInterrupt`` at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from . import policy as policies
from .elicitations import ElicitationDesk
from .permissions import PermissionDesk
from .sync import run_sync
from .turns import TurnInterrupted, interrupted_message

_tasks: set[asyncio.Task] = set()
Cancel = Callable[[], Awaitable[None]]


def prompt_sync(
    turn: Callable[[], Awaitable[str | None]],
    desk: PermissionDesk,
    cancel: Cancel,
    loop: asyncio.AbstractEventLoop,
    permissions: Any = None,
    elicitations: ElicitationDesk | None = None,
) -> str | None:
    """Run ``turn()`` on ``loop`` and block until it ends; ``permissions`` (a policy) answers requests."""
    chosen = policies.check(permissions)

    async def blocking_turn() -> str | None:
        return await wait_blocking(turn(), desk, cancel, chosen, elicitations)

    return run_sync(blocking_turn(), loop)


async def wait_blocking(
    turn: Awaitable[str | None],
    desk: PermissionDesk,
    cancel: Cancel,
    policy: Any = None,
    elicitations: ElicitationDesk | None = None,
) -> str | None:
    """Await ``turn`` while the caller blocks: permissions and elicitations go to ``policy``,
    SIGINT cancels."""
    guard = PermissionGuard(desk, cancel, policies.check(policy))
    asked = ElicitationGuard(elicitations, guard.policy, guard.notes) if elicitations is not None else None
    try:
        with guard, asked or contextlib.nullcontext(), sigint_cancels(cancel) as hits:
            reason = await turn
    finally:  # printed here, in the caller's cell (a task's output would go to the cell that made it)
        for note in guard.notes:
            print(note, file=sys.stderr)
    if hits:
        raise TurnInterrupted(interrupted_message(reason))
    return reason


class PermissionGuard:
    """Answers every permission request while a blocking turn runs (handler first, then policy)."""

    def __init__(self, desk: PermissionDesk, cancel: Cancel, policy: Any) -> None:
        self.desk, self.cancel, self.policy = desk, cancel, policy
        self.original = desk.handler
        self.decisions: dict[str, asyncio.Task] = {}
        self.notes: list[str] = []
        self._stand_in = contextlib.nullcontext()

    def __enter__(self) -> PermissionGuard:
        for request in self.desk.pending():  # e.g. a background turn's question
            self._answer(request)
        self._stand_in = self.desk.standing_in(self._answer)
        self._stand_in.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stand_in.__exit__(None, None, None)

    def _answer(self, request: Any) -> asyncio.Task:
        task = self.decisions.get(request.key)
        if task is None:
            task = self.decisions[request.key] = asyncio.ensure_future(self._decide(request))
        return task

    async def _decide(self, request: Any) -> str | None:
        state = self.desk.state
        choice, who = await policies.decide_by(request, self.policy, self.original, self.notes, state)
        if not request.pending:
            return choice
        if choice is None:
            self.notes.append(policies.cancelled_note(request, self.policy))
            await self.cancel()
        else:
            request.select(choice, by=who)
        return choice


class ElicitationGuard:
    """Answers every elicitation while a blocking turn runs (handler, then policy, else cancel)."""

    def __init__(self, desk: ElicitationDesk, policy: Any, notes: list[str]) -> None:
        self.desk, self.policy, self.notes = desk, policy, notes
        self.original = desk.handler
        self._stand_in: contextlib.AbstractContextManager[None] = contextlib.nullcontext()

    def __enter__(self) -> ElicitationGuard:
        self._stand_in = self.desk.standing_in(self._decide)  # offers the pending ones too
        self._stand_in.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stand_in.__exit__(None, None, None)

    async def _decide(self, elicitation: Any) -> None:
        state = self.desk.state
        answer, who = await policies.decide_elicitation(
            elicitation, self.policy, self.original, self.notes, state
        )
        if elicitation.pending and not self.desk.answer(elicitation, answer, who) and elicitation.pending:
            self.notes.append(f"acp: {elicitation.key} could not be answered {answer!r}; it was cancelled")
            elicitation.cancel(by="policy")


@contextlib.contextmanager
def sigint_cancels(cancel_turn: Cancel) -> Iterator[list[int]]:
    """While blocking: the first SIGINT cancels the turn; a second raises KeyboardInterrupt."""
    hits: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield hits
        return
    loop = asyncio.get_running_loop()

    def cancel() -> None:
        task = loop.create_task(cancel_turn())
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
