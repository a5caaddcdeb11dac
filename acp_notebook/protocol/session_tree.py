"""Which session announced which, read from traffic entries (the trace format). Pure, no I/O.

A ``subagent_update`` the agent sends on session P naming ``sessionId`` C makes C a child of P;
the first one wins (a later one never moves a child). ``SessionTree`` is fed entries in order
(``add``) and answers: a session's parent, its descendants, its depth, and where each child was
announced — so a reader of the traffic (the doctor, the X-ray, the tables) can place a message
that names a child session, even one that came before its announcement.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

SUBAGENT_UPDATE = "subagent_update"


class SessionTree:
    """The parent of every announced child session, and the entry that announced it."""

    def __init__(self) -> None:
        self.parents: dict[str, str] = {}  # child id -> parent id (first announcement)
        self.announced_at: dict[str, int] = {}  # child id -> index of the announcing entry
        self.titles: dict[str, str] = {}  # child id -> its title as last patched (omitted: kept)
        self._seen: dict[str, None] = {}  # every session id met, in order of first sight

    def add(self, index: int, entry: dict[str, Any]) -> str | None:
        """Take note of entry ``index``; returns the child it announced first, if any."""
        session = session_of(entry)
        child = announced_child(entry)
        if child is not None:
            self._title(child, entry)
        if (
            child is not None
            and isinstance(session, str)
            and child not in self.parents
            and not self._is_ancestor(child, session)
        ):
            self.parents[child] = session
            self.announced_at[child] = index
            self._seen.setdefault(session)
            self._seen.setdefault(child)
            return child
        if isinstance(session, str):
            self._seen.setdefault(session)
        return None

    def _title(self, child: str, entry: dict[str, Any]) -> None:
        update = entry["message"]["params"]["update"]
        if "title" in update:
            title = update["title"]
            if isinstance(title, str):
                self.titles[child] = title
            elif title is None:
                self.titles.pop(child, None)

    def summary(self) -> list[dict[str, Any]]:
        """Every session met, roots first each followed by its tree: id, parent, depth, title."""
        order = [s for root in self.roots for s in (root, *self.descendants(root))]
        order += [s for s in self._seen if s not in order]  # under a root never met (a cut ring)
        return [
            {"id": s, "parent": self.parent(s), "depth": self.depth(s), "title": self.titles.get(s)}
            for s in order
        ]

    @property
    def roots(self) -> list[str]:
        """The sessions met that no one announced, in order of first sight."""
        return [s for s in self._seen if s not in self.parents]

    @property
    def sessions(self) -> list[str]:
        """Every session met, in order of first sight."""
        return list(self._seen)

    def _is_ancestor(self, maybe: str, of: str) -> bool:
        """Whether ``maybe`` is ``of`` or one of its ancestors (no announcement makes a loop)."""
        seen: str | None = of
        while seen is not None:
            if seen == maybe:
                return True
            seen = self.parents.get(seen)
        return False

    def parent(self, session_id: str | None) -> str | None:
        """The session that announced ``session_id`` (None: a root, or unknown)."""
        return self.parents.get(session_id) if session_id is not None else None

    def children(self, session_id: str) -> list[str]:
        """The children ``session_id`` announced, in announcement order."""
        return [c for c, p in self.parents.items() if p == session_id]

    def descendants(self, session_id: str) -> list[str]:
        """Every session under ``session_id``, depth first, in announcement order."""
        out: list[str] = []
        for child in self.children(session_id):
            out += [child, *self.descendants(child)]
        return out

    def family(self, session_id: str) -> set[str]:
        """``session_id`` and every session under it."""
        return {session_id, *self.descendants(session_id)}

    def depth(self, session_id: str | None) -> int:
        """How many announcements separate ``session_id`` from its root (0: a root)."""
        depth, seen = 0, self.parent(session_id)
        while seen is not None:
            depth, seen = depth + 1, self.parent(seen)
        return depth

    def root_of(self, session_id: str) -> str:
        """The root session above ``session_id`` (itself when it is one)."""
        while session_id in self.parents:
            session_id = self.parents[session_id]
        return session_id


def tree_of(entries: Iterable[dict[str, Any]]) -> SessionTree:
    """The tree of the sessions in ``entries`` (read in order)."""
    tree = SessionTree()
    for index, entry in enumerate(entries):
        tree.add(index, entry)
    return tree


def session_of(entry: dict[str, Any]) -> str | None:
    """The session an entry belongs to: its ``session`` tag, else its message's ``sessionId``."""
    session = entry.get("session")
    if isinstance(session, str):
        return session
    message = entry.get("message")
    params = message.get("params") if isinstance(message, dict) else None
    found = params.get("sessionId") if isinstance(params, dict) else None
    return found if isinstance(found, str) else None


def announced_child(entry: dict[str, Any]) -> str | None:
    """The child a ``subagent_update`` entry from the agent names (None for any other entry)."""
    message = entry.get("message")
    if entry.get("dir") != "in" or not isinstance(message, dict) or message.get("method") != "session/update":
        return None
    params = message.get("params")
    update = params.get("update") if isinstance(params, dict) else None
    if not isinstance(update, dict) or update.get("sessionUpdate") != SUBAGENT_UPDATE:
        return None
    child = update.get("sessionId")
    return child if isinstance(child, str) else None
