"""Which messages built which view entry: the trace re-enacted once, forward, watching the state.

``BuiltBy`` feeds a trace's entries, in order, to a private re-enactment (``reenact``,
the replay machinery, on its own worker loop) and notes, for every change the state reports,
the index of the entry being applied. So "the messages that built a card" are exactly the
entries that changed it — its tool call updates, its permission requests and their answers,
the terminal output it shows — whatever the protocol version. It only ever goes forward:
``catch_up`` feeds what was added since.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from ..protocol.changes import Change
from .reenact import Reenactment
from .trace_replay import Worker

ITEM_KINDS = frozenset({"tool_call", "message", "permission", "plan", "notice", "other", "file_write"})
MAX_INDICES = 5_000  # per key: a terminal streaming for hours keeps its latest


def change_key(change: Change) -> str | None:
    """The view key a change touches (``terminal:ID`` for terminals), or None."""
    if change.kind in ITEM_KINDS or change.kind == "terminal":
        return f"{change.kind}:{change.id}"
    return None


class BuiltBy:
    """Entry indices by the view key they changed, for one session of a trace."""

    def __init__(
        self, agent_class: type, header: dict[str, Any], init_params: Any, session_id: str | None
    ) -> None:
        self._worker = Worker()
        make = _make(agent_class, header.get("command"), init_params, session_id)
        self._client: Reenactment = self._worker.run(make)
        self.fed = 0
        self.keys: dict[str, list[int]] = {}
        self._current = -1
        self._watched: Any = None
        self._unwatch: Callable[[], None] = lambda: None

    def catch_up(self, entries: Sequence[dict[str, Any]], timeout: float = 60.0) -> None:
        """Feed the entries after the ones already fed (``entries`` from index 0)."""
        if len(entries) > self.fed:
            self._worker.run(self._feed(list(entries[self.fed :])), timeout)

    async def _feed(self, entries: list[dict[str, Any]]) -> None:
        for entry in entries:
            self._current = self.fed
            self._watch()
            with contextlib.suppress(Exception):  # a broken entry builds nothing; the rest go on
                await self._client.apply(entry)
            self._watch()
            self.fed += 1

    def _watch(self) -> None:
        state = self._client.state
        if state is not self._watched:
            self._unwatch()
            self._watched, self._unwatch = state, state.subscribe(self._on_change)

    def _on_change(self, change: Change) -> None:
        key = change_key(change)
        if key is None:
            return
        indices = self.keys.setdefault(key, [])
        if not indices or indices[-1] != self._current:
            indices.append(self._current)
            if len(indices) > MAX_INDICES:
                del indices[: len(indices) - MAX_INDICES]

    def of(self, key: str) -> list[int]:
        """The indices of the entries that changed ``key``."""
        return list(self.keys.get(key, ()))

    def close(self) -> None:
        """End the re-enactment and its worker thread."""
        self._unwatch()
        with contextlib.suppress(Exception):
            self._worker.run(self._client.close(), 5.0)
        self._worker.stop()


async def _make(agent_class: type, command: Any, init_params: Any, session_id: str | None) -> Reenactment:
    return Reenactment(agent_class, command, init_params, session_id)
