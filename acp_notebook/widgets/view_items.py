"""What one view shows of a tree of sessions, and what changed since its last patch. No I/O.

A ``SessionView`` holds one. It observes the states of its tree (``subtree.ViewTree``): its own
session's, and each subagent's once that subagent's card is shown (a child announced before its
session was registered is reached at the next flush, ``reach_late``). It notes the entries
(``keys``: view key -> ``(scope, kind, key)``) and terminals (``terminals``: view id -> ``(scope,
terminal id)``) the view shows, in order of first sight, and what changed since the view's last
patch (``dirty``, ``new``, ``dirty_terms``). A change in a subagent's session also dirties the
cards it shows in (its count, state or time changed); a request dirties the asker's cards (their
pending count). Once it stops following (a turn's cell after its end) no new item is added.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..protocol.changes import Change
from ..protocol.content import terminal_refs
from ..protocol.terminal import Terminal
from .snapshot import Item
from .subtree import SUBAGENT, Scope, ViewTree, too_deep

ITEM_KINDS = {
    "tool_call", "message", "permission", "elicitation", "plan", "notice", "other", "file_write",
    "session_message",
}  # fmt: skip
NUMBERED = ("notice", "other", "file_write")  # their ids are list indices
ASKS = {"permission": lambda s: s.permissions, "elicitation": lambda s: s.elicitations}  # on the desk
QUIET_KINDS = {"terminal"}  # changes that leave a subagent's card as it was (its bytes)


class ViewItems:
    """The entries and terminals of one view, and what changed of them since the last patch."""

    def __init__(
        self, tree: ViewTree, since: int, touch_saved: Callable[[str], None], mark: Callable[[], None]
    ) -> None:
        self._touch_saved, self._mark = touch_saved, mark
        self.following = True
        self.tree = tree
        self.keys: dict[str, Item] = {}
        self.terminals: dict[str, tuple[Scope, str]] = {}
        self.dirty: dict[str, None] = {}
        self.new: list[str] = []
        self.dirty_terms: dict[str, None] = {}
        self._unsubscribes: list[Callable[[], None]] = []
        self._unreached: list[tuple[Scope, str]] = []
        self.follow(tree, since)

    # -- what is followed -------------------------------------------------------------------------
    def follow(self, tree: ViewTree, since: int = 0) -> None:
        """Show ``tree`` (its root's timeline from ``since``), from scratch, and observe its states."""
        self.detach()
        self.tree, self.keys, self.terminals, self._unreached = tree, {}, {}, []
        tree.following = self.following
        self._observe(tree.root)
        for kind, key in tree.root.state.timeline[since:]:
            self._include(tree.root, kind, key)

    def detach(self) -> None:
        """Stop observing every state."""
        for unsubscribe in self._unsubscribes:
            unsubscribe()
        self._unsubscribes = []

    def stop_following(self) -> None:
        """Add no new items from now on (the shown ones still change); the cards say so."""
        self.following = self.tree.following = False
        for view_key, (_, kind, _) in self.keys.items():
            if kind == SUBAGENT:
                self._touch(view_key)

    def reach_late(self) -> None:
        """The subagents announced before their sessions were registered: try again."""
        waiting, self._unreached = self._unreached, []
        for scope, child_id in waiting:
            self._reach(scope, child_id)
            self._touch(scope.key(SUBAGENT, child_id))

    def _observe(self, scope: Scope) -> None:
        self._unsubscribes.append(scope.state.subscribe(lambda change: self._on_change(change, scope)))

    # -- what changed since the last patch ----------------------------------------------------------
    def take(self) -> tuple[list[str], list[str], list[str]]:
        """The dirty entries, the new keys and the dirty terminals, forgotten here."""
        taken = list(self.dirty), self.new, list(self.dirty_terms)
        self.dirty, self.new, self.dirty_terms = {}, [], {}
        return taken

    def all_dirty(self) -> None:
        """Everything counts as new and changed (a full patch)."""
        self.new, self.dirty = list(self.keys), dict.fromkeys(self.keys)
        self.dirty_terms = dict.fromkeys(self.terminals)

    def terminal_objects(self) -> dict[str, Terminal]:
        """The terminals shown, by view id, as their states hold them now."""
        found = ((vid, scope.state.terminals.get(tid)) for vid, (scope, tid) in self.terminals.items())
        return {vid: term for vid, term in found if term is not None}

    def terminal_target(self, view_id: Any) -> tuple[str, str | None]:
        """``(terminal id, session id)`` of a terminal shown (the session None for the view's own)."""
        scope, terminal_id = self.terminals.get(view_id, (self.tree.root, str(view_id)))
        return terminal_id, scope.session_id if scope.card else None

    # -- inclusion ------------------------------------------------------------------------------------
    def _include(self, scope: Scope, kind: str, key: Any) -> None:
        kind, key = scope.shown(kind, key)
        view_key = scope.key(kind, key)
        if view_key in self.keys:
            return self._touch(view_key)  # a later subagent_update: its card changed
        self.keys[view_key] = (scope, kind, key)
        self.new.append(view_key)
        self._touch(view_key)
        if kind == "tool_call":
            self._include_terminals(scope, scope.state.tool_calls[key].content)
        elif kind == SUBAGENT:
            self._reach(scope, key)

    def _touch(self, view_key: str) -> None:
        self.dirty[view_key] = None
        self._touch_saved(view_key)

    def _reach(self, scope: Scope, child_id: str) -> None:
        """Show the tree of a subagent whose card is shown (later if its session is not known yet)."""
        child = self.tree.child(scope, child_id)
        if child is None:
            if not too_deep(scope):
                self._unreached.append((scope, child_id))  # registered just after: the next flush
            return
        self._observe(child)
        for kind, key in child.state.timeline:
            self._include(child, kind, key)

    def _include_terminals(self, scope: Scope, content: list[Any]) -> None:
        for terminal_id in terminal_refs(content):
            view_id = scope.terminal(terminal_id)
            if view_id not in self.terminals:
                self.terminals[view_id] = (scope, terminal_id)
                self.dirty_terms[view_id] = None

    # -- changes --------------------------------------------------------------------------------------
    def _on_change(self, change: Change, scope: Scope) -> None:
        kind = change.kind
        if kind in ITEM_KINDS:
            self._item_changed(change, scope)
        elif kind == SUBAGENT and scope.key(SUBAGENT, change.id) in self.keys:
            self._touch(scope.key(SUBAGENT, change.id))
        elif kind == "terminal":
            if scope.terminal(str(change.id)) not in self.terminals:
                return
            self.dirty_terms[scope.terminal(str(change.id))] = None
        if kind not in QUIET_KINDS:
            self._touch_cards(scope, change)
        self._mark()

    def _item_changed(self, change: Change, scope: Scope) -> None:
        key = int(str(change.id)) if change.kind in NUMBERED else change.id
        kind, key = scope.shown(change.kind, key)
        view_key = scope.key(kind, key)
        if view_key in self.keys:
            self._touch(view_key)
            if kind == "tool_call" and "content" in change.fields:
                self._include_terminals(scope, scope.state.tool_calls[key].content)
        elif change.created and self.following:
            self._include(scope, kind, key)

    def _touch_cards(self, scope: Scope, change: Change) -> None:
        """The cards a change shows in: those of its session and above (a request: of the asker)."""
        asked = ASKS.get(change.kind, lambda _: {})(scope.state).get(change.id)
        if asked is not None:
            asker = self.tree.scope_of(asked.session_id)
            scope = asker if asker is not None else scope
        for above in scope.ancestors():
            if above.card in self.keys:
                self._touch(above.card)
