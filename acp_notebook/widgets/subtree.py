"""The sessions one view draws: its session and the subagents below it, each a ``Scope``. No I/O.

A view shows a session's subagents inside its own tree (one comm, entries keyed by session and
id, not nested widgets). Keys: an item of the view's own session keeps ``<kind>:<id>``; the card
of child ``C`` of a scope is that scope's key of ``("subagent", C)``; an item of a child is
``<its card's key>/<kind>:<id>`` and a terminal of a child ``<its card's key>/<terminal id>``.
Ids in keys that name a subagent or a child's item are escaped (``%`` and ``/``), so a ``/`` in a
key that starts with ``subagent:`` only separates levels: the page finds an item's card as the key
up to its last ``/``. A raw ``subagent_update`` in a timeline shows as its child's card (at the
place the child was announced); the later ones patch that card. Likewise a raw ``session_message``
or chunk shows as that message, at the place it was first seen. A child's state comes from the
``Subagent`` (``source.subagents``), registered just after its announcement was applied: until
then ``child`` answers None and the caller asks again later.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..protocol.state import SessionState
from .viewmodel import entry_key

SUBAGENT = "subagent"
MAX_DEPTH = 32  # subagent levels a view draws; a card deeper than this shows no tree (``too_deep``)
SUBAGENT_UPDATE = "subagent_update"
SESSION_MESSAGE = "session_message"
SESSION_MESSAGE_KINDS = frozenset({SESSION_MESSAGE, "session_message_chunk"})


def escape(value: Any) -> str:
    """An id as it appears in a nested key: ``%`` and ``/`` escaped."""
    return str(value).replace("%", "%25").replace("/", "%2F")


@dataclass(eq=False)
class Scope:
    """One session of a view's tree: its state, where its children come from, its key prefix."""

    state: SessionState
    source: Any  # the Session or Subagent (``.subagents``), or None (a bare state)
    card: str = ""  # the key of its card in its parent's tree ("" for the view's own session)
    session_id: str | None = None
    parent: Scope | None = None
    depth: int = 0  # subagent levels below the view's own session

    def key(self, kind: str, key: Any) -> str:
        """The view key of item ``(kind, key)`` of this session."""
        if not self.card:
            return f"{SUBAGENT}:{escape(key)}" if kind == SUBAGENT else entry_key(kind, key)
        return f"{self.card}/{kind}:{escape(key)}"

    def terminal(self, terminal_id: str) -> str:
        """The view id of terminal ``terminal_id`` of this session."""
        return terminal_id if not self.card else f"{self.card}/{escape(terminal_id)}"

    def shown(self, kind: str, key: Any) -> tuple[str, Any]:
        """What timeline item ``(kind, key)`` shows as: a raw ``subagent_update`` as its child's
        card, a raw ``session_message`` (or chunk) as that message."""
        if kind == "other":
            raw = self.state.other_updates[key]
            child, message = raw.get("sessionId"), raw.get("messageId")
            if raw.get("sessionUpdate") == SUBAGENT_UPDATE and child in self.state.subagents:
                return SUBAGENT, child
            if raw.get("sessionUpdate") in SESSION_MESSAGE_KINDS and message in self.state.session_messages:
                return SESSION_MESSAGE, message
        return kind, key

    def ancestors(self) -> Iterator[Scope]:
        """This scope and those above it, nearest first (the root last)."""
        scope: Scope | None = self
        while scope is not None:
            yield scope
            scope = scope.parent


def too_deep(scope: Scope) -> bool:
    """Whether the cards of ``scope``'s children show no tree (a hostile agent may nest without end)."""
    return scope.depth >= MAX_DEPTH


def children_of(source: Any) -> Mapping[str, Any]:
    """The ``Subagent`` objects of a session or subagent (none for a bare state)."""
    found = getattr(source, "subagents", None)
    return found if isinstance(found, Mapping) else {}


class ViewTree:
    """The scopes a view knows: its own session's and those of the subagents it reached."""

    def __init__(self, state: SessionState, source: Any = None) -> None:
        self.root = Scope(state, source, "", getattr(source, "session_id", None))
        self.by_card: dict[str, Scope] = {"": self.root}
        self.by_session: dict[str, Scope] = {}
        self.following = True  # False: the view shows no new items (a turn's cell after its end)

    def child(self, scope: Scope, child_id: str) -> Scope | None:
        """The scope of child ``child_id`` of ``scope`` (None while its ``Subagent`` is not known,
        and for good when ``scope`` is ``too_deep`` to draw its children's trees)."""
        card = scope.key(SUBAGENT, child_id)
        found = self.by_card.get(card)
        if found is None:
            sub = children_of(scope.source).get(child_id) if not too_deep(scope) else None
            if sub is None:
                return None
            found = self.by_card[card] = Scope(sub.state, sub, card, child_id, scope, scope.depth + 1)
            self.by_session.setdefault(child_id, found)
        return found

    def card(self, card: str) -> Scope | None:
        """The scope drawn in card ``card`` (or the root for ``""``)."""
        return self.by_card.get(card)

    def scope_of(self, session_id: Any) -> Scope | None:
        """The scope of a session id (the root's own id included), if the view reached it."""
        if session_id is not None and session_id == self.root.session_id:
            return self.root
        return self.by_session.get(session_id) if isinstance(session_id, str) else None

    def info(self, session_id: Any) -> Any:
        """What its parent was told of subagent ``session_id`` (``SubagentInfo``), if any session
        of the tree (reached or not) announced it."""
        todo = [(self.root.state, self.root.source)]
        while todo and isinstance(session_id, str):
            state, source = todo.pop()
            found = state.subagents.get(session_id)
            if found is not None:
                return found
            todo.extend((sub.state, sub) for sub in children_of(source).values())
        return None

    def descendants(self, session_id: str) -> set[str]:
        """``session_id`` and the ids of every subagent below it that the tree knows of."""
        out, todo = set(), [session_id]
        while todo:
            current = todo.pop()
            if current in out:
                continue
            out.add(current)
            scope = self.scope_of(current)
            if scope is not None:
                todo.extend(scope.state.subagents)
        return out

    def all_items(self) -> Iterator[tuple[str, Scope, str, Any]]:
        """Every item of every reachable scope, as ``(view key, scope, kind, key)``: each scope's
        timeline in order, a child's items right after its card (what a saved snapshot holds)."""
        yield from self._items(self.root, set())

    def _items(self, scope: Scope, seen: set[str]) -> Iterator[tuple[str, Scope, str, Any]]:
        for kind, key in scope.state.timeline:
            kind, key = scope.shown(kind, key)
            view_key = scope.key(kind, key)
            if view_key in seen:
                continue
            seen.add(view_key)
            yield view_key, scope, kind, key
            child = self.child(scope, key) if kind == SUBAGENT else None
            if child is not None:
                yield from self._items(child, seen)
