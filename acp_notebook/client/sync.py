"""Blocking calls — for scripts, terminal IPython and cells that want one: ``run_sync``, ``prompt_sync``.

An agent lives on the event loop it was started on (its pipes, futures and tasks belong to that
loop), so every blocking call runs on that loop:

- no loop runs in this thread (a script, terminal IPython between cells): the call runs the
  agent's loop until it is done; between calls the loop sleeps and the pipes buffer;
- the agent's loop is the one running here (a kernel cell that does not ``await``): the call
  runs it *nested*, made re-entrant with ``nest_asyncio2`` — ``nest_asyncio`` 1.6 fails under
  ipykernel 7 ("cannot enter context": the kernel runs every cell in one shared context) — so
  views keep updating while the cell blocks;
- the loop runs in another thread: the call is handed over with ``run_coroutine_threadsafe``.

A new agent started without a running loop lives on IPython's loop when IPython is loaded (so
top-level ``await`` cells and blocking calls share it), else on one private loop kept for the
process. A blocked cell never receives a click, so ``prompt_sync`` answers permission requests
itself (``client.policy``). While it blocks, the first Ctrl-C / kernel interrupt cancels the turn
(``session/cancel``) and raises ``TurnInterrupted`` once the turn has ended; a second one raises
``KeyboardInterrupt`` at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import threading
from collections.abc import Awaitable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from . import policy as policies
from .background import TurnInterrupted, interrupted_message, loop_of

if TYPE_CHECKING:
    from .session import Session

T = TypeVar("T")
_private: asyncio.AbstractEventLoop | None = None
_tasks: set[asyncio.Task] = set()


def _running() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def home_loop() -> asyncio.AbstractEventLoop:
    """The loop a new agent lives on: the running one, else IPython's, else a private one."""
    global _private
    running = _running()
    if running is not None:
        return running
    ipython = sys.modules.get("IPython.core.async_helpers")
    if ipython is not None and hasattr(ipython, "get_asyncio_loop"):
        return ipython.get_asyncio_loop()
    if _private is None or _private.is_closed():
        _private = asyncio.new_event_loop()
    return _private


def make_reentrant(loop: asyncio.AbstractEventLoop) -> None:
    """Let ``loop`` run nested inside itself (``nest_asyncio2``; patches asyncio once)."""
    if not getattr(loop, "_nest_patched", False):
        import nest_asyncio2

        nest_asyncio2.apply(loop)


def run_sync(awaitable: Awaitable[T], loop: asyncio.AbstractEventLoop | None = None) -> T:
    """Run ``awaitable`` to completion on ``loop`` (default ``home_loop()``), blocking the caller."""
    loop = loop or home_loop()
    if loop.is_closed():
        raise RuntimeError("the event loop this agent was started on is closed: start a new agent")
    running = _running()
    if running is None and loop.is_running():
        return asyncio.run_coroutine_threadsafe(_as_coroutine(awaitable), loop).result()
    if running is not None and running is not loop:
        raise RuntimeError("this agent lives on another event loop than the one running here")
    if running is not None:
        make_reentrant(loop)
    return loop.run_until_complete(awaitable)


async def _as_coroutine(awaitable: Awaitable[T]) -> T:
    return await awaitable


def start_agent_sync(command: str | Sequence[str] | None = None, cwd: Any = None, env: Any = None, **options):
    """``start_agent`` as a blocking call (default command: the demo agent)."""
    from .agent import start_agent
    from .registry import demo_command, registry

    agent = run_sync(start_agent(command or demo_command(), cwd, env, **options))
    registry().add_agent(agent)
    return agent


def prompt_sync(session: Session, prompt: Any, permissions: Any = None) -> str | None:
    """Send a prompt and block until the turn ends; ``permissions`` answers requests (``client.policy``)."""
    chosen = policies.check(permissions)
    return run_sync(_blocking_turn(session, prompt, chosen), loop_of(session.agent))


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
        choice = await policies.decide(request, self.policy, self.original, self.notes)
        if not request.pending:
            return choice
        if choice is None:
            self.notes.append(policies.cancelled_note(request, self.policy))
            await self.session.cancel()
        else:
            request.select(choice)
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
