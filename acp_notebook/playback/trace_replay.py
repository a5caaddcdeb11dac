"""A recorded trace as a session you can scrub — seek, step, play — built by the real client.

``TraceReplay`` is the machinery (``replayer.Replay`` adds the view and the default client; the
X-ray re-enacts privately with it). It takes the client's ``Agent`` class, so nothing here
imports the client's session layer. The state is built by that client (``reenact.Reenactment``)
on a private event loop in a worker thread, so ``seek`` is a plain call from a cell or a widget
callback while the kernel's loop runs. Going forward feeds the next entries to the same client;
going backward starts a fresh client and feeds the first ``n`` again — seeking to ``n`` always
gives the same state.
A backward seek therefore replaces ``state`` by a new object: observe ``on_seek`` (the view does)
instead of holding on to an old one. ``play`` is a task on the caller's loop that steps at the
recorded pace (``speed`` times faster; ``None``: at once) and never blocks it for long.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import Callable
from typing import Any

from ..protocol.state import SessionState
from .reenact import Reenactment

MAX_GAP = 2.0  # s: longer recorded pauses (a user thinking) are shortened to this in play


class Worker:
    """An event loop running in a daemon thread; ``run`` waits for one coroutine there."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="acp-replay", daemon=True)
        self.thread.start()

    def run(self, coroutine: Any, timeout: float = 60.0) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def stop(self) -> None:
        if self.loop.is_running() and threading.current_thread() is not self.thread:
            with contextlib.suppress(Exception):
                self.run(_cancel_all(), 5.0)  # the replaying client's reader and tasks end cleanly
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)
        if not self.loop.is_running() and not self.loop.is_closed():
            self.loop.close()


async def _cancel_all() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


class TraceReplay:
    """A recorded trace, re-enacted up to ``position`` entries; ``state`` is the state there."""

    def __init__(
        self,
        header: dict[str, Any],
        entries: list[dict[str, Any]],
        agent_class: type,
        path: str | None = None,
        session_id: str | None = None,
    ) -> None:
        self.header, self.entries, self.path = header, entries, path
        self.agent_class = agent_class  # the client's Agent: each rebuild starts a new one
        self.session_id = session_id  # the session whose state is shown (default: the first)
        self.before_seek: list[Callable[[TraceReplay], None]] = []  # before the state changes
        self.on_seek: list[Callable[[TraceReplay], None]] = []  # after every seek
        self._worker = Worker()
        weakref.finalize(self, self._worker.stop)  # a replay nobody closed ends its thread
        self._init = init_params(entries)
        self._client: Reenactment | None = None
        self._position = 0
        self._task: asyncio.Task | None = None
        self._rebuild(0)

    # -- where it is -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.entries)

    @property
    def position(self) -> int:
        """How many recorded entries the state has seen."""
        return self._position

    @property
    def state(self) -> SessionState:
        """The followed session's ``SessionState`` after ``position`` entries (default: the first)."""
        return self._reenactment.state

    @property
    def session(self) -> Any:
        """The followed session as the replaying client rebuilt it (None before it opens): its
        ``subagents`` (each child's own ``state``), ``turns``, ``permission_log``; read, don't drive."""
        return self._reenactment.session

    @property
    def subagents(self) -> Any:
        """The followed session's subagents at ``position`` (``session.subagents``; empty before)."""
        session = self.session
        return session.subagents if session is not None else {}

    @property
    def agent(self) -> Any:
        """The replaying client's ``Agent`` (its ``traffic``, ``diagnostics``, sessions)."""
        return self._reenactment.agent

    @property
    def playing(self) -> bool:
        """True while ``play`` runs."""
        return self._task is not None and not self._task.done()

    @property
    def _reenactment(self) -> Reenactment:
        assert self._client is not None
        return self._client

    def time_at(self, position: int) -> float:
        """The recorded time (s) of the last entry seen at ``position``."""
        return float(self.entries[position - 1].get("t", 0.0)) if position > 0 else 0.0

    # -- moving -----------------------------------------------------------------------------------
    def seek(self, position: int) -> SessionState:
        """Go to ``position`` (clamped to 0..len); returns the state there."""
        position = max(0, min(int(position), len(self.entries)))
        for callback in list(self.before_seek):
            callback(self)
        if position < self._position:
            self._rebuild(position)
        elif position > self._position:
            self._worker.run(self._feed(self._position, position))
        self._position = position
        for callback in list(self.on_seek):
            callback(self)
        return self.state

    def step(self, k: int = 1) -> SessionState:
        """Move ``k`` entries (backwards when negative)."""
        return self.seek(self._position + k)

    def play(self, speed: float | None = 1.0, max_gap: float = MAX_GAP) -> asyncio.Task:
        """Play from here to the end as a task on the running loop (``speed=None``: at once)."""
        self.pause()
        self._task = asyncio.get_running_loop().create_task(self._play(speed, max_gap))
        return self._task

    def pause(self) -> None:
        """Stop playing (the position stays)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = None

    async def _play(self, speed: float | None, max_gap: float) -> None:
        while self._position < len(self.entries):
            if speed:
                gap = self.time_at(self._position + 1) - self.time_at(self._position)
                await asyncio.sleep(min(max(gap, 0.0), max_gap) / speed)
            else:
                await asyncio.sleep(0)
            self.step(1)

    def close(self) -> None:
        """Stop playing and end the worker thread."""
        self.pause()
        if self._client is not None:
            self._worker.run(self._client.close())
        self._worker.stop()

    # -- building ----------------------------------------------------------------------------------
    def _rebuild(self, position: int) -> None:
        old, self._client = self._client, None
        self._client = self._worker.run(self._fresh(old, position))

    async def _fresh(self, old: Reenactment | None, position: int) -> Reenactment:
        if old is not None:
            await old.close()
        client = Reenactment(self.agent_class, self.header.get("command"), self._init, self.session_id)
        for entry in self.entries[:position]:
            await client.apply(entry)
        return client

    async def _feed(self, start: int, end: int) -> None:
        for entry in self.entries[start:end]:
            await self._reenactment.apply(entry)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path or '(lines)'} {self._position}/{len(self.entries)}>"


def init_params(entries: list[dict[str, Any]]) -> Any:
    """The params of the first ``initialize`` the client sent in ``entries`` (None without one)."""
    return next((_params(e) for e in entries if _method(e) == "initialize"), None)


def _method(entry: dict[str, Any]) -> Any:
    message = entry.get("message")
    return message.get("method") if isinstance(message, dict) and entry.get("dir") == "out" else None


def _params(entry: dict[str, Any]) -> Any:
    return entry["message"].get("params")
