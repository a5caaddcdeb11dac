"""A view's saved snapshot, kept in bounded pieces: inline while small, else in page widgets.

While the whole snapshot (``snapshot_of``, terminals capped at ``SAVED_TERMINAL_BYTES``) fits one
message, the view's ``snapshot``/``terminal_bytes`` traits hold it as before. Once it does not,
the view switches (for good) to the paged form (``js/WIRE.md``): entries in groups of ``GROUP``
by position, each group's JSON and each terminal's saved bytes in ``SnapshotPage`` widgets
(base64, at most ``BUDGET`` characters each) listed by the view's ``pages`` trait; the
``snapshot`` dict keeps the seq, the header and indices into ``pages``. Pages never change: a
group or terminal that changed gets new pages (one comm message each) and its old ones are
closed, so a page a browser reads is always the one the snapshot meant; a refresh re-serializes
only the groups whose entries changed and the terminals that got bytes. Entries and header are kept
as records keep them (``snapshot.kept``: no elicitation URL query, no secret-looking value).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import ipywidgets
import traitlets

from ..protocol.terminal import Terminal
from . import tree_entries
from . import viewmodel as vm
from .message_parts import BUDGET, encode, json_size
from .snapshot import SAVED_TERMINAL_BYTES, Item, kept, saved_terminal, snapshot_of
from .subtree import ViewTree

GROUP = 25  # entries per group (by position in the order)
PAGE_BYTES = BUDGET // 4 * 3  # bytes a page holds: their base64 fits one message


class SnapshotPage(ipywidgets.Widget):
    """One immutable page of a view's saved snapshot: a slice of a group's JSON or of a terminal's bytes.

    ``data`` is base64 text, not a Bytes trait: the page is a plain ``@jupyter-widgets/base``
    model, and those save binary values as ``{}`` in a notebook's widget state."""

    data = traitlets.Unicode().tag(sync=True)


@dataclass
class _Piece:
    """One group or terminal as saved: what it was built from, its bytes and the pages holding them."""

    sig: Any
    data: bytes
    pages: list[SnapshotPage] = field(default_factory=list)


def _pages_of(data: bytes) -> list[SnapshotPage]:
    slices = [data[i : i + PAGE_BYTES] for i in range(0, len(data), PAGE_BYTES)] or [b""]
    return [SnapshotPage(data=base64.b64encode(piece).decode("ascii")) for piece in slices]


class SavedSnapshot:
    """The traits (``snapshot``, ``terminal_bytes``, ``pages``) one view's refresh sets, built here."""

    def __init__(self, cap: int = SAVED_TERMINAL_BYTES) -> None:
        self.cap = cap
        self.paged = False
        self.rev = 0
        self._dirty: set[str] = set()
        self._groups: list[_Piece] = []
        self._terms: dict[str, _Piece] = {}
        self._metas: _Piece | None = None
        self.opened = 0  # pages the last build opened (one comm message each)
        self._stale: list[SnapshotPage] = []  # pages to close once the view points past them

    def touch(self, key: str) -> None:
        """Entry ``key`` changed since the last build."""
        self._dirty.add(key)

    def build(
        self,
        tree: ViewTree,
        head: dict[str, Any],
        items: Mapping[str, Item],
        terminals: Mapping[str, Terminal],
        root: str | None,
    ) -> dict[str, Any]:
        """The trait values for the view's tree now (``head``: seq, header, X-ray)."""
        self.opened = 0
        if not self.paged:
            snap, blob = snapshot_of(tree, items=items, terminals=terminals, root=root, cap=self.cap)
            snap.update(kept(head, tree))
            if json_size(snap) + len(blob) <= BUDGET:
                self._dirty.clear()
                return {"snapshot": snap, "terminal_bytes": blob, "pages": []}
            self.paged = True
        return self._paged(tree, head, items, terminals, root)

    def _paged(
        self,
        tree: ViewTree,
        head: dict[str, Any],
        items: Mapping[str, Item],
        terminals: Mapping[str, Terminal],
        root: str | None,
    ) -> dict[str, Any]:
        old = [p for piece in self.pieces() for p in piece.pages]
        keys = list(items)
        groups = [
            self._group(tree, items, keys[i : i + GROUP], g, root)
            for g, i in enumerate(range(0, len(keys), GROUP))
        ]
        self._groups = groups
        self._dirty.clear()
        metas, terms = {}, {}
        for terminal_id, term in terminals.items():
            terms[terminal_id] = self._terminal(terminal_id, term, self._terms.get(terminal_id))
            metas[terminal_id] = terms[terminal_id].sig[1]
        self._terms = terms
        pages: list[SnapshotPage] = [p for piece in [*groups, *terms.values()] for p in piece.pages]
        index = {id(p): i for i, p in enumerate(pages)}
        for terminal_id, piece in terms.items():
            metas[terminal_id] = {**metas[terminal_id], "pages": [index[id(p)] for p in piece.pages]}
        self._metas = self._piece(("metas",), encode(metas), self._metas)
        pages += self._metas.pages
        index.update({id(p): i for i, p in enumerate(pages)})
        live = {id(p) for p in pages}
        self._stale += [page for page in old if id(page) not in live]
        self.rev += 1 if self.opened or self._stale else 0
        snapshot = {**kept(head, tree), "rev": self.rev}
        snapshot["groups"] = [[index[id(p)] for p in g.pages] for g in groups]
        snapshot["metas"] = [index[id(p)] for p in self._metas.pages]
        return {"snapshot": snapshot, "terminal_bytes": b"", "pages": pages}

    def pieces(self) -> list[_Piece]:
        """Every group and terminal saved now (their pages are the view's ``pages``)."""
        return [*self._groups, *self._terms.values(), *([self._metas] if self._metas else [])]

    def _piece(self, sig: Any, data: bytes, old: _Piece | None) -> _Piece:
        if old is not None and old.data == data:
            return _Piece(sig, data, old.pages)
        self.opened += -(-len(data) // PAGE_BYTES) or 1
        return _Piece(sig, data, _pages_of(data))

    def _group(
        self, tree: ViewTree, items: Mapping[str, Item], keys: list[str], g: int, root: str | None
    ) -> _Piece:
        old = self._groups[g] if g < len(self._groups) else None
        if old is not None and old.sig == keys and not self._dirty.intersection(keys):
            return old
        entries = {k: tree_entries.build(tree, *items[k], root, saved=True) for k in keys}
        return self._piece(keys, encode(kept(entries, tree)), old)

    def _terminal(self, view_id: str, term: Terminal, old: _Piece | None) -> _Piece:
        meta = vm.terminal_meta(term)
        mark = (meta["gen"], meta["base"], meta["end"])
        named = {"id": view_id, "terminal_id": term.terminal_id}  # last, in both forms (same JSON)
        if old is not None and old.sig[0] == mark:
            kept = {"base": old.sig[1]["base"], "trimmed": old.sig[1]["trimmed"]}
            return _Piece((mark, {**meta, **kept, **named}), old.data, old.pages)
        saved, data = saved_terminal(term, self.cap)
        return self._piece((mark, {**saved, **named}), data, old)

    def release(self) -> int:
        """Close the pages the last build replaced (after the view's update); returns how many."""
        stale, self._stale = self._stale, []
        for page in stale:
            page.close()
        return len(stale)

    def close(self) -> None:
        """Close every page (the view closes)."""
        self._stale += [page for piece in self.pieces() for page in piece.pages]
        self._groups, self._terms, self._metas = [], {}, None
        self.release()
