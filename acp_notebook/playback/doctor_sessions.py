"""The doctor's rules about which session a message names. Pure, no I/O.

A client routes every message by its session id, so it can only place a message bearing a
session it was told of: one it opened (``session/new``'s answer, a load or a resume, any session
it addressed) or a child some ``subagent_update`` announced (``protocol.session_tree``).
``Announcements`` follows that, entry by entry, for ``doctor_rules``:
``child-before-announcement`` — messages naming a child before its announcement, reported at the
first, once per child, when the announcement comes; ``unannounced-session`` — messages naming a
session never opened nor announced, reported at the end, only in traffic that shows how sessions
were opened (a ring that lost its start would otherwise flag every session).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..protocol.session_tree import SessionTree
from . import doctor_spec as spec

Add = Callable[[int, str, str, str], None]  # (index, code, message, cite)
OPENING = frozenset({"session/load", "session/resume"})


class Announcements:
    """Which sessions the client could place, and the messages that named one it could not."""

    def __init__(self, add: Add) -> None:
        self._add = add
        self.tree = SessionTree()
        self.opened: set[str] = set()  # sessions the client opened, loaded or addressed
        self.opening_seen = False  # a session/new answer or a load/resume is among the entries
        self.early: dict[str, list[int]] = {}  # session not (yet) known -> entries naming it

    def entry(self, i: int, entry: dict[str, Any]) -> None:
        """Entry ``i`` was read: an announcement places what named its child before."""
        child = self.tree.add(i, entry)
        seen = self.early.pop(child, None) if child is not None else None
        if seen:
            text = (
                f"{len(seen)} message(s) for child session {child!r} before the subagent_update that "
                f"announces it (entry {i}, on {self.tree.parent(child)!r})"
            )
            self._add(seen[0], "child-before-announcement", text, spec.ANNOUNCE)

    def client_names(self, method: Any, sid: Any) -> None:
        """The client sent ``method`` about session ``sid``: it knows that session."""
        if isinstance(sid, str):
            self.opened.add(sid)
        self.opening_seen = self.opening_seen or method in OPENING

    def created(self, sid: Any) -> None:
        """``session/new`` answered with session ``sid``."""
        if isinstance(sid, str):
            self.opened.add(sid)
            self.opening_seen = True

    def agent_names(self, i: int, sid: Any) -> None:
        """The agent's message ``i`` bears (or names) session ``sid``."""
        if isinstance(sid, str) and sid not in self.opened and sid not in self.tree.parents:
            self.early.setdefault(sid, []).append(i)

    def finish(self) -> None:
        """The end of the entries: what named a session nobody ever opened or announced."""
        for sid, seen in self.early.items() if self.opening_seen else ():
            if sid not in self.opened:
                text = f"{len(seen)} message(s) for session {sid!r}, which was never opened nor announced"
                self._add(seen[0], "unannounced-session", text, spec.ANNOUNCE)
