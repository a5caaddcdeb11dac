"""Which messages built which view entry: the trace re-enacted once, forward, watching the state.

``BuiltBy`` feeds a trace's entries, in order, to a private re-enactment (``reenact``,
the replay machinery, on its own worker loop) and notes, for every change the state reports,
the index of the entry being applied. So "the messages that built a card" are exactly the
entries that changed it — its tool call updates, its permission requests and elicitations and
their answers (an elicitation's completion or withdrawal too), the terminal output it shows —
whatever the protocol version. It only ever goes forward:
``catch_up`` feeds what was added since.

Subagents: every session of the followed one's tree is watched (each child as soon as it is
registered), and a change is noted under the key its view entry has (``widgets.subtree``: an
item of child ``C`` is ``subagent:C/<kind>:<id>``, the card ``subagent:C``); ``card_keys`` gives a
card's keys — its own, its terminals', and the permission requests and elicitations about it
— read from the re-enacted tree.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from ..protocol.changes import Change
from ..protocol.content import terminal_refs
from ..widgets.subtree import SUBAGENT, Scope, ViewTree, children_of
from .reenact import Reenactment
from .trace_replay import Worker

ITEM_KINDS = frozenset(
    {
        "tool_call",
        "message",
        "permission",
        "elicitation",
        "plan",
        "notice",
        "other",
        "file_write",
        "session_message",
    }
)
KEYED = ITEM_KINDS | {"terminal", SUBAGENT}
MAX_INDICES = 5_000  # per key: a terminal streaming for hours keeps its latest
TOOL_CALL = "tool_call:"


def change_key(change: Change, scope: Scope | None = None) -> str | None:
    """The view key a change of ``scope``'s state touches (``terminal:ID`` for terminals), or None."""
    if change.kind not in KEYED:
        return None
    return scope.key(change.kind, change.id) if scope is not None else f"{change.kind}:{change.id}"


def scopes(tree: ViewTree) -> list[Scope]:
    """Every scope of ``tree`` whose ``Subagent`` is known: the root, then its children, depth first."""
    out, todo = [], [tree.root]
    while todo:
        scope = todo.pop(0)
        out.append(scope)
        for child_id in children_of(scope.source):
            child = tree.child(scope, child_id)
            if child is not None:
                todo.append(child)
    return out


def tree_card_keys(key: str, tree: ViewTree) -> list[str]:
    """``key`` and, for a tool-call card of any session of ``tree``, the keys of the terminals,
    permission requests and elicitations it shows."""
    card, _, item = key.rpartition("/")
    scope = tree.card(card) if key.startswith(f"{SUBAGENT}:") else tree.root
    if scope is None or not item.startswith(TOOL_CALL):
        return [key]
    found = next((i for i in scope.state.tool_calls if scope.key("tool_call", i) == key), None)
    if found is None:
        return [key]
    keys = [key, *(scope.key("terminal", t) for t in terminal_refs(scope.state.tool_calls[found].content))]
    desk = tree.root.state
    for kind, asked in (("permission", desk.permissions), ("elicitation", desk.elicitations)):
        for ask_key, ask in asked.items():
            mine = ask.session_id == scope.session_id or (scope is tree.root and ask.session_id is None)
            if ask.tool_call_id == found and mine:
                keys.append(tree.root.key(kind, ask_key))
    return keys


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
        self._tree: ViewTree | None = None
        self._watched: dict[int, Callable[[], None]] = {}  # id of a watched state -> unsubscribe

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
        session, state = self._client.session, self._client.state
        if self._tree is None or self._tree.root.state is not state:
            self._unwatch()
            self._tree = ViewTree(state, session)
        for scope in scopes(self._tree):
            if id(scope.state) not in self._watched:
                watch = lambda change, scope=scope: self._on_change(change, scope)  # noqa: E731
                self._watched[id(scope.state)] = scope.state.subscribe(watch)

    def _unwatch(self) -> None:
        for unsubscribe in self._watched.values():
            unsubscribe()
        self._watched = {}

    def card_keys(self, key: str) -> list[str]:
        """The keys a card of the re-enacted tree is built from (after ``catch_up``)."""
        return tree_card_keys(key, self._tree) if self._tree is not None else [key]

    def _on_change(self, change: Change, scope: Scope | None = None) -> None:
        key = change_key(change, scope)
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
