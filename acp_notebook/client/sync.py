"""Running an agent's event loop from blocking code: ``run_sync`` and the loop an agent lives on.

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
process.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")
_private: asyncio.AbstractEventLoop | None = None


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The loop running in this thread, or None."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def home_loop() -> asyncio.AbstractEventLoop:
    """The loop a new agent lives on: the running one, else IPython's, else a private one."""
    global _private
    running = running_loop()
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
    running = running_loop()
    if running is None and loop.is_running():
        return asyncio.run_coroutine_threadsafe(_as_coroutine(awaitable), loop).result()
    if running is not None and running is not loop:
        raise RuntimeError("this agent lives on another event loop than the one running here")
    if running is not None:
        make_reentrant(loop)
    return loop.run_until_complete(awaitable)


async def _as_coroutine(awaitable: Awaitable[T]) -> T:
    return await awaitable
