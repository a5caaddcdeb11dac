"""A session's tables with its subagents': ``protocol.tree_tables`` over the members of its tree.

``records(node, traffic, desk, kind, descendants)`` is what ``Session.records`` and
``Subagent.records`` answer: the rows of the node's own session, or with ``descendants`` of its
whole tree (``protocol.tree_tables``: ``session_id`` and ``parent_session_id`` lead each row).
Permission requests are read from ``desk``, the state of the root's permission desk (where every
session of the tree asks), keeping those of the sessions read; the traffic table reads the
agent's ring for the entries of those sessions. A node is anything with ``session_id``, ``state``
and ``subagents`` (and ``parent_id``: a subagent's parent; a session has none).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ..protocol import tree_tables
from ..protocol.tables import Tabled
from ..protocol.tree_tables import TREE_COLUMNS, Member
from .recorder import Traffic


class Node(Protocol):
    """A session or a subagent, as its tree is read."""

    @property
    def session_id(self) -> str: ...
    @property
    def state(self) -> Any: ...
    @property
    def subagents(self) -> Mapping[str, Any]: ...


def members(node: Node, descendants: bool = True) -> list[Member]:
    """``node`` and (``descendants``) every session under it, depth first, in announcement order."""
    out = [Member(node.session_id, getattr(node, "parent_id", None), node.state)]
    for child in node.subagents.values() if descendants else ():
        out += members(child)
    return out


def tree_traffic(traffic: Traffic, sessions: list[Member]) -> list[dict[str, Any]]:
    """The ring's entries of ``sessions``, in order."""
    ids = {m.session_id for m in sessions}
    return [e for e in traffic.ring.entries if e.get("session") in ids]


def records(
    node: Node, traffic: Traffic, desk: Tabled, kind: str, descendants: bool = False
) -> list[dict[str, Any]]:
    """Table ``kind`` of ``node``'s session (with ``descendants``: of its whole tree)."""
    read = members(node, descendants)
    entries = tree_traffic(traffic, read) if kind == "traffic" else None
    rows = tree_tables.tree_records(read, kind, entries, desk)
    return rows if descendants else [{k: v for k, v in r.items() if k not in TREE_COLUMNS} for r in rows]


def frame(node: Node, traffic: Traffic, desk: Tabled, kind: str, descendants: bool = False) -> Any:
    """``records`` as a pandas DataFrame."""
    read = members(node, descendants)
    entries = tree_traffic(traffic, read) if kind == "traffic" else None
    df = tree_tables.tree_frame(read, kind, entries, desk)
    return df if descendants else df.drop(columns=list(TREE_COLUMNS))
