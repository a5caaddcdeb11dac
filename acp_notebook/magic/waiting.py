"""What a waiting ``%%acp`` / ``%acp wait`` cell adds: a policy for one turn, a bounded wait.

``%%acp --permissions NAME`` answers this turn's permission requests with a policy (a built-in
name of ``acp_notebook.policies``, or a variable of the user's namespace holding one), before the
session's own handler; the handler is back when the turn ends. ``--elicitations decline|cancel|ask``
does the same for the turn's elicitations (``ask``: the user answers, not the handler).
``--timeout S`` bounds the wait: on timeout the cell fails with one message saying what is pending
and how to answer it (the turn goes on: answer it, or ``%acp cancel``); in a run nobody watches,
the pending elicitations are answered ``cancel`` then (``who="timeout"``). ``%acp wait
--background`` also waits for background work (subagents, background commands, and the turns the
agent then starts itself), so a papermill or nbclient run can end with it. While a cell waits in
a run nobody watches, each pending request and elicitation is described once in its output
(``client.headless``, under the cell's session name). Both waits keep a kernel interrupt from
sleeping in the loop until something else wakes it (``wake``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from .. import policies
from ..client import headless
from . import wake
from .errors import MagicError


def policy_named(name: str | None, namespace: dict[str, Any]) -> policies.Policy | None:
    """The policy ``--permissions NAME`` names (None without the option)."""
    if name is None:
        return None
    try:
        return policies.lookup(name, namespace)
    except (KeyError, TypeError) as exc:
        raise MagicError(str(exc).strip("'\""), "UsageError") from None


def elicitations_named(name: str | None) -> policies.Policy | None:
    """The policy ``--elicitations NAME`` names (None without the option)."""
    if name is None:
        return None
    try:
        return policies.elicitations_named(name)
    except KeyError as exc:
        raise MagicError(str(exc).strip("'\""), "UsageError") from None


def turn_hooks(
    session: Any,
    policy: policies.Policy | None,
    on_start: Callable,
    on_end: Callable,
    elicitations: policies.Policy | None = None,
) -> tuple:
    """``on_start`` / ``on_end`` that also put ``policy`` in front of the permission handler, and
    ``elicitations`` in place of the elicitation handler, for the turn."""
    if policy is None and elicitations is None:
        return on_start, on_end
    saved: dict[str, Any] = {}

    def start() -> None:
        if policy is not None:
            saved["handler"] = previous = session.permission_handler
            saved["ours"] = policy if previous is None else policy | previous
            session.permission_handler = saved["ours"]
        if elicitations is not None:
            saved["elicitation_handler"] = session.elicitation_handler
            session.elicitation_handler = elicitations
        on_start()

    def end() -> None:
        if policy is not None and session.permission_handler is saved.get("ours"):
            session.permission_handler = saved.get("handler")
        if elicitations is not None and session.elicitation_handler is elicitations:
            session.elicitation_handler = saved.get("elicitation_handler")
        on_end()

    return start, end


async def wait_turn(session: Any, task: asyncio.Task, name: str, timeout: float | None) -> str | None:
    """Wait for the turn (an interrupt cancels it); on timeout raise, saying what is pending."""
    with headless.notices(session, name), wake.interruptible():
        if timeout is None:
            return await session.wait_turn(task)
        waiter = asyncio.ensure_future(_held(session.wait_turn(task)))
        try:
            done, _ = await asyncio.wait({waiter}, timeout=timeout)
        except asyncio.CancelledError:  # an interrupt: the waiter cancels the turn, then raises
            waiter.cancel()
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            return _unheld(await waiter)
        if not done:
            waiter.add_done_callback(_quiet)
            raise timed_out(session, name, timeout, "the turn is still running")
        return _unheld(waiter.result())


async def wait_idle(session: Any, name: str, timeout: float | None, background: bool = False) -> None:
    """``%acp wait``: until no turn runs or waits (``background``: and no background work goes
    on, ``Session.wait_idle``); on timeout raise, saying what is pending."""
    with headless.notices(session, name), wake.interruptible():
        if not await session.wait_idle(timeout, background=background):
            raise timed_out(session, name, timeout or 0, "it is still busy")


def timed_out(session: Any, name: str, timeout: float, what: str) -> MagicError:
    """The one message of a wait that gave up: what is pending, how to answer or cancel."""
    lines = [f"{name}: gave up waiting after {timeout:g} s; {what} (%acp cancel --name {name} stops it)"]
    pending = headless.pending_lines(session, name)
    lines += pending or ["no permission request or elicitation is pending"]
    cancelled = headless.time_out(session)
    if cancelled:
        lines.append(f"({cancelled} pending elicitation(s) answered cancel: nobody can answer them here)")
    return MagicError("\n".join(lines), "TimeoutError")


async def _held(waiting: Awaitable[Any]) -> tuple[Any, KeyboardInterrupt | None]:
    """Await in a task of its own, keeping its ``TurnInterrupted``: raised in a task, it stops the loop."""
    try:
        return await waiting, None
    except KeyboardInterrupt as exc:  # asyncio re-raises it out of run_forever: the kernel would exit
        return None, exc


def _unheld(held: tuple[Any, KeyboardInterrupt | None]) -> Any:
    value, interrupt = held
    if interrupt is not None:
        raise interrupt
    return value


def _quiet(task: asyncio.Task) -> None:
    if not task.cancelled():
        task.exception()  # retrieved: the cell that gave up does not want it
